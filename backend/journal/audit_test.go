package journal

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestAppendAudit(t *testing.T) {
	ctx := t.Context()
	clk := newStepClock()
	db := openMemory(t, WithClock(clk.Now))
	given := time.Date(2026, 2, 1, 9, 30, 0, 123456789, time.FixedZone("CET", 3600))
	in := []AuditRecord{
		{Who: "system", Action: "pin_set", Detail: "staff PIN set at first run"},
		{Who: "staff:0123abcd", Action: "setting", Subject: "idleSeconds", Detail: "60 → 90"},
		{Who: "staff:0123abcd", Action: "reversal", Subject: "tx-1", Detail: "reversed 12.50",
			Raw: []byte(`{"status": "ok" ,"transactionId":"tx-2"}`)},
		{Who: "kiosk", Action: "unlock_failed", Raw: []byte("502 Bad Gateway\x00\xff")}, // not JSON, not UTF-8
		{ID: 999, At: given, Who: "system", Action: "imported"},
	}
	for _, r := range in {
		if err := db.AppendAudit(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	got, err := db.Audit(ctx, AuditQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(in) {
		t.Fatalf("%d lines, want %d", len(got), len(in))
	}
	// Newest first: the line dated in February comes last.
	wantOrder := []int{3, 2, 1, 0, 4}
	for i, k := range wantOrder {
		g, w := got[i], in[k]
		if g.Who != w.Who || g.Action != w.Action || g.Subject != w.Subject || g.Detail != w.Detail || !bytes.Equal(g.Raw, w.Raw) {
			t.Fatalf("line %d = %+v, want %+v", i, g, w)
		}
		if g.At.Location() != time.UTC {
			t.Fatalf("line %d: time in %v, want UTC", i, g.At.Location())
		}
	}
	if last := got[4]; last.ID != 5 || !last.At.Equal(given.Truncate(time.Millisecond)) {
		t.Fatalf("given time and id: %+v, want id 5 at %v", last, given)
	}
	if first := got[0]; first.ID != 4 || !first.At.Equal(time.Date(2026, 3, 1, 12, 0, 4, 0, time.UTC)) {
		t.Fatalf("clock time and id: %+v", first)
	}
	if got[3].Raw != nil || got[3].Subject != "" {
		t.Fatalf("absent fields read back as %+v", got[3])
	}

	for _, bad := range []AuditRecord{{Action: "x"}, {Who: "system"}} {
		wantCode(t, db.AppendAudit(ctx, bad), EINVALID)
	}
	if all, _ := db.Audit(ctx, AuditQuery{}); len(all) != len(in) {
		t.Fatalf("refused lines were written: %d lines", len(all))
	}
}

func TestAuditQuery(t *testing.T) {
	ctx := t.Context()
	db := openMemory(t)
	base := time.Date(2026, 3, 1, 8, 0, 0, 0, time.UTC)
	// Ten lines one hour apart, alternating two actions, and two lines at the
	// same instant to check the order of append breaks the tie.
	for i := range 10 {
		action := "unlock"
		if i%2 == 1 {
			action = "reversal"
		}
		r := AuditRecord{At: base.Add(time.Duration(i) * time.Hour), Who: "system", Action: action, Subject: fmt.Sprint(i)}
		if err := db.AppendAudit(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range []string{"10", "11"} {
		if err := db.AppendAudit(ctx, AuditRecord{At: base.Add(20 * time.Hour), Who: "system", Action: "lock", Subject: s}); err != nil {
			t.Fatal(err)
		}
	}
	subjects := func(rs []AuditRecord) string {
		var s []string
		for _, r := range rs {
			s = append(s, r.Subject)
		}
		return strings.Join(s, ",")
	}
	tests := []struct {
		name string
		q    AuditQuery
		want string
	}{
		{"all", AuditQuery{}, "11,10,9,8,7,6,5,4,3,2,1,0"},
		{"limit", AuditQuery{Limit: 3}, "11,10,9"},
		{"limit above count", AuditQuery{Limit: 100}, "11,10,9,8,7,6,5,4,3,2,1,0"},
		{"since", AuditQuery{Since: base.Add(8 * time.Hour)}, "11,10,9,8"},
		{"until", AuditQuery{Until: base.Add(2 * time.Hour)}, "1,0"},
		{"since until", AuditQuery{Since: base.Add(3 * time.Hour), Until: base.Add(6 * time.Hour)}, "5,4,3"},
		{"action", AuditQuery{Action: "reversal"}, "9,7,5,3,1"},
		{"action limit", AuditQuery{Action: "reversal", Limit: 2}, "9,7"},
		{"everything", AuditQuery{Action: "unlock", Since: base.Add(time.Hour), Until: base.Add(8 * time.Hour), Limit: 2}, "6,4"},
		{"unknown action", AuditQuery{Action: "nope"}, ""},
		{"empty range", AuditQuery{Since: base.Add(30 * time.Hour)}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := db.Audit(ctx, tt.q)
			if err != nil {
				t.Fatal(err)
			}
			if s := subjects(got); s != tt.want {
				t.Fatalf("got %s, want %s", s, tt.want)
			}
		})
	}
	_, err := db.Audit(ctx, AuditQuery{Limit: -1})
	wantCode(t, err, EINVALID)
}

// The schema refuses to change or remove an audit line, whatever the SQL.
func TestAuditIsAppendOnly(t *testing.T) {
	ctx := t.Context()
	db := openMemory(t)
	r := AuditRecord{Who: "staff:0123abcd", Action: "reversal", Subject: "tx-1", Detail: "reversed 12.50"}
	if err := db.AppendAudit(ctx, r); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`UPDATE audit SET detail = 'nothing happened'`,
		`UPDATE audit SET at = 0 WHERE id = 1`,
		`UPDATE audit SET who = 'system' WHERE action = 'reversal'`,
		`DELETE FROM audit WHERE id = 1`,
		`DELETE FROM audit`,
		`INSERT OR REPLACE INTO audit (id, at, who, action) VALUES (1, 0, 'system', 'forged')`,
	} {
		t.Run(q, func(t *testing.T) {
			_, err := db.w.ExecContext(ctx, q)
			if err == nil {
				t.Fatal("accepted")
			}
			wantCode(t, mapErr(err, "raw write"), EINVALID)
		})
	}
	got, err := db.Audit(ctx, AuditQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Who != r.Who || got[0].Detail != r.Detail || got[0].Action != r.Action {
		t.Fatalf("audit changed: %+v", got)
	}
}

// A limited read of the newest lines must not sort the whole history.
func TestAuditUsesIndex(t *testing.T) {
	ctx := t.Context()
	db := openMemory(t)
	for i := range 50 {
		if err := db.AppendAudit(ctx, AuditRecord{Who: "system", Action: fmt.Sprint("a", i%5)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.w.ExecContext(ctx, "ANALYZE"); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		q     AuditQuery
		index string
	}{
		{AuditQuery{Limit: 20}, "audit_by_at"},
		{AuditQuery{Since: time.Now().Add(-time.Hour), Limit: 20}, "audit_by_at"},
		{AuditQuery{Action: "a1", Limit: 20}, "audit_by_action"},
		{AuditQuery{Action: "a1", Since: time.Now().Add(-time.Hour), Until: time.Now()}, "audit_by_action"},
	} {
		query, args := auditSQL(tt.q)
		joined := queryPlan(t, db.r, query, args...)
		if !strings.Contains(joined, "INDEX "+tt.index) || strings.Contains(joined, "TEMP B-TREE") {
			t.Fatalf("%+v: plan %q, want a walk of %s without a sort", tt.q, joined, tt.index)
		}
	}
}

// A full disk is EFULL for an audit line as for a payment: nothing of the
// line is written, the earlier lines are intact, and appending works again
// once there is room.
func TestAuditDiskFull(t *testing.T) {
	ctx := t.Context()
	db := openDir(t, t.TempDir())
	makeRoom := fillDisk(t, db, 6)
	detail := strings.Repeat("x", 1500)
	written := 0
	var err error
	for i := range 200 {
		err = db.AppendAudit(ctx, AuditRecord{Who: "system", Action: "fill", Subject: fmt.Sprint(i), Detail: detail})
		if err != nil {
			break
		}
		written++
	}
	wantCode(t, err, EFULL)
	if written == 0 {
		t.Fatal("the database was full from the start: the test proves nothing")
	}
	got, err := db.Audit(ctx, AuditQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != written {
		t.Fatalf("%d lines after disk full, want %d", len(got), written)
	}
	for i, r := range got {
		if r.Subject != fmt.Sprint(written-1-i) || r.Detail != detail {
			t.Fatalf("line %d after disk full: %+v", i, r)
		}
	}
	makeRoom()
	if err := db.AppendAudit(ctx, AuditRecord{Who: "system", Action: "fill", Subject: "after"}); err != nil {
		t.Fatalf("after room was made: %v", err)
	}
}

// A line AppendAudit returned for is on disk, even if the process then dies
// without closing the journal.
func TestAuditSurvivesProcessDeath(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	c := startChild(t, "audit-exit", dir)
	if !c.ok {
		t.Fatalf("child failed: %s", c.first)
	}
	_ = c.cmd.Wait()
	db := openDir(t, dir)
	got, err := db.Audit(ctx, AuditQuery{Action: "child"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0].Subject != "2" || got[2].Subject != "0" || got[0].Who != "staff:child" {
		t.Fatalf("after the child's death: %+v", got)
	}
}

// A database written by a build that knew only migration 1 is brought to
// the current version on Open, with its data.
func TestUpgradeFromVersion1(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	// The old build: only migration 1, and a day of business on it.
	oldDB := openOldBuild(t, dir, "0001_initial.sql")
	old := oldDB.w
	a := oldAttemptIn(t, oldDB, StateApproved, 0)
	if err := oldDB.SetSetting(ctx, "staff.audit", json.RawMessage(`[{"who":"system","action":"pin_set"}]`)); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := old.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema WHERE name = 'audit'`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("version 1 already has an audit table: %d, %v", n, err)
	}
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}

	db := openDir(t, dir)
	v, err := db.SchemaVersion(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ms, _ := loadMigrations(migrationFS)
	if v != len(ms) || v < 2 {
		t.Fatalf("schema version %d after upgrade, want %d", v, len(ms))
	}
	got, err := db.Attempt(ctx, a.UUID)
	if err != nil || got.State != StateApproved || !bytes.Equal(got.RequestBody, a.RequestBody) {
		t.Fatalf("attempt after upgrade: %+v, %v", got, err)
	}
	if _, err := db.Order(ctx, a.OrderID); err != nil {
		t.Fatalf("order after upgrade: %v", err)
	}
	if evs := countEvents(t, db, a.UUID); evs != 3 {
		t.Fatalf("%d events after upgrade, want 3", evs)
	}
	if raw, ok, err := db.Setting(ctx, "staff.audit"); !ok || err != nil || !strings.Contains(string(raw), "pin_set") {
		t.Fatalf("setting after upgrade: %s, %v, %v", raw, ok, err)
	}
	// The new table works, with its rules.
	if err := db.AppendAudit(ctx, AuditRecord{Who: "system", Action: "upgraded"}); err != nil {
		t.Fatal(err)
	}
	_, err = db.w.ExecContext(ctx, `DELETE FROM audit`)
	wantCode(t, mapErr(err, "raw write"), EINVALID)
	// The old rules still hold too.
	_, err = db.w.ExecContext(ctx, `DELETE FROM attempts`)
	wantCode(t, mapErr(err, "raw write"), EINVALID)
}

func TestImportAudit(t *testing.T) {
	const key = "legacy.audit"
	type legacy struct {
		At     time.Time `json:"at"`
		Who    string    `json:"who"`
		Action string    `json:"action"`
	}
	decode := func(v json.RawMessage) ([]AuditRecord, error) {
		var list []legacy
		if err := json.Unmarshal(v, &list); err != nil {
			return nil, err
		}
		var out []AuditRecord
		for _, l := range list {
			out = append(out, AuditRecord{At: l.At, Who: l.Who, Action: l.Action})
		}
		return out, nil
	}
	t0 := time.Date(2026, 1, 5, 10, 0, 0, 0, time.UTC)
	value := func(ls ...legacy) json.RawMessage {
		b, err := json.Marshal(ls)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	list := value(
		legacy{t0, "system", "pin_set"},
		legacy{t0.Add(time.Minute), "staff:aaaa", "unlock"},
		legacy{t0.Add(time.Minute), "staff:aaaa", "setting"}, // same instant: order of the list
	)

	t.Run("moves then does nothing", func(t *testing.T) {
		ctx := t.Context()
		db := openMemory(t)
		if err := db.SetSetting(ctx, key, list); err != nil {
			t.Fatal(err)
		}
		n, err := db.ImportAudit(ctx, key, decode)
		if err != nil || n != 3 {
			t.Fatalf("import: %d, %v", n, err)
		}
		if _, ok, _ := db.Setting(ctx, key); ok {
			t.Fatal("the setting is still there")
		}
		got, _ := db.Audit(ctx, AuditQuery{})
		if len(got) != 3 || got[0].Action != "setting" || got[1].Action != "unlock" || got[2].Action != "pin_set" ||
			!got[2].At.Equal(t0) || got[2].ID >= got[1].ID || got[1].ID >= got[0].ID {
			t.Fatalf("imported %+v", got)
		}
		calls := 0
		n, err = db.ImportAudit(ctx, key, func(v json.RawMessage) ([]AuditRecord, error) { calls++; return decode(v) })
		if err != nil || n != 0 || calls != 0 {
			t.Fatalf("second import: %d, %v, convert called %d times", n, err, calls)
		}
		if got, _ := db.Audit(ctx, AuditQuery{}); len(got) != 3 {
			t.Fatalf("%d lines after a second import", len(got))
		}
	})

	// Whatever goes wrong, the import is whole or not at all: the setting
	// stays until its lines are in the table.
	for _, tt := range []struct {
		name    string
		value   json.RawMessage
		convert func(json.RawMessage) ([]AuditRecord, error)
		cancel  bool
		code    string
	}{
		{"convert fails", json.RawMessage(`{"not":"a list"}`), decode, false, EINVALID},
		{"a record without author", value(legacy{t0, "system", "pin_set"}, legacy{t0, "", "unlock"}), decode, false, EINVALID},
		{"a record without action", value(legacy{t0, "system", "pin_set"}, legacy{t0, "system", ""}), decode, false, EINVALID},
		{"interrupted", list, decode, true, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := t.Context()
			db := openMemory(t)
			if err := db.SetSetting(ctx, key, tt.value); err != nil {
				t.Fatal(err)
			}
			ictx := ctx
			if tt.cancel {
				c, cancel := context.WithCancel(ctx)
				cancel()
				ictx = c
			}
			n, err := db.ImportAudit(ictx, key, tt.convert)
			if tt.cancel {
				if !errors.Is(err, context.Canceled) {
					t.Fatalf("err = %v", err)
				}
			} else {
				wantCode(t, err, tt.code)
			}
			if n != 0 {
				t.Fatalf("%d lines reported", n)
			}
			if raw, ok, _ := db.Setting(ctx, key); !ok || string(raw) != string(tt.value) {
				t.Fatalf("setting after a failed import: %s, %v", raw, ok)
			}
			if got, _ := db.Audit(ctx, AuditQuery{}); len(got) != 0 {
				t.Fatalf("lines written by a failed import: %+v", got)
			}
		})
	}

	_, err := openMemory(t).ImportAudit(t.Context(), "", decode)
	wantCode(t, err, EINVALID)
}
