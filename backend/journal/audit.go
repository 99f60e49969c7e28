package journal

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"strings"
	"time"
)

// AuditRecord is one line of the audit table: an action that concerns no
// payment attempt (actions on an attempt are its Events). Lines are
// append-only: the schema refuses to change or delete one.
type AuditRecord struct {
	ID      int64     // set by the journal; ignored by AppendAudit
	At      time.Time // when it happened; zero: the journal's clock at append
	Who     string    // required: "staff:<session prefix>", "kiosk", "system"...
	Action  string    // required: a short machine-readable name ("unlock", "setting")
	Subject string    // what it was done to (a setting key, a transaction id), if anything
	Detail  string    // for a person
	Raw     []byte    // a raw answer kept as received, its card fields (splitCard) left out; not necessarily JSON
}

// AuditQuery selects audit lines for Audit. Zero fields do not filter.
type AuditQuery struct {
	Since  time.Time // at or after
	Until  time.Time // before
	Action string    // this action only
	Limit  int       // at most this many, the newest; 0: no limit
}

func validateAudit(r AuditRecord) error {
	switch {
	case r.Who == "":
		return Errorf(EINVALID, "audit line %q: no author", r.Action)
	case r.Action == "":
		return Errorf(EINVALID, "audit line by %s: no action", r.Who)
	}
	return nil
}

// AppendAudit adds a line to the audit table. When it returns nil the line
// is on disk (synchronous=FULL), as for every other journal write. EINVALID
// without an author or an action; EFULL when the disk refuses the write,
// and then nothing was written.
func (db *DB) AppendAudit(ctx context.Context, r AuditRecord) error {
	if err := validateAudit(r); err != nil {
		return err
	}
	return db.update(ctx, "append audit line "+r.Action, func(tx *sql.Tx) error {
		return db.insertAudit(ctx, tx, r)
	})
}

func (db *DB) insertAudit(ctx context.Context, tx *sql.Tx, r AuditRecord) error {
	at := r.At
	if at.IsZero() {
		at = db.now()
	}
	// An audit line is kept for good and belongs to no attempt: the card
	// fields of an answer it keeps (a provider's record of a charge
	// adopted, say) are dropped, never kept beyond the card retention.
	raw, _ := splitCard(r.Raw)
	_, err := tx.ExecContext(ctx, `INSERT INTO audit (at, who, action, subject, detail, raw)
		VALUES (?, ?, ?, ?, ?, ?)`,
		unixMS(at), r.Who, r.Action, nullString(r.Subject), nullString(r.Detail), nullBytes(raw))
	return err
}

// ImportAudit moves audit lines kept under the settings key key (where
// builds before the audit table kept them) into the audit table. convert
// turns the stored value into records, oldest first; they are appended in
// that order and the setting is deleted, in one transaction: an
// interruption leaves either the setting or the lines, never both nor
// neither, and a call that finds no setting does nothing. It returns the
// number of lines appended.
//
// If convert fails, or a record lacks an author or an action, nothing is
// written and the setting is kept: EINVALID.
func (db *DB) ImportAudit(ctx context.Context, key string, convert func(value json.RawMessage) ([]AuditRecord, error)) (int, error) {
	if key == "" {
		return 0, Errorf(EINVALID, "setting key is empty")
	}
	n := 0
	err := db.update(ctx, "import audit lines from setting "+key, func(tx *sql.Tx) error {
		var v string
		err := tx.QueryRowContext(ctx, `SELECT value FROM settings WHERE key = ?`, key).Scan(&v)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		recs, err := convert(json.RawMessage(v))
		if err != nil {
			return failure(EINVALID, "setting "+key+" does not hold audit lines", err)
		}
		for _, r := range recs {
			if err := validateAudit(r); err != nil {
				return err
			}
			if err := db.insertAudit(ctx, tx, r); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM settings WHERE key = ?`, key); err != nil {
			return err
		}
		n = len(recs)
		return nil
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}

// auditSQL builds Audit's query. Newest first walks audit_by_at (or
// audit_by_action with an action) backwards, without a sort: the cost of a
// limited read does not grow with the history (TestAuditUsesIndex).
func auditSQL(q AuditQuery) (string, []any) {
	var (
		where []string
		args  []any
	)
	if q.Action != "" {
		where, args = append(where, "action = ?"), append(args, q.Action)
	}
	if !q.Since.IsZero() {
		where, args = append(where, "at >= ?"), append(args, unixMS(q.Since))
	}
	if !q.Until.IsZero() {
		where, args = append(where, "at < ?"), append(args, unixMS(q.Until))
	}
	query := `SELECT id, at, who, action, subject, detail, raw FROM audit`
	if len(where) > 0 {
		query += ` WHERE ` + strings.Join(where, " AND ")
	}
	query += ` ORDER BY at DESC, id DESC`
	if q.Limit > 0 {
		query += ` LIMIT ?`
		args = append(args, q.Limit)
	}
	return query, args
}

// Audit returns the audit lines matching q, newest first (by time, then by
// order of append). EINVALID for a negative limit.
func (db *DB) Audit(ctx context.Context, q AuditQuery) ([]AuditRecord, error) {
	const what = "read the audit trail"
	if q.Limit < 0 {
		return nil, Errorf(EINVALID, "negative limit")
	}
	query, args := auditSQL(q)
	rows, err := db.r.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, mapErr(err, what)
	}
	defer rows.Close()
	var out []AuditRecord
	for rows.Next() {
		var (
			r               AuditRecord
			at              sql.NullInt64
			subject, detail sql.NullString
			raw             []byte
		)
		if err := rows.Scan(&r.ID, &at, &r.Who, &r.Action, &subject, &detail, &raw); err != nil {
			return nil, mapErr(err, what)
		}
		r.At, r.Subject, r.Detail, r.Raw = fromUnixMS(at), subject.String, detail.String, raw
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, mapErr(err, what)
	}
	return out, nil
}
