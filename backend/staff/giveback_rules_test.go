package staff

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/device"
	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/terminalsim"
)

// The rules of money given back by staff (reversals, refunds with the
// card) and of the checks around them, each a test named after it.

// scriptedTerminal is the terminal staff mode reads, with entries added to
// its history (a transaction the journal never saw: one made on its
// keypad) and, when set, another answer to /ping.
type scriptedTerminal struct {
	device.Terminal
	mu    sync.Mutex
	extra []device.HistoryEntry
	ping  func() (device.Answer, error)
}

func (s *scriptedTerminal) History(ctx context.Context, q device.HistoryQuery) (device.HistoryPage, error) {
	page, err := s.Terminal.History(ctx, q)
	if err != nil {
		return page, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if q.Offset == 0 && len(page.Entries)+len(s.extra) <= q.Limit {
		page.Entries = append(append([]device.HistoryEntry{}, s.extra...), page.Entries...)
		page.Total += len(s.extra)
	}
	return page, nil
}

func (s *scriptedTerminal) Ping(ctx context.Context, greet bool) (device.Answer, error) {
	s.mu.Lock()
	ping := s.ping
	s.mu.Unlock()
	if ping != nil {
		return ping()
	}
	return s.Terminal.Ping(ctx, greet)
}

// withScriptedTerminal puts a scriptedTerminal between staff mode and the
// simulated terminal.
func withScriptedTerminal(st *scriptedTerminal) option {
	return func(_ *env, c *Config) {
		st.Terminal = c.Terminal
		c.Terminal = st
	}
}

// A transaction named by its id is reversed only when it is an approved
// card payment: the journal's own attempt when the journal holds it (no
// second attempt is made for it), and otherwise the terminal's history
// entry. A declined debit, an approved refund, a refund or a declined
// debit of the terminal's keypad are refused as what they are, nothing
// sent, nothing recorded.
func TestRuleOnlyAnApprovedDebitIsReversedByItsTransaction(t *testing.T) {
	st := &scriptedTerminal{}
	e := newEnv(t, withScriptedTerminal(st))
	s := e.unlock()

	// Held by the journal, approved: reversed as the journal's attempt.
	paid := e.pay(e.order(1250), 1250, journal.PolicyKiosk, journal.StateApproved)
	res, err := e.st.ReverseTransaction(e.ctx, s.ID, paid.TransactionID)
	if err != nil || res.AttemptUUID != paid.UUID || res.Amount != 1250 || res.ReversalTransactionID == "" {
		t.Fatalf("reversal of the journal's approved debit: %+v, %v", res, err)
	}
	if atts, _ := e.db.AttemptsForOrder(e.ctx, paid.OrderID); len(atts) != 2 {
		t.Fatalf("%d attempts on the order, want the debit and its reversal", len(atts))
	}

	// Held by the journal, not an approved debit.
	e.sim.Script(terminalsim.Decline())
	declined := e.pay(e.order(500), 500, journal.PolicyKiosk, journal.StateDeclined)
	if declined.TransactionID == "" {
		t.Fatal("the terminal gave the decline no transaction id")
	}
	ord := e.order(600)
	e.pay(ord, 600, journal.PolicyKiosk, journal.StateApproved)
	refund, err := e.st.Refund(e.ctx, s.ID, ord, 600)
	if err != nil || refund.TransactionID == "" {
		t.Fatalf("refund %+v, %v", refund, err)
	}

	// Only in the terminal's history: a declined keypad debit, and a
	// refund made on the keypad.
	b := terminalsim.Decline()
	if _, err := e.sim.StartOnKeypad(430, &b); err != nil {
		t.Fatal(err)
	}
	if err := e.sim.WaitIdle(e.ctx); err != nil {
		t.Fatal(err)
	}
	var keypadDeclined string
	cmpEntries, err := e.st.historyRange(e.ctx, e.clock.Now().Add(-time.Hour), time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range cmpEntries {
		if h.Amount == 430 && h.Type == device.HistoryDebit && h.Status != device.StatusOK {
			keypadDeclined = h.TransactionID
		}
	}
	if keypadDeclined == "" {
		t.Fatalf("no declined keypad debit in the history %+v", cmpEntries)
	}
	st.mu.Lock()
	st.extra = []device.HistoryEntry{{Status: device.StatusOK, TransactionID: "keypad-refund-1", Amount: 700, CurrencyCode: "EUR",
		Type: device.HistoryRefund, CreatedAt: time.Now().UTC().Format(time.RFC3339)}}
	st.mu.Unlock()

	ledger := len(e.sim.Ledger())
	for _, tt := range []struct {
		name, tx string
		held     bool // the journal holds it
	}{
		{"a declined debit of the journal", declined.TransactionID, true},
		{"an approved refund of the journal", refund.TransactionID, true},
		{"a declined debit of the keypad", keypadDeclined, false},
		{"a refund of the keypad", "keypad-refund-1", false},
	} {
		_, err := e.st.ReverseTransaction(e.ctx, s.ID, tt.tx)
		se := wantCode(t, err, EINVALID)
		if !strings.Contains(strings.ToLower(se.Message), "only an approved card payment can be reversed") {
			t.Errorf("%s: %q, want it said that only an approved card payment is reversed", tt.name, se.Message)
		}
		if _, err := e.db.AttemptByTransaction(e.ctx, tt.tx); !tt.held && err == nil {
			t.Errorf("%s: recorded in the journal", tt.name)
		}
	}
	if n := len(e.sim.Ledger()); n != ledger {
		t.Fatalf("%d movements on the terminal, want %d: something was reversed", n, ledger)
	}
}

// A transaction the journal does not know is looked for in the terminal's
// history of the last 24 hours, by the kiosk's clock: found an hour later,
// not found a day later.
func TestRuleATransactionIsLookedForInTheLast24HoursOfHistory(t *testing.T) {
	e := newEnv(t)
	s := e.unlock()
	keypadCharge(e, 430)
	entries, err := e.st.historyRange(e.ctx, e.clock.Now().Add(-time.Hour), time.Time{})
	if err != nil || len(entries) != 1 {
		t.Fatalf("history %+v, %v", entries, err)
	}
	tx := entries[0].TransactionID

	e.clock.Advance(25 * time.Hour)
	s = e.unlock()
	_, err = e.st.ReverseTransaction(e.ctx, s.ID, tx)
	wantCode(t, err, ENOTFOUND)
	if _, err := e.db.AttemptByTransaction(e.ctx, tx); err == nil {
		t.Fatal("a charge older than the history read was recorded")
	}

	e.clock.Advance(-24 * time.Hour)
	s = e.unlock()
	res, err := e.st.ReverseTransaction(e.ctx, s.ID, tx)
	if err != nil || res.Amount != 430 || res.InitialTransactionID != tx {
		t.Fatalf("reversal of a charge an hour old: %+v, %v", res, err)
	}
}

// A refund is of more than zero, and never more than the order can still
// give back; with nothing left, staff are told that nothing can be
// refunded, not an amount of zero.
func TestRuleARefundIsMoreThanZeroAndAtMostWhatIsGivable(t *testing.T) {
	e := newEnv(t)
	s := e.unlock()
	ord := e.order(1000)
	e.pay(ord, 1000, journal.PolicyKiosk, journal.StateApproved)
	for _, tt := range []struct {
		amount int64
		want   string // "" refunded, else in the refusal
	}{
		{-100, "more than zero"},
		{0, "more than zero"},
		{1001, "10.00 EUR at most"},
		{1, ""},
		{1000, "9.99 EUR at most"},
		{999, ""},
		{1, "Nothing can be refunded"},
	} {
		before := len(e.sim.Ledger())
		v, err := e.st.Refund(e.ctx, s.ID, ord, tt.amount)
		if tt.want == "" {
			if err != nil || v.State != journal.StateApproved || v.Amount != tt.amount {
				t.Fatalf("refund of %d: %+v, %v", tt.amount, v, err)
			}
			continue
		}
		if se := wantCode(t, err, EINVALID); !strings.Contains(se.Message, tt.want) {
			t.Fatalf("refund of %d: %q, want %q", tt.amount, se.Message, tt.want)
		}
		if len(e.sim.Ledger()) != before {
			t.Fatalf("refund of %d reached the terminal", tt.amount)
		}
	}
}

// A receipt is reprinted or shared only for an approved card payment: not
// for a declined one, nor for a refund.
func TestRuleAReceiptIsOnlyForAnApprovedCardPayment(t *testing.T) {
	e := newEnv(t)
	s := e.unlock()
	e.sim.Script(terminalsim.Decline())
	declined := e.pay(e.order(500), 500, journal.PolicyKiosk, journal.StateDeclined)
	ord := e.order(600)
	paid := e.pay(ord, 600, journal.PolicyKiosk, journal.StateApproved)
	refund, err := e.st.Refund(e.ctx, s.ID, ord, 200)
	if err != nil {
		t.Fatal(err)
	}
	prints := len(e.sim.Printed())
	for _, uuid := range []string{declined.UUID, refund.UUID} {
		if se := wantCode(t, e.st.Reprint(e.ctx, s.ID, uuid), EINVALID); !strings.Contains(se.Message, "approved payment") {
			t.Fatalf("reprint: %q", se.Message)
		}
		wantCode(t, e.st.Share(e.ctx, s.ID, uuid, device.SharePrint), EINVALID)
	}
	if n := len(e.sim.Printed()); n != prints {
		t.Fatalf("%d prints, want %d", n, prints)
	}
	if err := e.st.Reprint(e.ctx, s.ID, paid.UUID); err != nil {
		t.Fatalf("reprint of the approved payment: %v", err)
	}
}

// The terminal's status shows the client timeout of the mode the kiosk is
// in: the kiosk's in kiosk mode, the counter's in counter mode.
func TestRuleTheTerminalStatusShowsTheModesClientTimeout(t *testing.T) {
	lim := testLimits
	lim.KioskTimeout, lim.CounterTimeout = 2*time.Second, 3*time.Second
	e := newEnv(t, withLimits(lim))
	s := e.unlock()
	for _, tt := range []struct {
		mode string
		want time.Duration
	}{{"kiosk", lim.KioskTimeout}, {"counter", lim.CounterTimeout}, {"kiosk", lim.KioskTimeout}} {
		if err := e.st.SaveSetting(e.ctx, s.ID, "kiosk.mode", []byte(`"`+tt.mode+`"`)); err != nil {
			t.Fatal(err)
		}
		st, err := e.st.Terminal(e.ctx, s.ID, false)
		if err != nil || st.Mode != tt.mode || st.ClientTimeoutSeconds != tt.want.Seconds() {
			t.Fatalf("mode %s: status %+v, %v; want a client timeout of %s", tt.mode, st, err, tt.want)
		}
	}
}

// A terminal out of reach and a key the provider's cloud refuses are told
// apart: each gets its own sentence.
func TestRuleTheCloudsRefusedKeyIsToldApartFromATerminalOutOfReach(t *testing.T) {
	st := &scriptedTerminal{}
	e := newEnv(t, withScriptedTerminal(st))
	s := e.unlock()
	for _, tt := range []struct {
		name string
		err  error
		want string
	}{
		{"out of reach", errors.New("dial tcp: connection refused"), "does not answer"},
		{"key refused", &device.Error{Kind: device.Refused, Code: device.CodeUnauthorized, Message: "unauthorized"}, "refused the API key"},
		{"another refusal", &device.Error{Kind: device.Refused, Code: device.CodeOther, Message: "busy"}, "does not answer"},
	} {
		st.mu.Lock()
		st.ping = func() (device.Answer, error) { return device.Answer{}, tt.err }
		st.mu.Unlock()
		got, err := e.st.Terminal(e.ctx, s.ID, false)
		if err != nil || got.Reachable || !strings.Contains(got.Message, tt.want) {
			t.Fatalf("%s: %+v, %v; want a message saying %q", tt.name, got, err, tt.want)
		}
	}
}

// A keypad payment reversed from the terminal's history is adopted in
// its own currency, or, when the history does not say one, in the
// shop's.
func TestRuleAnAdoptedKeypadPaymentKeepsItsCurrency(t *testing.T) {
	st := &scriptedTerminal{}
	e := newEnv(t, withScriptedTerminal(st))
	s := e.unlock()
	now := e.clock.Now().UTC().Format(time.RFC3339)
	st.mu.Lock()
	st.extra = []device.HistoryEntry{
		{Status: device.StatusOK, TransactionID: "keypad-chf", Amount: 700, CurrencyCode: "CHF", Type: device.HistoryDebit, CreatedAt: now},
		{Status: device.StatusOK, TransactionID: "keypad-none", Amount: 500, Type: device.HistoryDebit, CreatedAt: now},
	}
	st.mu.Unlock()
	for tx, want := range map[string]string{"keypad-chf": "CHF", "keypad-none": "EUR"} {
		_, _ = e.st.ReverseTransaction(e.ctx, s.ID, tx) // the simulated terminal does not know it: only its adoption counts here
		a, err := e.db.AttemptByTransaction(e.ctx, tx)
		if err != nil {
			t.Fatalf("%s not adopted: %v", tx, err)
		}
		if o, err := e.db.Order(e.ctx, a.OrderID); err != nil || o.Currency != want {
			t.Fatalf("%s adopted in %q (%v), want %s", tx, o.Currency, err, want)
		}
	}
}
