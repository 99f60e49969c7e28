package journal

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
)

// AdoptedGiveBack is money the provider gave back for an order outside
// Comptoir: a refund made in its back office, a reversal made on the
// terminal's own keypad. The provider's record shows it; no attempt of
// the journal made it.
type AdoptedGiveBack struct {
	OrderID string
	Kind    Kind // refund or reversal
	// TransactionID is the provider's id of the refund or reversal itself;
	// InitialTransactionID the debit it gives back, when the provider
	// names it (a reversal always does).
	TransactionID        string
	InitialTransactionID string
	Amount               int64 // cents given back, tip included
	Currency             string
	At                   time.Time
	Raw                  []byte // the provider's record, as read
	Who                  string // who adopts it: "system:reconcile", a member of staff
}

// AdoptGiveBack records money given back outside Comptoir like AdoptCharge
// records a charge: an approved attempt of its kind on its order, marked
// by an adopted event, with nothing sent. It then counts in what the order
// gave back (Money.GivenBack), so that what can still be given back is
// true. It is recorded whatever the order's account says (the provider
// made it); when it gives back more than the order took, the order is
// flagged for staff in the same transaction. ECONFLICT if an attempt
// already holds the transaction.
func (db *DB) AdoptGiveBack(ctx context.Context, g AdoptedGiveBack) (Attempt, error) {
	switch {
	case g.OrderID == "" || g.TransactionID == "":
		return Attempt{}, Errorf(EINVALID, "money given back is adopted on an order, with its transaction id")
	case g.Kind != KindRefund && g.Kind != KindReversal:
		return Attempt{}, Errorf(EINVALID, "money given back is a refund or a reversal, not %q", g.Kind)
	case g.Kind == KindReversal && g.InitialTransactionID == "":
		return Attempt{}, Errorf(EINVALID, "a reversal names the transaction it reverses")
	case g.Amount <= 0:
		return Attempt{}, Errorf(EINVALID, "money given back is a positive amount, not %d", g.Amount)
	case g.Currency != "" && !validCurrency(strings.ToUpper(g.Currency)):
		return Attempt{}, Errorf(EINVALID, "currency %q is not a three-letter code", g.Currency)
	case strings.TrimSpace(g.Who) == "":
		return Attempt{}, Errorf(EINVALID, "money given back is adopted by someone")
	}
	id, err := uuid.NewV7()
	if err != nil {
		return Attempt{}, fmt.Errorf("journal: new uuid: %w", err)
	}
	// The provider's record may carry card tickets: kept apart, as an
	// answer's are.
	raw, card := splitCard(g.Raw)
	body := raw
	if !json.Valid(body) {
		body, _ = json.Marshal(map[string]any{"transactionId": g.TransactionID, "amount": g.Amount})
	}
	return updateTo(ctx, db, "adopt money given back "+g.TransactionID, func(tx *sql.Tx) (Attempt, error) {
		if err := transactionFree(ctx, tx, g.TransactionID, ""); err != nil {
			return Attempt{}, err
		}
		if err := orderExists(ctx, tx, g.OrderID); err != nil {
			return Attempt{}, err
		}
		channel, terminal, policy := adoptedWay(ctx, tx, g)
		now := unixMS(db.now())
		at := now
		if !g.At.IsZero() {
			at = unixMS(g.At)
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO attempts
			(uuid, order_id, kind, channel, amount, gift_amount, policy, terminal, initial_transaction_id, request_body, state,
			 response, transaction_id, charged_amount, charged_gift, charged_currency, send_count, created_at, final_at, updated_at)
			VALUES (?, ?, ?, ?, ?, 0, ?, ?, ?, ?, 'approved', ?, ?, ?, 0, ?, 0, ?, ?, ?)`,
			id.String(), g.OrderID, string(g.Kind), string(channel), g.Amount, string(policy), terminal,
			nullString(g.InitialTransactionID), string(body), nullBytes(raw), g.TransactionID, g.Amount,
			nullString(strings.ToUpper(g.Currency)), at, now, now)
		if err != nil {
			return Attempt{}, err
		}
		rowID, err := res.LastInsertId()
		if err != nil {
			return Attempt{}, err
		}
		detail := fmt.Sprintf("%s %s of %d made outside Comptoir, found in the provider's record and adopted by %s: nothing was sent",
			g.Kind, g.TransactionID, g.Amount, g.Who)
		if err := storeCard(ctx, tx, rowID, now, card); err != nil {
			return Attempt{}, err
		}
		if err := insertEvent(ctx, tx, rowID, now, "", StateApproved, EventAdopted, g.Who, detail, raw); err != nil {
			return Attempt{}, err
		}
		if err := flagOverGiven(ctx, tx, g.OrderID, now); err != nil {
			return Attempt{}, err
		}
		if _, err := settleStatus(ctx, tx, g.OrderID, now, fmt.Sprintf("%s %s made outside Comptoir", g.Kind, g.TransactionID)); err != nil {
			return Attempt{}, err
		}
		out, err := getAttempt(ctx, tx, id.String())
		if err != nil {
			return Attempt{}, err
		}
		return out, outboxGiveBack(ctx, tx, out, now)
	})
}

// adoptedWay is how an adopted give-back is journaled: a refund of a
// named transaction as the Webservices' (the provider gives a transaction
// back once by API, and the journal then refuses a second refund by API
// of it), a reversal on the terminal and channel of the debit it reverses.
func adoptedWay(ctx context.Context, tx *sql.Tx, g AdoptedGiveBack) (Channel, string, Policy) {
	var channel, terminal string
	err := tx.QueryRowContext(ctx, `SELECT channel, terminal FROM attempts WHERE transaction_id = ? AND kind = 'debit'`,
		g.InitialTransactionID).Scan(&channel, &terminal)
	if err != nil {
		channel, terminal = string(ChannelLocal), "provider"
	}
	if g.Kind == KindRefund {
		if g.InitialTransactionID != "" {
			channel = string(ChannelWebservices)
		}
		return Channel(channel), terminal, PolicyRefund
	}
	return Channel(channel), terminal, PolicyReversal
}

// flagOverGiven flags an order whose account gives back more than it
// took: the provider's record says so, and staff must look.
func flagOverGiven(ctx context.Context, tx *sql.Tx, orderID string, now int64) error {
	m, err := orderMoney(ctx, tx, orderID)
	if err != nil || m.GivenBack() <= m.Taken() {
		return err
	}
	_, err = tx.ExecContext(ctx, `UPDATE orders SET attention = COALESCE(attention, ?), updated_at = ? WHERE id = ?`,
		fmt.Sprintf("the provider gave back %d of the %d this order took", m.GivenBack(), m.Taken()), now, orderID)
	return err
}
