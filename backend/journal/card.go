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

// maxCardDepth is how deep in nested objects card fields are looked for:
// the provider's answers hold a transaction at the top or one level down
// (transaction, transactionDetails, data); a little more is a margin, and
// a bound keeps a deeply nested answer from costing a walk per level.
const maxCardDepth = 4

// splitCard takes the card fields out of a raw answer, at its top and in
// the objects nested in it (not in lists): kept is the answer without them
// (its other keys in their order, the values it keeps byte for byte), card
// a JSON object of what was taken, nested as it was found, nil when
// nothing was. An answer that is not a JSON object is kept whole.
func splitCard(raw []byte) (kept, card []byte) {
	if len(raw) == 0 || !json.Valid(raw) {
		return raw, nil
	}
	return splitObject(raw, 0)
}

func splitObject(raw []byte, depth int) (kept, card []byte) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return raw, nil
	}
	var out, taken bytes.Buffer
	out.WriteByte('{')
	taken.WriteByte('{')
	add := func(dst *bytes.Buffer, k, v []byte) {
		if dst.Len() > 1 {
			dst.WriteByte(',')
		}
		dst.Write(k)
		dst.WriteByte(':')
		dst.Write(v)
	}
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
		switch {
		case cardKeys[key]:
			add(&taken, k, v)
			continue
		case depth < maxCardDepth && len(v) > 0 && v[0] == '{':
			if inner, innerCard := splitObject(v, depth+1); innerCard != nil {
				add(&out, k, inner)
				add(&taken, k, innerCard)
				continue
			}
		}
		add(&out, k, v)
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
// receipts and staff screens, while they are kept, where splitCard found
// them. Keys the answer has already are left as they are; an answer with
// nothing to add (no card details, none it lacks, or not a JSON object) is
// returned byte for byte.
func withCard(response []byte, card sql.NullString) []byte {
	out, _ := mergeCard(response, []byte(card.String), 0)
	return out
}

// mergeCard adds to the object response the card keys of card it lacks,
// after its own in a stable order, and merges card's nested objects into
// its own of the same key. ok is false when nothing was added: response
// is then returned as it is.
func mergeCard(response, card []byte, depth int) (out []byte, ok bool) {
	var fields, have map[string]json.RawMessage
	if json.Unmarshal(card, &fields) != nil || json.Unmarshal(response, &have) != nil || have == nil {
		return response, false
	}
	var add []string
	nested := map[string][]byte{}
	for k, v := range fields {
		cur, exists := have[k]
		switch {
		case cardKeys[k]:
			if !exists {
				add = append(add, k)
			}
		case exists && depth < maxCardDepth:
			if m, ok := mergeCard(cur, v, depth+1); ok {
				nested[k] = m
			}
		}
	}
	if len(add) == 0 && len(nested) == 0 {
		return response, false
	}
	sort.Strings(add)
	var body []byte
	if len(nested) == 0 {
		trimmed := bytes.TrimSpace(response)
		body = append(body, trimmed[:len(trimmed)-1]...) // without its closing brace
	} else {
		// A nested object changed: the keys again, in their order.
		body = append(body, '{')
		dec := json.NewDecoder(bytes.NewReader(response))
		_, _ = dec.Token()
		for i := 0; dec.More(); i++ {
			t, err := dec.Token()
			var v json.RawMessage
			if err != nil || dec.Decode(&v) != nil {
				return response, false
			}
			key, _ := t.(string)
			if m, ok := nested[key]; ok {
				v = m
			}
			if i > 0 {
				body = append(body, ',')
			}
			kb, _ := json.Marshal(key)
			body = append(append(append(body, kb...), ':'), v...)
		}
	}
	for i, k := range add {
		if len(have) > 0 || i > 0 {
			body = append(body, ',')
		}
		kb, _ := json.Marshal(k)
		body = append(append(append(body, kb...), ':'), fields[k]...)
	}
	return append(body, '}'), true
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
