package staff

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/settings"
)

// table reads the journal's audit table, newest first.
func (e *env) table() []journal.AuditRecord {
	e.t.Helper()
	recs, err := e.db.Audit(e.ctx, journal.AuditQuery{})
	if err != nil {
		e.t.Fatal(err)
	}
	return recs
}

func actions(recs []journal.AuditRecord) string {
	var s []string
	for _, r := range recs {
		s = append(s, r.Action)
	}
	return strings.Join(s, ",")
}

func TestActionsLandInAuditTable(t *testing.T) {
	e := newEnv(t)
	s := e.unlock()
	e.clock.Advance(time.Second)
	if err := e.st.SaveSetting(e.ctx, s.ID, settings.SettingIdleSeconds, json.RawMessage(`90`)); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(time.Second)
	e.st.audit(e.ctx, s.Who, "ping", "", "json answer", []byte(`{"status":"ok"}`))
	e.st.audit(e.ctx, s.Who, "ping", "", "text answer", []byte("502 Bad Gateway"))
	e.clock.Advance(time.Second)
	e.st.Lock(e.ctx, s.ID)

	recs := e.table()
	if got := actions(recs); got != "lock,ping,ping,setting,unlock,pin_set" {
		t.Fatalf("audit table %s", got)
	}
	lock, setting := recs[0], recs[3]
	if lock.Who != s.Who || setting.Who != s.Who || setting.Subject != settings.SettingIdleSeconds || !strings.Contains(setting.Detail, "90") {
		t.Fatalf("lines %+v, %+v", lock, setting)
	}
	if !lock.At.Equal(e.clock.Now().Truncate(time.Millisecond)) {
		t.Fatalf("lock at %v, want the staff clock %v", lock.At, e.clock.Now())
	}
	if string(recs[2].Raw) != `{"status":"ok"}` || recs[1].Raw != nil || !strings.HasSuffix(recs[1].Detail, "; raw answer: 502 Bad Gateway") {
		t.Fatalf("raw answers: %+v, %+v", recs[2], recs[1])
	}
	if _, ok, _ := e.db.Setting(e.ctx, SettingAudit); ok {
		t.Fatal("the old settings list is still written")
	}

	// Audit reads the table, newest first, in the same JSON shape as ever.
	first := s
	s = e.unlock()
	list, err := e.st.Audit(e.ctx, s.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != len(recs)+1 || list[0].Action != "unlock" || list[1].Action != "lock" || list[len(list)-1].Action != "pin_set" {
		t.Fatalf("Audit = %+v", list)
	}
	b, err := json.Marshal(list[3])
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf(`{"at":%q,"who":%q,"action":"ping","detail":"json answer","raw":{"status":"ok"}}`,
		list[3].At.Format(time.RFC3339Nano), first.Who)
	if string(b) != want {
		t.Fatalf("JSON %s\nwant %s", b, want)
	}
	b, _ = json.Marshal(list[len(list)-1])
	if strings.Contains(string(b), `"subject"`) || strings.Contains(string(b), `"raw"`) {
		t.Fatalf("empty fields in JSON: %s", b)
	}
}

func TestAuditLimitAndSession(t *testing.T) {
	e := newEnv(t)
	s := e.unlock()
	for i := range 5 {
		e.clock.Advance(time.Second)
		if err := e.st.Record(e.ctx, s.ID, "test.step", fmt.Sprint(i), ""); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct {
		limit int
		want  int
	}{{0, 7}, {-1, 7}, {3, 3}, {100, 7}} {
		list, err := e.st.Audit(e.ctx, s.ID, tt.limit)
		if err != nil {
			t.Fatal(err)
		}
		if len(list) != tt.want || list[0].Subject != "4" {
			t.Fatalf("limit %d: %d entries, first %+v", tt.limit, len(list), list[0])
		}
	}
	_, err := e.st.Audit(e.ctx, "nope", 0)
	wantCode(t, err, ESESSION)
}

func TestRecord(t *testing.T) {
	e := newEnv(t)
	s := e.unlock()
	e.clock.Advance(time.Second)
	if err := e.st.Record(e.ctx, s.ID, "terminal_chosen", "yavin-1234", "chosen among 2 terminals found"); err != nil {
		t.Fatal(err)
	}
	recs := e.table()
	r := recs[0]
	if r.Action != "terminal_chosen" || r.Who != s.Who || r.Subject != "yavin-1234" || r.Detail != "chosen among 2 terminals found" ||
		!r.At.Equal(e.clock.Now().Truncate(time.Millisecond)) {
		t.Fatalf("recorded %+v", r)
	}
	if err := e.st.Record(e.ctx, s.ID, "app.close", "", ""); err != nil {
		t.Fatal(err)
	}
	if list, _ := e.st.Audit(e.ctx, s.ID, 1); len(list) != 1 || list[0].Action != "app.close" || list[0].Who != s.Who {
		t.Fatalf("Audit after Record: %+v", list)
	}
	before := len(e.table())

	for _, bad := range []string{"", "Close", "app close", "ferm\u00e9", strings.Repeat("a", 65), "reversal", "unlock", "setting", "audit_import"} {
		wantCode(t, e.st.Record(e.ctx, s.ID, bad, "x", "y"), EINVALID)
	}
	wantCode(t, e.st.Record(e.ctx, "nope", "app.close", "", ""), ESESSION)
	e.clock.Advance(DefaultSessionTTL + time.Second)
	wantCode(t, e.st.Record(e.ctx, s.ID, "app.close", "", ""), ESESSION)
	if n := len(e.table()); n != before {
		t.Fatalf("refused records were written: %d lines, want %d", n, before)
	}

	// A journal that refuses the line is the caller's to know about.
	s = e.unlock()
	if err := e.db.Close(); err != nil {
		t.Fatal(err)
	}
	wantCode(t, e.st.Record(e.ctx, s.ID, "app.close", "", ""), EINTERNAL)
}

// Every action this package writes is reserved from Record.
func TestOwnActionsAreReserved(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	call := regexp.MustCompile(`s\.audit\(ctx, [^,]+, "([^"]+)"`)
	line := regexp.MustCompile(`Action: "([^"]+)"`)
	found := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, re := range []*regexp.Regexp{call, line} {
			for _, m := range re.FindAllStringSubmatch(string(b), -1) {
				found++
				if !ownActions[m[1]] {
					t.Errorf("%s writes action %q, missing from ownActions", f, m[1])
				}
			}
		}
	}
	if found < 10 {
		t.Fatalf("only %d audit calls found: the pattern no longer matches the code", found)
	}
}

// legacyList is the old settings list as an earlier build left it, oldest first.
func legacyList(t *testing.T, at time.Time) ([]AuditEntry, json.RawMessage) {
	t.Helper()
	list := []AuditEntry{
		{At: at, Who: "system", Action: "pin_set", Detail: "staff PIN set at first run"},
		{At: at.Add(time.Minute), Who: "kiosk", Action: "unlock_failed", Detail: "wrong staff PIN (1 in a row)"},
		{At: at.Add(2 * time.Minute), Who: "staff:0badcafe", Action: "reversal", Subject: "tx-42",
			Detail: "reversed", Raw: json.RawMessage(`{"status":"ok","transactionId":"tx-43"}`)},
		{At: at.Add(3 * time.Minute), Who: "staff:0badcafe", Action: "lock", Detail: "staff session closed"},
	}
	b, err := json.Marshal(list)
	if err != nil {
		t.Fatal(err)
	}
	return list, b
}

// readAudit returns every audit line, oldest first, through the path the
// day's comparison reads by.
func (s *Staff) readAudit(ctx context.Context) ([]AuditEntry, error) {
	list, err := s.entries(ctx, journal.AuditQuery{})
	if err != nil {
		return nil, err
	}
	slices.Reverse(list)
	return list, nil
}

func TestLegacyAuditListMovedOnce(t *testing.T) {
	e := newEnv(t)
	at := time.Date(2020, 2, 10, 9, 0, 0, 0, time.UTC)
	old, raw := legacyList(t, at)
	if err := e.db.SetSetting(e.ctx, SettingAudit, raw); err != nil {
		t.Fatal(err)
	}
	e.restart()

	// Reading is enough: the day's comparison reads before anything is written.
	got, err := e.st.readAudit(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(old)+1 || got[len(got)-1].Action != "audit_import" {
		t.Fatalf("read after the move: %+v", got)
	}
	for i, w := range old {
		g := got[i]
		if !g.At.Equal(w.At) || g.Who != w.Who || g.Action != w.Action || g.Subject != w.Subject || g.Detail != w.Detail || string(g.Raw) != string(w.Raw) {
			t.Fatalf("entry %d = %+v, want %+v", i, g, w)
		}
	}
	if _, ok, _ := e.db.Setting(e.ctx, SettingAudit); ok {
		t.Fatal("the old list is still in the settings")
	}
	recs := e.table()
	if imp := recs[0]; imp.Who != "system" || !strings.Contains(imp.Detail, "4 entries") {
		t.Fatalf("import line %+v", imp)
	}
	// Oldest first in the table too: ids follow the list's order.
	for i := 1; i < len(old); i++ {
		if recs[len(recs)-i].ID >= recs[len(recs)-i-1].ID {
			t.Fatalf("ids out of order: %+v", recs)
		}
	}

	// New actions go after them; a restart moves nothing twice.
	e.unlock()
	e.restart()
	s := e.unlock()
	list, err := e.st.Audit(e.ctx, s.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	if want := len(old) + 1 + 3; len(list) != want { // pin_set, unlock, unlock
		t.Fatalf("%d entries after restart, want %d: %+v", len(list), want, list)
	}
	n := 0
	for _, l := range list {
		if l.Action == "audit_import" || l.Subject == "tx-42" {
			n++
		}
	}
	if n != 2 {
		t.Fatalf("moved entries counted %d times, want once each", n)
	}
}

func TestLegacyAuditListUnreadable(t *testing.T) {
	e := newEnv(t)
	if err := e.db.SetSetting(e.ctx, SettingAudit, json.RawMessage(`{"not":"a list"}`)); err != nil {
		t.Fatal(err)
	}
	e.restart()
	s := e.unlock()
	recs := e.table()
	if got := actions(recs); got != "unlock,pin_set,audit_import_unreadable" {
		t.Fatalf("audit table %s", got)
	}
	if string(recs[2].Raw) != `{"not":"a list"}` || recs[2].Subject != SettingAudit {
		t.Fatalf("the unreadable value was not kept: %+v", recs[2])
	}
	if _, ok, _ := e.db.Setting(e.ctx, SettingAudit); ok {
		t.Fatal("the old value is still in the settings")
	}
	if list, err := e.st.Audit(e.ctx, s.ID, 0); err != nil || len(list) != 3 {
		t.Fatalf("Audit = %+v, %v", list, err)
	}
}

// Several staff services on one journal, all acting at once at the first
// start after the upgrade: the list is moved exactly once.
func TestLegacyAuditListMovedOnceUnderConcurrency(t *testing.T) {
	e := newEnv(t)
	s := e.unlock()
	old, raw := legacyList(t, time.Date(2020, 2, 10, 9, 0, 0, 0, time.UTC))
	if err := e.db.SetSetting(e.ctx, SettingAudit, raw); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			if i%2 == 0 {
				if err := e.st.Record(e.ctx, s.ID, "test.concurrent", fmt.Sprint(i), ""); err != nil {
					t.Error(err)
				}
				return
			}
			if _, err := e.st.Audit(e.ctx, s.ID, 0); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	counts := map[string]int{}
	for _, r := range e.table() {
		counts[r.Action]++
	}
	if counts["audit_import"] != 1 || counts["reversal"] != 1 || counts["lock"] != 1 || counts["test.concurrent"] != 4 {
		t.Fatalf("after concurrent first use: %v (old list of %d)", counts, len(old))
	}
}
