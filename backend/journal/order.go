package journal

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Order is a cart being paid for. Its ID is the cart id, immutable, sent to
// the terminal as cartId; it is never derived from an attempt's uuid.
type Order struct {
	ID        string
	Currency  string // ISO 4217, e.g. "EUR"
	Total     int64  // cents
	Status    OrderStatus
	Data      json.RawMessage // the lines; opaque to the journal
	CreatedAt time.Time
	UpdatedAt time.Time
	// ClosedAt is when nothing more was to be asked of it (CloseOrder);
	// zero while it may still be paid.
	ClosedAt time.Time
	// Attention is why it was set aside for staff (FlagOrder), until
	// they accept it.
	Attention string
}

// OrderEvent is one change of an order's status.
type OrderEvent struct {
	ID      int64
	OrderID string
	At      time.Time
	From    OrderStatus
	To      OrderStatus
	Note    string
}

func validCurrency(c string) bool {
	if len(c) != 3 {
		return false
	}
	for i := 0; i < 3; i++ {
		if c[i] < 'A' || c[i] > 'Z' {
			return false
		}
	}
	return true
}

// SettingWrite is a setting written in the same transaction as something
// else (see CreateOrder).
type SettingWrite struct {
	Key   string
	Value json.RawMessage
}

// NewOrder is an order to record with the settings written in the same
// transaction (the kiosk's order sequence).
type NewOrder struct {
	Order Order
	With  []SettingWrite
}

// ErrOrderExists is in the chain of the ECONFLICT that refuses a new order
// whose id is taken: the caller may number it again.
var ErrOrderExists = errors.New("the order id is taken")

// CreateOrder records a new order, open (its status is the journal's
// conclusion from then on: StatusOf); CreatedAt defaults to now.
// ECONFLICT (with ErrOrderExists) if an order with this id exists. The
// settings in with are written in the same transaction. A payment's order
// is better recorded with its first attempt (PrepareFirstAttempt): one
// durable write instead of two before the request leaves.
func (db *DB) CreateOrder(ctx context.Context, o Order, with ...SettingWrite) error {
	n, err := checkNewOrder(NewOrder{Order: o, With: with})
	if err != nil {
		return err
	}
	return db.update(ctx, "create order "+o.ID, func(tx *sql.Tx) error {
		return insertOrder(ctx, tx, n, db.now())
	})
}

// checkNewOrder refuses an order CreateOrder must not record, and fills
// in its status.
func checkNewOrder(n NewOrder) (NewOrder, error) {
	o := n.Order
	for _, w := range n.With {
		if w.Key == "" || !json.Valid(w.Value) {
			return n, Errorf(EINVALID, "order %s: setting %q with a value that is not valid JSON", o.ID, w.Key)
		}
	}
	switch {
	case o.ID == "":
		return n, Errorf(EINVALID, "order id is empty")
	case !validCurrency(o.Currency):
		return n, Errorf(EINVALID, "order %s: currency %q is not an ISO 4217 code", o.ID, o.Currency)
	case o.Total < 0:
		return n, Errorf(EINVALID, "order %s: negative total %d", o.ID, o.Total)
	case len(o.Data) > 0 && !json.Valid(o.Data):
		return n, Errorf(EINVALID, "order %s: data is not valid JSON", o.ID)
	}
	if o.Status != "" && o.Status != OrderOpen {
		return n, Errorf(EINVALID, "order %s: a new order is open, not %q: its status follows its attempts", o.ID, o.Status)
	}
	n.Order.Status = OrderOpen
	return n, nil
}

// insertOrder writes a checked new order, its first event and its
// settings in tx.
func insertOrder(ctx context.Context, tx *sql.Tx, n NewOrder, now time.Time) error {
	o := n.Order
	created := o.CreatedAt
	if created.IsZero() {
		created = now
	}
	var exists int
	err := tx.QueryRowContext(ctx, `SELECT 1 FROM orders WHERE id = ?`, o.ID).Scan(&exists)
	if err == nil {
		return failure(ECONFLICT, fmt.Sprintf("order %s already exists", o.ID), ErrOrderExists)
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	if _, err := tx.ExecContext(ctx,
		`INSERT INTO orders (id, created_at, updated_at, currency, total, status, data)
		 VALUES (?, ?, ?, ?, ?, ?, ?)`,
		o.ID, unixMS(created), unixMS(now), o.Currency, o.Total, string(o.Status), nullString(string(o.Data))); err != nil {
		return err
	}
	if _, err = tx.ExecContext(ctx,
		`INSERT INTO order_events (order_id, at, from_status, to_status, note) VALUES (?, ?, NULL, ?, 'created')`,
		o.ID, unixMS(now), string(o.Status)); err != nil {
		return err
	}
	for _, w := range n.With {
		if err := upsertSetting(ctx, tx, w.Key, w.Value, now); err != nil {
			return err
		}
	}
	return nil
}

// Order returns the order with id, ENOTFOUND if there is none.
func (db *DB) Order(ctx context.Context, id string) (Order, error) {
	o, err := scanOrder(db.r.QueryRowContext(ctx,
		`SELECT `+orderColumns+` FROM orders WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Order{}, Errorf(ENOTFOUND, "order %s not found", id)
	}
	if err != nil {
		return Order{}, mapErr(err, "read order "+id)
	}
	return o, nil
}

const orderColumns = `id, currency, total, status, data, created_at, updated_at, closed_at, attention`

func scanOrder(row interface{ Scan(...any) error }) (Order, error) {
	var (
		o                          Order
		status                     string
		data, attention            sql.NullString
		created, updatedAt, closed sql.NullInt64
	)
	if err := row.Scan(&o.ID, &o.Currency, &o.Total, &status, &data, &created, &updatedAt, &closed, &attention); err != nil {
		return Order{}, err
	}
	o.Status = OrderStatus(status)
	o.ClosedAt, o.Attention = fromUnixMS(closed), attention.String
	o.Data = linesOf(data)
	o.CreatedAt, o.UpdatedAt = fromUnixMS(created), fromUnixMS(updatedAt)
	return o, nil
}

// linesOf is an order's data as read from the file: nil when it has none
// (NULL reads as "", which is not JSON), or when what the file holds is not
// JSON (written only valid by CreateOrder, so damaged since).
func linesOf(data sql.NullString) json.RawMessage {
	if !json.Valid([]byte(data.String)) {
		return nil
	}
	return json.RawMessage(data.String)
}

// OrderEvents returns an order's status history, oldest first.
func (db *DB) OrderEvents(ctx context.Context, id string) ([]OrderEvent, error) {
	rows, err := db.r.QueryContext(ctx,
		`SELECT id, order_id, at, from_status, to_status, note FROM order_events WHERE order_id = ? ORDER BY id`, id)
	if err != nil {
		return nil, mapErr(err, "read events of order "+id)
	}
	defer rows.Close()
	var evs []OrderEvent
	for rows.Next() {
		var (
			e        OrderEvent
			at       sql.NullInt64
			from, nt sql.NullString
			to       string
		)
		if err := rows.Scan(&e.ID, &e.OrderID, &at, &from, &to, &nt); err != nil {
			return nil, mapErr(err, "read events of order "+id)
		}
		e.At, e.From, e.To, e.Note = fromUnixMS(at), OrderStatus(from.String), OrderStatus(to), nt.String
		evs = append(evs, e)
	}
	if err := rows.Err(); err != nil {
		return nil, mapErr(err, "read events of order "+id)
	}
	if len(evs) == 0 {
		// Every order has its creation event.
		return nil, Errorf(ENOTFOUND, "order %s not found", id)
	}
	return evs, nil
}

// nullString stores "" as NULL.
func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}
