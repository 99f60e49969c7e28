package journal

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// Fiscal record kinds: each is a chain of its own, numbered from 1.
const (
	FiscalTicket  = "ticket"
	FiscalClosing = "closing"
	FiscalEvent   = "event"
	FiscalArchive = "archive"
)

// FiscalKinds lists the chains.
var FiscalKinds = []string{FiscalTicket, FiscalClosing, FiscalEvent, FiscalArchive}

// FiscalRecord is one record of a fiscal chain, as stored. The journal
// numbers and stores it; its payload and signature are backend/fiscal's.
type FiscalRecord struct {
	ID      int64
	Kind    string
	Seq     int64
	At      time.Time
	Source  string
	Payload []byte
	PrevSig string
	Sig     string
}

// FiscalSealer builds the record that follows prev in its chain (nil for
// the first): its payload and signature, for the number and time given.
type FiscalSealer func(next FiscalRecord, prev *FiscalRecord) (payload []byte, sig string, err error)

// AppendFiscal writes the next record of a chain in one transaction: the
// chain's last record is read, seal builds the new one (seq: the next
// number; PrevSig: the last one's signature), and it is stored. Writes are
// serialised, so the numbers have no gaps. When source is not empty and a
// record of this kind already has it, that record is returned with
// created false, and seal is not called.
func (db *DB) AppendFiscal(ctx context.Context, kind, source string, seal FiscalSealer) (rec FiscalRecord, created bool, err error) {
	err = db.update(ctx, "append a fiscal "+kind, func(tx *sql.Tx) error {
		if source != "" {
			r, err := scanFiscal(tx.QueryRowContext(ctx, `SELECT `+fiscalColumns+` FROM fiscal_records WHERE kind = ? AND source = ?`, kind, source))
			if err == nil {
				rec = r
				return nil
			}
			if !errors.Is(err, sql.ErrNoRows) {
				return err
			}
		}
		next := FiscalRecord{Kind: kind, Seq: 1, At: db.now(), Source: source}
		var prev *FiscalRecord
		last, err := scanFiscal(tx.QueryRowContext(ctx, `SELECT `+fiscalColumns+` FROM fiscal_records WHERE kind = ? ORDER BY seq DESC LIMIT 1`, kind))
		switch {
		case err == nil:
			prev = &last
			next.Seq, next.PrevSig = last.Seq+1, last.Sig
		case !errors.Is(err, sql.ErrNoRows):
			return err
		}
		payload, sig, err := seal(next, prev)
		if err != nil {
			return err
		}
		next.Payload, next.Sig = payload, sig
		res, err := tx.ExecContext(ctx, `INSERT INTO fiscal_records (kind, seq, at, source, payload, prev_sig, sig) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			next.Kind, next.Seq, next.At.UnixMilli(), nullString(next.Source), string(next.Payload), next.PrevSig, next.Sig)
		if err != nil {
			return err
		}
		next.ID, _ = res.LastInsertId()
		rec, created = next, true
		return outboxFiscal(ctx, tx, next)
	})
	if err != nil {
		return FiscalRecord{}, false, err
	}
	return rec, created, nil
}

const fiscalColumns = `id, kind, seq, at, COALESCE(source, ''), payload, prev_sig, sig`

func scanFiscal(row rowScanner) (FiscalRecord, error) {
	var r FiscalRecord
	var at int64
	var payload string
	if err := row.Scan(&r.ID, &r.Kind, &r.Seq, &at, &r.Source, &payload, &r.PrevSig, &r.Sig); err != nil {
		return FiscalRecord{}, err
	}
	r.At, r.Payload = time.UnixMilli(at).UTC(), []byte(payload)
	return r, nil
}

// FiscalRecords returns a chain's records in stored order (by id), from
// the record after afterID, at most limit (0: all).
func (db *DB) FiscalRecords(ctx context.Context, kind string, afterID int64, limit int) ([]FiscalRecord, error) {
	q := `SELECT ` + fiscalColumns + ` FROM fiscal_records WHERE kind = ? AND id > ? ORDER BY id`
	args := []any{kind, afterID}
	if limit > 0 {
		q += ` LIMIT ?`
		args = append(args, limit)
	}
	rows, err := db.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, mapErr(err, "read the fiscal "+kind+"s")
	}
	defer rows.Close()
	var out []FiscalRecord
	for rows.Next() {
		r, err := scanFiscal(rows)
		if err != nil {
			return nil, mapErr(err, "read the fiscal "+kind+"s")
		}
		out = append(out, r)
	}
	return out, mapErr(rows.Err(), "read the fiscal "+kind+"s")
}

// FiscalBySource returns the record of a kind for a source, ENOTFOUND if
// none.
func (db *DB) FiscalBySource(ctx context.Context, kind, source string) (FiscalRecord, error) {
	r, err := scanFiscal(db.r.QueryRowContext(ctx, `SELECT `+fiscalColumns+` FROM fiscal_records WHERE kind = ? AND source = ?`, kind, source))
	if errors.Is(err, sql.ErrNoRows) {
		return FiscalRecord{}, Errorf(ENOTFOUND, "no fiscal %s of %s", kind, source)
	}
	return r, mapErr(err, "read a fiscal "+kind)
}

// PaidOrdersWithoutTicket are the paid orders changed at or after since
// that no sale ticket records yet, oldest first (a zero since: all).
func (db *DB) PaidOrdersWithoutTicket(ctx context.Context, since time.Time) ([]string, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT id FROM orders WHERE updated_at >= ? AND status = 'paid' AND NOT EXISTS
		(SELECT 1 FROM fiscal_records f WHERE f.kind = 'ticket' AND f.source = 'order:' || orders.id)
		ORDER BY updated_at, created_at, id`, since.UnixMilli())
	if err != nil {
		return nil, mapErr(err, "find the orders to ticket")
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, mapErr(err, "find the orders to ticket")
		}
		ids = append(ids, id)
	}
	return ids, mapErr(rows.Err(), "find the orders to ticket")
}

// GiveBacksWithoutTicket are the approved refunds and reversals changed at
// or after since that no credit ticket records yet, oldest first (a zero
// since: all).
func (db *DB) GiveBacksWithoutTicket(ctx context.Context, since time.Time) ([]Attempt, error) {
	return db.queryAttempts(ctx, "find the credits to ticket", `SELECT `+attemptColumns+` FROM attempts
		WHERE updated_at >= ? AND kind IN ('refund', 'reversal') AND state = 'approved' AND NOT EXISTS
		(SELECT 1 FROM fiscal_records f WHERE f.kind = 'ticket' AND f.source = 'attempt:' || attempts.uuid)
		ORDER BY final_at, id`, since.UnixMilli())
}

// FiscalTip is the last number of a chain (0: empty).
func (db *DB) FiscalTip(ctx context.Context, kind string) (int64, error) {
	var n int64
	err := db.r.QueryRowContext(ctx, `SELECT COALESCE(MAX(seq), 0) FROM fiscal_records WHERE kind = ?`, kind).Scan(&n)
	return n, mapErr(err, "read the fiscal "+kind+" chain")
}

// Now is the journal's clock: the time its writes are stamped with.
func (db *DB) Now() time.Time { return db.now() }

// FiscalLast is a chain's last record; ok false when the chain is empty.
func (db *DB) FiscalLast(ctx context.Context, kind string) (FiscalRecord, bool, error) {
	r, err := scanFiscal(db.r.QueryRowContext(ctx, `SELECT `+fiscalColumns+` FROM fiscal_records WHERE kind = ? ORDER BY seq DESC LIMIT 1`, kind))
	if errors.Is(err, sql.ErrNoRows) {
		return FiscalRecord{}, false, nil
	}
	if err != nil {
		return FiscalRecord{}, false, mapErr(err, "read the fiscal "+kind+" chain")
	}
	return r, true, nil
}
