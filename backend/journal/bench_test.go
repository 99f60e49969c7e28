package journal

import (
	"context"
	"fmt"
	"testing"
)

// BenchmarkPrepareAttempt measures invariant 1's price: the time from asking
// to journal an attempt to its commit being on disk, fsync included
// (WAL, synchronous=FULL, a real file in a temp dir; run it on the kiosk's
// own disk to learn that disk's number).
//
// Method: b.N orders are created beforehand in one transaction, outside the
// timer; each timed iteration is one PrepareAttempt (validation, the guard
// queries, the insert, its event, the commit and fsync) on a fresh order and
// terminal, so the one-open-attempt rule never refuses it. ns/op is the
// latency a payment pays before its request may leave.
func BenchmarkPrepareAttempt(b *testing.B) {
	ctx := context.Background()
	db := openDir(b, b.TempDir())
	if _, err := db.w.ExecContext(ctx, `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
		INSERT INTO orders (id, created_at, updated_at, currency, total) SELECT 'bench-' || i, 0, 0, 'EUR', 1250 FROM n`,
		b.N); err != nil {
		b.Fatal(err)
	}
	attempts := make([]Attempt, b.N)
	for i := range attempts {
		attempts[i] = newAttempt(b, fmt.Sprint("bench-", i), fmt.Sprint("T", i))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := db.PrepareAttempt(ctx, attempts[i]); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkOpenAttemptsMillion checks that recovery does not slow down as the
// history grows (benchmarks run only with -bench; -short skips this one, whose
// set-up takes a while).
//
// Method: in a temp-dir database, 1,000,000 final attempts (spread over
// 10,000 orders and 5 terminals, states cycling through the finals) and 10
// unresolved ones are inserted by one INSERT ... SELECT over a recursive CTE
// in a single transaction, then the WAL is checkpointed, before b.Loop starts
// the timer. Each timed iteration is one OpenAttempts, which must return the 10: with
// the partial index attempts_open its cost is that of 10 rows, to compare
// with BenchmarkOpenAttemptsSmall's.
func BenchmarkOpenAttemptsMillion(b *testing.B) {
	if testing.Short() {
		b.Skip("-short: skipping the million-row set-up")
	}
	benchOpenAttempts(b, 1_000_000)
}

// BenchmarkOpenAttemptsSmall is the same with 1,000 historical attempts, as
// the baseline for BenchmarkOpenAttemptsMillion.
func BenchmarkOpenAttemptsSmall(b *testing.B) { benchOpenAttempts(b, 1_000) }

func benchOpenAttempts(b *testing.B, history int) {
	ctx := context.Background()
	db := openDir(b, b.TempDir())
	fillHistory(b, db, history)
	b.ReportAllocs()
	// b.Loop runs the set-up above once, where a b.N loop would rebuild the
	// million rows for every trial value of b.N.
	for b.Loop() {
		open, err := db.OpenAttempts(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if len(open) != 10 {
			b.Fatalf("%d open attempts, want 10", len(open))
		}
	}
}

// fillHistory inserts history final attempts (over 10,000 orders and 5
// terminals, states cycling through the finals) and 10 unresolved ones, in
// one transaction of INSERT ... SELECT over recursive CTEs, then checkpoints
// the WAL: the set-up of the recovery-scan measurements.
func fillHistory(tb testing.TB, db *DB, history int) {
	tb.Helper()
	ctx := context.Background()
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		tb.Fatal(err)
	}
	defer tx.Rollback()
	for _, s := range []struct {
		q    string
		args []any
	}{
		{`WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 9999)
		  INSERT INTO orders (id, created_at, updated_at, currency, total, status)
		  SELECT 'hist-' || i, i, i, 'EUR', 1250, 'paid' FROM n`, nil},
		{`WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ? - 1)
		  INSERT INTO attempts (uuid, order_id, kind, amount, policy, terminal, request_body, state,
		                        send_count, created_at, first_sent_at, last_sent_at, final_at, updated_at)
		  SELECT printf('hist-%08d', i), 'hist-' || (i % 10000), 'debit', 1250, 'kiosk', 'T' || (i % 5),
		         '{"amount":1250}', CASE i % 4 WHEN 0 THEN 'approved' WHEN 1 THEN 'declined'
		                                       WHEN 2 THEN 'failed' ELSE 'cancelled' END,
		         1, i, i, i, i, i
		  FROM n`, []any{history}},
		{`WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 9)
		  INSERT INTO orders (id, created_at, updated_at, currency, total) SELECT 'open-' || i, 0, 0, 'EUR', 1250 FROM n`, nil},
		{`WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 9)
		  INSERT INTO attempts (uuid, order_id, kind, amount, policy, terminal, request_body, state,
		                        send_count, created_at, updated_at)
		  SELECT printf('open-%02d', i), 'open-' || i, 'debit', 1250, 'kiosk', 'open-T' || i,
		         '{"amount":1250}', 'sent', 1, ? + i, ? + i
		  FROM n`, []any{history, history}},
	} {
		if _, err := tx.ExecContext(ctx, s.q, s.args...); err != nil {
			tb.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		tb.Fatal(err)
	}
	if _, err := db.w.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		tb.Fatal(err)
	}
}
