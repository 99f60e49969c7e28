package journal

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// Resolution settles an attempt whose outcome is unknown.
type Resolution struct {
	// To is approved (the customer was charged, or given back) or declined
	// (nothing moved).
	To State
	// Who decided: a member of staff ("staff:..."), or the system when the
	// provider's history told without doubt ("system:history").
	Who  string
	Note string
	// TransactionID, Charged and Response describe the provider's
	// transaction this attempt turned out to be, when one is known.
	TransactionID string
	Charged       *Charge
	Response      []byte
	// AwaitWitness: as TransitionInfo's, for an approval found in the
	// terminal's own history over the LAN.
	AwaitWitness bool
}

// Resolve is the one way out of a final state: someone (staff, having
// checked the terminal's history or the provider's back office; or the
// system, when that history names exactly one transaction or shows that
// nothing was made) settles an unknown attempt as approved or declined. Who
// is required and, with the note, goes into the audit trail. final_at keeps
// the time the attempt became unknown. A transaction another attempt
// already holds is refused (ECONFLICT): one transaction is one attempt.
func (db *DB) Resolve(ctx context.Context, id string, r Resolution) (Attempt, error) {
	to := r.To
	if to != StateApproved && to != StateDeclined {
		return Attempt{}, Errorf(EINVALID, "attempt %s: an unknown attempt resolves to approved or declined, not %q", id, to)
	}
	if strings.TrimSpace(r.Who) == "" {
		return Attempt{}, Errorf(EINVALID, "attempt %s: a resolution must name who made it", id)
	}
	return updateTo(ctx, db, "resolve attempt "+id, func(tx *sql.Tx) (Attempt, error) {
		if r.TransactionID != "" {
			if err := transactionFree(ctx, tx, r.TransactionID, id); err != nil {
				return Attempt{}, err
			}
		}
		c, err := chargeColumns(ctx, tx, id, to, r.Charged)
		if err != nil {
			return Attempt{}, err
		}
		witness, err := awaitWitness(id, to, r.AwaitWitness)
		if err != nil {
			return Attempt{}, err
		}
		now := unixMS(db.now())
		raw, card := splitCard(r.Response)
		res, err := tx.ExecContext(ctx, `UPDATE attempts
			SET state = ?, transaction_id = COALESCE(?, transaction_id), response = COALESCE(?, response),
			    charged_amount = COALESCE(?, charged_amount), charged_gift = COALESCE(?, charged_gift),
			    charged_currency = COALESCE(?, charged_currency), flag = COALESCE(?, flag),
			    witness = COALESCE(?, witness), updated_at = ?
			WHERE uuid = ? AND state = 'unknown'`,
			string(to), nullString(r.TransactionID), nullBytes(raw), c.amount, c.gift, c.currency, c.flag, witness, now, id)
		if err != nil {
			return Attempt{}, err
		}
		return moved{
			id: id, from: StateUnknown, to: to, kind: EventResolution, actor: r.Who, raw: raw, card: card, now: now,
			why: fmt.Sprintf("resolved %s by %s", to, r.Who),
			detail: func(out Attempt) string {
				detail := r.Note
				if r.TransactionID != "" {
					detail = strings.TrimSpace(detail + "\ntransactionId " + r.TransactionID)
				}
				if out.Flag != "" && to == StateApproved {
					detail = strings.TrimSpace(detail + "\nflagged: " + out.Flag)
				}
				if out.Witness == WitnessAwaiting {
					detail = strings.TrimSpace(detail + "\nawaiting the provider's record")
				}
				return detail
			},
		}.write(ctx, tx, res)
	})
}
