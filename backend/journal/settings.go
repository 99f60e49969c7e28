package journal

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"
)

// Setting returns the raw JSON value stored under key, and whether there is one.
func (db *DB) Setting(ctx context.Context, key string) (json.RawMessage, bool, error) {
	var v string
	err := db.r.QueryRowContext(ctx, `SELECT value FROM settings WHERE key = ?`, key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, mapErr(err, "read setting "+key)
	}
	return json.RawMessage(v), true, nil
}

// SetSetting stores value under key, replacing any previous value. The value
// must be valid JSON; it is stored byte for byte.
func (db *DB) SetSetting(ctx context.Context, key string, value json.RawMessage) error {
	if key == "" {
		return Errorf(EINVALID, "setting key is empty")
	}
	if !json.Valid(value) {
		return Errorf(EINVALID, "setting %s: value is not valid JSON", key)
	}
	return db.update(ctx, "write setting "+key, func(tx *sql.Tx) error {
		return upsertSetting(ctx, tx, key, value, db.now())
	})
}

func upsertSetting(ctx context.Context, tx *sql.Tx, key string, value json.RawMessage, now time.Time) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO settings (key, value, updated_at) VALUES (?, ?, ?)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
		key, string(value), unixMS(now))
	return err
}

// Settings returns every stored setting.
func (db *DB) Settings(ctx context.Context) (map[string]json.RawMessage, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT key, value FROM settings ORDER BY key`)
	if err != nil {
		return nil, mapErr(err, "read settings")
	}
	defer rows.Close()
	out := map[string]json.RawMessage{}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return nil, mapErr(err, "read settings")
		}
		out[k] = json.RawMessage(v)
	}
	if err := rows.Err(); err != nil {
		return nil, mapErr(err, "read settings")
	}
	return out, nil
}
