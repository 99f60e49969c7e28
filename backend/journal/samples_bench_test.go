//go:build bench

package journal

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Per-sample timings for docs/benchmarks.md (make bench): the go test
// benchmarks give means, these give p50/p99. Built only with -tags bench,
// and they write only when BENCH_OUT names a directory.

func benchOut(t *testing.T, name string, v any) {
	t.Helper()
	dir := os.Getenv("BENCH_OUT")
	b, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func needBenchOut(t *testing.T) {
	if os.Getenv("BENCH_OUT") == "" {
		t.Skip("BENCH_OUT not set: run through make bench")
	}
}

func msOf(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// TestBenchCommitSamples times N PrepareAttempt commits one by one (WAL,
// synchronous=FULL, a real file in a temp dir on this machine's disk: each
// waits for fsync).
func TestBenchCommitSamples(t *testing.T) {
	needBenchOut(t)
	const n = 2000
	ctx := context.Background()
	dir := t.TempDir()
	db := openDir(t, dir)
	if _, err := db.w.ExecContext(ctx, `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
		INSERT INTO orders (id, created_at, updated_at, currency, total) SELECT 'bench-' || i, 0, 0, 'EUR', 1250 FROM n`, n); err != nil {
		t.Fatal(err)
	}
	attempts := make([]Attempt, n)
	for i := range attempts {
		attempts[i] = newAttempt(t, fmt.Sprint("bench-", i), fmt.Sprint("T", i))
	}
	samples := make([]float64, 0, n)
	for i := 0; i < n; i++ {
		start := time.Now()
		if _, err := db.PrepareAttempt(ctx, attempts[i]); err != nil {
			t.Fatal(err)
		}
		samples = append(samples, msOf(time.Since(start)))
	}
	benchOut(t, "journal_commit.json", map[string]any{"samples": samples, "dir": dir})
}

// TestBenchRecoverySamples builds 1,000,000 final attempts and 10
// unfinished ones, then times OpenAttempts (the recovery scan) many times,
// and records SQLite's query plan for it.
func TestBenchRecoverySamples(t *testing.T) {
	needBenchOut(t)
	const history, runs = 1_000_000, 300
	ctx := context.Background()
	dir := t.TempDir()
	db := openDir(t, dir)
	buildStart := time.Now()
	fillHistory(t, db, history)
	build := time.Since(buildStart)
	var count int
	if err := db.w.QueryRowContext(ctx, "SELECT count(*) FROM attempts").Scan(&count); err != nil {
		t.Fatal(err)
	}
	// The plan: the partial index, not a scan of the table.
	plan := queryPlan(t, db.w, openAttemptsQuery)
	samples := make([]float64, 0, runs)
	for i := 0; i < runs; i++ {
		start := time.Now()
		open, err := db.OpenAttempts(ctx)
		d := time.Since(start)
		if err != nil {
			t.Fatal(err)
		}
		if len(open) != 10 {
			t.Fatalf("%d open attempts, want 10", len(open))
		}
		samples = append(samples, msOf(d))
	}
	// As at start-up: a freshly opened journal (SQLite's page cache empty;
	// the OS's file cache still warm), the first scan.
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	openStart := time.Now()
	db = openDir(t, dir)
	opened := time.Since(openStart)
	start := time.Now()
	if open, err := db.OpenAttempts(ctx); err != nil || len(open) != 10 {
		t.Fatalf("reopened: %d open attempts, %v", len(open), err)
	}
	first := time.Since(start)
	benchOut(t, "journal_recovery.json", map[string]any{
		"samples": samples, "reopenMs": msOf(opened), "firstScanAfterReopenMs": msOf(first), "rows": count, "open": 10, "buildSeconds": build.Seconds(),
		"plan": plan,
	})
}
