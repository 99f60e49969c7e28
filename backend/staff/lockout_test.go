package staff

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/fault"
	"github.com/comptoir-pos/comptoir/backend/journal"
)

func (e *env) unlockFrom(o Origin, pin string) error {
	e.t.Helper()
	_, err := e.st.UnlockFrom(e.ctx, o, pin)
	return err
}

// lockouts are the audit trail's lockout lines, oldest first.
func (e *env) auditLines(action string) []journal.AuditRecord {
	e.t.Helper()
	recs, err := e.db.Audit(e.ctx, journal.AuditQuery{Action: action})
	if err != nil {
		e.t.Fatal(err)
	}
	return recs
}

// Anyone at the customer screen can lock its pad, again each time the
// lock expires, but never the desktop's staff shortcut nor a browser:
// staff get in while the screen stays locked, and every lockout is in the
// audit trail.
func TestTheCustomerScreenCannotLockStaffOut(t *testing.T) {
	e := newEnv(t)
	if err := e.st.SetPIN(e.ctx, "2468"); err != nil {
		t.Fatal(err)
	}
	for round := range 3 {
		for range MaxPINFailures {
			e.unlockFrom(OriginScreen, "0000")
		}
		wantCode(t, e.unlockFrom(OriginScreen, "2468"), ELOCKEDOUT)
		for _, o := range []Origin{OriginDesktop, OriginBrowser} {
			if err := e.unlockFrom(o, "2468"); err != nil {
				t.Fatalf("round %d: %s kept out by the screen's lockout: %v", round, o, err)
			}
		}
		e.clock.Advance(MaxLockout + time.Second)
	}
	// One lockout a round, each in the audit trail.
	lines := e.auditLines(ActionLockout)
	if len(lines) != 3 {
		t.Fatalf("%d lockouts in the audit trail, want 3: %+v", len(lines), lines)
	}
	for _, l := range lines {
		if l.Subject != string(OriginScreen) || !strings.Contains(l.Detail, "customer screen") || strings.Contains(l.Detail, "0000") {
			t.Fatalf("lockout line %+v", l)
		}
	}
	if !strings.Contains(lines[0].Detail, "30s") && !strings.Contains(lines[2].Detail, "30s") {
		t.Fatalf("no first lockout of 30 s: %+v", lines)
	}
	// A right PIN at another origin left the screen's count alone: 3 wrong
	// PINs, then one at each expiry (the next ones found the pad locked).
	fs, err := e.st.readFailures(e.ctx)
	if err != nil || fs[OriginScreen].Count != MaxPINFailures+2 || fs[OriginDesktop].Count != 0 {
		t.Fatalf("failures %+v, %v", fs, err)
	}
	// Wrong PINs at the desktop lock the desktop, and not the screen.
	e.clock.Advance(MaxLockout + time.Second)
	for range MaxPINFailures {
		e.unlockFrom(OriginDesktop, "0000")
	}
	wantCode(t, e.unlockFrom(OriginDesktop, "2468"), ELOCKEDOUT)
	wantCode(t, e.unlockFrom("keyboard", "2468"), EINVALID)
}

// A session counts its wrong current PINs where its PIN was typed.
func TestChangePINCountsAtTheSessionsOrigin(t *testing.T) {
	e := newEnv(t)
	s := e.unlockAt(OriginDesktop)
	for i := range MaxPINFailures {
		e.st.ChangePIN(e.ctx, s.ID, fmt.Sprintf("%04d", i), "5555")
	}
	wantCode(t, e.unlockFrom(OriginDesktop, "2468"), ELOCKEDOUT)
	if err := e.unlockFrom(OriginScreen, "2468"); err != nil {
		t.Fatalf("the screen locked by the desktop session's guesses: %v", err)
	}
}

// The one-time recovery code, made on the PC, lifts every lockout from the
// locked pad itself; it serves once, a wrong one is refused and audited.
func TestARecoveryCodeClearsTheLockout(t *testing.T) {
	e := newEnv(t)
	if err := e.st.SetPIN(e.ctx, "2468"); err != nil {
		t.Fatal(err)
	}
	wantCode(t, e.st.ClearLockout(e.ctx, OriginScreen, "1234567812345678"), ENOTFOUND)
	code, err := e.st.NewRecoveryCode(e.ctx, "command line")
	if err != nil {
		t.Fatal(err)
	}
	if len(code) != RecoveryCodeDigits+3 || strings.Count(code, " ") != 3 {
		t.Fatalf("code %q", code)
	}
	if raw, _, _ := e.db.Setting(e.ctx, SettingRecovery); strings.Contains(string(raw), strings.ReplaceAll(code, " ", "")) {
		t.Fatal("the recovery code is stored in clear")
	}
	for _, o := range []Origin{OriginScreen, OriginDesktop} {
		for range MaxPINFailures {
			e.unlockFrom(o, "0000")
		}
		wantCode(t, e.unlockFrom(o, "2468"), ELOCKEDOUT)
	}
	wantCode(t, e.st.ClearLockout(e.ctx, OriginScreen, "2468"), EINVALID)
	wrong := "0000000000000000"
	if strings.ReplaceAll(code, " ", "") == wrong {
		wrong = "1111111111111111"
	}
	wantCode(t, e.st.ClearLockout(e.ctx, OriginScreen, wrong), EWRONGPIN)
	wantCode(t, e.unlockFrom(OriginScreen, "2468"), ELOCKEDOUT)
	if err := e.st.ClearLockout(e.ctx, OriginScreen, strings.ReplaceAll(code, " ", "-")); err != nil {
		t.Fatalf("the right code: %v", err)
	}
	for _, o := range []Origin{OriginScreen, OriginDesktop} {
		if err := e.unlockFrom(o, "2468"); err != nil {
			t.Fatalf("%s after the recovery code: %v", o, err)
		}
	}
	wantCode(t, e.st.ClearLockout(e.ctx, OriginScreen, code), ENOTFOUND)
	if l := e.auditLines(ActionLockoutCleared); len(l) != 1 || l[0].Who != "recovery code" || l[0].Subject != string(OriginScreen) {
		t.Fatalf("lockout_cleared lines %+v", l)
	}
	if l := e.auditLines(ActionRecoveryFailed); len(l) != 1 {
		t.Fatalf("recovery_code_refused lines %+v", l)
	}
	if l := e.auditLines(ActionRecoveryMade); len(l) != 1 || l[0].Who != "command line" {
		t.Fatalf("recovery_code_made lines %+v", l)
	}
}

// ClearLockouts (comptoir pin --clear-lockout) lifts every origin's
// lockout and leaves the PIN as it is.
func TestClearLockoutsFromTheMachine(t *testing.T) {
	e := newEnv(t)
	if err := e.st.SetPIN(e.ctx, "2468"); err != nil {
		t.Fatal(err)
	}
	for _, o := range Origins {
		for range MaxPINFailures {
			e.unlockFrom(o, "0000")
		}
	}
	if err := e.st.ClearLockouts(e.ctx, "command line"); err != nil {
		t.Fatal(err)
	}
	for _, o := range Origins {
		if err := e.unlockFrom(o, "2468"); err != nil {
			t.Fatalf("%s: %v", o, err)
		}
	}
	if l := e.auditLines(ActionLockoutCleared); len(l) != 1 || l[0].Who != "command line" {
		t.Fatalf("lockout_cleared lines %+v", l)
	}
}

// The single counter of older builds is read as every origin's: a lockout
// in force when the kiosk was updated stays in force.
func TestAnOlderLockoutHoldsEverywhere(t *testing.T) {
	e := newEnv(t)
	if err := e.st.SetPIN(e.ctx, "2468"); err != nil {
		t.Fatal(err)
	}
	old, _ := json.Marshal(map[string]any{"count": 3, "lockedUntil": e.clock.Now().Add(time.Minute).UTC()})
	if err := e.db.SetSetting(e.ctx, SettingPINFailures, old); err != nil {
		t.Fatal(err)
	}
	for _, o := range Origins {
		wantCode(t, e.unlockFrom(o, "2468"), ELOCKEDOUT)
	}
	e.clock.Advance(time.Minute + time.Second)
	if err := e.unlockFrom(OriginScreen, "2468"); err != nil {
		t.Fatal(err)
	}
}

// A stored PIN record whose argon2 parameters a check cannot run on
// (no thread, no pass, 16 GiB of memory...) is a clear error that says
// how to reset it on the PC, never a panic nor a machine out of memory;
// ResetPIN (what `comptoir pin` does) replaces it.
func TestADamagedPINRecordIsAClearError(t *testing.T) {
	for name, edit := range map[string]func(r map[string]any){
		"p=0":          func(r map[string]any) { r["params"].(map[string]any)["p"] = 0 },
		"t=0":          func(r map[string]any) { r["params"].(map[string]any)["t"] = 0 },
		"m=16GiB":      func(r map[string]any) { r["params"].(map[string]any)["m"] = 16 << 20 },
		"m=0":          func(r map[string]any) { r["params"].(map[string]any)["m"] = 0 },
		"p=255":        func(r map[string]any) { r["params"].(map[string]any)["p"] = 255 },
		"t=4e9":        func(r map[string]any) { r["params"].(map[string]any)["t"] = 4_000_000_000 },
		"a huge key":   func(r map[string]any) { r["hash"] = strings.Repeat("AAAA", 1<<18) },
		"no salt":      func(r map[string]any) { r["salt"] = "" },
		"version 16":   func(r map[string]any) { r["v"] = 16 },
		"not a record": nil,
	} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			if err := e.st.SetPIN(e.ctx, "2468"); err != nil {
				t.Fatal(err)
			}
			raw := []byte(`["argon2id"]`)
			if edit != nil {
				stored, _, _ := e.db.Setting(e.ctx, SettingPIN)
				var rec map[string]any
				if err := json.Unmarshal(stored, &rec); err != nil {
					t.Fatal(err)
				}
				edit(rec)
				raw, _ = json.Marshal(rec)
			}
			if err := e.db.SetSetting(e.ctx, SettingPIN, raw); err != nil {
				t.Fatal(err)
			}
			for _, o := range Origins {
				se := wantCode(t, e.unlockFrom(o, "2468"), EPINDAMAGED)
				if !strings.Contains(se.Message, "comptoir pin") {
					t.Fatalf("message %q does not say how to reset it", se.Message)
				}
			}
			if has, err := e.st.HasPIN(e.ctx); fault.CodeOf(err) != EPINDAMAGED || has {
				t.Fatalf("HasPIN = %v, %v: a damaged PIN is not \"no PIN\"", has, err)
			}
			wantCode(t, e.st.SetPIN(e.ctx, "1357"), EPINDAMAGED)
			if err := e.st.ResetPIN(e.ctx, "1357", "command line"); err != nil {
				t.Fatal(err)
			}
			if err := e.unlockFrom(OriginScreen, "1357"); err != nil {
				t.Fatalf("after the reset: %v", err)
			}
		})
	}
}

// The configured cost must be in the sane range too.
func TestNewRefusesAnArgon2CostOutOfRange(t *testing.T) {
	e := newEnv(t)
	for _, p := range []Argon2Params{{Time: 0, Memory: 64, Threads: 1}, {Time: 1, Memory: 64, Threads: 0}, {Time: 1, Memory: MaxArgon2Memory + 1, Threads: 1}} {
		cfg := e.cfg
		cfg.Argon2 = &p
		if _, err := New(cfg); err == nil {
			t.Errorf("%+v accepted", p)
		}
	}
	if err := DefaultArgon2.check(); err != nil {
		t.Fatalf("the default cost: %v", err)
	}
}
