package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/comptoir-pos/comptoir/backend/device"
	"github.com/comptoir-pos/comptoir/backend/fault"
	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/staff"
)

// pinCmd runs `comptoir pin` with these flags and this standard input.
func pinCmd(t *testing.T, dir, input string, flags ...string) (int, string, string) {
	t.Helper()
	stdin = strings.NewReader(input)
	defer func() { stdin = os.Stdin }()
	var out, errOut bytes.Buffer
	code := run(append([]string{"pin", "--data-dir", dir}, flags...), &out, &errOut)
	return code, out.String(), errOut.String()
}

// withStaff opens the journal and a staff service on it, as the kiosk
// does, for one step; the journal is closed after (it is one process's).
func withStaff(t *testing.T, dir string, f func(ctx context.Context, db *journal.DB, st *staff.Staff)) {
	t.Helper()
	ctx := context.Background()
	db, err := journal.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	st, err := staff.New(staff.Config{Journal: db, Terminal: device.LocalAt(func() string { return "" })})
	if err != nil {
		t.Fatal(err)
	}
	f(ctx, db, st)
}

// A stored PIN record a check cannot run on (p=0: every unlock panicked)
// is a clear error that names `comptoir pin`; `comptoir pin` sets a new
// PIN over it.
func TestPinResetsADamagedPINRecord(t *testing.T) {
	dir := t.TempDir()
	if code, _, msg := pinCmd(t, dir, "4829\n"); code != 0 {
		t.Fatalf("exit %d, %q", code, msg)
	}
	withStaff(t, dir, func(ctx context.Context, db *journal.DB, st *staff.Staff) {
		raw, _, _ := db.Setting(ctx, staff.SettingPIN)
		var rec map[string]any
		if err := json.Unmarshal(raw, &rec); err != nil {
			t.Fatal(err)
		}
		rec["params"] = map[string]any{"t": 0, "m": 16 << 20, "p": 0}
		raw, _ = json.Marshal(rec)
		if err := db.SetSetting(ctx, staff.SettingPIN, raw); err != nil {
			t.Fatal(err)
		}
		_, err := st.Unlock(ctx, "4829")
		if fault.CodeOf(err) != staff.EPINDAMAGED || !strings.Contains(err.Error(), "comptoir pin") {
			t.Fatalf("unlock with a damaged record: %v", err)
		}
	})
	if code, out, msg := pinCmd(t, dir, "5555\n"); code != 0 || !strings.Contains(out, "PIN is set") {
		t.Fatalf("comptoir pin over a damaged record: exit %d, %q %q", code, out, msg)
	}
	withStaff(t, dir, func(ctx context.Context, _ *journal.DB, st *staff.Staff) {
		if _, err := st.Unlock(ctx, "5555"); err != nil {
			t.Fatalf("the new PIN: %v", err)
		}
	})
}

// `comptoir pin --clear-lockout` lifts every lockout and keeps the PIN;
// `comptoir pin --recovery-code` prints a one-time code the locked pad
// takes.
func TestPinClearsLockoutsAndMakesARecoveryCode(t *testing.T) {
	dir := t.TempDir()
	if code, _, msg := pinCmd(t, dir, "4829\n"); code != 0 {
		t.Fatalf("exit %d, %q", code, msg)
	}
	lock := func(ctx context.Context, st *staff.Staff) {
		for _, o := range staff.Origins {
			for range staff.MaxPINFailures {
				st.UnlockFrom(ctx, o, "0000")
			}
			if _, err := st.UnlockFrom(ctx, o, "4829"); fault.CodeOf(err) != staff.ELOCKEDOUT {
				t.Fatalf("%s not locked: %v", o, err)
			}
		}
	}
	withStaff(t, dir, func(ctx context.Context, _ *journal.DB, st *staff.Staff) { lock(ctx, st) })
	if code, out, msg := pinCmd(t, dir, "", "--clear-lockout"); code != 0 || !strings.Contains(out, "unchanged") {
		t.Fatalf("--clear-lockout: exit %d, %q %q", code, out, msg)
	}
	withStaff(t, dir, func(ctx context.Context, _ *journal.DB, st *staff.Staff) {
		for _, o := range staff.Origins {
			if _, err := st.UnlockFrom(ctx, o, "4829"); err != nil {
				t.Fatalf("%s after --clear-lockout: %v", o, err)
			}
		}
		lock(ctx, st)
	})
	code, out, msg := pinCmd(t, dir, "", "--recovery-code")
	rc := regexp.MustCompile(`(?m)^\d{4} \d{4} \d{4} \d{4}$`).FindString(out)
	if code != 0 || rc == "" {
		t.Fatalf("--recovery-code: exit %d, %q %q", code, out, msg)
	}
	withStaff(t, dir, func(ctx context.Context, db *journal.DB, st *staff.Staff) {
		if err := st.ClearLockout(ctx, staff.OriginScreen, rc); err != nil {
			t.Fatalf("the printed code: %v", err)
		}
		if _, err := st.UnlockFrom(ctx, staff.OriginScreen, "4829"); err != nil {
			t.Fatalf("after the recovery code: %v", err)
		}
		recs, _ := db.Audit(ctx, journal.AuditQuery{})
		var actions []string
		for _, r := range recs {
			if r.Who == "command line" {
				actions = append(actions, r.Action)
			}
		}
		if got := strings.Join(actions, " "); got != "recovery_code_made lockout_cleared pin_reset" {
			t.Fatalf("the command line's audit lines, newest first: %s", got)
		}
	})
	if code, _, _ := pinCmd(t, dir, "", "--clear-lockout", "--recovery-code"); code != 2 {
		t.Fatalf("both flags: exit %d", code)
	}
}
