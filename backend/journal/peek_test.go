package journal

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

func TestPeekSettingNoDatabase(t *testing.T) {
	ctx := t.Context()
	parent := t.TempDir()
	missing := filepath.Join(parent, "data")
	v, ok, err := PeekSetting(ctx, missing, "kiosk.mode")
	if v != nil || ok || err != nil {
		t.Fatalf("missing dir: %s, %v, %v", v, ok, err)
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Fatalf("the data directory was created: %v", err)
	}
	// An empty directory stays empty: no database, no lock file.
	if err := os.Mkdir(missing, 0o700); err != nil {
		t.Fatal(err)
	}
	v, ok, err = PeekSetting(ctx, missing, "kiosk.mode")
	if v != nil || ok || err != nil {
		t.Fatalf("empty dir: %s, %v, %v", v, ok, err)
	}
	if names := dirNames(t, missing); len(names) != 0 {
		t.Fatalf("files created: %v", names)
	}
	_, _, err = PeekSetting(ctx, "", "kiosk.mode")
	wantCode(t, err, EINVALID)
}

// A database whose migrations never ran (an empty file, or a file of
// another schema) has no settings: it is read as is, never migrated.
func TestPeekSettingNoSettingsTable(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	p := filepath.Join(dir, dbFileName)
	if err := os.WriteFile(p, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	v, ok, err := PeekSetting(ctx, dir, "kiosk.mode")
	if v != nil || ok || err != nil {
		t.Fatalf("empty file: %s, %v, %v", v, ok, err)
	}
	if fi, err := os.Stat(p); err != nil || fi.Size() != 0 {
		t.Fatalf("the empty file was written: %v, %v", fi, err)
	}

	other, err := sql.Open("sqlite", fileURI(p))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.ExecContext(ctx, `CREATE TABLE unrelated (x INTEGER)`); err != nil {
		t.Fatal(err)
	}
	other.Close()
	if v, ok, err = PeekSetting(ctx, dir, "kiosk.mode"); v != nil || ok || err != nil {
		t.Fatalf("no settings table: %s, %v, %v", v, ok, err)
	}
	c, err := sql.Open("sqlite", fileURI(p))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var version, tables int
	if err := c.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&version); err != nil {
		t.Fatal(err)
	}
	if err := c.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema`).Scan(&tables); err != nil {
		t.Fatal(err)
	}
	if version != 0 || tables != 1 {
		t.Fatalf("peeking migrated the file: version %d, %d tables", version, tables)
	}

	// Not a database at all: an error, not "no setting".
	if err := os.WriteFile(p, []byte("this is not an SQLite database, only text long enough to have a header"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := PeekSetting(ctx, dir, "kiosk.mode"); ok || err == nil {
		t.Fatalf("not a database: %v, %v", ok, err)
	}
}

// The desktop reads a setting while the kiosk holds the directory.
func TestPeekSettingWhileLocked(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	db := openDir(t, dir)
	if err := db.SetSetting(ctx, "kiosk.mode", json.RawMessage(`"counter"`)); err != nil {
		t.Fatal(err)
	}
	v, ok, err := PeekSetting(ctx, dir, "kiosk.mode")
	if err != nil || !ok || string(v) != `"counter"` {
		t.Fatalf("peek while locked: %s, %v, %v", v, ok, err)
	}
	v, ok, err = PeekSetting(ctx, dir, "no.such.key")
	if v != nil || ok || err != nil {
		t.Fatalf("missing key: %s, %v, %v", v, ok, err)
	}
	// The last commit, not yet checkpointed into the database file.
	if err := db.SetSetting(ctx, "kiosk.mode", json.RawMessage(`"kiosk"`)); err != nil {
		t.Fatal(err)
	}
	if v, ok, err := PeekSetting(ctx, dir, "kiosk.mode"); err != nil || !ok || string(v) != `"kiosk"` {
		t.Fatalf("peek after a change: %s, %v, %v", v, ok, err)
	}
	// The holder keeps the directory, and the journal keeps working.
	_, err = Open(ctx, dir)
	wantCode(t, err, ELOCKED)
	if err := db.SetSetting(ctx, "kiosk.mode", json.RawMessage(`"counter"`)); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	// Closed: still readable, the database untouched (SQLite may leave an
	// empty WAL and its index beside it), and the next Open not disturbed.
	p := filepath.Join(dir, dbFileName)
	before, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if v, ok, err := PeekSetting(ctx, dir, "kiosk.mode"); err != nil || !ok || string(v) != `"counter"` {
		t.Fatalf("peek of a closed journal: %s, %v, %v", v, ok, err)
	}
	if after, err := os.ReadFile(p); err != nil || !bytes.Equal(after, before) {
		t.Fatalf("peeking changed the database file (%v)", err)
	}
	for _, name := range dirNames(t, dir) {
		switch name {
		case dbFileName, lockFileName, dbFileName + "-shm":
		case dbFileName + "-wal":
			if fi, err := os.Stat(filepath.Join(dir, name)); err != nil || fi.Size() != 0 {
				t.Fatalf("peeking wrote to the WAL: %v, %v", fi, err)
			}
		default:
			t.Fatalf("peeking created %s", name)
		}
	}
	// The connection is read-only: a write through it is refused.
	c, err := sql.Open("sqlite", peekDSN(p))
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.ExecContext(ctx, `INSERT INTO settings (key, value, updated_at) VALUES ('x', '1', 0)`)
	c.Close()
	wantCode(t, mapErr(err, "write through the peek connection"), EREADONLY)
	db = openDir(t, dir)
	if raw, ok, err := db.Setting(ctx, "kiosk.mode"); err != nil || !ok || string(raw) != `"counter"` {
		t.Fatalf("setting after peeking: %s, %v, %v", raw, ok, err)
	}
}
