package journal

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
)

// PeekSetting reads the setting key from the journal in the data directory
// dir without opening the journal: it takes no lock on the directory,
// creates neither the directory nor the database, applies no migration,
// and reads through a read-only connection. It is for a process that needs
// one value before it may own the directory (the desktop reading the kiosk
// mode before its window exists), while another process may hold it.
//
// It returns ok false and a nil error when there is no database in dir
// yet, or no settings table in it yet (a journal never migrated). It sees
// what was committed when it reads: a write in progress elsewhere is not
// waited for, beyond SQLite's short locks (busy timeout of Open's default).
func PeekSetting(ctx context.Context, dir, key string) (json.RawMessage, bool, error) {
	if dir == "" {
		return nil, false, Errorf(EINVALID, "no data directory given")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, false, failure(EINVALID, fmt.Sprintf("data directory %q", dir), err)
	}
	p := filepath.Join(abs, dbFileName)
	v, ok, err := peek(ctx, p, key)
	if err != nil {
		// A read-only open never creates the file: it fails when there is
		// none, which is no database yet.
		if missing, _ := absent(p); missing {
			return nil, false, nil
		}
		return nil, false, mapErr(err, "peek at setting "+key+" in "+p)
	}
	return v, ok, nil
}

// absent says whether there is no file at p.
func absent(p string) (bool, error) {
	_, err := os.Stat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return true, nil
	}
	return false, err
}

// peekDSN opens the database at p read-only: mode=ro, so SQLite never
// creates nor writes it (it may still use, or create beside it, the WAL's
// shared-memory index, which is how a reader sees the commits of a writer
// that has not checkpointed them). No journal_mode: changing it is a write.
func peekDSN(p string) string {
	o := buildOptions(nil)
	return fileURI(p) + "?mode=ro&_pragma=" + url.QueryEscape(fmt.Sprintf("busy_timeout(%d)", o.busyTimeout.Milliseconds()))
}

func peek(ctx context.Context, p, key string) (json.RawMessage, bool, error) {
	c, err := sql.Open("sqlite", peekDSN(p))
	if err != nil {
		return nil, false, err
	}
	defer c.Close()
	c.SetMaxOpenConns(1)
	// One read transaction: the table check and the read see the same
	// snapshot, whatever a migration elsewhere commits meanwhile.
	tx, err := c.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, false, err
	}
	defer tx.Rollback()
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'settings'`).Scan(&n); err != nil {
		return nil, false, err
	}
	if n == 0 {
		return nil, false, nil
	}
	var v string
	err = tx.QueryRowContext(ctx, `SELECT value FROM settings WHERE key = ?`, key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return json.RawMessage(v), true, nil
}
