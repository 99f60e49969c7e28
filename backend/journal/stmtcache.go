package journal

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"strings"
	"sync"

	"modernc.org/sqlite"
)

// The journal's connections keep their prepared statements. database/sql
// asks the driver to prepare a statement again at every call, and SQLite's
// parser and code generation are most of the CPU of the journal's small
// writes: a third of the kiosk's CPU per payment, some twenty statements
// before a payment's request may leave. A connection here prepares each
// statement text once and reuses it; what SQLite does with it is the same
// (a statement is reset after each use, and prepared again by SQLite itself
// when the schema changes).

// maxCachedStmts bounds the statements a connection keeps: the journal's
// own texts are far fewer; a text past the bound is prepared for its call
// alone, as before.
const maxCachedStmts = 256

// maxCachedParams: a text with more placeholders is an IN list built for
// one call (a batch of transaction ids), whose length changes from call to
// call: kept, such texts would fill the cache with statements used once.
const maxCachedParams = 32

// openSQL opens a database/sql handle on dsn whose connections keep their
// prepared statements.
func openSQL(dsn string) (*sql.DB, error) {
	c, err := sqlite.NewConnector(dsn)
	if err != nil {
		return nil, err
	}
	return sql.OpenDB(stmtConnector{c}), nil
}

type stmtConnector struct{ driver.Connector }

func (c stmtConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	inner, ok := conn.(sqliteConn)
	if !ok {
		conn.Close()
		return nil, errors.New("journal: the SQLite driver's connection lacks the interfaces the journal uses")
	}
	return &stmtConn{inner: inner, stmts: map[string]*cachedStmt{}}, nil
}

// sqliteConn is what the journal uses of the driver's connection. Its
// ExecContext and QueryContext are left out on purpose: without them
// database/sql prepares every statement, which stmtConn answers from its
// cache.
type sqliteConn interface {
	driver.Conn
	driver.ConnBeginTx
	driver.ConnPrepareContext
	driver.Pinger
	driver.SessionResetter
	driver.Validator
}

// stmtConn is a connection that keeps its prepared statements. mu guards
// the cache: a statement is given back (Close) when its rows are closed,
// which need not happen on the goroutine that prepared it.
type stmtConn struct {
	inner sqliteConn
	mu    sync.Mutex
	stmts map[string]*cachedStmt
}

func (c *stmtConn) Prepare(query string) (driver.Stmt, error) {
	return c.PrepareContext(context.Background(), query)
}

// PrepareContext returns the statement kept for query, prepared once; one
// that is in use (rows still open on it) is not shared: a statement of its
// own is prepared for this call.
func (c *stmtConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s := c.stmts[query]; s != nil && !s.busy {
		s.busy = true
		return s, nil
	}
	st, err := c.inner.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	if _, taken := c.stmts[query]; taken || len(c.stmts) >= maxCachedStmts || strings.Count(query, "?") > maxCachedParams {
		return st, nil
	}
	s := &cachedStmt{Stmt: st, conn: c, busy: true}
	c.stmts[query] = s
	return s, nil
}

// Close closes the kept statements, then the connection.
func (c *stmtConn) Close() error {
	c.mu.Lock()
	var errs []error
	for q, s := range c.stmts {
		errs = append(errs, s.Stmt.Close())
		delete(c.stmts, q)
	}
	c.mu.Unlock()
	return errors.Join(append(errs, c.inner.Close())...)
}

func (c *stmtConn) Begin() (driver.Tx, error) {
	return c.inner.BeginTx(context.Background(), driver.TxOptions{})
}

func (c *stmtConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	return c.inner.BeginTx(ctx, opts)
}

func (c *stmtConn) Ping(ctx context.Context) error         { return c.inner.Ping(ctx) }
func (c *stmtConn) ResetSession(ctx context.Context) error { return c.inner.ResetSession(ctx) }
func (c *stmtConn) IsValid() bool                          { return c.inner.IsValid() }

// cachedStmt is a kept statement: Close gives it back to its connection
// instead of finalizing it.
type cachedStmt struct {
	driver.Stmt
	conn *stmtConn
	busy bool // handed out and not given back yet
}

func (s *cachedStmt) Close() error {
	s.conn.mu.Lock()
	s.busy = false
	s.conn.mu.Unlock()
	return nil
}

func (s *cachedStmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	return s.Stmt.(driver.StmtExecContext).ExecContext(ctx, args)
}

func (s *cachedStmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	return s.Stmt.(driver.StmtQueryContext).QueryContext(ctx, args)
}
