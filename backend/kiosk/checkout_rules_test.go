package kiosk

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/cloudsim"
	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/payment"
	"github.com/comptoir-pos/comptoir/backend/receipt"
)

// The checkout's rules, each on its own: what Pay re-checks, what a retry
// offers, what an order has paid, whose transaction a receipt is shared
// under, and that a follower of an attempt the screen no longer shows
// changes nothing.

var stagedOrders atomic.Int32

// staged puts the checkout in phase with att out for ord, as Pay and the
// follower leave it, with no payment running: the test plays the
// follower's steps itself. ord is recorded in the journal (an attempt for
// it could start). It returns the checkout's generation.
func (e *env) staged(phase Phase, att, last *attempt, ord *order, p PaymentView) int {
	e.t.Helper()
	if ord.id == "" {
		ord.id = fmt.Sprintf("20261127-T%03d", stagedOrders.Add(1))
		if err := e.db.CreateOrder(e.ctx, journal.Order{ID: ord.id, Currency: "EUR", Total: ord.total, CreatedAt: time.Now()}); err != nil {
			e.t.Fatal(err)
		}
	}
	if ord.currency == "" {
		ord.currency = "EUR"
	}
	e.s.mu.Lock()
	defer e.s.mu.Unlock()
	e.s.co.gen++
	e.s.co.phase, e.s.co.order, e.s.co.att, e.s.co.last = phase, ord, att, last
	e.s.co.payment = &p
	return e.s.co.gen
}

// stagedPaying is a card part of 5.00 out for a new order, the screen
// saying msg.
func (e *env) stagedPaying(att *attempt, msg string) (int, *order) {
	ord := &order{total: 500, method: MethodCard, created: time.Now()}
	gen := e.staged(PhasePaying, att, nil, ord, PaymentView{Method: MethodCard, Step: StepCard, Amount: 500, Due: 500, Message: msg})
	return gen, ord
}

// A follower of an attempt the checkout no longer shows (a part that
// ended, a checkout that moved on) never changes the screen, never
// settles the order, never starts a payment: whatever it reads.
func TestRuleAnAttemptTheCheckoutNoLongerShowsChangesNothing(t *testing.T) {
	e := newEnv(t)
	shown := &attempt{step: StepCard, amount: 500, wake: make(chan struct{}, 1)}
	stale := &attempt{step: StepCard, amount: 500, wake: make(chan struct{}, 1)}
	gen, ord := e.stagedPaying(shown, "PRESENT CARD")
	if !e.s.shown(gen, shown) || e.s.shown(gen, stale) || e.s.shown(gen-1, shown) {
		t.Fatal("shown: only the checkout's own attempt, in its own generation, is shown")
	}
	before := e.s.Checkout()
	same := func(step string) {
		t.Helper()
		after := e.s.Checkout()
		if after.Phase != before.Phase || !reflect.DeepEqual(after.Payment, before.Payment) {
			t.Fatalf("%s of a stale attempt changed the checkout:\n before %s %+v\n after  %s %+v", step, before.Phase, before.Payment, after.Phase, after.Payment)
		}
		if atts, err := e.db.AttemptsForOrder(e.ctx, ord.id); err != nil || len(atts) != 0 {
			t.Fatalf("%s of a stale attempt started a payment: %+v %v", step, atts, err)
		}
	}
	busy := payment.View{State: journal.StateSent, Message: "INSERT CARD", Abort: payment.AbortPending,
		Channel: journal.ChannelCloud, Link: "https://pay.example/x", Paid: 100}
	e.s.progress(gen, stale, busy)
	same("progress")
	e.s.stranded(gen, stale, busy)
	same("stranded")
	e.s.settle(gen, stale, payment.View{State: journal.StateApproved, Amount: 500, ChargedAmount: 500, TransactionID: "T-1"})
	same("settle")
	e.s.launched(gen, stale, ord, journal.PolicyKiosk, time.Now(), nil, errors.New("refused"))
	same("launched")
	e.s.launch(gen, stale)
	same("launch")
	// Another generation, the same attempt: nothing either.
	e.s.stranded(gen-1, shown, busy)
	same("stranded, older generation")
}

// While an attempt is out, the screen shows what the attempt says: its
// message when it has one (an empty one keeps the last), whether it runs
// through the cloud, a cancel under way; and a link only for a link.
func TestRuleTheScreenFollowsWhatItsAttemptSays(t *testing.T) {
	e := newEnv(t)
	att := &attempt{step: StepCard, amount: 500, wake: make(chan struct{}, 1)}
	gen, _ := e.stagedPaying(att, "PRESENT CARD")
	sent := func(f func(*payment.View)) payment.View {
		v := payment.View{State: journal.StateSent, Channel: journal.ChannelLocal}
		f(&v)
		return v
	}
	for _, tc := range []struct {
		name  string
		view  payment.View
		check func(CheckoutView) bool
	}{
		{"no message keeps the last", sent(func(*payment.View) {}),
			func(v CheckoutView) bool { return v.Payment.Message == "PRESENT CARD" }},
		{"a new message shows", sent(func(v *payment.View) { v.Message = "PIN" }),
			func(v CheckoutView) bool { return v.Payment.Message == "PIN" }},
		{"through the cloud", sent(func(v *payment.View) { v.Channel = journal.ChannelCloud }),
			func(v CheckoutView) bool { return v.Payment.ThroughCloud && v.Payment.Message == "PIN" }},
		{"back on the LAN", sent(func(*payment.View) {}),
			func(v CheckoutView) bool { return !v.Payment.ThroughCloud }},
		{"a card part shows no link", sent(func(v *payment.View) { v.Link, v.Paid = "https://pay.example/x", 100 }),
			func(v CheckoutView) bool {
				return v.Payment.Link == "" && v.Payment.LinkPaid == 0 && v.Phase == PhasePaying
			}},
		// The driver's cancel under way (its answer pending), before the
		// journal says abort_requested: the screen says cancelling.
		{"a cancel under way", sent(func(v *payment.View) { v.Abort = payment.AbortPending }),
			func(v CheckoutView) bool { return v.Phase == PhaseCanceling }},
	} {
		e.s.progress(gen, att, tc.view)
		if v := e.s.Checkout(); !tc.check(v) {
			t.Fatalf("%s: %s %+v", tc.name, v.Phase, v.Payment)
		}
	}
}

// Once the screen says cancelling, an attempt that charged nothing ended
// cancelled, whoever asked for the cancel; an outcome nobody knows is
// never shown without words for staff.
func TestRuleAnOutcomeIsToldInTheCustomersTerms(t *testing.T) {
	e := newEnv(t)
	att := &attempt{step: StepCard, amount: 500, wake: make(chan struct{}, 1)}
	gen, _ := e.stagedPaying(att, "")
	e.s.progress(gen, att, payment.View{State: journal.StateSent, Abort: payment.AbortPending})
	e.s.settle(gen, att, payment.View{State: journal.StateDeclined, Amount: 500})
	if v := e.s.Checkout(); v.Phase != PhaseDeclined || v.Payment.Outcome != OutcomeCancelled {
		t.Fatalf("declined while cancelling: %s %+v", v.Phase, v.Payment)
	}

	att = &attempt{step: StepCard, amount: 500, wake: make(chan struct{}, 1)}
	gen, _ = e.stagedPaying(att, "")
	e.s.settle(gen, att, payment.View{State: journal.StateUnknown, Amount: 500})
	if v := e.s.Checkout(); v.Phase != PhaseUnknown || v.Payment.Message == "" {
		t.Fatalf("unknown: %s %+v", v.Phase, v.Payment)
	}
}

// Pay charges only a cart it checks again, whatever the cart's own checks
// let through: nothing to pay is no payment; a cart past the order's
// ceiling, with a line whose total is not its quantity times its price,
// or with too many lines is refused; up to the limits is a sale.
func TestRulePayChecksTheCartAgain(t *testing.T) {
	e := newEnv(t, withCatalog(boundsCatalog(MaxLines)))
	e.must(e.s.Start("fr"))
	e.must(e.s.ChooseDining(DiningEatIn))
	for i := range MaxLines {
		e.must(e.s.AddItem("p"+strconv.Itoa(i), 1))
	}
	for _, tc := range []struct {
		name string
		bend func([]cartLine) []cartLine
		want string
	}{
		{"nothing to pay", func(ls []cartLine) []cartLine {
			for i := range ls {
				ls[i].UnitPrice, ls[i].Total = 0, 0
			}
			return ls
		}, ErrAmount},
		{"past the ceiling", func(ls []cartLine) []cartLine {
			ls[0].Qty, ls[0].UnitPrice = MaxQty, MaxUnitPrice
			ls[0].Total = MaxQty * MaxUnitPrice
			return ls
		}, ErrOrderLimit},
		{"a line that is not qty × price", func(ls []cartLine) []cartLine { ls[0].Total++; return ls }, ErrOrderLimit},
		{"one line too many", func(ls []cartLine) []cartLine { return append(ls, ls[0]) }, ErrOrderLimit},
	} {
		e.s.mu.Lock()
		kept := e.s.co.lines
		e.s.co.lines = tc.bend(append([]cartLine(nil), kept...))
		e.s.mu.Unlock()
		if v, _ := e.s.Pay(MethodCard); v.Error != tc.want || v.Phase != PhaseOrdering || v.OrderID != "" {
			t.Fatalf("%s: %q %s order %q", tc.name, v.Error, v.Phase, v.OrderID)
		}
		e.s.mu.Lock()
		e.s.co.lines = kept
		e.s.mu.Unlock()
	}
	if v := e.must(e.s.Pay(MethodCard)); v.Phase != PhasePaying || len(v.Lines) != MaxLines {
		t.Fatalf("a cart of %d lines: %s, %d lines", MaxLines, v.Phase, len(v.Lines))
	}
	e.waitPhase(PhaseApproved)
}

// A retry pays what is still due by the same means as the part that
// ended (a phone link again after a link nobody paid), never more
// vouchers than the order may still take; nothing due is no retry.
func TestRuleARetryTakesWhatIsStillDueByTheSameMeans(t *testing.T) {
	e := newEnv(t, withLinks(time.Hour))
	e.cart("croissant", 1)
	e.payByPhone()
	e.endLinkScreen()
	e.waitPhase(PhaseDeclined)
	if v := e.must(e.s.Retry()); v.Payment.Step != StepPhone || v.Payment.Amount != v.Total {
		t.Fatalf("retry after a link nobody paid: %+v", v.Payment)
	}

	ord := &order{total: 900, voucherEligible: 600, method: MethodVoucherThenCard}
	voucher := &attempt{step: StepVoucher, amount: 600}
	for _, tc := range []struct {
		name          string
		paidVoucher   int64
		due           int64
		byCard, phone bool
		step          Step
		amount        int64
		medium        string
	}{
		{"the voucher part again", 0, 900, false, false, StepVoucher, 600, payment.MediumMealVouchers},
		{"what vouchers may still pay", 200, 700, false, false, StepVoucher, 400, payment.MediumMealVouchers},
		{"vouchers used up: a card", 600, 300, false, false, StepCard, 300, payment.MediumBankCards},
		{"the rest by card", 0, 900, true, false, StepCard, 900, payment.MediumBankCards},
		{"by phone", 0, 900, false, true, StepPhone, 900, ""},
	} {
		o := *ord
		o.paidVoucher = tc.paidVoucher
		a := retryPart(&o, voucher, tc.due, tc.byCard, tc.phone)
		if a.step != tc.step || a.amount != tc.amount || a.medium != tc.medium || a.link != (tc.step == StepPhone) {
			t.Fatalf("%s: %+v", tc.name, a)
		}
	}

	last := &attempt{step: StepCard, amount: 500}
	ord = &order{total: 500, method: MethodCard, created: time.Now(), paidCard: 500}
	e.staged(PhaseDeclined, nil, last, ord, PaymentView{Method: MethodCard, Step: StepCard, Amount: 500, Paid: 500, Due: 0})
	if v, _ := e.s.Retry(); v.Error != ErrAmount || v.Phase != PhaseDeclined {
		t.Fatalf("a retry with nothing due: %q %s", v.Error, v.Phase)
	}
}

// What an order has paid is the journal's sum; only when the journal
// cannot be read does the kiosk's own count stand in: every approved part
// that agrees with what was asked, vouchers and cards, added up.
func TestRuleAnOrderHasPaidWhatTheJournalSays(t *testing.T) {
	s := &Service{log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	ord := &order{total: 2000}
	unreadable := errors.New("journal unreadable")
	approved := func(n int64) payment.View {
		return payment.View{State: journal.StateApproved, Amount: n, ChargedAmount: n}
	}
	voucher, card := &attempt{step: StepVoucher}, &attempt{step: StepCard}
	steps := []struct {
		name    string
		att     *attempt
		view    payment.View
		journal int64
		err     error
		want    int64
	}{
		{"a voucher part", voucher, approved(300), 0, unreadable, 300},
		{"another voucher part", voucher, approved(200), 0, unreadable, 500},
		{"a flagged card part pays nothing", card, func() payment.View { v := approved(700); v.Flag = "amount"; return v }(), 0, unreadable, 500},
		{"a declined part pays nothing", card, payment.View{State: journal.StateDeclined, Amount: 700}, 0, unreadable, 500},
		{"a card part", card, approved(700), 0, unreadable, 1200},
		{"another card part", card, approved(800), 0, unreadable, 2000},
		{"the journal read", card, payment.View{State: journal.StateDeclined}, 1700, nil, 1700},
	}
	for _, st := range steps {
		if got := s.paidLocked(ord, st.att, st.view, st.journal, st.err); got != st.want {
			t.Fatalf("%s: paid %d, want %d (vouchers %d, cards %d)", st.name, got, st.want, ord.paidVoucher, ord.paidCard)
		}
	}
}

// A part paid on a phone is a link's on the receipt, its tip with it when
// the provider named one.
func TestRuleAPhonePartIsALinksOnTheReceipt(t *testing.T) {
	link := &attempt{step: StepPhone, link: true}
	v := payment.View{State: journal.StateApproved, ChargedAmount: 900, TransactionID: "L-1"}
	if p := chargedPart(link, v); p.Kind != receipt.KindLink || p.Amount != 900 || p.Tip != 0 {
		t.Fatalf("a link's part without the provider's charge: %+v", p)
	}
	v.Charge = &payment.Charge{TransactionID: "L-1", Amount: 900, GiftAmount: 150}
	if p := chargedPart(link, v); p.Kind != receipt.KindLink || p.Amount != 900 || p.Tip != 150 {
		t.Fatalf("a link's part with its tip: %+v", p)
	}
}

// Cents never wrap: a sum or a product is refused one past int64's
// largest and taken at it; a negative amount is a wrapped sum; a line is
// refused past its quantity and unit price, taken at them (and at 0.00).
func TestRuleCentsNeverWrap(t *testing.T) {
	for _, tc := range []struct {
		name   string
		got    func() (int64, bool)
		want   int64
		wantOK bool
	}{
		{"a sum at the largest", func() (int64, bool) { return addCents(math.MaxInt64-5, 5) }, math.MaxInt64, true},
		{"a sum one past", func() (int64, bool) { return addCents(math.MaxInt64-5, 6) }, 0, false},
		{"a sum with a negative", func() (int64, bool) { return addCents(5, -1) }, 0, false},
		{"a product at the largest", func() (int64, bool) { return mulCents(7, math.MaxInt64/7) }, math.MaxInt64 / 7 * 7, true},
		{"a product one past", func() (int64, bool) { return mulCents(7, math.MaxInt64/7+1) }, 0, false},
		{"no units", func() (int64, bool) { return mulCents(0, 130) }, 0, true},
		{"a free unit", func() (int64, bool) { return mulCents(3, 0) }, 0, true},
		{"a negative price", func() (int64, bool) { return mulCents(2, -1) }, 0, false},
		{"a negative quantity", func() (int64, bool) { return mulCents(-2, 1) }, 0, false},
	} {
		if got, ok := tc.got(); got != tc.want || ok != tc.wantOK {
			t.Fatalf("%s: %d %v, want %d %v", tc.name, got, ok, tc.want, tc.wantOK)
		}
	}
	line := func(qty int, unit int64) cartLine {
		return cartLine{LineView: LineView{Qty: qty, UnitPrice: unit, Total: int64(qty) * unit}}
	}
	for _, tc := range []struct {
		name string
		l    cartLine
		ok   bool
	}{
		{"free", line(1, 0), true},
		{"the dearest unit", line(1, MaxUnitPrice), true},
		{"past the dearest unit", line(1, MaxUnitPrice+1), false},
		{"a negative price", line(1, -1), false},
		{"the most of one line", line(MaxQty, 100), true},
		{"one more", line(MaxQty+1, 100), false},
		{"none", line(0, 100), false},
	} {
		if total, ok := cartTotal([]cartLine{tc.l}); ok != tc.ok || (ok && total != tc.l.Total) {
			t.Fatalf("%s: %d %v, want ok %v", tc.name, total, ok, tc.ok)
		}
	}
}

// A receipt is shared through the terminal under the card part's
// transaction, the meal voucher's when no card part paid; never for an
// order paid on a phone (the terminal knows no such transaction).
func TestRuleAReceiptIsSharedUnderTheCardPartsTransaction(t *testing.T) {
	shared := func(e *env) []string {
		e.t.Helper()
		e.must(e.s.ChooseReceipt(ReceiptEmail))
		v := e.waitFor("the receipt", func(v CheckoutView) bool { return v.Receipt != nil && v.Receipt.Status != ReceiptWorking })
		var ids []string
		for _, s := range e.sim.Shares() {
			ids = append(ids, s.TransactionID)
		}
		if v.Receipt.Status == ReceiptDone && len(ids) == 0 {
			e.t.Fatal("receipt done, nothing shared")
		}
		return ids
	}
	e := newEnv(t)
	e.cart("jambon-beurre", 4, "cola", 1)
	e.must(e.s.Pay(MethodVoucherThenCard))
	e.waitPhase(PhaseApproved)
	if d, ids := e.debits(), shared(e); len(d) != 2 || len(ids) != 1 || ids[0] != d[1].TransactionID {
		t.Fatalf("voucher then card: shared %v, debits %+v", ids, d)
	}

	e = newEnv(t)
	e.cart("croissant", 2)
	e.must(e.s.Pay(MethodVoucherThenCard))
	e.waitPhase(PhaseApproved)
	if d, ids := e.debits(), shared(e); len(d) != 1 || len(ids) != 1 || ids[0] != d[0].TransactionID {
		t.Fatalf("all by voucher: shared %v, debits %+v", ids, d)
	}

	e = newEnv(t, withLinks(time.Hour))
	e.cart("croissant", 1)
	v := e.payByPhone()
	if _, err := e.cloud.PayCart(e.cartOf(v), 0, 0, cloudsim.PayCard, false); err != nil {
		t.Fatal(err)
	}
	e.waitPhase(PhaseApproved)
	if ids := shared(e); len(ids) != 0 || e.s.Checkout().Receipt.Status != ReceiptError {
		t.Fatalf("paid on a phone: shared %v, receipt %+v", ids, e.s.Checkout().Receipt)
	}
}

// A link's transaction is the provider's, not the terminal's: an order
// paid on a phone is never shared through the terminal, whatever the
// provider called its payment.
func TestRuleAPhonePaymentIsNeverSharedThroughTheTerminal(t *testing.T) {
	e := newEnv(t)
	link := &attempt{step: StepPhone, amount: 500, link: true, wake: make(chan struct{}, 1)}
	ord := &order{total: 500, method: MethodPhone, created: time.Now()}
	gen := e.staged(PhasePaying, link, nil, ord, PaymentView{Method: MethodPhone, Step: StepPhone, Amount: 500, Due: 500})
	// The journal knows the order paid (the settle reads its sum).
	if v, err := e.o.Pay(e.ctx, payment.Request{OrderID: ord.id, Amount: 500, Policy: journal.PolicyKiosk}); err != nil || v.State != journal.StateApproved {
		t.Fatalf("the order paid: %+v %v", v, err)
	}
	e.s.settle(gen, link, payment.View{State: journal.StateApproved, Amount: 500, ChargedAmount: 500, TransactionID: "L-1",
		Channel: journal.ChannelLink})
	e.waitPhase(PhaseApproved)
	e.s.mu.Lock()
	tx := ord.shareTxID
	e.s.mu.Unlock()
	if tx != "" {
		t.Fatalf("an order paid on a phone shares under %q", tx)
	}
	e.must(e.s.ChooseReceipt(ReceiptEmail))
	v := e.waitFor("the receipt", func(v CheckoutView) bool { return v.Receipt != nil && v.Receipt.Status != ReceiptWorking })
	if v.Receipt.Status != ReceiptError || len(e.sim.Shares()) != 0 {
		t.Fatalf("shared %+v, receipt %+v", e.sim.Shares(), v.Receipt)
	}
}

// What the screen says is paid and due is the journal's sum for the
// order, a part this checkout did not follow included.
func TestRuleTheScreenShowsWhatTheJournalSaysIsPaid(t *testing.T) {
	e := newEnv(t)
	att := &attempt{step: StepCard, amount: 500, wake: make(chan struct{}, 1)}
	gen, ord := e.stagedPaying(att, "")
	if v, err := e.o.Pay(e.ctx, payment.Request{OrderID: ord.id, Amount: 200, Policy: journal.PolicyKiosk}); err != nil || v.State != journal.StateApproved {
		t.Fatalf("a part paid beside the checkout: %+v %v", v, err)
	}
	e.s.settle(gen, att, payment.View{State: journal.StateDeclined, Amount: 500})
	if v := e.s.Checkout(); v.Payment.Paid != 200 || v.Payment.Due != 300 {
		t.Fatalf("paid %d due %d, want 200 and 300", v.Payment.Paid, v.Payment.Due)
	}
}

// logLines is a log handler keeping what is logged at warning and above.
type logLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *logLines) Enabled(_ context.Context, lv slog.Level) bool { return lv >= slog.LevelWarn }
func (l *logLines) Handle(_ context.Context, r slog.Record) error {
	line := r.Message
	r.Attrs(func(a slog.Attr) bool { line += " " + a.String(); return true })
	l.mu.Lock()
	l.lines = append(l.lines, line)
	l.mu.Unlock()
	return nil
}
func (l *logLines) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *logLines) WithGroup(string) slog.Handler      { return l }
func (l *logLines) has(s string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, x := range l.lines {
		if strings.Contains(x, s) {
			return true
		}
	}
	return false
}

// A payment that failed or whose outcome is unknown is logged for staff
// with its cause (the customer's screen says it in their words); an
// approval or a decline is not a warning.
func TestRuleAFailedOrUnknownPaymentIsLoggedWithItsCause(t *testing.T) {
	logs := &logLines{}
	e := newEnv(t, withLogger(slog.New(logs)))
	for _, tc := range []struct {
		view   payment.View
		logged bool
	}{
		{payment.View{State: journal.StateFailed, Amount: 500, Message: "cause-failed"}, true},
		{payment.View{State: journal.StateUnknown, Amount: 500, Message: "cause-unknown"}, true},
		{payment.View{State: journal.StateDeclined, Amount: 500, Message: "cause-declined"}, false},
	} {
		att := &attempt{step: StepCard, amount: 500, wake: make(chan struct{}, 1)}
		gen, _ := e.stagedPaying(att, "")
		e.s.settle(gen, att, tc.view)
		if got := logs.has("payment "+string(e.s.Checkout().Phase)) && logs.has(tc.view.Message); got != tc.logged {
			t.Fatalf("%s: logged %v, want %v: %q", tc.view.State, got, tc.logged, logs.lines)
		}
	}
}
