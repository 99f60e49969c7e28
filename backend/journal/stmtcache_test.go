package journal

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"modernc.org/sqlite"
)

// countingConnector counts what the driver is asked to prepare.
type countingConnector struct {
	stmtConnector
	prepared *atomic.Int64
}

func (c countingConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.stmtConnector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	sc := conn.(*stmtConn)
	sc.inner = countingConn{sqliteConn: sc.inner, prepared: c.prepared}
	return sc, nil
}

type countingConn struct {
	sqliteConn
	prepared *atomic.Int64
}

func (c countingConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	c.prepared.Add(1)
	return c.sqliteConn.PrepareContext(ctx, query)
}

func openCounting(t *testing.T) (*sql.DB, *atomic.Int64) {
	t.Helper()
	c, err := sqlite.NewConnector("file:" + filepath.Join(t.TempDir(), "t.db"))
	if err != nil {
		t.Fatal(err)
	}
	var n atomic.Int64
	db := sql.OpenDB(countingConnector{stmtConnector{c}, &n})
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	if _, err := db.Exec(`CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT)`); err != nil {
		t.Fatal(err)
	}
	n.Store(0)
	return db, &n
}

// A statement is prepared once per connection and reused, with its new
// arguments each time; one whose rows are still open is not shared: the
// nested call gets a statement of its own, and both read what they should.
func TestStatementsArePreparedOncePerConnection(t *testing.T) {
	db, prepared := openCounting(t)
	const insert = `INSERT INTO t (k, v) VALUES (?, ?)`
	for k := range 10 {
		if _, err := db.Exec(insert, k, fmt.Sprint("v", k)); err != nil {
			t.Fatal(err)
		}
	}
	if n := prepared.Load(); n != 1 {
		t.Fatalf("ten inserts prepared %d statements, want 1", n)
	}

	const get = `SELECT v FROM t WHERE k >= ? ORDER BY k`
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	rows, err := tx.Query(get, 8)
	if err != nil {
		t.Fatal(err)
	}
	var outer []string
	for rows.Next() {
		var v, inner string
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		outer = append(outer, v)
		// The same text while its rows are open.
		if err := tx.QueryRow(get, 3).Scan(&inner); err != nil || inner != "v3" {
			t.Fatalf("nested: %q %v", inner, err)
		}
	}
	if err := rows.Close(); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(outer) != "[v8 v9]" {
		t.Fatalf("outer rows %v", outer)
	}
	if n := prepared.Load(); n != 4 {
		t.Fatalf("%d statements prepared, want 4: the insert, the query, and one for each of the two nested calls", n)
	}
	var v string
	if err := tx.QueryRow(get, 9).Scan(&v); err != nil || v != "v9" {
		t.Fatalf("again: %q %v", v, err)
	}
	if n := prepared.Load(); n != 4 {
		t.Fatalf("the kept query was prepared again: %d", n)
	}
}

// A kept statement follows the schema: a column added by another
// connection is seen, and a statement refused once is usable again.
func TestKeptStatementsFollowTheSchemaAndErrors(t *testing.T) {
	dir := t.TempDir()
	db, err := openSQL("file:" + filepath.Join(dir, "t.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(`CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	const insert = `INSERT INTO t (k, v) VALUES (?, ?)`
	if _, err := db.Exec(insert, 1, "a"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(insert, 1, "again"); err == nil {
		t.Fatal("a duplicate key was inserted")
	}
	if _, err := db.Exec(insert, 2, "b"); err != nil {
		t.Fatalf("the statement after a refusal: %v", err)
	}
	other, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "t.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := other.Exec(`CREATE TRIGGER no_c BEFORE INSERT ON t WHEN NEW.v = 'c' BEGIN SELECT RAISE(ABORT, 'no c'); END`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(insert, 3, "c"); err == nil {
		t.Fatal("a trigger made by another connection was not applied to a kept statement")
	}
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM t`).Scan(&n); err != nil || n != 2 {
		t.Fatalf("rows %d %v", n, err)
	}
}

// A connection keeps at most maxCachedStmts statements, and none built for
// one call with a long IN list; past either, a statement is prepared for
// its call alone and still runs.
func TestTheKeptStatementsAreBounded(t *testing.T) {
	db, prepared := openCounting(t)
	kept := func() int {
		t.Helper()
		conn, err := db.Conn(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		n := -1
		if err := conn.Raw(func(dc any) error {
			c := dc.(*stmtConn)
			c.mu.Lock()
			n = len(c.stmts)
			c.mu.Unlock()
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return n
	}
	for i := range maxCachedStmts + 3 {
		var v int
		if err := db.QueryRow(fmt.Sprintf(`SELECT %d + ?`, i), 1).Scan(&v); err != nil || v != i+1 {
			t.Fatalf("statement %d: %d %v", i, v, err)
		}
	}
	if n := kept(); n != maxCachedStmts {
		t.Fatalf("%d statements kept, want %d", n, maxCachedStmts)
	}
	if n := prepared.Load(); n != maxCachedStmts+3 {
		t.Fatalf("%d prepared", n)
	}

	db2, _ := openCounting(t)
	db = db2
	args := make([]any, maxCachedParams+1)
	for i := range args {
		args[i] = i
	}
	before := kept()
	in := `SELECT count(*) FROM t WHERE k IN (?` + strings.Repeat(", ?", len(args)-1) + `)`
	var n int
	if err := db.QueryRow(in, args...).Scan(&n); err != nil || n != 0 {
		t.Fatalf("a long IN list: %d %v", n, err)
	}
	if err := db.QueryRow(`SELECT count(*) FROM t WHERE k IN (?`+strings.Repeat(", ?", maxCachedParams-1)+`)`, args[:maxCachedParams]...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n := kept() - before; n != 1 {
		t.Fatalf("%d statements more kept, want 1: the list of %d, not the one of %d", n, maxCachedParams, maxCachedParams+1)
	}
}
