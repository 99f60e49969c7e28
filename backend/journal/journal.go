// Package journal is Comptoir's durable record of orders and payment attempts,
// kept in SQLite through modernc.org/sqlite.
//
// The journal is what lets Comptoir promise never to charge twice and never to
// lose a charge: an attempt and its exact request body are committed (WAL,
// synchronous=FULL) before the request leaves the process, every state change
// is a guarded compare-and-set with an event row in the same transaction, and
// the schema itself refuses a second unresolved attempt for an order or a
// terminal. It is also the audit trail: an attempt's events for what
// happened to a payment, the append-only audit table (AppendAudit) for
// everything else.
//
// One process owns a data directory at a time: Open takes an exclusive lock on
// dir/comptoir.lock until Close. PeekSetting reads one setting without it,
// read-only, for a process that must know a setting before it may own the
// directory.
package journal

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

const (
	dbFileName   = "comptoir.db"
	lockFileName = "comptoir.lock"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// DB is the journal. Its methods are safe for concurrent use.
type DB struct {
	// w is the only connection that writes. Serialising writers in Go, rather
	// than letting several connections contend for SQLite's write lock,
	// means a writer waits in line instead of sleeping in SQLite's busy
	// handler, and a compare-and-set is never retried behind our back.
	w *sql.DB
	// r serves reads; under WAL they never wait for the writer. For an
	// in-memory database r == w (see OpenMemory).
	r *sql.DB

	path string // database file, "" in memory
	dir  string
	lock *dirLock
	now  func() time.Time

	// written is signalled after each commit (OutboxWritten).
	written chan struct{}

	closeOnce sync.Once
	closeErr  error
}

// Option configures Open and OpenMemory.
type Option func(*options)

type options struct {
	busyTimeout time.Duration
	readers     int
	now         func() time.Time
}

// WithBusyTimeout sets how long a statement waits for a lock held by another
// connection (a reader checkpointing, for instance) before failing. Default 5 s.
func WithBusyTimeout(d time.Duration) Option {
	return func(o *options) { o.busyTimeout = d }
}

// WithClock replaces time.Now for every timestamp the journal writes.
func WithClock(now func() time.Time) Option {
	return func(o *options) { o.now = now }
}

// WithReaders sets the size of the read pool. Default 4.
func WithReaders(n int) Option {
	return func(o *options) { o.readers = n }
}

func buildOptions(opts []Option) options {
	o := options{busyTimeout: 5 * time.Second, readers: 4, now: time.Now}
	for _, opt := range opts {
		opt(&o)
	}
	if o.readers < 1 {
		o.readers = 1
	}
	if o.now == nil {
		o.now = time.Now
	}
	return o
}

// Open opens (creating it if needed) the journal in dir: it locks the
// directory, opens dir/comptoir.db and applies the migrations this build
// knows. A second Open of the same directory, from this process or another,
// fails at once with ELOCKED until the first is closed.
func Open(ctx context.Context, dir string, opts ...Option) (*DB, error) {
	o := buildOptions(opts)
	if dir == "" {
		return nil, Errorf(EINVALID, "no data directory given")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, failure(EINVALID, fmt.Sprintf("data directory %q", dir), err)
	}
	if err := PrivateDir(abs); err != nil {
		return nil, notWritable(abs, err)
	}
	lock, err := lockDir(abs)
	if err != nil {
		return nil, err
	}
	db := &DB{dir: abs, path: filepath.Join(abs, dbFileName), lock: lock, now: o.now, written: make(chan struct{}, 1)}
	// The database before SQLite opens it (its WAL and shared memory take
	// its mode), and what an earlier run left.
	for _, p := range []string{db.path, db.path + "-wal", db.path + "-shm", lock.f.Name()} {
		if err := tighten(p, 0o600); err != nil {
			lock.release()
			return nil, notWritable(abs, err)
		}
	}
	if _, err := os.Stat(db.path); errors.Is(err, os.ErrNotExist) {
		if err := PrivateFile(db.path); err != nil {
			lock.release()
			return nil, notWritable(abs, err)
		}
	}
	if err := db.openFile(ctx, o); err != nil {
		db.closeHandles()
		return nil, errors.Join(err, lock.release())
	}
	return db, nil
}

func (db *DB) openFile(ctx context.Context, o options) error {
	what := "open " + db.path
	w, err := openSQL(fileDSN(db.path, o, false))
	if err != nil {
		return mapErr(err, what)
	}
	db.w = w
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	w.SetConnMaxIdleTime(0)
	// The first connection applies the pragmas: a file that is not a
	// database fails here, with SQLITE_NOTADB, rather than on first use.
	if err := w.PingContext(ctx); err != nil {
		return mapErr(err, what)
	}
	if err := migrate(ctx, w, migrationFS, db.path); err != nil {
		return err
	}
	// SQLite silently falls back to read-only on a file it may not write,
	// and under WAL even BEGIN IMMEDIATE succeeds there: the first write
	// would fail, mid-payment. A write statement that changes nothing
	// still takes the write path, so such a file is refused now.
	if err := db.update(ctx, what, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM settings WHERE 0`)
		return err
	}); err != nil {
		return err
	}
	r, err := openSQL(fileDSN(db.path, o, true))
	if err != nil {
		return mapErr(err, what)
	}
	db.r = r
	r.SetMaxOpenConns(o.readers)
	r.SetMaxIdleConns(o.readers)
	return mapErr(r.PingContext(ctx), what)
}

// fileDSN builds the connection string for the database at p.
//
// A "file:" URI rather than a plain path: modernc.org/sqlite cuts a plain name
// at its first '?', so a data directory containing '?' would be misread,
// whereas in a URI the path is percent-encoded. The driver reads its own
// underscore keys from the URI and SQLite ignores them.
//
//   - busy_timeout: wait for locks instead of failing at once.
//   - foreign_keys(1): off by default in SQLite, per connection.
//   - journal_mode(WAL): readers do not block the writer nor it them; a
//     commit is one append to the WAL.
//   - synchronous(FULL): the WAL is fsynced at every commit, so a commit that
//     returned is on disk even if power is cut (NORMAL, the usual WAL choice,
//     may lose the last commits on power loss: not acceptable for a charge).
//   - _txlock=immediate: a write transaction takes the write lock at BEGIN,
//     so it cannot fail half-way with SQLITE_BUSY on lock upgrade. The driver
//     uses it for every BeginTx except ReadOnly ones.
//   - _query_only on the read pool: a bug cannot write through it.
func fileDSN(p string, o options, readOnly bool) string {
	q := []string{
		"_pragma=" + url.QueryEscape(fmt.Sprintf("busy_timeout(%d)", o.busyTimeout.Milliseconds())),
		"_pragma=" + url.QueryEscape("foreign_keys(1)"),
		"_pragma=" + url.QueryEscape("synchronous(FULL)"),
	}
	if readOnly {
		q = append(q, "_query_only=1")
	} else {
		q = append(q, "_pragma="+url.QueryEscape("journal_mode(WAL)"), "_txlock=immediate")
	}
	return fileURI(p) + "?" + strings.Join(q, "&")
}

// fileURI is the "file:" URI of the file at the absolute path p, without a
// query.
func fileURI(p string) string {
	slashed := filepath.ToSlash(p)
	if !strings.HasPrefix(slashed, "/") {
		slashed = "/" + slashed // Windows: file:///C:/...
	}
	u := url.URL{Scheme: "file", Path: slashed}
	return u.String()
}

var memorySeq atomic.Int64

// OpenMemory opens a journal held in memory, for tests: no lock, no WAL, no
// durability. It uses a single connection for reads and writes, because each
// connection to ":memory:" would otherwise get a database of its own.
func OpenMemory(ctx context.Context, opts ...Option) (*DB, error) {
	o := buildOptions(opts)
	// A private, uniquely named in-memory database: two OpenMemory calls
	// must not see each other.
	name := fmt.Sprintf("file:comptoir-memory-%d-%d?mode=memory", os.Getpid(), memorySeq.Add(1))
	dsn := name +
		"&_pragma=" + url.QueryEscape(fmt.Sprintf("busy_timeout(%d)", o.busyTimeout.Milliseconds())) +
		"&_pragma=" + url.QueryEscape("foreign_keys(1)") +
		"&_txlock=immediate"
	w, err := openSQL(dsn)
	if err != nil {
		return nil, mapErr(err, "open in-memory journal")
	}
	// One connection, kept for ever: the database lives as long as it does.
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	w.SetConnMaxIdleTime(0)
	db := &DB{w: w, r: w, now: o.now, written: make(chan struct{}, 1)}
	if err := w.PingContext(ctx); err != nil {
		w.Close()
		return nil, mapErr(err, "open in-memory journal")
	}
	if err := migrate(ctx, w, migrationFS, ":memory:"); err != nil {
		w.Close()
		return nil, err
	}
	return db, nil
}

// Close closes the database and releases the data directory. It is safe to
// call more than once.
func (db *DB) Close() error {
	db.closeOnce.Do(func() {
		err := db.closeHandles()
		if db.lock != nil {
			err = errors.Join(err, db.lock.release())
		}
		db.closeErr = err
	})
	return db.closeErr
}

func (db *DB) closeHandles() error {
	var errs []error
	// Readers first: the last connection to close checkpoints the WAL into
	// the database file and removes it, and that should be the writer.
	if db.r != nil && db.r != db.w {
		errs = append(errs, db.r.Close())
	}
	if db.w != nil {
		errs = append(errs, db.w.Close())
	}
	return mapErr(errors.Join(errs...), "close "+db.path)
}

// Path returns the database file's path, "" for an in-memory journal.
func (db *DB) Path() string { return db.path }

// Check runs SQLite's quick integrity check. It reads the whole file: call it
// from a maintenance command, not on every start.
func (db *DB) Check(ctx context.Context) error {
	rows, err := db.r.QueryContext(ctx, "PRAGMA quick_check")
	if err != nil {
		return mapErr(err, "check "+db.path)
	}
	defer rows.Close()
	var problems []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return mapErr(err, "check "+db.path)
		}
		if s != "ok" {
			problems = append(problems, s)
		}
	}
	if err := rows.Err(); err != nil {
		return mapErr(err, "check "+db.path)
	}
	if len(problems) > 0 {
		return Errorf(EINTERNAL, "database %s is damaged: %s", db.path, strings.Join(problems, "; "))
	}
	return nil
}

// SchemaVersion returns the migration level of the database (PRAGMA user_version).
func (db *DB) SchemaVersion(ctx context.Context) (int, error) {
	var v int
	if err := db.r.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return 0, mapErr(err, "read schema version")
	}
	return v, nil
}

// notWritable reports a data directory that cannot be created or written.
func notWritable(dir string, err error) error {
	return failure(EREADONLY, fmt.Sprintf("data directory %s is not writable", dir), err)
}

// migration is one numbered script.
type migration struct {
	version int
	name    string
	sql     string
}

// loadMigrations reads migrations/NNNN_name.sql from fsys. Versions must run
// 1, 2, 3... without gaps: user_version counts applied scripts.
func loadMigrations(fsys fs.FS) ([]migration, error) {
	names, err := fs.Glob(fsys, "migrations/*.sql")
	if err != nil {
		return nil, err
	}
	var ms []migration
	for _, name := range names {
		base := path.Base(name)
		num, _, ok := strings.Cut(base, "_")
		if !ok {
			return nil, fmt.Errorf("migration %s: name must be NNNN_description.sql", base)
		}
		v, err := strconv.Atoi(num)
		if err != nil {
			return nil, fmt.Errorf("migration %s: name must be NNNN_description.sql", base)
		}
		b, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		ms = append(ms, migration{version: v, name: base, sql: string(b)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].version < ms[j].version })
	for i, m := range ms {
		if m.version != i+1 {
			return nil, fmt.Errorf("migration %s: expected version %d", m.name, i+1)
		}
	}
	return ms, nil
}

// migrate brings the database to the latest version, one transaction per
// script, user_version set inside the same transaction so a script is either
// wholly applied and counted or not at all. A database newer than this code
// is refused: running old code on it could ignore a rule it holds.
func migrate(ctx context.Context, w *sql.DB, fsys fs.FS, where string) error {
	ms, err := loadMigrations(fsys)
	if err != nil {
		return failure(EINTERNAL, "load migrations", err)
	}
	for {
		done, err := migrateOne(ctx, w, ms, where)
		if err != nil || done {
			return err
		}
	}
}

// foreignKeysOff is the first line of a migration that rebuilds a table
// other tables refer to. SQLite's own procedure for such a change
// (https://sqlite.org/lang_altertable.html, "other kinds of table schema
// changes") needs foreign keys off while the old table is dropped and the
// new one renamed into its place, which a transaction cannot switch: they
// are switched off around it, and PRAGMA foreign_key_check must find
// nothing before the migration commits.
const foreignKeysOff = "-- comptoir:foreign-keys-off"

func migrateOne(ctx context.Context, w *sql.DB, ms []migration, where string) (done bool, err error) {
	// One connection for the whole step: PRAGMA foreign_keys is per
	// connection.
	conn, err := w.Conn(ctx)
	if err != nil {
		return false, mapErr(err, "migrate "+where)
	}
	defer conn.Close()
	var current int
	if err := conn.QueryRowContext(ctx, "PRAGMA user_version").Scan(&current); err != nil {
		return false, mapErr(err, "migrate "+where)
	}
	fkOff := current < len(ms) && strings.HasPrefix(ms[current].sql, foreignKeysOff)
	if fkOff {
		if _, err := conn.ExecContext(ctx, "PRAGMA foreign_keys = OFF"); err != nil {
			return false, mapErr(err, "migrate "+where)
		}
		defer func() {
			// The migration's own error, if any, is the one reported.
			if _, ferr := conn.ExecContext(context.WithoutCancel(ctx), "PRAGMA foreign_keys = ON"); err == nil {
				err = mapErr(ferr, "migrate "+where)
			}
		}()
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return false, mapErr(err, "migrate "+where)
	}
	defer tx.Rollback()
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&current); err != nil {
		return false, mapErr(err, "migrate "+where)
	}
	if current > len(ms) {
		return false, Errorf(EINTERNAL,
			"database %s has schema version %d, newer than this build of Comptoir knows (%d): refusing to use it; run the newer Comptoir or restore a backup",
			where, current, len(ms))
	}
	if current == len(ms) {
		return true, nil
	}
	m := ms[current]
	if strings.HasPrefix(m.sql, foreignKeysOff) != fkOff {
		return false, nil // another step ran between the two reads: look again
	}
	if _, err := tx.ExecContext(ctx, m.sql); err != nil {
		return false, mapErr(err, "apply migration "+m.name+" to "+where)
	}
	if fkOff {
		if err := foreignKeyCheck(ctx, tx); err != nil {
			return false, mapErr(err, "apply migration "+m.name+" to "+where)
		}
	}
	// PRAGMA takes no bound parameters; the version is our own integer.
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", m.version)); err != nil {
		return false, mapErr(err, "apply migration "+m.name+" to "+where)
	}
	return false, mapErr(tx.Commit(), "apply migration "+m.name+" to "+where)
}

// foreignKeyCheck fails if any row refers to a row that does not exist.
func foreignKeyCheck(ctx context.Context, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, "PRAGMA foreign_key_check")
	if err != nil {
		return err
	}
	defer rows.Close()
	if rows.Next() {
		var table, parent string
		var rowid sql.NullInt64
		var fk int
		if err := rows.Scan(&table, &rowid, &parent, &fk); err != nil {
			return err
		}
		return fmt.Errorf("foreign key check: row %d of %s refers to a missing row of %s", rowid.Int64, table, parent)
	}
	return rows.Err()
}

// unixMS converts a time to the stored form.
func unixMS(t time.Time) int64 { return t.UnixMilli() }

// fromUnixMS converts a stored timestamp back; NULL is the zero time.
func fromUnixMS(v sql.NullInt64) time.Time {
	if !v.Valid {
		return time.Time{}
	}
	return time.UnixMilli(v.Int64).UTC()
}

// update runs fn in one write transaction (BEGIN IMMEDIATE) and commits it.
// With synchronous=FULL, a nil return means the change is on disk.
func (db *DB) update(ctx context.Context, what string, fn func(tx *sql.Tx) error) error {
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return mapErr(err, what)
	}
	defer tx.Rollback()
	if err := fn(tx); err != nil {
		return mapErr(err, what)
	}
	if err := tx.Commit(); err != nil {
		return mapErr(err, what)
	}
	db.signalWritten()
	return nil
}

// updateTo is update for a write that returns what it wrote (an attempt
// read back in the transaction): that value once the transaction is
// committed, the zero value when it is not.
func updateTo[T any](ctx context.Context, db *DB, what string, fn func(tx *sql.Tx) (T, error)) (T, error) {
	var out T
	err := db.update(ctx, what, func(tx *sql.Tx) error {
		var err error
		out, err = fn(tx)
		return err
	})
	if err != nil {
		var zero T
		return zero, err
	}
	return out, nil
}
