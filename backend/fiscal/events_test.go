package fiscal

import (
	"bytes"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/journal"
)

func (e *env) eventTypes() []string {
	e.t.Helper()
	var types []string
	for _, ev := range payloads[Event](e, journal.FiscalEvent) {
		types = append(types, ev.Type)
	}
	return types
}

// A start after a run that ended without its stop, or with payment
// attempts left unfinished, records a recovery first; a clean stop and
// nothing pending records none.
func TestStartRecordsARecovery(t *testing.T) {
	e := newEnv(t)
	if err := e.ledger.Start(e.ctx, ""); err != nil { // the first start: nothing to recover
		t.Fatal(err)
	}
	if _, err := e.ledger.Event(e.ctx, EventStop, "", ""); err != nil {
		t.Fatal(err)
	}
	if err := e.ledger.Start(e.ctx, ""); err != nil { // after a clean stop
		t.Fatal(err)
	}
	if err := e.ledger.Start(e.ctx, ""); err != nil { // no stop before it: a crash
		t.Fatal(err)
	}
	if _, err := e.ledger.Event(e.ctx, EventStop, "", ""); err != nil {
		t.Fatal(err)
	}
	e.ledger.PendingAtStart = 2
	if err := e.ledger.Start(e.ctx, ""); err != nil { // clean stop, attempts open
		t.Fatal(err)
	}
	if got := strings.Join(e.eventTypes(), ","); got != "start,stop,start,recovered,start,stop,recovered,start" {
		t.Fatalf("events %s", got)
	}
}

// The wall clock moved apart from the time elapsed by more than ClockJump
// is a jump, either way; drift within it is not.
func TestClockWatch(t *testing.T) {
	var w ClockWatch
	t0 := time.Date(2026, 11, 24, 9, 0, 0, 0, paris)
	steps := []struct {
		wall    time.Time
		elapsed time.Duration
		jump    time.Duration
	}{
		{t0, 0, 0},
		{t0.Add(2 * time.Second), 2 * time.Second, 0},
		{t0.Add(2*time.Second + ClockJump), 4 * time.Second, 0}, // drift of ClockJump-2s: not a jump
		{t0.Add(3 * time.Hour), 6 * time.Second, 3*time.Hour - 2*time.Second - ClockJump - 2*time.Second},
		{t0, 8 * time.Second, -3*time.Hour - 2*time.Second},
	}
	for i, s := range steps {
		if got := w.Observe(s.wall, s.elapsed); got != s.jump {
			t.Fatalf("step %d: jump %v, want %v", i, got, s.jump)
		}
	}
	e := newEnv(t)
	if err := e.ledger.ClockMoved(e.ctx, 3*time.Hour, t0); err != nil {
		t.Fatal(err)
	}
	rs, _ := e.db.FiscalRecords(e.ctx, journal.FiscalEvent, 0, 0)
	var ev Event
	if len(rs) != 1 || json.Unmarshal(rs[0].Payload, &ev) != nil || ev.Type != EventClock || !strings.Contains(ev.Detail, "forward by 3h0m0s") {
		t.Fatalf("%+v", ev)
	}
}

// A sale out of the kiosk's bounds is never signed: the others are, the
// refusal is recorded once as an event and once in the audit trail, and
// the order is set aside for staff.
func TestSalesOutOfBoundsAreRefused(t *testing.T) {
	for name, lines := range map[string]string{
		"quantity 0":              `{"name":{"fr":"Café"},"qty":0,"unitPrice":250,"total":0,"vatRate":1000}`,
		"quantity 100":            `{"name":{"fr":"Café"},"qty":100,"unitPrice":250,"total":25000,"vatRate":1000}`,
		"a line over its limit":   `{"name":{"fr":"Caviar"},"qty":2,"unitPrice":900000,"total":1800000,"vatRate":550}`,
		"an order over its limit": `{"name":{"fr":"Caviar"},"qty":9,"unitPrice":999999,"total":8999991,"vatRate":550}`,
		"a negative price":        `{"name":{"fr":"Café"},"qty":1,"unitPrice":-250,"total":-250,"vatRate":1000}`,
		"a VAT rate over 100 %":   `{"name":{"fr":"Café"},"qty":1,"unitPrice":250,"total":250,"vatRate":10001}`,
	} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			var told []string
			e.ledger.OnRefused(func(orderID, _ string) { told = append(told, orderID) })
			e.sale("good")
			data := `{"number":"9","language":"fr","lines":[` + lines + `]}`
			if err := e.db.CreateOrder(e.ctx, journal.Order{ID: "bad", Currency: "EUR", Total: 250, Data: json.RawMessage(data)}); err != nil {
				t.Fatal(err)
			}
			e.attempt("bad", journal.KindDebit, 250, "")
			if n := e.record(); n != 1 {
				t.Fatalf("%d tickets", n)
			}
			e.ledger.mu.Lock()
			e.ledger.lookedAt = time.Time{} // a new process looks through everything again
			e.ledger.mu.Unlock()
			e.record()
			// Set aside for staff, it is no sale: asked again, it is refused.
			if _, err := e.ledger.RecordSale(e.ctx, "bad"); err == nil {
				t.Fatal("RecordSale signed the refused order")
			}
			if ts := e.tickets(); len(ts) != 1 || ts[0].Order != "good" {
				t.Fatalf("tickets %+v", ts)
			}
			if got := strings.Join(e.eventTypes(), ","); got != EventRefused {
				t.Fatalf("events %s", got)
			}
			audit, err := e.db.Audit(e.ctx, journal.AuditQuery{Action: "fiscal_refused"})
			if err != nil || len(audit) != 1 || audit[0].Subject != "bad" {
				t.Fatalf("audit %+v %v", audit, err)
			}
			if len(told) != 1 || told[0] != "bad" {
				t.Fatalf("staff were told %v", told)
			}
			if o, _ := e.db.Order(e.ctx, "bad"); o.Status != journal.OrderNeedsAttention || !strings.Contains(o.Attention, "fiscal ticket") {
				t.Fatalf("order %s (%s)", o.Status, o.Attention)
			}
		})
	}
}

// Outside the data folder, the store makes the key there, or takes over
// one an older version left in the data folder (removed from it); the
// public key stays beside the data. Two different keys are an error.
func TestKeyStoreOutsideTheDataFolder(t *testing.T) {
	data, root := t.TempDir(), t.TempDir()
	old, err := LoadOrCreateKey(data) // an older version's key, in the data folder
	if err != nil {
		t.Fatal(err)
	}
	ks, err := NewKeyStore(data, root)
	if err != nil || !ks.Outside || !strings.HasPrefix(ks.Dir, root) {
		t.Fatalf("%+v %v", ks, err)
	}
	key, err := ks.Load()
	if err != nil || !key.Equal(old) {
		t.Fatalf("taken over: %v", err)
	}
	if _, err := os.Stat(filepath.Join(data, PrivateKeyFile)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the private key is still beside the data: %v", err)
	}
	if fi, err := os.Stat(ks.Dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("key folder %v %v", fi.Mode(), err)
	}
	if pub, err := ks.PublicKey(); err != nil || !pub.Equal(key.Public()) {
		t.Fatalf("public key %v", err)
	}
	pubBeside, _ := os.ReadFile(filepath.Join(data, PublicKeyFile))
	if !bytes.Equal(pubBeside, PublicKeyPEM(old.Public().(ed25519.PublicKey))) {
		t.Fatal("the public key beside the data changed")
	}
	if again, err := ks.Load(); err != nil || !again.Equal(key) {
		t.Fatalf("read again: %v", err)
	}
	// Another key beside the data: which one signed is for people to find.
	anotherKey(t, data)
	if _, err := ks.Load(); err == nil || !strings.Contains(err.Error(), "differ") {
		t.Fatalf("two keys: %v", err)
	}
}
