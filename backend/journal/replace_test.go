package journal

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// replaceAttacks are writes that would swap an immutable row for a forged
// one through REPLACE, which removes the row in its way without firing its
// DELETE triggers. a is an approved attempt, event one of its events, open
// an unresolved attempt. Each must be refused with the given code, and
// change nothing.
type replaceAttack struct {
	name, code, sql string
	args            []any
}

func replaceAttacks(a, open Attempt, event int64) []replaceAttack {
	return []replaceAttack{
		{"event by id", EINVALID,
			`INSERT OR REPLACE INTO attempt_events (id, attempt_id, at, kind, detail) VALUES (?, ?, 0, 'note', 'forged')`,
			[]any{event, a.ID}},
		{"event by REPLACE INTO", EINVALID,
			`REPLACE INTO attempt_events (id, attempt_id, at, kind, detail) VALUES (?, ?, 0, 'note', 'forged')`,
			[]any{event, a.ID}},
		{"attempt by uuid", ECONFLICT,
			`INSERT OR REPLACE INTO attempts (uuid, order_id, kind, amount, policy, terminal, request_body, state, created_at, updated_at)
			 VALUES (?, ?, 'debit', 1, 'kiosk', 'forged', '{}', 'declined', 0, 0)`,
			[]any{a.UUID, a.OrderID}},
		{"attempt by id", ECONFLICT,
			`INSERT OR REPLACE INTO attempts (id, uuid, order_id, kind, amount, policy, terminal, request_body, state, created_at, updated_at)
			 VALUES (?, 'forged-uuid', ?, 'debit', 1, 'kiosk', 'forged', '{}', 'declined', 0, 0)`,
			[]any{a.ID, a.OrderID}},
		{"open attempt by order", ECONFLICT,
			`INSERT OR REPLACE INTO attempts (uuid, order_id, kind, amount, policy, terminal, request_body, state, created_at, updated_at)
			 VALUES ('forged-order', ?, 'debit', 1, 'kiosk', 'forged', '{}', 'prepared', 0, 0)`,
			[]any{open.OrderID}},
		{"open attempt by terminal", ECONFLICT,
			`INSERT OR REPLACE INTO attempts (uuid, order_id, kind, amount, policy, terminal, request_body, state, created_at, updated_at)
			 VALUES ('forged-terminal', ?, 'debit', 1, 'kiosk', ?, '{}', 'prepared', 0, 0)`,
			[]any{a.OrderID, open.Terminal}},
		{"attempt id taken by UPDATE OR REPLACE", EINVALID,
			`UPDATE OR REPLACE attempts SET id = ? WHERE id = ?`,
			[]any{a.ID, open.ID}},
	}
}

// snapshot is every row of the tables REPLACE could touch.
func snapshot(t *testing.T, db *DB) string {
	t.Helper()
	var b strings.Builder
	for _, q := range []string{
		`SELECT id, uuid, order_id, kind, amount, policy, terminal, request_body, state, coalesce(response, '') FROM attempts ORDER BY id`,
		`SELECT id, attempt_id, at, kind, coalesce(detail, '') FROM attempt_events ORDER BY id`,
	} {
		rows, err := db.w.QueryContext(t.Context(), q)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&b, "%q\n", vals)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
	}
	return b.String()
}

// checkNoReplace runs the attacks on db, with foreign keys on and off (a
// hand-opened sqlite3 shell has them off), then checks that ordinary writes
// still work.
func checkNoReplace(t *testing.T, db *DB, a, open Attempt) {
	t.Helper()
	ctx := t.Context()
	evs, err := db.Events(ctx, a.UUID)
	if err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, db)
	for _, fk := range []string{"ON", "OFF"} {
		if _, err := db.w.ExecContext(ctx, "PRAGMA foreign_keys = "+fk); err != nil {
			t.Fatal(err)
		}
		for _, at := range replaceAttacks(a, open, evs[0].ID) {
			t.Run(at.name+" foreign keys "+fk, func(t *testing.T) {
				_, err := db.w.ExecContext(ctx, at.sql, at.args...)
				if err == nil {
					t.Fatal("accepted")
				}
				wantCode(t, mapErr(err, "raw write"), at.code)
			})
		}
	}
	if _, err := db.w.ExecContext(ctx, "PRAGMA foreign_keys = ON"); err != nil {
		t.Fatal(err)
	}
	if after := snapshot(t, db); after != before {
		t.Fatalf("rows changed:\nbefore\n%s\nafter\n%s", before, after)
	}

	// Ordinary writes: events appended, attempts prepared and resolved.
	n := countEvents(t, db, a.UUID)
	if err := db.AddNote(ctx, a.UUID, "staff:0123abcd", "checked on the terminal"); err != nil {
		t.Fatal(err)
	}
	if got := countEvents(t, db, a.UUID); got != n+1 {
		t.Fatalf("%d events after a note, want %d", got, n+1)
	}
	if _, err := db.Transition(ctx, open.UUID, open.State, StateDeclined, TransitionInfo{Note: "declined"}); err != nil {
		t.Fatal(err)
	}
	next, err := db.PrepareAttempt(ctx, newAttempt(t, open.OrderID, open.Terminal))
	if err != nil {
		t.Fatalf("a new attempt once the slot is free: %v", err)
	}
	if _, err := db.MarkSent(ctx, next.UUID); err != nil {
		t.Fatal(err)
	}
	// A plain INSERT on a taken key is still a conflict, as the constraint made it.
	_, err = db.PrepareAttempt(ctx, newAttempt(t, next.OrderID, "elsewhere"))
	wantCode(t, err, ECONFLICT)
	_, err = db.w.ExecContext(ctx, `INSERT INTO attempts (uuid, order_id, kind, amount, policy, terminal, request_body, state, created_at, updated_at)
		VALUES (?, ?, 'debit', 1, 'kiosk', 'T-plain', '{}', 'declined', 0, 0)`, a.UUID, a.OrderID)
	err = mapErr(err, "raw insert")
	wantCode(t, err, ECONFLICT)
	if !strings.Contains(err.Error(), "uuid already exists") {
		t.Fatalf("err = %v", err)
	}
}

func TestReplaceRefused(t *testing.T) {
	db := openMemory(t)
	a := attemptIn(t, db, StateApproved)
	open := attemptIn(t, db, StateSent)
	checkNoReplace(t, db, a, open)
}

// A database written by a build that knew migrations 1 and 2 is brought to
// the current version on Open, with its data, and REPLACE is refused from then on.
func TestUpgradeFromVersion2(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	oldDB := openOldBuild(t, dir, "0001_initial.sql", "0002_audit.sql")
	old := oldDB.w
	a := oldAttemptIn(t, oldDB, StateApproved, 0)
	open := oldAttemptIn(t, oldDB, StateSent, 0)
	if err := oldDB.AppendAudit(ctx, AuditRecord{Who: "system", Action: "pin_set"}); err != nil {
		t.Fatal(err)
	}
	if err := oldDB.SetSetting(ctx, "kiosk.mode", json.RawMessage(`"counter"`)); err != nil {
		t.Fatal(err)
	}
	// The hole this migration closes: version 2 takes the REPLACE.
	var v int
	if err := old.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil || v != 2 {
		t.Fatalf("old build's version %d, %v", v, err)
	}
	evs, err := oldDB.Events(ctx, a.UUID)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := old.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO attempt_events (id, attempt_id, at, kind) VALUES (?, ?, 0, 'note')`, evs[0].ID, a.ID); err != nil {
		t.Fatalf("version 2 already refuses a REPLACE: %v", err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, oldDB)
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}

	db := openDir(t, dir)
	ms, _ := loadMigrations(migrationFS)
	if v, err := db.SchemaVersion(ctx); err != nil || v != len(ms) {
		t.Fatalf("schema version %d after upgrade, %v; want %d", v, err, len(ms))
	}
	if after := snapshot(t, db); after != before {
		t.Fatalf("rows changed by the upgrade:\nbefore\n%s\nafter\n%s", before, after)
	}
	got, err := db.Attempt(ctx, a.UUID)
	if err != nil || got.State != StateApproved || !bytes.Equal(got.RequestBody, a.RequestBody) {
		t.Fatalf("attempt after upgrade: %+v, %v", got, err)
	}
	if recs, err := db.Audit(ctx, AuditQuery{}); err != nil || len(recs) != 1 || recs[0].Action != "pin_set" {
		t.Fatalf("audit after upgrade: %+v, %v", recs, err)
	}
	if raw, ok, err := db.Setting(ctx, "kiosk.mode"); err != nil || !ok || string(raw) != `"counter"` {
		t.Fatalf("setting after upgrade: %s, %v, %v", raw, ok, err)
	}
	checkNoReplace(t, db, a, open)
}
