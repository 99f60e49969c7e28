package journal

import (
	"context"
	"database/sql"
	"strings"
)

// Attempt returns the attempt with this uuid, ENOTFOUND if none.
func (db *DB) Attempt(ctx context.Context, id string) (Attempt, error) {
	a, err := getAttempt(ctx, db.r, id)
	if err != nil {
		return Attempt{}, mapErr(err, "read attempt "+id)
	}
	return a, nil
}

// AttemptsForOrder returns an order's attempts, oldest first.
func (db *DB) AttemptsForOrder(ctx context.Context, orderID string) ([]Attempt, error) {
	return db.queryAttempts(ctx, "read attempts of order "+orderID,
		`SELECT `+attemptColumns+` FROM attempts WHERE order_id = ? ORDER BY id`, orderID)
}

// OpenAttempts returns every unresolved attempt (prepared, sent,
// abort_requested), oldest first: what recovery must resume. It reads the
// partial index attempts_open, so its cost follows the number of unresolved
// attempts, not the size of the history.
func (db *DB) OpenAttempts(ctx context.Context) ([]Attempt, error) {
	return db.queryAttempts(ctx, "read open attempts", openAttemptsQuery)
}

// OpenTerminals are the terminals of the unresolved attempts, one for
// each, oldest first.
func (db *DB) OpenTerminals(ctx context.Context) ([]string, error) {
	open, err := db.OpenAttempts(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(open))
	for i, a := range open {
		out[i] = a.Terminal
	}
	return out, nil
}

// ListAttempts returns attempts matching f, newest first.
func (db *DB) ListAttempts(ctx context.Context, f AttemptFilter) ([]Attempt, error) {
	var (
		where []string
		args  []any
	)
	if f.State != "" {
		if !f.State.Valid() {
			return nil, Errorf(EINVALID, "unknown state %q", f.State)
		}
		where, args = append(where, "state = ?"), append(args, string(f.State))
	}
	if f.OnlyOpen {
		where = append(where, openStatesSQL)
	}
	if f.OrderID != "" {
		where, args = append(where, "order_id = ?"), append(args, f.OrderID)
	}
	if !f.Since.IsZero() {
		where, args = append(where, "created_at >= ?"), append(args, unixMS(f.Since))
	}
	if !f.Until.IsZero() {
		where, args = append(where, "created_at < ?"), append(args, unixMS(f.Until))
	}
	if f.Limit < 0 || f.Offset < 0 {
		return nil, Errorf(EINVALID, "negative limit or offset")
	}
	q := `SELECT ` + attemptColumns + ` FROM attempts`
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, " AND ")
	}
	q += ` ORDER BY created_at DESC, id DESC`
	if f.Limit > 0 || f.Offset > 0 {
		limit := f.Limit
		if limit == 0 {
			limit = -1 // SQLite: no limit
		}
		q += ` LIMIT ? OFFSET ?`
		args = append(args, limit, f.Offset)
	}
	return db.queryAttempts(ctx, "list attempts", q, args...)
}

func (db *DB) queryAttempts(ctx context.Context, what, q string, args ...any) ([]Attempt, error) {
	rows, err := db.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, mapErr(err, what)
	}
	defer rows.Close()
	var out []Attempt
	for rows.Next() {
		a, err := scanAttempt(rows)
		if err != nil {
			return nil, mapErr(err, what)
		}
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, mapErr(err, what)
	}
	return out, nil
}

// Events returns an attempt's audit trail, oldest first. ENOTFOUND if there
// is no such attempt (every attempt has at least its prepared event).
func (db *DB) Events(ctx context.Context, id string) ([]Event, error) {
	what := "read events of attempt " + id
	rows, err := db.r.QueryContext(ctx, `SELECT e.id, e.attempt_id, e.at, e.from_state, e.to_state,
			e.kind, e.actor, e.detail, e.raw_response
		FROM attempt_events e JOIN attempts a ON a.id = e.attempt_id
		WHERE a.uuid = ? ORDER BY e.id`, id)
	if err != nil {
		return nil, mapErr(err, what)
	}
	defer rows.Close()
	var out []Event
	for rows.Next() {
		var (
			e                       Event
			at                      sql.NullInt64
			from, to, actor, detail sql.NullString
			kind                    string
			raw                     []byte
		)
		if err := rows.Scan(&e.ID, &e.AttemptID, &at, &from, &to, &kind, &actor, &detail, &raw); err != nil {
			return nil, mapErr(err, what)
		}
		e.At, e.From, e.To, e.Kind = fromUnixMS(at), State(from.String), State(to.String), EventKind(kind)
		e.Actor, e.Detail, e.RawResponse = actor.String, detail.String, raw
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, mapErr(err, what)
	}
	if len(out) == 0 {
		return nil, Errorf(ENOTFOUND, "attempt %s not found", id)
	}
	return out, nil
}
