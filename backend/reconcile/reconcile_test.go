package reconcile

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/cloudapi"
	"github.com/comptoir-pos/comptoir/backend/device"
	"github.com/comptoir-pos/comptoir/backend/internal/testenv"
	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/payment"
	"github.com/google/uuid"
)

// paris is the kiosk's zone in these tests: a day that is not UTC's.
var paris = time.FixedZone("CET", 3600)

// noon is when the day's attempts are made.
var noon = time.Date(2026, 11, 24, 12, 0, 0, 0, paris)

type env struct {
	t        *testing.T
	ctx      context.Context
	db       *journal.DB
	clock    *testenv.Clock
	terminal []device.HistoryEntry
	provider []cloudapi.HistoryEntry
	termErr  error
	n        int
	currency string // the orders'; "" is EUR
}

func newEnv(t *testing.T) *env {
	c := testenv.NewClock(noon)
	return &env{t: t, ctx: t.Context(), db: testenv.Journal(t, "", journal.WithClock(c.Now)), clock: c}
}

// attempt journals an attempt of its own order, made at `at`, driven to
// state with what the provider said.
func (e *env) attempt(at time.Time, ch journal.Channel, amount int64, state journal.State, tx string, charged *journal.Charge) journal.Attempt {
	e.t.Helper()
	e.n++
	e.clock.Set(at)
	order := fmt.Sprintf("order-%02d", e.n)
	cur := e.currency
	if cur == "" {
		cur = "EUR"
	}
	if err := e.db.CreateOrder(e.ctx, journal.Order{ID: order, Currency: cur, Total: amount}); err != nil {
		e.t.Fatal(err)
	}
	id := uuid.Must(uuid.NewV7()).String()
	body := fmt.Sprintf(`{"amount":%d,"currencyCode":"EUR","idempotentUuid":%q,"cartId":%q}`, amount, id, order)
	terminal := "sim"
	if ch == journal.ChannelLink {
		terminal = "links/" + order
	}
	_, err := e.db.PrepareAttempt(e.ctx, journal.Attempt{UUID: id, OrderID: order, Kind: journal.KindDebit, Channel: ch,
		Amount: amount, Policy: journal.PolicyKiosk, Terminal: terminal, RequestBody: []byte(body)})
	if err != nil {
		e.t.Fatal(err)
	}
	a, err := e.db.MarkSent(e.ctx, id)
	if err != nil {
		e.t.Fatal(err)
	}
	if state != journal.StateSent {
		a, err = e.db.Transition(e.ctx, id, journal.StateSent, state, journal.TransitionInfo{TransactionID: tx, Charged: charged})
		if err != nil {
			e.t.Fatal(err)
		}
	}
	return a
}

func (e *env) run(now time.Time, serials ...string) Report {
	e.t.Helper()
	e.clock.Set(now)
	src := Sources{
		Terminal: func(context.Context, time.Time, time.Time) ([]device.HistoryEntry, error) {
			return e.terminal, e.termErr
		},
		Provider: func(context.Context, time.Time, time.Time) ([]cloudapi.HistoryEntry, error) { return e.provider, nil },
	}
	rep, err := Day(e.ctx, e.db, src, "2026-11-24", Config{Location: paris, Serials: serials, Now: e.clock.Now})
	if err != nil {
		e.t.Fatal(err)
	}
	return rep
}

func iso(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func onTerminal(tx, status, cart string, amount, gift int64, at time.Time) device.HistoryEntry {
	return device.HistoryEntry{Status: status, TransactionID: tx, Amount: amount, GiftAmount: gift, CurrencyCode: "EUR",
		Type: device.HistoryDebit, CartID: cart, CreatedAt: iso(at)}
}

func atProvider(tx, status, cart, serial string, amount, gift int64, at time.Time) cloudapi.HistoryEntry {
	return cloudapi.HistoryEntry{Status: status, TransactionID: tx, Amount: amount, GiftAmount: gift, CurrencyCode: "EUR",
		TransactionType: "debit", CartID: cart, SerialNumber: serial, CreatedAt: iso(at)}
}

func kinds(r Report) []string {
	var out []string
	for _, d := range r.Differences {
		out = append(out, d.Source+":"+d.Kind)
	}
	return out
}

func wantKinds(t *testing.T, r Report, want ...string) {
	t.Helper()
	got := kinds(r)
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("differences %v, want %v\n%+v", got, want, r.Differences)
	}
	if r.TerminalError == "" && r.ProviderError == "" && r.NeedsStaff != (len(want) > 0) {
		t.Fatalf("needsStaff %v with differences %v", r.NeedsStaff, got)
	}
}

// Three lists that agree: one line with the three columns, nothing to do.
func TestAllAgree(t *testing.T) {
	e := newEnv(t)
	a := e.attempt(noon, journal.ChannelLocal, 1250, journal.StateApproved, "TX-1", &journal.Charge{Amount: 1250, GiftAmount: 100})
	e.terminal = []device.HistoryEntry{onTerminal("TX-1", "ok", a.OrderID, 1250, 100, noon.Add(10*time.Second))}
	e.provider = []cloudapi.HistoryEntry{atProvider("TX-1", "ok", a.OrderID, "S1", 1250, 100, noon.Add(11*time.Second))}
	r := e.run(noon.Add(time.Hour), "S1")
	wantKinds(t, r)
	if len(r.Lines) != 1 || r.Lines[0].Journal == nil || len(r.Lines[0].Terminal) != 1 || len(r.Lines[0].Provider) != 1 {
		t.Fatalf("lines %+v", r.Lines)
	}
	if r.Day != "2026-11-24" || !r.From.Equal(time.Date(2026, 11, 24, 0, 0, 0, 0, paris)) || !r.TerminalRead || !r.ProviderRead {
		t.Fatalf("report %+v", r)
	}
}

// A charge no order knows: on this kiosk's terminal (reverse it while
// possible, refund it by API after), online (find its order), and
// another till's (not this kiosk's business).
func TestChargedNoOrder(t *testing.T) {
	e := newEnv(t)
	e.provider = []cloudapi.HistoryEntry{
		atProvider("TX-9", "ok", "", "S1", 900, 0, noon),
		atProvider("TX-8", "ok", "", "S2", 800, 0, noon),
		atProvider("TX-7", "ok", "cart-x", "", 700, 0, noon),
		atProvider("TX-6", "ko", "", "S1", 600, 0, noon),
	}
	r := e.run(noon.Add(time.Hour), "S1")
	wantKinds(t, r, "provider:charged_no_order", "provider:charged_no_order")
	if d := r.Differences[0]; d.TransactionID != "TX-9" || !strings.Contains(d.Action, "reverse it") || d.OtherAmount != 900 {
		t.Fatalf("terminal charge %+v", d)
	}
	if d := r.Differences[1]; d.TransactionID != "TX-7" || !strings.Contains(d.Action, "online payment") {
		t.Fatalf("online charge %+v", d)
	}
	// The next day, past 16 hours: a refund by API.
	r = e.run(noon.Add(20*time.Hour), "S1")
	if d := r.Differences[0]; !strings.Contains(d.Action, "refund it by API") {
		t.Fatalf("old charge %+v", d)
	}
	// A day of another zone's midnight is not this day: out of it, nothing.
	e.provider = []cloudapi.HistoryEntry{atProvider("TX-5", "ok", "", "S1", 500, 0, time.Date(2026, 11, 23, 23, 50, 0, 0, time.UTC))}
	wantKinds(t, e.run(noon.Add(time.Hour), "S1"), "provider:charged_no_order")
	e.provider = []cloudapi.HistoryEntry{atProvider("TX-5", "ok", "", "S1", 500, 0, time.Date(2026, 11, 23, 22, 50, 0, 0, time.UTC))}
	wantKinds(t, e.run(noon.Add(time.Hour), "S1"))
}

// A charge no order knows on a cloud terminal is in both lists, under the
// same id: one line, one difference (the terminal's, where it is reversed).
func TestChargedNoOrderInBothLists(t *testing.T) {
	e := newEnv(t)
	e.terminal = []device.HistoryEntry{onTerminal("TX-9", "ok", "", 900, 0, noon)}
	e.provider = []cloudapi.HistoryEntry{atProvider("TX-9", "ok", "", "S1", 900, 0, noon)}
	r := e.run(noon.Add(time.Hour), "S1")
	wantKinds(t, r, "terminal:charged_no_order")
	if len(r.Lines) != 1 || len(r.Lines[0].Terminal) != 1 || len(r.Lines[0].Provider) != 1 {
		t.Fatalf("lines %+v", r.Lines)
	}
}

// Approved in the journal, unknown to the provider (and to the terminal).
func TestUnknownToProviderAndTerminal(t *testing.T) {
	e := newEnv(t)
	a := e.attempt(noon, journal.ChannelLocal, 1250, journal.StateApproved, "TX-2", nil)
	r := e.run(noon.Add(time.Hour))
	wantKinds(t, r, "terminal:unknown_to_terminal", "provider:unknown_to_provider")
	if d := r.Differences[1]; d.AttemptUUID != a.UUID || d.OrderID != a.OrderID || d.JournalAmount != 1250 {
		t.Fatalf("difference %+v", d)
	}
	// A link never reaches the terminal: only the provider is asked.
	e2 := newEnv(t)
	e2.attempt(noon, journal.ChannelLink, 1250, journal.StateApproved, "L-1", nil)
	wantKinds(t, e2.run(noon.Add(time.Hour)), "provider:unknown_to_provider")
}

// The outcome differs: an unknown attempt the provider approved (found by
// its cart and amount, having no transaction id), an approved one the
// provider refused.
func TestStateMismatch(t *testing.T) {
	e := newEnv(t)
	unknown := e.attempt(noon, journal.ChannelLocal, 1250, journal.StateUnknown, "", nil)
	approved := e.attempt(noon.Add(time.Minute), journal.ChannelLocal, 300, journal.StateApproved, "TX-3", nil)
	e.terminal = []device.HistoryEntry{
		onTerminal("TX-U", "ok", unknown.OrderID, 1250, 0, noon.Add(5*time.Second)),
		onTerminal("TX-3", "ok", approved.OrderID, 300, 0, noon.Add(time.Minute)),
	}
	e.provider = []cloudapi.HistoryEntry{
		atProvider("TX-U", "ok", unknown.OrderID, "S1", 1250, 0, noon.Add(5*time.Second)),
		atProvider("TX-3", "ko", approved.OrderID, "S1", 300, 0, noon.Add(time.Minute)),
	}
	r := e.run(noon.Add(time.Hour))
	wantKinds(t, r, "terminal:state_mismatch", "provider:state_mismatch", "provider:state_mismatch")
	if d := r.Differences[0]; d.AttemptUUID != unknown.UUID || !strings.Contains(d.Action, "Settle the attempt as paid") {
		t.Fatalf("unknown attempt %+v", d)
	}
	if d := r.Differences[2]; d.AttemptUUID != approved.UUID || d.OtherStatus != "ko" {
		t.Fatalf("approved attempt %+v", d)
	}
}

// Same transaction, another tip: the amounts differ.
func TestAmountMismatch(t *testing.T) {
	e := newEnv(t)
	a := e.attempt(noon, journal.ChannelCloud, 1000, journal.StateApproved, "TX-4", &journal.Charge{Amount: 1000, GiftAmount: 0})
	e.terminal = []device.HistoryEntry{onTerminal("TX-4", "ok", a.OrderID, 1000, 0, noon)}
	e.provider = []cloudapi.HistoryEntry{atProvider("TX-4", "ok", a.OrderID, "S1", 1000, 200, noon)}
	r := e.run(noon.Add(time.Hour))
	wantKinds(t, r, "provider:amount_mismatch")
	if d := r.Differences[0]; d.JournalAmount != 1000 || d.OtherAmount != 1200 {
		t.Fatalf("difference %+v", d)
	}
}

// A link paid in two parts (a meal voucher, then a card) is one attempt
// holding both transactions: the provider's two lines add up to it.
func TestLinkPaidInParts(t *testing.T) {
	e := newEnv(t)
	a := e.attempt(noon, journal.ChannelLink, 1200, journal.StateApproved, "P-1,P-2", &journal.Charge{Amount: 1200})
	cart := payment.LinkCartID(a.OrderID, a.UUID)
	e.provider = []cloudapi.HistoryEntry{
		atProvider("P-1", "ok", cart, "", 500, 0, noon.Add(time.Minute)),
		atProvider("P-2", "ok", cart, "", 700, 0, noon.Add(2*time.Minute)),
	}
	r := e.run(noon.Add(time.Hour))
	wantKinds(t, r)
	if len(r.Lines) != 1 || len(r.Lines[0].Provider) != 2 {
		t.Fatalf("lines %+v", r.Lines)
	}
}

// Pending too long: at the provider, and an attempt still open; a link
// waiting for its customer is not late.
func TestPendingTooLong(t *testing.T) {
	e := newEnv(t)
	open := e.attempt(noon, journal.ChannelLocal, 500, journal.StateSent, "", nil)
	e.attempt(noon, journal.ChannelLink, 500, journal.StateSent, "", nil)
	e.provider = []cloudapi.HistoryEntry{atProvider("TX-P", "pending", "", "S1", 450, 0, noon)}
	wantKinds(t, e.run(noon.Add(30*time.Minute)))
	r := e.run(noon.Add(2 * time.Hour))
	wantKinds(t, r, "provider:pending_too_long", "journal:pending_too_long")
	if d := r.Differences[1]; d.AttemptUUID != open.UUID {
		t.Fatalf("open attempt %+v", d)
	}
}

// A list that cannot be read is said, and needs staff; the other still
// counts.
func TestColumnUnreadable(t *testing.T) {
	e := newEnv(t)
	a := e.attempt(noon, journal.ChannelLocal, 1250, journal.StateApproved, "TX-1", nil)
	e.termErr = errors.New("the terminal cannot be reached")
	e.provider = []cloudapi.HistoryEntry{atProvider("TX-1", "ok", a.OrderID, "S1", 1250, 0, noon)}
	r := e.run(noon.Add(time.Hour))
	wantKinds(t, r)
	if r.TerminalRead || r.TerminalError == "" || !r.NeedsStaff || !r.ProviderRead {
		t.Fatalf("report %+v", r)
	}
}

// The same transaction in another currency than its order's is a
// difference, whatever its amount; in the order's currency (CHF, GBP) it
// agrees.
func TestACurrencyDifferenceIsADifference(t *testing.T) {
	for _, cur := range []string{"CHF", "GBP"} {
		e := newEnv(t)
		e.currency = cur
		a := e.attempt(noon, journal.ChannelLocal, 1500, journal.StateApproved, "TX-C", &journal.Charge{Amount: 1500, Currency: cur})
		term, prov := onTerminal("TX-C", "ok", a.OrderID, 1500, 0, noon), atProvider("TX-C", "ok", a.OrderID, "S1", 1500, 0, noon)
		term.CurrencyCode, prov.CurrencyCode = cur, strings.ToLower(cur)
		e.terminal, e.provider = []device.HistoryEntry{term}, []cloudapi.HistoryEntry{prov}
		r := e.run(noon.Add(time.Hour), "S1")
		wantKinds(t, r)
		if j := r.Lines[0].Journal; j == nil || j.Currency != cur {
			t.Fatalf("%s: line %+v", cur, r.Lines[0])
		}
		// The terminal's merchant profile is in euros: the same amount, charged in EUR.
		term.CurrencyCode, prov.CurrencyCode = "EUR", "EUR"
		e.terminal, e.provider = []device.HistoryEntry{term}, []cloudapi.HistoryEntry{prov}
		r = e.run(noon.Add(time.Hour), "S1")
		wantKinds(t, r, "terminal:currency_mismatch", "provider:currency_mismatch")
		if d := r.Differences[0]; d.AttemptUUID != a.UUID || !strings.Contains(d.Message, "EUR") || !strings.Contains(d.Message, cur) || d.Action == "" {
			t.Fatalf("%s: difference %+v", cur, d)
		}
	}
}
