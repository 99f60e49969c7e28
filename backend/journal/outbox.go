package journal

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
)

// Outbox kinds: what a row of the outbox tells other machines.
const (
	OutboxPaid      = "order.paid"
	OutboxCancelled = "order.cancelled"
	OutboxAttention = "order.attention"
	OutboxGiveBack  = "giveback"
	OutboxClosing   = "fiscal.closing"
	OutboxArchive   = "fiscal.archive"
)

// OutboxEntry is one fact for other machines, as the journal wrote it in
// the transaction of the fact.
type OutboxEntry struct {
	// Seq orders the facts of this journal.
	Seq int64
	// MsgID is the fact's own id (a UUID v7): the stream keeps it as
	// Nats-Msg-Id and drops a second copy.
	MsgID   string
	At      time.Time
	Kind    string
	OrderID string // "" for a fiscal record
	Payload json.RawMessage
	// PublishedAt is zero until the stream acknowledged the fact.
	PublishedAt time.Time
}

// OrderFact is the payload of an order's outbox row: its status as the
// journal just concluded it, and what the kitchen and head office need.
type OrderFact struct {
	OrderID   string          `json:"orderId"`
	From      OrderStatus     `json:"from"`
	To        OrderStatus     `json:"to"`
	Currency  string          `json:"currency"`
	Total     int64           `json:"total"`
	Paid      int64           `json:"paid"`
	GivenBack int64           `json:"givenBack"`
	CreatedAt int64           `json:"createdAt"` // ms since the epoch
	At        int64           `json:"at"`
	Data      json.RawMessage `json:"data,omitempty"` // the order's lines, as the kiosk wrote them
}

// GiveBackFact is the payload of a give-back's outbox row.
type GiveBackFact struct {
	OrderID       string `json:"orderId"`
	Attempt       string `json:"attempt"` // the attempt's uuid
	Kind          Kind   `json:"kind"`
	Amount        int64  `json:"amount"`
	Currency      string `json:"currency"`
	TransactionID string `json:"transactionId,omitempty"`
	At            int64  `json:"at"`
}

// outboxKindOf is the outbox kind of an order moving to status, "" when
// the move is no news for others (back to open cannot happen once final).
func outboxKindOf(to OrderStatus) string {
	switch to {
	case OrderPaid:
		return OutboxPaid
	case OrderCancelled:
		return OutboxCancelled
	case OrderNeedsAttention:
		return OutboxAttention
	}
	return ""
}

// outboxOrder writes the outbox row of an order whose status moved, inside
// the transaction that moved it (settleStatus).
func outboxOrder(ctx context.Context, tx *sql.Tx, orderID string, from, to OrderStatus, now int64) error {
	kind := outboxKindOf(to)
	if kind == "" {
		return nil
	}
	m, err := orderMoney(ctx, tx, orderID)
	if err != nil {
		return err
	}
	f := OrderFact{OrderID: orderID, From: from, To: to, Total: m.Total, Paid: m.Paid, GivenBack: m.Refunded + m.Reversed, At: now}
	var data sql.NullString
	if err := tx.QueryRowContext(ctx, `SELECT currency, created_at, data FROM orders WHERE id = ?`, orderID).
		Scan(&f.Currency, &f.CreatedAt, &data); err != nil {
		return err
	}
	f.Data = linesOf(data)
	return insertOutbox(ctx, tx, kind, orderID, f, now)
}

// outboxGiveBack writes the outbox row of money given back for sure: a
// refund or reversal approved (Transition, Resolve) or adopted
// (AdoptGiveBack), inside the transaction that says so.
func outboxGiveBack(ctx context.Context, tx *sql.Tx, a Attempt, now int64) error {
	if !a.Kind.GivesBack() || a.State != StateApproved {
		return nil
	}
	f := GiveBackFact{OrderID: a.OrderID, Attempt: a.UUID, Kind: a.Kind, Amount: a.Total(), TransactionID: a.TransactionID, At: now}
	if err := tx.QueryRowContext(ctx, `SELECT currency FROM orders WHERE id = ?`, a.OrderID).Scan(&f.Currency); err != nil {
		return err
	}
	return insertOutbox(ctx, tx, OutboxGiveBack, a.OrderID, f, now)
}

// outboxFiscal writes the outbox row of a closing or an archive, inside
// the transaction that appended it (AppendFiscal).
func outboxFiscal(ctx context.Context, tx *sql.Tx, r FiscalRecord) error {
	var kind string
	switch r.Kind {
	case FiscalClosing:
		kind = OutboxClosing
	case FiscalArchive:
		kind = OutboxArchive
	default:
		return nil
	}
	f := FiscalFact{Kind: r.Kind, Seq: r.Seq, At: unixMS(r.At), Source: r.Source, PrevSig: r.PrevSig, Sig: r.Sig}
	if json.Valid(r.Payload) {
		f.Payload = json.RawMessage(r.Payload)
	}
	return insertOutbox(ctx, tx, kind, "", f, unixMS(r.At))
}

// FiscalFact is the payload of a fiscal record's outbox row: the record as
// signed, so that head office can check its chain.
type FiscalFact struct {
	Kind    string          `json:"kind"`
	Seq     int64           `json:"seq"`
	At      int64           `json:"at"`
	Source  string          `json:"source,omitempty"`
	Payload json.RawMessage `json:"payload"`
	PrevSig string          `json:"prevSig"`
	Sig     string          `json:"sig"`
}

func insertOutbox(ctx context.Context, tx *sql.Tx, kind, orderID string, payload any, now int64) error {
	id, err := uuid.NewV7()
	if err != nil {
		return fmt.Errorf("journal: new uuid: %w", err)
	}
	raw, err := json.Marshal(payload)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO outbox (msg_id, at, kind, order_id, payload) VALUES (?, ?, ?, ?, ?)`,
		id.String(), now, kind, nullString(orderID), string(raw))
	return err
}

// Unpublished returns up to limit outbox rows not yet acknowledged by the
// stream, oldest first.
func (db *DB) Unpublished(ctx context.Context, limit int) ([]OutboxEntry, error) {
	if limit <= 0 {
		limit = 100
	}
	rows, err := db.r.QueryContext(ctx, `SELECT seq, msg_id, at, kind, COALESCE(order_id, ''), payload, published_at
		FROM outbox WHERE published_at IS NULL ORDER BY seq LIMIT ?`, limit)
	if err != nil {
		return nil, mapErr(err, "read the outbox")
	}
	defer rows.Close()
	var out []OutboxEntry
	for rows.Next() {
		var (
			e         OutboxEntry
			at        sql.NullInt64
			payload   string
			published sql.NullInt64
		)
		if err := rows.Scan(&e.Seq, &e.MsgID, &at, &e.Kind, &e.OrderID, &payload, &published); err != nil {
			return nil, mapErr(err, "read the outbox")
		}
		e.At, e.Payload, e.PublishedAt = fromUnixMS(at), json.RawMessage(payload), fromUnixMS(published)
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, mapErr(err, "read the outbox")
	}
	return out, nil
}

// MarkPublished records that the stream acknowledged the rows seqs. A row
// already marked keeps its first time.
func (db *DB) MarkPublished(ctx context.Context, seqs ...int64) error {
	if len(seqs) == 0 {
		return nil
	}
	return db.update(ctx, "mark the outbox published", func(tx *sql.Tx) error {
		now := unixMS(db.now())
		for _, s := range seqs {
			if _, err := tx.ExecContext(ctx, `UPDATE outbox SET published_at = ? WHERE seq = ? AND published_at IS NULL`, now, s); err != nil {
				return err
			}
		}
		return nil
	})
}

// PruneOutbox removes the rows published before t: the stream has them,
// and the journal's own tables keep the facts.
func (db *DB) PruneOutbox(ctx context.Context, before time.Time) (int64, error) {
	var n int64
	err := db.update(ctx, "prune the outbox", func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM outbox WHERE published_at IS NOT NULL AND published_at < ?`, unixMS(before))
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return n, err
}

// OutboxWritten is signalled (without blocking, coalesced) after every
// write the journal commits, so that a publisher waiting for new rows
// need not poll.
func (db *DB) OutboxWritten() <-chan struct{} { return db.written }

func (db *DB) signalWritten() {
	select {
	case db.written <- struct{}{}:
	default:
	}
}
