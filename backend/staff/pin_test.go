package staff

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/fault"
)

func TestSetPINFirstRunOnly(t *testing.T) {
	e := newEnv(t)
	if has, err := e.st.HasPIN(e.ctx); err != nil || has {
		t.Fatalf("HasPIN on a new journal = %v, %v", has, err)
	}
	_, err := e.st.Unlock(e.ctx, "1234")
	wantCode(t, err, ENOPIN)
	for _, bad := range []string{"", "123", "123456789", "12a4", "12 34"} {
		wantCode(t, e.st.SetPIN(e.ctx, bad), EINVALID)
	}
	if err := e.st.SetPIN(e.ctx, "2468"); err != nil {
		t.Fatal(err)
	}
	wantCode(t, e.st.SetPIN(e.ctx, "1357"), EPINSET)

	raw, _, _ := e.db.Setting(e.ctx, SettingPIN)
	if strings.Contains(string(raw), "2468") || !strings.Contains(string(raw), `"alg":"argon2id"`) {
		t.Fatalf("stored PIN record %s", raw)
	}
	if _, err := e.st.Unlock(e.ctx, "1357"); fault.CodeOf(err) != EWRONGPIN {
		t.Fatalf("unlock with another PIN: %v", err)
	}
	s, err := e.st.Unlock(e.ctx, "2468")
	if err != nil || s.DemoPIN || !strings.HasPrefix(s.Who, "staff:") || len(s.ID) != 32 {
		t.Fatalf("unlock = %+v, %v", s, err)
	}

	// Change, with the current PIN asked again.
	wantCode(t, e.st.ChangePIN(e.ctx, s.ID, "0000", "13579"), EWRONGPIN)
	if err := e.st.ChangePIN(e.ctx, s.ID, "2468", "13579"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.st.Unlock(e.ctx, "13579"); err != nil {
		t.Fatal(err)
	}
}

func TestLockoutGrowsPersistsAndResets(t *testing.T) {
	e := newEnv(t)
	if err := e.st.SetPIN(e.ctx, "2468"); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		_, err := e.st.Unlock(e.ctx, "0000")
		wantCode(t, err, EWRONGPIN)
	}
	_, err := e.st.Unlock(e.ctx, "0000")
	if se := wantCode(t, err, ELOCKEDOUT); se.RetryAfter != 30*time.Second {
		t.Fatalf("first lockout %s", se.RetryAfter)
	}
	// While locked even the right PIN is not checked.
	e.clock.Advance(10 * time.Second)
	_, err = e.st.Unlock(e.ctx, "2468")
	if se := wantCode(t, err, ELOCKEDOUT); se.RetryAfter != 20*time.Second {
		t.Fatalf("remaining lockout %s", se.RetryAfter)
	}
	e.clock.Advance(21 * time.Second)
	_, err = e.st.Unlock(e.ctx, "0000")
	if se := wantCode(t, err, ELOCKEDOUT); se.RetryAfter != time.Minute {
		t.Fatalf("second lockout %s, want doubled", se.RetryAfter)
	}

	// A restart does not reset the count.
	e.restart()
	_, err = e.st.Unlock(e.ctx, "2468")
	wantCode(t, err, ELOCKEDOUT)
	e.clock.Advance(61 * time.Second)
	_, err = e.st.Unlock(e.ctx, "0000")
	if se := wantCode(t, err, ELOCKEDOUT); se.RetryAfter != 2*time.Minute || !strings.Contains(se.Message, "2 minutes") {
		t.Fatalf("third lockout %s: %s", se.RetryAfter, se.Message)
	}

	e.clock.Advance(2*time.Minute + time.Second)
	if _, err := e.st.Unlock(e.ctx, "2468"); err != nil {
		t.Fatalf("right PIN after the lockout: %v", err)
	}
	// Reset: one wrong PIN is a warning again, not a lockout.
	_, err = e.st.Unlock(e.ctx, "0000")
	wantCode(t, err, EWRONGPIN)

	s := e.unlock()
	audit, err := e.st.Audit(e.ctx, s.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	failed := 0
	for _, a := range audit {
		if a.Action == "unlock_failed" {
			failed++
		}
		if strings.Contains(a.Detail, "2468") || strings.Contains(a.Detail, "0000") {
			t.Fatalf("a PIN in the audit trail: %+v", a)
		}
	}
	if failed != 6 {
		t.Fatalf("%d failures audited, want 6", failed)
	}
}

func TestLockoutCap(t *testing.T) {
	for n, want := range map[int]time.Duration{1: 0, 2: 0, 3: 30 * time.Second, 4: time.Minute, 7: 8 * time.Minute, 8: MaxLockout, 50: MaxLockout} {
		if got := lockoutFor(n); got != want {
			t.Errorf("lockoutFor(%d) = %s, want %s", n, got, want)
		}
	}
}

func TestDemoDefaultPIN(t *testing.T) {
	e := newEnv(t, withDemo())
	s, err := e.st.Unlock(e.ctx, DemoPIN)
	if err != nil {
		t.Fatal(err)
	}
	if !s.DemoPIN || !strings.Contains(s.Notice, DemoPIN) {
		t.Fatalf("demo session %+v", s)
	}
	_, err = e.st.Unlock(e.ctx, "9999")
	wantCode(t, err, EWRONGPIN)
	// Once a PIN is set, the demo default is gone.
	if err := e.st.SetPIN(e.ctx, "8642"); err != nil {
		t.Fatal(err)
	}
	_, err = e.st.Unlock(e.ctx, DemoPIN)
	wantCode(t, err, EWRONGPIN)
	if s, err := e.st.Unlock(e.ctx, "8642"); err != nil || s.DemoPIN {
		t.Fatalf("unlock = %+v, %v", s, err)
	}
}

func TestSessionExpiresByClock(t *testing.T) {
	e := newEnv(t)
	s := e.unlock()
	e.clock.Advance(4 * time.Minute)
	if _, err := e.st.Touch(s.ID); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(4 * time.Minute) // 8 min after unlock, 4 after the touch
	if _, err := e.st.Attempts(e.ctx, s.ID, Filter{}); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(DefaultSessionTTL)
	_, err := e.st.Attempts(e.ctx, s.ID, Filter{})
	wantCode(t, err, ESESSION)
	_, err = e.st.Touch(s.ID)
	wantCode(t, err, ESESSION)

	s = e.unlock()
	e.st.Lock(e.ctx, s.ID)
	_, err = e.st.Settings(e.ctx, s.ID)
	wantCode(t, err, ESESSION)
	_, err = e.st.Reverse(e.ctx, "not-a-session", "x")
	wantCode(t, err, ESESSION)
}

// TestResetPINFromTheMachine: a forgotten PIN is reset from the command
// line: the new PIN works at once, even during a lockout, the old one no
// longer does, and open sessions end.
func TestResetPINFromTheMachine(t *testing.T) {
	e := newEnv(t)
	if err := e.st.SetPIN(e.ctx, "482916"); err != nil {
		t.Fatal(err)
	}
	old, err := e.st.Unlock(e.ctx, "482916")
	if err != nil {
		t.Fatal(err)
	}
	for range MaxPINFailures {
		e.st.Unlock(e.ctx, "000000")
	}
	wantCode(t, func() error { _, err := e.st.Unlock(e.ctx, "482916"); return err }(), ELOCKEDOUT)
	wantCode(t, e.st.ResetPIN(e.ctx, "12", "cli"), EINVALID)
	if err := e.st.ResetPIN(e.ctx, "7391", "cli"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.st.Touch(old.ID); fault.CodeOf(err) != ESESSION {
		t.Fatalf("a session survived the reset: %v", err)
	}
	wantCode(t, func() error { _, err := e.st.Unlock(e.ctx, "482916"); return err }(), EWRONGPIN)
	s, err := e.st.Unlock(e.ctx, "7391")
	if err != nil {
		t.Fatalf("the new PIN after a reset: %v", err)
	}
	audit, _ := e.st.Audit(e.ctx, s.ID, 0)
	found := false
	for _, a := range audit {
		found = found || (a.Action == "pin_reset" && a.Who == "cli")
	}
	if !found {
		t.Fatalf("no pin_reset line: %+v", audit)
	}
}

// TestChangePINCannotGuessPastTheLockout: a session left open must not be
// a way to try PINs: wrong current PINs count with the pad's, lock it, and
// end the session.
func TestChangePINCannotGuessPastTheLockout(t *testing.T) {
	e := newEnv(t)
	if err := e.st.SetPIN(e.ctx, "482916"); err != nil {
		t.Fatal(err)
	}
	s, err := e.st.Unlock(e.ctx, "482916")
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i < MaxPINFailures; i++ {
		wantCode(t, e.st.ChangePIN(e.ctx, s.ID, fmt.Sprintf("%04d", i), "5555"), EWRONGPIN)
	}
	wantCode(t, e.st.ChangePIN(e.ctx, s.ID, "0000", "5555"), ELOCKEDOUT)
	if _, err := e.st.Touch(s.ID); fault.CodeOf(err) != ESESSION {
		t.Fatalf("the session survived the lockout: %v", err)
	}
	wantCode(t, func() error { _, err := e.st.Unlock(e.ctx, "482916"); return err }(), ELOCKEDOUT)
}
