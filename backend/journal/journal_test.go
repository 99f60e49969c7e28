package journal

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/comptoir-pos/comptoir/backend/fault"
)

func TestMigrationsApplyAndAreIdempotent(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	ms, err := loadMigrations(migrationFS)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 { // fresh, then twice over an up-to-date database
		db, err := Open(ctx, dir)
		if err != nil {
			t.Fatalf("open #%d: %v", i, err)
		}
		v, err := db.SchemaVersion(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if v != len(ms) || v < 1 {
			t.Fatalf("open #%d: user_version = %d, want %d", i, v, len(ms))
		}
		for _, table := range []string{"orders", "order_events", "attempts", "attempt_events", "settings", "audit"} {
			var n int
			if err := db.r.QueryRowContext(ctx,
				`SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = ?`, table).Scan(&n); err != nil || n != 1 {
				t.Fatalf("open #%d: table %s: n=%d err=%v", i, table, n, err)
			}
		}
		if i == 0 {
			if err := db.CreateOrder(ctx, Order{ID: "kept", Currency: "EUR", Total: 1}); err != nil {
				t.Fatal(err)
			}
		} else if _, err := db.Order(ctx, "kept"); err != nil {
			t.Fatalf("open #%d: data lost across reopen: %v", i, err)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestConnectionSettings(t *testing.T) {
	ctx := t.Context()
	db := openDir(t, t.TempDir())
	tests := []struct {
		pool   *sql.DB
		name   string
		pragma string
		want   string
	}{
		{db.w, "writer", "journal_mode", "wal"},
		{db.w, "writer", "synchronous", "2"}, // FULL
		{db.w, "writer", "foreign_keys", "1"},
		{db.w, "writer", "busy_timeout", "5000"},
		{db.w, "writer", "query_only", "0"},
		{db.r, "reader", "journal_mode", "wal"},
		{db.r, "reader", "foreign_keys", "1"},
		{db.r, "reader", "query_only", "1"},
	}
	for _, tt := range tests {
		t.Run(tt.name+"/"+tt.pragma, func(t *testing.T) {
			var got string
			if err := tt.pool.QueryRowContext(ctx, "PRAGMA "+tt.pragma).Scan(&got); err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Fatalf("PRAGMA %s = %q, want %q", tt.pragma, got, tt.want)
			}
		})
	}
	if _, err := db.r.ExecContext(ctx, "CREATE TABLE x (a)"); err == nil {
		t.Fatal("the read pool accepted a write")
	}

	// _txlock=immediate: a write transaction holds the write lock from its
	// BEGIN, before it has written anything, so another connection's
	// BEGIN IMMEDIATE is refused while it is open.
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	other, err := sql.Open("sqlite", "file://"+filepath.ToSlash(db.Path())+"?_pragma=busy_timeout(0)")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	_, err = other.ExecContext(ctx, "BEGIN IMMEDIATE")
	if err == nil {
		t.Fatal("BEGIN IMMEDIATE succeeded beside an open write transaction: it was not immediate")
	}
	if !strings.Contains(err.Error(), "SQLITE_BUSY") && !strings.Contains(err.Error(), "locked") {
		t.Fatalf("err = %v, want SQLITE_BUSY", err)
	}
}

func TestPathWithURICharacters(t *testing.T) {
	// '?', '#', '%' and spaces in the data directory must not be read as
	// URI syntax by the driver or by SQLite.
	dir := filepath.Join(t.TempDir(), "a dir?with#odd%20chars")
	db := openDir(t, dir)
	if err := db.CreateOrder(t.Context(), Order{ID: "o", Currency: "EUR", Total: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "comptoir.db")); err != nil {
		t.Fatalf("database not where expected: %v", err)
	}
}

func TestNewerDatabaseRefused(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	db := openDir(t, dir)
	if _, err := db.w.ExecContext(ctx, "PRAGMA user_version = 99"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	_, err := Open(ctx, dir)
	wantCode(t, err, EINTERNAL)
	if !strings.Contains(err.Error(), "newer") || !strings.Contains(err.Error(), "99") {
		t.Fatalf("unclear error: %v", err)
	}
	// The refused Open released the directory.
	_, err = Open(ctx, dir)
	wantCode(t, err, EINTERNAL)
}

func TestFailedMigrationLeavesNothing(t *testing.T) {
	ctx := t.Context()
	w, err := sql.Open("sqlite", "file:failed-migration?mode=memory")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	w.SetMaxOpenConns(1)
	fsys := fstest.MapFS{
		"migrations/0001_a.sql": {Data: []byte("CREATE TABLE a (x INTEGER);")},
		"migrations/0002_b.sql": {Data: []byte("CREATE TABLE b (x INTEGER); INSERT INTO a VALUES (1); CREATE TABLE broken (;")},
	}
	if err := migrate(ctx, w, fsys, "test"); err == nil {
		t.Fatal("broken migration applied")
	}
	var v, nb, na int
	w.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v)
	w.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_schema WHERE name = 'b'").Scan(&nb)
	w.QueryRowContext(ctx, "SELECT count(*) FROM a").Scan(&na)
	if v != 1 || nb != 0 || na != 0 {
		t.Fatalf("after a failed migration 2: user_version=%d, table b=%d, rows in a=%d; want 1, 0, 0", v, nb, na)
	}
}

func TestLoadMigrationsRejectsGaps(t *testing.T) {
	for name, fsys := range map[string]fstest.MapFS{
		"gap":     {"migrations/0001_a.sql": {}, "migrations/0003_c.sql": {}},
		"no num":  {"migrations/first.sql": {}},
		"dup":     {"migrations/0001_a.sql": {}, "migrations/0001_b.sql": {}},
		"from 2":  {"migrations/0002_a.sql": {}},
		"bad num": {"migrations/x1_a.sql": {}},
	} {
		if _, err := loadMigrations(fsys); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestOpenMemoryDatabasesAreSeparate(t *testing.T) {
	ctx := t.Context()
	a, b := openMemory(t), openMemory(t)
	if err := a.CreateOrder(ctx, Order{ID: "o", Currency: "EUR", Total: 1}); err != nil {
		t.Fatal(err)
	}
	_, err := b.Order(ctx, "o")
	wantCode(t, err, ENOTFOUND)
}

func TestOrders(t *testing.T) {
	ctx := t.Context()
	db := openMemory(t)
	if err := db.CreateOrder(ctx, Order{ID: "o1", Currency: "EUR", Total: 1250, Data: []byte(`[{"sku":"tea"}]`)}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		order Order
		code  string
	}{
		{"duplicate", Order{ID: "o1", Currency: "EUR", Total: 1}, ECONFLICT},
		{"empty id", Order{Currency: "EUR", Total: 1}, EINVALID},
		{"lowercase currency", Order{ID: "x", Currency: "eur", Total: 1}, EINVALID},
		{"numeric currency", Order{ID: "x", Currency: "978", Total: 1}, EINVALID},
		{"negative total", Order{ID: "x", Currency: "EUR", Total: -1}, EINVALID},
		{"data not JSON", Order{ID: "x", Currency: "EUR", Total: 1, Data: []byte("{")}, EINVALID},
		{"unknown status", Order{ID: "x", Currency: "EUR", Total: 1, Status: "refunded"}, EINVALID},
		{"ok without data", Order{ID: "o2", Currency: "CHF", Total: 0}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantCode(t, db.CreateOrder(ctx, tt.order), tt.code)
		})
	}

	o, err := db.Order(ctx, "o1")
	if err != nil {
		t.Fatal(err)
	}
	if o.Status != OrderOpen || o.Total != 1250 || o.Currency != "EUR" || string(o.Data) != `[{"sku":"tea"}]` || o.CreatedAt.IsZero() {
		t.Fatalf("order = %+v", o)
	}
	_, err = db.Order(ctx, "nope")
	wantCode(t, err, ENOTFOUND)

	// Its status is the journal's: closing it with nothing paid cancels it.
	wantCode(t, db.CreateOrder(ctx, Order{ID: "o2", Currency: "EUR", Total: 1, Status: OrderPaid}), EINVALID)
	if err := db.CloseOrder(ctx, "o1", "the customer walked away"); err != nil {
		t.Fatal(err)
	}
	wantCode(t, db.CloseOrder(ctx, "nope", "x"), ENOTFOUND)
	wantCode(t, db.CloseOrder(ctx, "o1", " "), EINVALID)
	if o, _ = db.Order(ctx, "o1"); o.Status != OrderCancelled || o.ClosedAt.IsZero() {
		t.Fatalf("order = %+v", o)
	}
	evs, err := db.OrderEvents(ctx, "o1")
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 2 || evs[1].From != OrderOpen || evs[1].To != OrderCancelled || evs[1].Note != "closed: the customer walked away" {
		t.Fatalf("order events = %+v", evs)
	}
	_, err = db.OrderEvents(ctx, "nope")
	wantCode(t, err, ENOTFOUND)
}

func TestSettings(t *testing.T) {
	ctx := t.Context()
	db := openMemory(t)
	if _, ok, err := db.Setting(ctx, "requestOpenLimit"); ok || err != nil {
		t.Fatalf("missing setting: ok=%v err=%v", ok, err)
	}
	tests := []struct {
		key, value string
		code       string
	}{
		{"requestOpenLimit", `"15m"`, ""},
		{"requestOpenLimit", ` { "minutes" : 5 } `, ""}, // replaced, kept byte for byte
		{"terminal", `{"url":"http://10.0.0.5:16125/localapi/v4"}`, ""},
		{"bad", `{`, EINVALID},
		{"empty", ``, EINVALID},
		{"", `1`, EINVALID},
	}
	for _, tt := range tests {
		wantCode(t, db.SetSetting(ctx, tt.key, json.RawMessage(tt.value)), tt.code)
	}
	v, ok, err := db.Setting(ctx, "requestOpenLimit")
	if err != nil || !ok || string(v) != ` { "minutes" : 5 } ` {
		t.Fatalf("setting = %q ok=%v err=%v", v, ok, err)
	}
	all, err := db.Settings(ctx)
	if err != nil || len(all) != 2 {
		t.Fatalf("settings = %v, %v", all, err)
	}
}

// The journal's errors are fault's, named after the journal, with the
// cause kept for logs; context errors pass through for errors.Is.
func TestTheJournalsErrorsAreFaults(t *testing.T) {
	e := Errorf(ECONFLICT, "attempt %s is %s", "x", StateApproved)
	if fault.CodeOf(fmt.Errorf("pay: %w", e)) != fault.ECONFLICT || e.Error() != "journal: attempt x is approved" {
		t.Errorf("Errorf: %q %v", e.Code, e)
	}
	full := failure(EFULL, "disk", errors.New("SQLITE_FULL"))
	if fault.CodeOf(full) != fault.EFULL || fault.MessageOf(full) != "disk" || full.Error() != "journal: disk: SQLITE_FULL" {
		t.Errorf("failure: %q %q %v", full.Code, full.Message, full)
	}
	if mapErr(context.Canceled, "x") != context.Canceled {
		t.Error("context errors must pass through")
	}
	if err := mapErr(e, "y"); err != error(e) {
		t.Errorf("a journal error is mapped again: %v", err)
	}
}

func TestCanceledContextWritesNothing(t *testing.T) {
	db := openMemory(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	err := db.CreateOrder(ctx, Order{ID: "o", Currency: "EUR", Total: 1})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	_, err = db.Order(t.Context(), "o")
	wantCode(t, err, ENOTFOUND)
}

// A chain's tail is read through its index: no scan of the chain, no
// sorting of it (the cost of a closing must not grow with the journal's age).
func TestFiscalRecordsReadThroughTheirIndex(t *testing.T) {
	db := openMemory(t)
	rows, err := db.r.QueryContext(t.Context(), `EXPLAIN QUERY PLAN SELECT `+fiscalColumns+
		` FROM fiscal_records WHERE kind = ? AND id > ? ORDER BY id LIMIT 10`, "ticket", 5)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	got := strings.Join(plan, " | ")
	if !strings.Contains(got, "fiscal_records_by_kind_id") || strings.Contains(got, "TEMP B-TREE") {
		t.Fatalf("plan: %s", got)
	}
}
