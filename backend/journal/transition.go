package journal

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
)

// Transition moves an attempt from one state to another if, and only if, it is
// still in from: a compare-and-set, so of two racing transitions exactly one
// wins and the other gets ECONFLICT naming the actual state. A pair outside
// the transition table is EINVALID and nothing is written. Transition(x, sent)
// is MarkSent guarded by x. final_at is set when to is final; the response,
// transaction id and error, when given, are stored on the attempt and the
// response and note on the event.
func (db *DB) Transition(ctx context.Context, id string, from, to State, info TransitionInfo) (Attempt, error) {
	if !from.Valid() || !to.Valid() {
		return Attempt{}, Errorf(EINVALID, "attempt %s: unknown state in %q → %q", id, from, to)
	}
	if !CanTransition(from, to) {
		return Attempt{}, Errorf(EINVALID, "attempt %s: %s → %s is not an allowed transition", id, from, to)
	}
	if to == StateSent {
		return db.markSent(ctx, id, from, info.Note)
	}
	return updateTo(ctx, db, fmt.Sprintf("transition attempt %s %s → %s", id, from, to), func(tx *sql.Tx) (Attempt, error) {
		now := unixMS(db.now())
		var finalAt any
		if to.Final() {
			finalAt = now
		}
		c, err := chargeColumns(ctx, tx, id, to, info.Charged)
		if err != nil {
			return Attempt{}, err
		}
		raw, card := splitCard(info.Response)
		witness, err := awaitWitness(id, to, info.AwaitWitness)
		if err != nil {
			return Attempt{}, err
		}
		res, err := tx.ExecContext(ctx, `UPDATE attempts
			SET state = ?, response = COALESCE(?, response), transaction_id = COALESCE(?, transaction_id),
			    error = COALESCE(?, error), final_at = COALESCE(?, final_at),
			    charged_amount = COALESCE(?, charged_amount), charged_gift = COALESCE(?, charged_gift),
			    charged_currency = COALESCE(?, charged_currency), flag = COALESCE(?, flag),
			    provider_id = COALESCE(?, provider_id), provider_status = COALESCE(?, provider_status),
			    witness = COALESCE(?, witness), updated_at = ?
			WHERE uuid = ? AND state = ?`,
			string(to), nullBytes(raw), nullString(info.TransactionID), nullString(info.Error),
			finalAt, c.amount, c.gift, c.currency, c.flag, nullString(info.ProviderID), nullString(info.ProviderStatus),
			witness, now, id, string(from))
		if err != nil {
			return Attempt{}, err
		}
		return moved{
			id: id, from: from, to: to, kind: EventTransition, raw: raw, card: card, now: now, why: string(to),
			detail: func(out Attempt) string {
				detail := transitionDetail(info)
				if out.Flag != "" && to == StateApproved {
					detail = strings.TrimPrefix(detail+"; flagged: "+out.Flag, "; ")
				}
				if out.Witness == WitnessAwaiting {
					detail = strings.TrimPrefix(detail+"; awaiting the provider's record", "; ")
				}
				return detail
			},
		}.write(ctx, tx, res)
	})
}

// moved is an attempt's move from one state to another, its row just
// updated: what Transition and Resolve then write alike.
type moved struct {
	id        string
	from, to  State
	kind      EventKind
	actor     string
	raw, card []byte // the answer without, and with only, the card's details (splitCard)
	now       int64
	// detail is the event's detail, from the attempt as written (its flag
	// and witness are known only once the row is read back).
	detail func(Attempt) string
	// why ends the order status's reason, after the attempt's kind and id.
	why string
}

// write checks that the update res moved the row (else the race was lost),
// then writes in tx the event, the card's details and, for a final state,
// the order's status and the money given back for sure: one transaction
// with the move, so that none is ever written without the others.
func (m moved) write(ctx context.Context, tx *sql.Tx, res sql.Result) (Attempt, error) {
	n, err := res.RowsAffected()
	if err != nil {
		return Attempt{}, err
	}
	if n == 0 {
		return Attempt{}, lostRace(ctx, tx, m.id, m.from, m.to)
	}
	out, err := getAttempt(ctx, tx, m.id)
	if err != nil {
		return Attempt{}, err
	}
	if err := insertEvent(ctx, tx, out.ID, m.now, m.from, m.to, m.kind, m.actor, m.detail(out), m.raw); err != nil {
		return Attempt{}, err
	}
	if err := storeCard(ctx, tx, out.ID, m.now, m.card); err != nil {
		return Attempt{}, err
	}
	if !m.to.Final() {
		return out, nil
	}
	if _, err := settleStatus(ctx, tx, out.OrderID, m.now, fmt.Sprintf("%s %s %s", out.Kind, m.id, m.why)); err != nil {
		return Attempt{}, err
	}
	return out, outboxGiveBack(ctx, tx, out, m.now)
}

// chargeArgs are the columns an outcome's charge writes, as bound
// arguments (nil leaves a column as it is).
type chargeArgs struct{ amount, gift, currency, flag any }

// chargeColumns checks what an outcome says was charged and, for an
// approval, compares it with what the attempt asked: a disagreement is the
// attempt's flag.
func chargeColumns(ctx context.Context, tx *sql.Tx, id string, to State, c *Charge) (chargeArgs, error) {
	if c == nil {
		return chargeArgs{}, nil
	}
	if c.Amount < 0 || c.GiftAmount < 0 {
		return chargeArgs{}, Errorf(EINVALID, "attempt %s: negative amount charged (%d, gift %d)", id, c.Amount, c.GiftAmount)
	}
	out := chargeArgs{amount: c.Amount, gift: c.GiftAmount}
	// Not a currency at all: kept in the flag's words, never as one.
	if cur := alphaCurrency(c.Currency); validCurrency(cur) {
		out.currency = cur
	}
	if to != StateApproved {
		return out, nil
	}
	a, err := getAttempt(ctx, tx, id)
	if err != nil {
		return chargeArgs{}, err
	}
	var orderCurrency string
	if err := tx.QueryRowContext(ctx, `SELECT currency FROM orders WHERE id = ?`, a.OrderID).Scan(&orderCurrency); err != nil {
		return chargeArgs{}, err
	}
	if why := disagreement(a, orderCurrency, *c); why != "" {
		out.flag = why
	}
	return out, nil
}

// disagreement says how an approval disagrees with what the attempt asked:
// another amount, another tip where the terminal showed no tip screen,
// another currency than the order's, or a transaction of another type. ""
// when it agrees. A currency or a type the provider did not name is no
// disagreement (the specification lets it leave out keys, and tolerates
// types it does not list).
func disagreement(a Attempt, orderCurrency string, c Charge) string {
	var why []string
	if c.Amount != a.Amount {
		why = append(why, fmt.Sprintf("%d charged where %d was asked", c.Amount, a.Amount))
	}
	if c.NoTipScreen && c.GiftAmount != a.GiftAmount {
		why = append(why, fmt.Sprintf("a tip of %d where %d was asked, with no tip screen", c.GiftAmount, a.GiftAmount))
	}
	if cur := strings.TrimSpace(c.Currency); cur != "" && alphaCurrency(cur) != strings.ToUpper(orderCurrency) {
		why = append(why, fmt.Sprintf("currency %q where the order is in %s", cur, orderCurrency))
	}
	if t := strings.ToLower(strings.TrimSpace(c.Type)); (t == "debit" || t == "refund") && a.Kind != KindReversal && t != string(a.Kind) {
		why = append(why, fmt.Sprintf("a %s where a %s was asked", t, a.Kind))
	}
	return strings.Join(why, "; ")
}

// alphaCurrency is an ISO 4217 code as the journal keeps it: its letters,
// in capitals. The standard has numeric codes too; those of the currencies
// the specification names (EUR 978, CHF 756, GBP 826) are read as theirs,
// any other is left as it is (no currency the journal keeps).
func alphaCurrency(code string) string {
	code = strings.ToUpper(strings.TrimSpace(code))
	switch code {
	case "978":
		return "EUR"
	case "756":
		return "CHF"
	case "826":
		return "GBP"
	}
	return code
}

// lostRace explains a guarded update that matched no row.
func lostRace(ctx context.Context, tx *sql.Tx, id string, from, to State) error {
	var actual string
	err := tx.QueryRowContext(ctx, `SELECT state FROM attempts WHERE uuid = ?`, id).Scan(&actual)
	if errors.Is(err, sql.ErrNoRows) {
		return Errorf(ENOTFOUND, "attempt %s not found", id)
	}
	if err != nil {
		return err
	}
	return Errorf(ECONFLICT, "attempt %s is %s, not %s: %s → %s refused", id, actual, from, from, to)
}

func transitionDetail(info TransitionInfo) string {
	var parts []string
	if info.Note != "" {
		parts = append(parts, info.Note)
	}
	if info.TransactionID != "" {
		parts = append(parts, "transactionId "+info.TransactionID)
	}
	if info.Error != "" {
		parts = append(parts, "error: "+info.Error)
	}
	if c := info.Charged; c != nil {
		parts = append(parts, fmt.Sprintf("charged %d (gift %d)", c.Amount, c.GiftAmount))
	}
	if info.ProviderID != "" {
		parts = append(parts, "provider id "+info.ProviderID)
	}
	if info.ProviderStatus != "" {
		parts = append(parts, "provider status "+info.ProviderStatus)
	}
	return strings.Join(parts, "; ")
}
