package journal

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
)

// OrderFacts are what an order's status is concluded from.
type OrderFacts struct {
	Total int64
	// Paid is what its approved debits charged, tips aside, those whose
	// answer disagreed with the request (flagged) not counted.
	Paid int64
	// Kept is what the customer was charged for it, less what was given
	// back for sure.
	Kept int64
	// Closed: nothing more will be asked of it (the customer went away,
	// its link was cancelled, staff closed it).
	Closed bool
	// Running: an attempt of it is not final yet: money may still move.
	Running bool
	// Attention: an attempt of it has an unknown outcome or a flag, an
	// approval of it awaits the provider's record or was denied by it, or
	// the order itself was flagged for staff.
	Attention bool
}

// StatusOf is the one rule that gives an order its status. Only the
// journal applies it (settleStatus), in the transaction of every change
// that can move it: an attempt's outcome, a resolution, a close, a flag,
// staff's acceptance.
func StatusOf(f OrderFacts) OrderStatus {
	switch {
	case f.Attention:
		return OrderNeedsAttention
	case f.Total > 0 && f.Paid >= f.Total:
		return OrderPaid
	case f.Closed && f.Kept <= 0 && !f.Running:
		return OrderCancelled
	case f.Closed:
		// Closed with money kept for it and not paid in full (someone
		// refunds it or collects the rest), or while an attempt of it may
		// still take money (nobody follows it on a screen any more).
		return OrderNeedsAttention
	}
	return OrderOpen
}

func orderFacts(ctx context.Context, q queryer, orderID string) (OrderFacts, OrderStatus, error) {
	m, err := orderMoney(ctx, q, orderID)
	if err != nil {
		return OrderFacts{}, "", err
	}
	var (
		status    string
		closed    bool
		attention bool
		running   bool
	)
	err = q.QueryRowContext(ctx, `SELECT o.status, o.closed_at IS NOT NULL,
			EXISTS (SELECT 1 FROM attempts a WHERE a.order_id = o.id AND a.`+openStatesSQL+`),
			o.attention IS NOT NULL OR EXISTS (SELECT 1 FROM attempts a
				WHERE a.order_id = o.id AND (a.state = 'unknown' OR a.flag IS NOT NULL
					OR a.witness IN ('awaiting', 'denied')))
		FROM orders o WHERE o.id = ?`, orderID).Scan(&status, &closed, &running, &attention)
	if err != nil {
		return OrderFacts{}, "", err
	}
	f := OrderFacts{Total: m.Total, Paid: m.Paid, Kept: m.Taken() - m.Refunded - m.Reversed, Closed: closed,
		Running: running, Attention: attention}
	return f, OrderStatus(status), nil
}

// settleStatus applies StatusOf to the order inside tx, and records the
// change with why when the status moves (moved).
func settleStatus(ctx context.Context, tx *sql.Tx, orderID string, now int64, why string) (moved bool, err error) {
	f, from, err := orderFacts(ctx, tx, orderID)
	if err != nil {
		return false, err
	}
	to := StatusOf(f)
	if to == from {
		return false, nil
	}
	if _, err := tx.ExecContext(ctx, `UPDATE orders SET status = ?, updated_at = ? WHERE id = ?`, string(to), now, orderID); err != nil {
		return false, err
	}
	if err := outboxOrder(ctx, tx, orderID, from, to, now); err != nil {
		return false, err
	}
	return true, insertOrderEvent(ctx, tx, orderID, now, from, to, why)
}

func insertOrderEvent(ctx context.Context, tx *sql.Tx, orderID string, now int64, from, to OrderStatus, note string) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO order_events (order_id, at, from_status, to_status, note) VALUES (?, ?, ?, ?, ?)`,
		orderID, now, nullString(string(from)), string(to), nullString(note))
	return err
}

// OrderFactsOf returns what the order's status is concluded from.
func (db *DB) OrderFactsOf(ctx context.Context, orderID string) (OrderFacts, error) {
	f, _, err := orderFacts(ctx, db.r, orderID)
	if err != nil {
		return OrderFacts{}, mapErr(err, "read the facts of order "+orderID)
	}
	return f, nil
}

// CloseOrder records that nothing more will be asked of an order: the
// customer went away, its payment link was cancelled, it could not start.
// Its status follows (cancelled when nothing was kept for it, needs
// attention when a part was). A late approval still makes it paid: money
// taken is never ignored. Closing again is a no-op.
func (db *DB) CloseOrder(ctx context.Context, id, why string) error {
	if strings.TrimSpace(why) == "" {
		return Errorf(EINVALID, "order %s: a close says why", id)
	}
	return db.update(ctx, "close order "+id, func(tx *sql.Tx) error {
		now := unixMS(db.now())
		res, err := tx.ExecContext(ctx, `UPDATE orders SET closed_at = ?, updated_at = ? WHERE id = ? AND closed_at IS NULL`, now, now, id)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return orderExists(ctx, tx, id)
		}
		_, err = settleStatus(ctx, tx, id, now, "closed: "+why)
		return err
	})
}

// FlagOrder sets an order aside for staff, with why: it needs attention
// until staff accept it (AcceptOrder). A flag already set keeps its first
// reason; the new one is recorded as an event.
func (db *DB) FlagOrder(ctx context.Context, id, why string) error {
	if strings.TrimSpace(why) == "" {
		return Errorf(EINVALID, "order %s: a flag says why", id)
	}
	return db.update(ctx, "flag order "+id, func(tx *sql.Tx) error {
		if err := orderExists(ctx, tx, id); err != nil {
			return err
		}
		now := unixMS(db.now())
		if _, err := tx.ExecContext(ctx, `UPDATE orders SET attention = COALESCE(attention, ?), updated_at = ? WHERE id = ?`,
			why, now, id); err != nil {
			return err
		}
		moved, err := settleStatus(ctx, tx, id, now, "flagged: "+why)
		if err != nil || moved {
			return err
		}
		// Already needing attention: the reason is in the order's history
		// all the same.
		var st OrderStatus
		if err := tx.QueryRowContext(ctx, `SELECT status FROM orders WHERE id = ?`, id).Scan(&st); err != nil {
			return err
		}
		return insertOrderEvent(ctx, tx, id, now, st, st, "flagged: "+why)
	})
}

// AcceptOrder is staff's word on an order that needed attention for a
// flag: the order's own flag is lifted, and the approvals that disagreed
// with their request, or that the provider's record did not show
// (WitnessDenied), count as paid for what they charged. Attempts whose
// outcome is unknown are not touched: Resolve settles them. who is
// required and goes, with the note, into the audit trail.
func (db *DB) AcceptOrder(ctx context.Context, id, who, note string) (OrderStatus, error) {
	if strings.TrimSpace(who) == "" || strings.TrimSpace(note) == "" {
		return "", Errorf(EINVALID, "order %s: an acceptance names who made it and why", id)
	}
	var out OrderStatus
	err := db.update(ctx, "accept order "+id, func(tx *sql.Tx) error {
		if err := orderExists(ctx, tx, id); err != nil {
			return err
		}
		now := unixMS(db.now())
		rows, err := tx.QueryContext(ctx, `SELECT id, state, flag FROM attempts WHERE order_id = ? AND flag IS NOT NULL`, id)
		if err != nil {
			return err
		}
		type flagged struct {
			id          int64
			state, flag string
		}
		var fs []flagged
		for rows.Next() {
			var f flagged
			if err := rows.Scan(&f.id, &f.state, &f.flag); err != nil {
				rows.Close()
				return err
			}
			fs = append(fs, f)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, f := range fs {
			if _, err := tx.ExecContext(ctx, `UPDATE attempts SET flag = NULL, updated_at = ? WHERE id = ?`, now, f.id); err != nil {
				return err
			}
			detail := fmt.Sprintf("accepted as charged (was flagged: %s): %s", f.flag, note)
			if err := insertEvent(ctx, tx, f.id, now, State(f.state), State(f.state), EventAccepted, who, detail, nil); err != nil {
				return err
			}
		}
		if err := acceptDenied(ctx, tx, id, now, who, note); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE orders SET attention = NULL, updated_at = ? WHERE id = ?`, now, id); err != nil {
			return err
		}
		if _, err := settleStatus(ctx, tx, id, now, "accepted by "+who+": "+note); err != nil {
			return err
		}
		return tx.QueryRowContext(ctx, `SELECT status FROM orders WHERE id = ?`, id).Scan(&out)
	})
	if err != nil {
		return "", err
	}
	return out, nil
}

func orderExists(ctx context.Context, tx *sql.Tx, id string) error {
	var one int
	err := tx.QueryRowContext(ctx, `SELECT 1 FROM orders WHERE id = ?`, id).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return Errorf(ENOTFOUND, "order %s not found", id)
	}
	return err
}
