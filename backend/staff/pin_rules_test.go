package staff

import (
	"database/sql"
	"encoding/json"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/fault"
	"github.com/comptoir-pos/comptoir/backend/fiscal"
	"github.com/comptoir-pos/comptoir/backend/internal/testenv"
	"github.com/comptoir-pos/comptoir/backend/journal"
)

// The rules of the staff PIN, each a test named after it.

// A PIN is 4 to 8 characters, each a digit 0 to 9: both lengths and both
// ends of the digits are taken, the characters either side of them are not.
func TestRuleAPINHasFourToEightDigitsOnly(t *testing.T) {
	e := newEnv(t)
	for _, tt := range []struct {
		pin string
		ok  bool
	}{
		{"123", false}, {"1234", true}, {"12345678", true}, {"123456789", false},
		{"0000", true}, {"9999", true}, {"1090", true},
		{"12/4", false}, {"12:4", false}, {"12a4", false}, {"12 4", false}, {"١٢٣٤", false},
	} {
		err := e.st.ResetPIN(e.ctx, tt.pin, "test")
		if !tt.ok {
			wantCode(t, err, EINVALID)
			continue
		}
		if err != nil {
			t.Fatalf("PIN %q refused: %v", tt.pin, err)
		}
		if _, err := e.st.Unlock(e.ctx, tt.pin); err != nil {
			t.Fatalf("PIN %q set, then refused: %v", tt.pin, err)
		}
	}
}

// The memory of the PIN hash is at least 8 KiB per thread (argon2's own
// floor), and a cost outside the bounds is refused with the bounds that
// apply to it.
func TestRuleTheArgon2MemoryIsAtLeastEightKiBAThread(t *testing.T) {
	e := newEnv(t)
	for _, tt := range []struct {
		p    Argon2Params
		want string // "" accepted, else in the error
	}{
		{Argon2Params{Time: 1, Memory: 8, Threads: 1}, ""},
		{Argon2Params{Time: 1, Memory: 7, Threads: 1}, "outside 8 to 262144"},
		{Argon2Params{Time: 1, Memory: 16, Threads: 2}, ""},
		{Argon2Params{Time: 1, Memory: 15, Threads: 2}, "outside 16 to 262144"},
		{Argon2Params{Time: 1, Memory: 31, Threads: 4}, "outside 32 to 262144"},
		{Argon2Params{Time: 1, Memory: MaxArgon2Memory, Threads: 1}, ""},
	} {
		cfg := e.cfg
		cfg.Argon2 = &tt.p
		_, err := New(cfg)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%+v refused: %v", tt.p, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%+v: %v, want an error saying %q", tt.p, err, tt.want)
		}
	}
}

// The PIN is hashed with the configured cost, and the cost is stored with
// the hash.
func TestRuleThePINIsHashedWithTheConfiguredCost(t *testing.T) {
	e := newEnv(t)
	want := Argon2Params{Time: 1, Memory: 128, Threads: 2}
	e.cfg.Argon2 = &want
	e.restart()
	if err := e.st.SetPIN(e.ctx, "2468"); err != nil {
		t.Fatal(err)
	}
	raw, _, err := e.db.Setting(e.ctx, SettingPIN)
	if err != nil {
		t.Fatal(err)
	}
	var rec pinRecord
	if err := json.Unmarshal(raw, &rec); err != nil {
		t.Fatal(err)
	}
	if rec.Params != want {
		t.Fatalf("stored cost %+v, want the configured %+v", rec.Params, want)
	}
	if _, err := e.st.Unlock(e.ctx, "2468"); err != nil {
		t.Fatal(err)
	}
}

// Each wrong PIN below the limit tells how many more lock the pad.
func TestRuleAWrongPINSaysHowManyMoreLockThePad(t *testing.T) {
	e := newEnv(t)
	if err := e.st.SetPIN(e.ctx, "2468"); err != nil {
		t.Fatal(err)
	}
	for left := MaxPINFailures - 1; left > 0; left-- {
		_, err := e.st.Unlock(e.ctx, "0000")
		se := wantCode(t, err, EWRONGPIN)
		if want := "Wrong PIN. " + string(rune('0'+left)) + " more wrong PIN(s)"; !strings.Contains(se.Message, want) {
			t.Fatalf("message %q, want %q", se.Message, want)
		}
	}
	_, err := e.st.Unlock(e.ctx, "0000")
	wantCode(t, err, ELOCKEDOUT)
}

// Wrong PINs below the limit never lock the pad, even when the clock
// steps back (a time correction) between them and the right one.
func TestRuleWrongPINsBelowTheLimitNeverLockEvenWhenTheClockStepsBack(t *testing.T) {
	e := newEnv(t)
	if err := e.st.SetPIN(e.ctx, "2468"); err != nil {
		t.Fatal(err)
	}
	for i := 1; i < MaxPINFailures; i++ {
		_, err := e.st.Unlock(e.ctx, "0000")
		wantCode(t, err, EWRONGPIN)
		e.clock.Advance(-time.Minute)
	}
	if _, err := e.st.Unlock(e.ctx, "2468"); err != nil {
		t.Fatalf("the right PIN after %d wrong ones and a clock set back: %v", MaxPINFailures-1, err)
	}
}

// A wrong current PIN when changing it says that the PIN was not changed.
func TestRuleAWrongCurrentPINSaysThePINWasNotChanged(t *testing.T) {
	e := newEnv(t)
	s := e.unlock()
	se := wantCode(t, e.st.ChangePIN(e.ctx, s.ID, "0000", "1357"), EWRONGPIN)
	if !strings.Contains(se.Message, "the PIN was not changed") || !strings.Contains(se.Message, "2 more wrong PIN(s)") {
		t.Fatalf("message %q", se.Message)
	}
	if _, err := e.st.Unlock(e.ctx, "1357"); fault.CodeOf(err) != EWRONGPIN {
		t.Fatalf("the new PIN after a refused change: %v", err)
	}
}

// A new PIN of the wrong shape changes nothing: the current one still
// opens, nothing is audited as changed; a right change is audited.
func TestRuleANewPINOfTheWrongShapeChangesNothing(t *testing.T) {
	e := newEnv(t)
	s := e.unlock()
	for _, bad := range []string{"12", "123456789", "12a4"} {
		wantCode(t, e.st.ChangePIN(e.ctx, s.ID, "2468", bad), EINVALID)
	}
	if n := len(e.auditLines("pin_changed")); n != 0 {
		t.Fatalf("%d changes audited, none made", n)
	}
	if _, err := e.st.Unlock(e.ctx, "2468"); err != nil {
		t.Fatalf("the current PIN after refused changes: %v", err)
	}
	if err := e.st.ChangePIN(e.ctx, s.ID, "2468", "1357"); err != nil {
		t.Fatal(err)
	}
	if n := len(e.auditLines("pin_changed")); n != 1 {
		t.Fatalf("%d changes audited, want 1", n)
	}
	if _, err := e.st.Unlock(e.ctx, "1357"); err != nil {
		t.Fatal(err)
	}
}

// refuseSetting makes the journal's database refuse every write of the
// setting key from now on (a write that does not reach the journal), the
// way a failing disk would, through a trigger added by a second
// connection to the journal's file.
func refuseSetting(t *testing.T, e *env, key string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(e.dir, "comptoir.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	name := strings.NewReplacer(".", "_").Replace(key)
	for _, op := range []string{"INSERT", "UPDATE"} {
		stmt := `CREATE TRIGGER refuse_` + op + `_` + name + ` BEFORE ` + op + ` ON settings WHEN NEW.key = '` + key +
			`' BEGIN SELECT RAISE(ABORT, 'refused for the test'); END`
		if _, err := db.ExecContext(e.ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
}

// A PIN the journal did not store is not set: the error says so, no PIN
// is there, nothing is audited as set.
func TestRuleAPINTheJournalDidNotStoreIsNotSet(t *testing.T) {
	e := newEnv(t)
	refuseSetting(t, e, SettingPIN)
	if err := e.st.SetPIN(e.ctx, "2468"); err == nil {
		t.Fatal("SetPIN said the PIN was set, the journal refused it")
	}
	if has, err := e.st.HasPIN(e.ctx); err != nil || has {
		t.Fatalf("HasPIN = %v, %v", has, err)
	}
	if n := len(e.auditLines("pin_set")); n != 0 {
		t.Fatalf("%d PINs audited as set", n)
	}
}

// A wrong PIN the journal cannot count is not let through as a plain
// wrong PIN (its count would not grow: a way around the lockout), and a
// right PIN whose clearing of the count is not stored opens no session.
func TestRuleAWrongPINCountTheJournalDidNotStoreIsAnError(t *testing.T) {
	e := newEnv(t)
	if err := e.st.SetPIN(e.ctx, "2468"); err != nil {
		t.Fatal(err)
	}
	_, err := e.st.Unlock(e.ctx, "0000")
	wantCode(t, err, EWRONGPIN)
	refuseSetting(t, e, SettingPINFailures)
	_, err = e.st.Unlock(e.ctx, "0000")
	if err == nil || fault.CodeOf(err) == EWRONGPIN {
		t.Fatalf("a wrong PIN not counted: %v, want the journal's failure", err)
	}
	if s, err := e.st.Unlock(e.ctx, "2468"); err == nil {
		t.Fatalf("session %+v opened, the wrong PINs' count still standing", s)
	}
}

// A session's wrong PINs count where its PIN was typed; a session this
// process does not know counts at the customer screen, the origin anyone
// can reach.
func TestRuleASessionNotKnownCountsAtTheCustomerScreen(t *testing.T) {
	e := newEnv(t)
	s := e.unlockAt(OriginDesktop)
	if o := e.st.sessionOrigin(s.ID); o != OriginDesktop {
		t.Fatalf("origin %s, want desktop", o)
	}
	e.st.Lock(e.ctx, s.ID)
	if o := e.st.sessionOrigin(s.ID); o != OriginScreen {
		t.Fatalf("origin of a session ended %s, want the customer screen", o)
	}
}

// A PIN change is recorded in the fiscal journal's events; one the fiscal
// journal could not record is logged as an error (the PIN itself stands).
func TestRuleAPINChangeIsAFiscalEventOrLoggedAsMissing(t *testing.T) {
	const missing = "a PIN change is not recorded"
	for _, broken := range []bool{false, true} {
		e := newEnv(t)
		key, err := fiscal.LoadOrCreateKey(e.dir)
		if err != nil {
			t.Fatal(err)
		}
		db := e.db
		if broken {
			// A ledger whose database is closed: nothing can be written.
			other, err := journal.Open(e.ctx, t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			other.Close()
			db = other
		}
		var logged testenv.Buffer
		e.cfg.Ledger = fiscal.NewLedger(db, key, "caisse-1", "Comptoir test")
		e.cfg.Logger = slog.New(slog.NewTextHandler(&logged, nil))
		e.restart()
		if err := e.st.SetPIN(e.ctx, "2468"); err != nil {
			t.Fatal(err)
		}
		recs, err := e.db.FiscalRecords(e.ctx, journal.FiscalEvent, 0, 10)
		if err != nil {
			t.Fatal(err)
		}
		if got := len(recs); got != map[bool]int{false: 1, true: 0}[broken] {
			t.Fatalf("broken ledger %v: %d fiscal events", broken, got)
		}
		if got := strings.Contains(logged.String(), missing); got != broken {
			t.Fatalf("broken ledger %v: logged %v (%q)", broken, got, logged.String())
		}
		if _, err := e.st.Unlock(e.ctx, "2468"); err != nil {
			t.Fatal(err)
		}
	}
}
