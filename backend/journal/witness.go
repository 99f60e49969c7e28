package journal

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"
)

// Witness is the provider's word on an approval taken over the LAN, where
// the terminal's Local API has no credential and any device could have
// answered "ok": its own record (the Webservices) is the second witness.
type Witness string

const (
	// WitnessAwaiting: journaled with the approval; the provider's record
	// has not been read yet. The approval pays nothing and its order needs
	// attention (no second debit meanwhile).
	WitnessAwaiting Witness = "awaiting"
	// WitnessConfirmed: the provider lists the transaction, for what was
	// asked.
	WitnessConfirmed Witness = "confirmed"
	// WitnessUnconfirmed: the provider could not be asked in time; the
	// approval pays on the terminal's word, and is looked up again later.
	WitnessUnconfirmed Witness = "unconfirmed"
	// WitnessDenied: the provider's record does not show it: it pays
	// nothing, and its order needs staff.
	WitnessDenied Witness = "denied"
	// WitnessAccepted: staff accepted a denied approval (AcceptOrder).
	WitnessAccepted Witness = "accepted"
)

// witnessedSQL is true for an attempt whose approval may pay: no witness
// was asked for, or the provider has not said it does not know it.
const witnessedSQL = `coalesce(a.witness, '') NOT IN ('awaiting', 'denied')`

// EventWitness: the provider's record was read for an approval taken over
// the LAN (Witness).
const EventWitness EventKind = "witness"

// awaitWitness is the witness column an outcome writes: awaiting for an
// approval that asks for one, nothing otherwise.
func awaitWitness(id string, to State, await bool) (any, error) {
	if !await {
		return nil, nil
	}
	if to != StateApproved {
		return nil, Errorf(EINVALID, "attempt %s: only an approval awaits the provider's record, not %s", id, to)
	}
	return string(WitnessAwaiting), nil
}

// witnessMoves are the provider's words that may follow each other (the
// trigger of migration 7 holds the same rule).
var witnessMoves = map[Witness][]Witness{
	WitnessAwaiting:    {WitnessConfirmed, WitnessUnconfirmed, WitnessDenied},
	WitnessUnconfirmed: {WitnessConfirmed, WitnessDenied},
	WitnessDenied:      {WitnessConfirmed},
}

// WitnessWord is what the provider's record said of an approval.
type WitnessWord struct {
	To Witness // confirmed, unconfirmed or denied
	// ProviderID is the provider's own id of the transaction, when its
	// record names it under another id than the terminal's.
	ProviderID string
	Who        string // "system:witness", or a member of staff
	Note       string
	Raw        []byte // the provider's record, as read
}

// RecordWitness records the provider's word on an approval awaiting it
// (or unconfirmed, or denied: a record that came late), with an event,
// and settles its order's status in the same transaction: confirmed and
// unconfirmed approvals pay, a denied one pays nothing and sends its order
// to staff. ECONFLICT when the attempt's witness is not one this word may
// follow (a confirmation stands).
func (db *DB) RecordWitness(ctx context.Context, id string, w WitnessWord) (Attempt, error) {
	if strings.TrimSpace(w.Who) == "" {
		return Attempt{}, Errorf(EINVALID, "attempt %s: the provider's word names who read it", id)
	}
	if w.To != WitnessConfirmed && w.To != WitnessUnconfirmed && w.To != WitnessDenied {
		return Attempt{}, Errorf(EINVALID, "attempt %s: the provider's record confirms, denies or could not be read, not %q", id, w.To)
	}
	return updateTo(ctx, db, "record the provider's word on attempt "+id, func(tx *sql.Tx) (Attempt, error) {
		a, err := getAttempt(ctx, tx, id)
		if err != nil {
			return Attempt{}, err
		}
		if !witnessMayMove(a.Witness, w.To) {
			return Attempt{}, Errorf(ECONFLICT, "attempt %s: the provider's word is %q; %q may not follow it", id, a.Witness, w.To)
		}
		providerID := w.ProviderID
		if a.ProviderID != "" || providerID == a.TransactionID {
			providerID = "" // written once; the same id says nothing more
		}
		now := unixMS(db.now())
		if _, err := tx.ExecContext(ctx, `UPDATE attempts SET witness = ?, provider_id = COALESCE(?, provider_id), updated_at = ?
			WHERE id = ?`, string(w.To), nullString(providerID), now, a.ID); err != nil {
			return Attempt{}, err
		}
		detail := fmt.Sprintf("the provider's record: %s (was %s)", w.To, a.Witness)
		if w.ProviderID != "" {
			detail += "; the provider's transaction " + w.ProviderID
		}
		if w.Note != "" {
			detail += ": " + w.Note
		}
		if err := insertEvent(ctx, tx, a.ID, now, a.State, a.State, EventWitness, w.Who, detail, w.Raw); err != nil {
			return Attempt{}, err
		}
		if _, err := settleStatus(ctx, tx, a.OrderID, now, fmt.Sprintf("%s %s: the provider's record %s", a.Kind, id, w.To)); err != nil {
			return Attempt{}, err
		}
		return getAttempt(ctx, tx, id)
	})
}

func witnessMayMove(from, to Witness) bool {
	for _, w := range witnessMoves[from] {
		if w == to {
			return true
		}
	}
	return false
}

// acceptDenied is AcceptOrder's part on the approvals of an order the
// provider's record did not show: staff say they count.
func acceptDenied(ctx context.Context, tx *sql.Tx, orderID string, now int64, who, note string) error {
	rows, err := tx.QueryContext(ctx, `SELECT id, state FROM attempts WHERE order_id = ? AND witness = 'denied'`, orderID)
	if err != nil {
		return err
	}
	type denied struct {
		id    int64
		state string
	}
	var ds []denied
	for rows.Next() {
		var d denied
		if err := rows.Scan(&d.id, &d.state); err != nil {
			rows.Close()
			return err
		}
		ds = append(ds, d)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, d := range ds {
		if _, err := tx.ExecContext(ctx, `UPDATE attempts SET witness = 'accepted', updated_at = ? WHERE id = ?`, now, d.id); err != nil {
			return err
		}
		detail := "accepted as charged although the provider's record did not show it: " + note
		if err := insertEvent(ctx, tx, d.id, now, State(d.state), State(d.state), EventAccepted, who, detail, nil); err != nil {
			return err
		}
	}
	return nil
}

// WitnessOpen returns the approvals created since the given time whose
// provider's word may still change (awaiting, unconfirmed, denied), oldest
// first: what the periodic check asks the provider about again. It reads
// the partial index attempts_witness_open.
func (db *DB) WitnessOpen(ctx context.Context, since time.Time) ([]Attempt, error) {
	return db.queryAttempts(ctx, "read approvals awaiting the provider's record",
		`SELECT `+attemptColumns+` FROM attempts WHERE witness IN ('awaiting', 'unconfirmed', 'denied')
			AND created_at >= ? ORDER BY created_at, id`, unixMS(since))
}

// Holders returns, for each of these ids that an attempt holds as its
// transaction or as the provider's id of it, that attempt's uuid: a
// provider's record already another attempt's is not this one's witness.
func (db *DB) Holders(ctx context.Context, ids []string) (map[string]string, error) {
	out := map[string]string{}
	for start := 0; start < len(ids); start += 250 {
		chunk := ids[start:min(start+250, len(ids))]
		args := make([]any, 0, 2*len(chunk))
		for _, id := range chunk {
			args = append(args, id)
		}
		args = append(args, args...)
		in := `(?` + strings.Repeat(", ?", len(chunk)-1) + `)`
		rows, err := db.r.QueryContext(ctx, `SELECT transaction_id, provider_id, uuid FROM attempts
			WHERE transaction_id IN `+in+` OR provider_id IN `+in, args...)
		if err != nil {
			return nil, mapErr(err, "find who holds transactions")
		}
		want := map[string]bool{}
		for _, id := range chunk {
			want[id] = true
		}
		for rows.Next() {
			var tx, pid sql.NullString
			var uuid string
			if err := rows.Scan(&tx, &pid, &uuid); err != nil {
				rows.Close()
				return nil, mapErr(err, "find who holds transactions")
			}
			for _, id := range []sql.NullString{tx, pid} {
				if id.Valid && want[id.String] {
					out[id.String] = uuid
				}
			}
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, mapErr(err, "find who holds transactions")
		}
	}
	return out, nil
}
