package journal

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"sort"
	"time"
)

// cardKeys are the fields of a provider's answer that concern the card
// rather than the money: the card's token and the card tickets (the
// customer's and the merchant's). They are kept apart from the append-only
// journal (table card_details), where PurgeCardDetails removes them after
// the retention period; the journal keeps what money and the fiscal
// records need (amounts, ids, scheme, a masked PAN at most).
var cardKeys = map[string]bool{
	"cardToken": true, "card_token": true,
	"clientCardTicket": true, "merchantCardTicket": true,
	"clientTicket": true, "companyTicket": true, "client_ticket": true, "company_ticket": true,
	"ticketUrl": true,
}

// splitCard takes the card fields out of a raw answer: kept is the answer
// without them (its other keys in their order, their values byte for
// byte), card a JSON object of what was taken, nil when nothing was. An
// answer that is not a JSON object is kept whole.
func splitCard(raw []byte) (kept, card []byte) {
	if len(raw) == 0 || !json.Valid(raw) {
		return raw, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return raw, nil
	}
	var out, taken bytes.Buffer
	out.WriteByte('{')
	taken.WriteByte('{')
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return raw, nil
		}
		key, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return raw, nil
		}
		k, _ := json.Marshal(key)
		dst := &out
		if cardKeys[key] {
			dst = &taken
		}
		if dst.Len() > 1 {
			dst.WriteByte(',')
		}
		dst.Write(k)
		dst.WriteByte(':')
		dst.Write(v)
	}
	if taken.Len() == 1 {
		return raw, nil
	}
	out.WriteByte('}')
	taken.WriteByte('}')
	return out.Bytes(), taken.Bytes()
}

// storeCard writes what splitCard took from an attempt's answer.
func storeCard(ctx context.Context, tx *sql.Tx, attemptID, at int64, card []byte) error {
	if card == nil {
		return nil
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO card_details (attempt_id, at, data) VALUES (?, ?, ?)`, attemptID, at, string(card))
	return err
}

// withCard puts an attempt's latest card details back into its answer, for
// receipts and staff screens, while they are kept. Keys the answer has
// already are left as they are; an answer with nothing to add (no card
// details, none it lacks, or not a JSON object) is returned byte for byte.
func withCard(response []byte, card sql.NullString) []byte {
	var fields, have map[string]json.RawMessage
	if json.Unmarshal([]byte(card.String), &fields) != nil || json.Unmarshal(response, &have) != nil || have == nil {
		return response
	}
	var add []string
	for k := range fields {
		if _, ok := have[k]; ok || !cardKeys[k] {
			continue
		}
		add = append(add, k)
	}
	if len(add) == 0 {
		return response
	}
	sort.Strings(add)
	trimmed := bytes.TrimSpace(response)
	out := append([]byte(nil), trimmed[:len(trimmed)-1]...) // without its closing brace
	for i, k := range add {
		if len(have) > 0 || i > 0 {
			out = append(out, ',')
		}
		kb, _ := json.Marshal(k)
		out = append(append(append(out, kb...), ':'), fields[k]...)
	}
	return append(out, '}')
}

// DefaultCardRetention is how long card details are kept when no setting
// says otherwise: 13 months, the longest time in which a cardholder can
// usually dispute a payment (chargebacks run 120 days from the
// transaction, some schemes and cases longer), with a margin.
const DefaultCardRetention = 395 * 24 * time.Hour

// PurgeCardDetails removes the card details (card tokens, card tickets)
// recorded before the given time, and returns how many records went. It
// touches nothing else: amounts, ids, states, events and the fiscal
// records stay as they are.
func (db *DB) PurgeCardDetails(ctx context.Context, before time.Time) (int64, error) {
	var n int64
	err := db.update(ctx, "purge card details", func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM card_details WHERE at < ?`, unixMS(before))
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return n, err
}
