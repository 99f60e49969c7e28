package journal

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
)

// Money is what an order's attempts add up to, in cents. It is the one
// account of an order's money: what it still owes, what was taken, and what
// can still be given back. Every path that takes or gives back money reads
// it; PrepareAttempt checks it in the same transaction as the new attempt.
type Money struct {
	Total int64 // the order's total
	// Paid and Gifts are the approved debits, as the provider said it
	// charged them: the amounts, and the tips or donations. An approval
	// that disagreed with its request (flagged) is in neither until staff
	// accept it: it is in Flagged, amount and tip together.
	Paid    int64
	Gifts   int64
	Flagged int64
	// Unwitnessed is the approvals taken over the LAN that the provider's
	// record has not confirmed (awaiting it, or denied by it), amount and
	// tip together: the provider does not say the money was taken, so it
	// neither pays nor can be given back until it does, or staff accept it.
	Unwitnessed int64
	// Refunded and Reversed are the approved refunds (gifts included) and
	// reversals.
	Refunded int64
	Reversed int64
	// Pending is every refund and reversal not final yet, or whose outcome
	// is unknown: it may have given money back, so it counts as given.
	Pending int64
}

// Taken is what the customer was charged for the order, flagged
// approvals included: that money can be given back.
func (m Money) Taken() int64 { return m.Paid + m.Gifts + m.Flagged }

// GivenBack is what was, or may have been, given back.
func (m Money) GivenBack() int64 { return m.Refunded + m.Reversed + m.Pending }

// Givable is what can still be given back: never more than was taken.
func (m Money) Givable() int64 { return max(m.Taken()-m.GivenBack(), 0) }

// Due is what the order still owes.
func (m Money) Due() int64 { return max(m.Total-m.Paid, 0) }

// moneyQuery sums an order's attempts. A debit counts what the provider
// said it charged when it said so (charged_*), else what was asked.
const moneyQuery = `SELECT o.total,
	COALESCE(SUM(CASE WHEN a.kind = 'debit' AND a.state = 'approved' AND a.flag IS NULL AND ` + witnessedSQL + `
		THEN COALESCE(a.charged_amount, a.amount) END), 0),
	COALESCE(SUM(CASE WHEN a.kind = 'debit' AND a.state = 'approved' AND a.flag IS NULL AND ` + witnessedSQL + `
		THEN COALESCE(a.charged_gift, a.gift_amount) END), 0),
	COALESCE(SUM(CASE WHEN a.kind = 'debit' AND a.state = 'approved' AND a.flag IS NOT NULL AND ` + witnessedSQL + `
		THEN COALESCE(a.charged_amount, a.amount) + COALESCE(a.charged_gift, a.gift_amount) END), 0),
	COALESCE(SUM(CASE WHEN a.kind = 'debit' AND a.state = 'approved' AND NOT ` + witnessedSQL + `
		THEN COALESCE(a.charged_amount, a.amount) + COALESCE(a.charged_gift, a.gift_amount) END), 0),
	COALESCE(SUM(CASE WHEN a.kind = 'refund' AND a.state = 'approved'
		THEN COALESCE(a.charged_amount, a.amount) + COALESCE(a.charged_gift, a.gift_amount) END), 0),
	COALESCE(SUM(CASE WHEN a.kind = 'reversal' AND a.state = 'approved'
		THEN COALESCE(a.charged_amount, a.amount) + COALESCE(a.charged_gift, a.gift_amount) END), 0),
	COALESCE(SUM(CASE WHEN a.kind IN ('refund', 'reversal')
		AND a.state IN ('prepared', 'sent', 'abort_requested', 'unknown')
		THEN a.amount + a.gift_amount END), 0)
FROM orders o LEFT JOIN attempts a ON a.order_id = o.id
WHERE o.id = ?
GROUP BY o.id`

func orderMoney(ctx context.Context, q queryer, orderID string) (Money, error) {
	var m Money
	err := q.QueryRowContext(ctx, moneyQuery, orderID).Scan(&m.Total, &m.Paid, &m.Gifts, &m.Flagged, &m.Unwitnessed, &m.Refunded, &m.Reversed, &m.Pending)
	if errors.Is(err, sql.ErrNoRows) {
		return Money{}, Errorf(ENOTFOUND, "order %s not found", orderID)
	}
	return m, err
}

// OrderMoney returns the account of an order's money.
func (db *DB) OrderMoney(ctx context.Context, orderID string) (Money, error) {
	m, err := orderMoney(ctx, db.r, orderID)
	if err != nil {
		return Money{}, mapErr(err, "read the money of order "+orderID)
	}
	return m, nil
}

// checkMoney refuses, inside PrepareAttempt's transaction, an attempt that
// would take more than the order owes, or give back more than it took. A
// reversal also names an approved debit of this order, on this terminal,
// and gives back all of it.
func checkMoney(ctx context.Context, tx *sql.Tx, a Attempt) error {
	m, err := orderMoney(ctx, tx, a.OrderID)
	if err != nil {
		return err
	}
	if a.Kind == KindReversal {
		if err := checkReversal(ctx, tx, a); err != nil {
			return err
		}
	}
	if a.Channel == ChannelWebservices {
		if err := checkAPIRefund(ctx, tx, a); err != nil {
			return err
		}
	}
	switch a.Kind {
	case KindDebit:
		if due := m.Due(); a.Amount > due {
			return Errorf(ECONFLICT, "order %s owes %d, not %d", a.OrderID, due, a.Amount)
		}
	case KindRefund, KindReversal:
		if give, left := a.Amount+a.GiftAmount, m.Givable(); give > left {
			return Errorf(ECONFLICT, "order %s can be given back %d at most (taken %d, given back or pending %d), not %d",
				a.OrderID, left, m.Taken(), m.GivenBack(), give)
		}
	}
	return nil
}

// checkReversal: a reversal gives back one whole approved debit of its
// order, on the terminal that took it, once.
func checkReversal(ctx context.Context, tx *sql.Tx, a Attempt) error {
	debit, err := scanAttempt(tx.QueryRowContext(ctx, `SELECT `+attemptColumns+` FROM attempts
		WHERE transaction_id = ? AND kind = 'debit' AND state = 'approved'`, a.InitialTransactionID))
	if errors.Is(err, sql.ErrNoRows) {
		return Errorf(ECONFLICT, "no approved debit holds transaction %s: nothing to reverse", a.InitialTransactionID)
	}
	if err != nil {
		return err
	}
	switch {
	case debit.OrderID != a.OrderID:
		return Errorf(EINVALID, "transaction %s is order %s's, not %s's", a.InitialTransactionID, debit.OrderID, a.OrderID)
	case debit.Terminal != a.Terminal:
		return Errorf(ECONFLICT, "transaction %s was taken on terminal %s: only that terminal reverses it, not %s",
			a.InitialTransactionID, debit.Terminal, a.Terminal)
	case a.Amount != debit.Total():
		return Errorf(EINVALID, "a reversal gives back the whole debit, %d (amount + gift), not %d", debit.Total(), a.Amount)
	}
	var other string
	var kind Kind
	err = tx.QueryRowContext(ctx, `SELECT uuid, kind FROM attempts WHERE initial_transaction_id = ?
		AND (kind = 'reversal' OR (kind = 'refund' AND channel = 'webservices'))
		AND state IN ('prepared', 'sent', 'abort_requested', 'approved', 'unknown')`, a.InitialTransactionID).Scan(&other, &kind)
	if err == nil {
		return Errorf(ECONFLICT, "transaction %s already has %s %s", a.InitialTransactionID, kind, other)
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	return nil
}

// checkAPIRefund: a refund by API (the Webservices) gives back part or all
// of one approved debit of its order, once: the provider refunds a
// transaction once, and a partial refund leaves the rest of it
// non-refundable by API. A refund declined or failed leaves it refundable;
// one not final yet, or unknown, may have been made. A reversal of the
// same transaction, made or possibly made, leaves nothing to refund.
func checkAPIRefund(ctx context.Context, tx *sql.Tx, a Attempt) error {
	debit, err := scanAttempt(tx.QueryRowContext(ctx, `SELECT `+attemptColumns+` FROM attempts
		WHERE transaction_id = ? AND kind = 'debit' AND state = 'approved'`, a.InitialTransactionID))
	if errors.Is(err, sql.ErrNoRows) {
		return Errorf(ECONFLICT, "no approved debit holds transaction %s: nothing to refund", a.InitialTransactionID)
	}
	if err != nil {
		return err
	}
	switch {
	case debit.OrderID != a.OrderID:
		return Errorf(EINVALID, "transaction %s is order %s's, not %s's", a.InitialTransactionID, debit.OrderID, a.OrderID)
	case a.Amount > debit.Total(): // a refund by API asks its whole amount in Amount (validateAttempt)
		return Errorf(EINVALID, "transaction %s took %d: a refund gives back no more, not %d", a.InitialTransactionID, debit.Total(), a.Amount)
	}
	var other string
	var kind Kind
	err = tx.QueryRowContext(ctx, `SELECT uuid, kind FROM attempts WHERE initial_transaction_id = ?
		AND ((kind = 'refund' AND channel = 'webservices') OR kind = 'reversal')
		AND state IN ('prepared', 'sent', 'abort_requested', 'approved', 'unknown')`, a.InitialTransactionID).Scan(&other, &kind)
	if err == nil {
		return Errorf(ECONFLICT, "transaction %s already has %s %s: the provider gives a transaction back once", a.InitialTransactionID, kind, other)
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	return nil
}

// AttemptByTransaction returns the attempt that holds a provider's
// transaction, ENOTFOUND if none does.
func (db *DB) AttemptByTransaction(ctx context.Context, transactionID string) (Attempt, error) {
	if transactionID == "" {
		return Attempt{}, Errorf(EINVALID, "no transaction id")
	}
	a, err := scanAttempt(db.r.QueryRowContext(ctx, `SELECT `+attemptColumns+` FROM attempts
		WHERE transaction_id = ? ORDER BY id LIMIT 1`, transactionID))
	if errors.Is(err, sql.ErrNoRows) {
		return Attempt{}, Errorf(ENOTFOUND, "no attempt holds transaction %s", transactionID)
	}
	if err != nil {
		return Attempt{}, mapErr(err, "find transaction "+transactionID)
	}
	return a, nil
}

// HeldTransactions returns which of these transactions an attempt holds.
func (db *DB) HeldTransactions(ctx context.Context, ids []string) (map[string]bool, error) {
	held := map[string]bool{}
	for start := 0; start < len(ids); start += 500 {
		chunk := ids[start:min(start+500, len(ids))]
		args := make([]any, len(chunk))
		for i, id := range chunk {
			args[i] = id
		}
		rows, err := db.r.QueryContext(ctx, `SELECT transaction_id FROM attempts WHERE transaction_id IN (?`+
			strings.Repeat(", ?", len(chunk)-1)+`)`, args...)
		if err != nil {
			return nil, mapErr(err, "find held transactions")
		}
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return nil, mapErr(err, "find held transactions")
			}
			held[id] = true
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, mapErr(err, "find held transactions")
		}
	}
	return held, nil
}

// AdoptedCharge is a charge the provider's history shows and no attempt
// holds: made on the terminal's own keypad, for instance.
type AdoptedCharge struct {
	TransactionID string
	Amount        int64 // cents, gift excluded
	GiftAmount    int64
	Currency      string
	Terminal      string  // the terminal's identity, as attempts name it
	Channel       Channel // local when empty
	At            time.Time
	CartID        string // the cartId the provider lists, if any
	Raw           []byte // the history entry, as read
	Who           string // who adopts it
}

// transactionFree refuses a provider's transaction that an attempt other
// than except (a uuid, "" for none) already holds: a transaction is one
// attempt's.
func transactionFree(ctx context.Context, tx *sql.Tx, transactionID, except string) error {
	var other string
	err := tx.QueryRowContext(ctx, `SELECT uuid FROM attempts WHERE transaction_id = ? AND uuid <> ?`,
		transactionID, except).Scan(&other)
	if err == nil {
		return Errorf(ECONFLICT, "transaction %s is already attempt %s's", transactionID, other)
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	return nil
}

// AdoptedOrderPrefix starts the id of the order an adopted charge gets.
const AdoptedOrderPrefix = "charge-"

// AdoptCharge records a charge the journal did not know, so that it can be
// given back like any other and never beyond what it took: an order of its
// own (id AdoptedOrderPrefix + transaction id, paid) holding one approved
// debit with the provider's transaction, marked by an adopted event. Its
// request body is the history entry that showed it: nothing was sent.
// ECONFLICT if an attempt already holds the transaction.
func (db *DB) AdoptCharge(ctx context.Context, c AdoptedCharge) (Attempt, error) {
	switch {
	case c.TransactionID == "":
		return Attempt{}, Errorf(EINVALID, "an adopted charge needs its transaction id")
	case c.Amount <= 0 || c.GiftAmount < 0:
		return Attempt{}, Errorf(EINVALID, "an adopted charge has a positive amount and no negative gift")
	case !validCurrency(c.Currency):
		return Attempt{}, Errorf(EINVALID, "currency %q is not a three-letter code", c.Currency)
	case c.Terminal == "":
		return Attempt{}, Errorf(EINVALID, "an adopted charge names its terminal")
	case strings.TrimSpace(c.Who) == "":
		return Attempt{}, Errorf(EINVALID, "an adopted charge names who adopted it")
	}
	channel := c.Channel
	if channel == "" {
		channel = ChannelLocal
	}
	if !channel.Valid() {
		return Attempt{}, Errorf(EINVALID, "unknown channel %q", channel)
	}
	// The record that showed the charge may carry its card tickets: they
	// are kept apart, as an answer's are.
	raw, card := splitCard(c.Raw)
	body := raw
	if !json.Valid(body) {
		body, _ = json.Marshal(map[string]any{"transactionId": c.TransactionID, "amount": c.Amount, "giftAmount": c.GiftAmount})
	}
	id, err := uuid.NewV7()
	if err != nil {
		return Attempt{}, fmt.Errorf("journal: new uuid: %w", err)
	}
	orderID := AdoptedOrderPrefix + c.TransactionID
	data, _ := json.Marshal(map[string]any{"adopted": true, "cartId": c.CartID})
	return updateTo(ctx, db, "adopt charge "+c.TransactionID, func(tx *sql.Tx) (Attempt, error) {
		if err := transactionFree(ctx, tx, c.TransactionID, ""); err != nil {
			return Attempt{}, err
		}
		now := unixMS(db.now())
		at := now
		if !c.At.IsZero() {
			at = unixMS(c.At)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO orders (id, created_at, updated_at, currency, total, status, data)
			VALUES (?, ?, ?, ?, ?, 'paid', ?)`, orderID, at, now, c.Currency, c.Amount, string(data)); err != nil {
			return Attempt{}, err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO order_events (order_id, at, from_status, to_status, note)
			VALUES (?, ?, NULL, 'paid', ?)`, orderID, now, "a charge of the provider's history, adopted by "+c.Who); err != nil {
			return Attempt{}, err
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO attempts
			(uuid, order_id, kind, channel, amount, gift_amount, policy, terminal, request_body, state,
			 response, transaction_id, charged_amount, charged_gift, send_count, created_at, final_at, updated_at)
			VALUES (?, ?, 'debit', ?, ?, ?, 'counter', ?, ?, 'approved', ?, ?, ?, ?, 0, ?, ?, ?)`,
			id.String(), orderID, string(channel), c.Amount, c.GiftAmount, c.Terminal, string(body),
			nullBytes(raw), c.TransactionID, c.Amount, c.GiftAmount, at, now, now)
		if err != nil {
			return Attempt{}, err
		}
		rowID, err := res.LastInsertId()
		if err != nil {
			return Attempt{}, err
		}
		detail := fmt.Sprintf("charge %s of %d (gift %d) found in the history of %s and adopted by %s: nothing was sent",
			c.TransactionID, c.Amount, c.GiftAmount, c.Terminal, c.Who)
		if err := storeCard(ctx, tx, rowID, now, card); err != nil {
			return Attempt{}, err
		}
		if err := insertEvent(ctx, tx, rowID, now, "", StateApproved, EventAdopted, c.Who, detail, raw); err != nil {
			return Attempt{}, err
		}
		return getAttempt(ctx, tx, id.String())
	})
}

// UnknownAttempts returns every attempt whose outcome is unknown, oldest
// first: what the provider's history may now settle. It reads the partial
// index attempts_unknown.
func (db *DB) UnknownAttempts(ctx context.Context) ([]Attempt, error) {
	return db.queryAttempts(ctx, "read unknown attempts",
		`SELECT `+attemptColumns+` FROM attempts WHERE state = 'unknown' ORDER BY created_at, id`)
}
