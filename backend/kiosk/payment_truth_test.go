package kiosk

// Ways the kiosk's screens could contradict the attempt's journal state, or
// start a payment nobody asked for: each test fails if its case comes back.

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/internal/testenv/paytest"
	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/localapi"
	"github.com/comptoir-pos/comptoir/backend/payment"
	"github.com/comptoir-pos/comptoir/backend/terminalsim"
)

// journalSQL runs statements on the journal's file through a second
// connection: triggers that refuse chosen writes stand for a journal that
// cannot write (a full disk) while it can still be read.
func journalSQL(t *testing.T, db *journal.DB, stmts ...string) {
	t.Helper()
	conn, err := sql.Open("sqlite", db.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, s := range stmts {
		if _, err := conn.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// A meal-voucher part charged although Cancel was pressed leaves the kiosk
// on the declined screen with step "voucher". Retry there asks the meal
// voucher for its whole eligible part again: the voucher would be charged
// twice.
func TestRetryAfterVoucherChargedDespiteCancelNeverChargesTheVoucherTwice(t *testing.T) {
	e := newEnv(t)
	e.sim.Script(terminalsim.Hold())
	e.cart("croissant", 2, "cola", 1) // 540, 260 eligible
	v := e.must(e.s.Pay(MethodVoucherThenCard))
	if v.Payment.Step != StepVoucher || v.Payment.Amount != 260 {
		t.Fatalf("voucher part %+v", v.Payment)
	}
	e.waitSim(terminalsim.PhaseBanking)
	e.cancelHeld()
	if err := e.sim.PresentCard(); err != nil {
		t.Fatal(err)
	}
	v = e.outcome()
	if v.Phase != PhaseDeclined || v.Payment.Paid != 260 || v.Payment.Due != 280 {
		t.Fatalf("voucher charged despite cancel: %s %+v", v.Phase, v.Payment)
	}
	// The screen offers Retry (Declined.svelte); the customer, told the
	// voucher was declined, takes it.
	v = e.must(e.s.Retry())
	if v.Payment.Step == StepVoucher {
		t.Errorf("Retry after the voucher part was charged asks the voucher again for %d (already paid %d of %d eligible)",
			v.Payment.Amount, v.Payment.Paid, v.VoucherEligible)
	}
	e.outcome()
	var voucher int64
	atts, _ := e.db.AttemptsForOrder(e.ctx, v.OrderID)
	for _, a := range atts {
		if a.State == journal.StateApproved && strings.Contains(string(a.RequestBody), localapi.MediumTypeLunchVouchersOnly) {
			voucher += a.Amount
		}
	}
	if voucher > 260 {
		t.Errorf("meal vouchers charged %d for an order whose eligible part is 260; ledger %+v", voucher, e.debits())
	}
}

// Cancel pressed while Pay is still recording the order (nothing sent yet):
// the kiosk shows "Cancelling...", and launch must then send nothing (it
// used to start the attempt and only call h.Cancel() after Start returned:
// the /payment left, then an /abort chased it). Here the driver is let past its "cancelled before the
// request was sent" check before the kiosk's h.Cancel() (the order the
// scheduler picks about a third of the time under -race); the simulated
// customer taps at once, and is charged after pressing Cancel before anything
// was sent.
func TestCancelBeforeSendSendsNothing(t *testing.T) {
	var (
		e    *env
		held atomic.Bool
	)
	h := &hooked{}
	e = newEnv(t, withHook(func(relay payment.Emitter) payment.Emitter { h.next = relay; return h }, nil))
	// Prepared (inside Start, before the driver runs): hold the Service's
	// lock so launch waits after Start; sent (the driver passed its check and
	// journaled the send): let launch go on to h.Cancel().
	h.after = func(v payment.View) {
		if v.State == journal.StatePrepared && held.CompareAndSwap(false, true) {
			e.s.mu.Lock()
		}
	}
	h.before = func(v payment.View) {
		if v.State == journal.StateSent && held.CompareAndSwap(true, false) {
			e.s.mu.Unlock()
		}
	}
	e.cart("croissant", 1)
	e.s.seqMu.Lock() // numbering waits: the order is not recorded yet
	paid := make(chan CheckoutView, 1)
	go func() { v, _ := e.s.Pay(MethodCard); paid <- v }()
	e.waitPhase(PhasePaying)
	if v := e.must(e.s.Cancel()); v.Phase != PhaseCanceling {
		t.Fatalf("after Cancel: %s", v.Phase)
	}
	e.s.seqMu.Unlock()
	<-paid
	v := e.outcome()
	atts, _ := e.db.AttemptsForOrder(e.ctx, v.OrderID)
	for _, a := range atts {
		if a.SendCount > 0 {
			t.Errorf("Cancel was pressed before anything was sent, yet attempt %s was sent %d time(s) (state %s)", a.UUID, a.SendCount, a.State)
		}
	}
	if d := e.debits(); len(d) != 0 {
		t.Errorf("charged after Cancel pressed before the send: %d debit(s) (screen: %s, chargedDespiteCancel %v)", len(d), v.Phase, v.Payment.ChargedDespiteCancel)
	}
}

// gate holds the orchestrator's event for one final view until released, so
// that a test can act between the attempt's outcome and the kiosk seeing it.
type gate struct {
	next    payment.Emitter
	match   func(payment.View) bool
	once    sync.Once
	reached chan struct{}
	release chan struct{}
}

func (g *gate) Emit(name string, data any) {
	if v, ok := data.(payment.View); ok && g.match(v) {
		hit := false
		g.once.Do(func() { hit = true })
		if hit {
			close(g.reached)
			<-g.release
		}
	}
	g.next.Emit(name, data)
}

// newGatedEnv is newEnv with the events going through g.
func newGatedEnv(t *testing.T, g *gate) *env {
	t.Helper()
	return newEnv(t, withHook(func(relay payment.Emitter) payment.Emitter { g.next = relay; return g }, func() {
		g.once.Do(func() {})
		select {
		case <-g.release:
		default:
			close(g.release)
		}
	}))
}

// hooked forwards the orchestrator's events, calling before and after.
type hooked struct {
	next          payment.Emitter
	before, after func(payment.View)
}

func (h *hooked) Emit(name string, data any) {
	v, ok := data.(payment.View)
	if ok && h.before != nil {
		h.before(v)
	}
	h.next.Emit(name, data)
	if ok && h.after != nil {
		h.after(v)
	}
}

// Cancel pressed just after the terminal approved the meal-voucher part but
// before the kiosk read that outcome: the screen says "Cancelling...", then
// the card part must not start: a payment the customer asked to stop.
func TestCancelRightAfterVoucherApprovalStartsNoCardPart(t *testing.T) {
	g := &gate{
		match:   func(v payment.View) bool { return v.State == journal.StateApproved && v.Amount == 260 },
		reached: make(chan struct{}), release: make(chan struct{}),
	}
	e := newGatedEnv(t, g)
	e.cart("croissant", 2, "cola", 1)
	e.must(e.s.Pay(MethodVoucherThenCard))
	select {
	case <-g.reached:
	case <-time.After(10 * time.Second):
		t.Fatal("the voucher part was not approved")
	}
	if v := e.must(e.s.Cancel()); v.Phase != PhaseCanceling {
		t.Fatalf("after Cancel: %s", v.Phase)
	}
	close(g.release)
	v := e.waitFor("outcome", func(v CheckoutView) bool {
		return v.Phase != PhaseCanceling && !(v.Phase == PhasePaying && v.Payment.Step == StepVoucher)
	})
	// The kiosk decides on a next part when it settles one: a card part
	// would have been journaled (before it left) and shown as paying by then.
	v = e.waitFor("settled", func(v CheckoutView) bool { return v.Phase != PhasePaying && v.Phase != PhaseCanceling })
	if atts, err := e.db.AttemptsForOrder(e.ctx, v.OrderID); err != nil || len(atts) != 1 {
		t.Errorf("Cancel pressed during the voucher part, yet another part was journaled: %+v, %v", atts, err)
	}
	if d := e.debits(); len(d) != 1 {
		t.Errorf("Cancel pressed during the voucher part, yet a card part ran: ledger %+v; screen %s %+v", d, v.Phase, v.Payment)
	}
	for _, c := range e.events.checkouts() {
		if c.Phase == PhasePaying && c.Payment != nil && c.Payment.Step == StepCard {
			t.Errorf("after Cancel the kiosk showed the card part being paid: %+v", c.Payment)
			break
		}
	}
}

// The terminal approves a card payment but the journal cannot record the
// approval (full disk; reads still work). The kiosk reads the journal's
// summary (nothing paid); it must not then try a second card attempt, nor
// show "failed: you have not been charged", nor let CancelOrder record a
// charged order as cancelled.
func TestApprovalNotRecordedIsNeverShownAsNotCharged(t *testing.T) {
	e := newEnv(t)
	journalSQL(t, e.db, `CREATE TRIGGER test_no_approval BEFORE UPDATE OF state ON attempts
		WHEN NEW.state = 'approved' BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END`)
	e.cart("croissant", 1)
	e.must(e.s.Pay(MethodCard))
	v := e.waitFor("outcome", func(v CheckoutView) bool {
		return v.Phase != PhasePaying && v.Phase != PhaseCanceling
	})
	if d := e.debits(); len(d) != 1 {
		t.Fatalf("ledger %+v", d)
	}
	if v.Phase != PhaseApproved && v.Phase != PhaseUnknown {
		t.Errorf("the terminal charged the card, the kiosk shows %s (paid %d, message %q)", v.Phase, v.Payment.Paid, v.Payment.Message)
	}
	if v.Phase == PhaseFailed || v.Phase == PhaseDeclined {
		if cv, _ := e.s.CancelOrder(); cv.Error == "" {
			if o := e.order(v.OrderID); o.Status == journal.OrderCancelled {
				t.Errorf("a charged order was recorded %s by CancelOrder", o.Status)
			}
		}
	}
}

// The journal refuses to record a resend (full disk): the driver stops and
// leaves the attempt open for the next start's recovery. The kiosk must not
// keep showing "paying" (with a Cancel button that can no longer do
// anything) for a payment nobody follows: "outcome unknown: call staff".
func TestStoppedDriverIsShownAsUnknown(t *testing.T) {
	lim := paytest.Limits
	lim.KioskTimeout = 100 * time.Millisecond
	e := newEnv(t, withLimits(lim))
	e.sim.Script(terminalsim.Hold())
	journalSQL(t, e.db, `CREATE TRIGGER test_no_resend BEFORE UPDATE OF send_count ON attempts
		WHEN NEW.send_count > 1 BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END`)
	e.cart("croissant", 1)
	e.must(e.s.Pay(MethodCard))
	e.waitFor("the driver stopped", func(v CheckoutView) bool {
		return v.Payment != nil && strings.Contains(v.Payment.Message, "could not record the send")
	})
	// Nobody drives the attempt any more: the kiosk must leave paying (a
	// kiosk stuck there, Abandon and idle refused, would wait for a restart).
	v := e.waitFor("the stopped attempt shown as unknown", func(v CheckoutView) bool {
		return v.Phase != PhasePaying && v.Phase != PhaseCanceling
	})
	e.s.Cancel()
	// Cancel on a stopped attempt changes nothing (no /abort could answer).
	if v := e.s.Checkout(); v.Phase == PhaseCanceling {
		t.Errorf("Cancel on a stopped attempt: %s forever (no /abort is sent)", v.Phase)
	}
	// Staff release the screen: the order must stay in their list.
	v = e.s.Checkout()
	if v.Phase != PhaseUnknown {
		t.Fatalf("phase %s, want unknown", v.Phase)
	}
	e.must(e.s.Release())
	if o := e.order(v.OrderID); o.Status != journal.OrderNeedsAttention {
		t.Errorf("an order of unknown outcome is %q once its screen was released: staff would never see it", o.Status)
	}
}

// The process stopped while a card payment was out; at the next start the
// terminal says it was declined. The customer is long gone: the order must
// not stay "open" forever.
func TestRecoveredDeclinedOrderIsCancelled(t *testing.T) {
	const orderID = "20261122-008"
	uuid := "01a20000-0000-7000-8000-000000000008"
	e := newEnv(t, withSim(func(sim *terminalsim.Terminal) { sim.Script(terminalsim.Decline()) }),
		withSetup(func(dir string, db *journal.DB) {
			ctx := context.Background()
			if err := db.CreateOrder(ctx, journal.Order{ID: orderID, Currency: "EUR", Total: 540, Data: []byte(`{}`), CreatedAt: time.Now()}); err != nil {
				t.Fatal(err)
			}
			body := `{"amount":540,"transactionType":"debit","idempotentUuid":"` + uuid + `","cartId":"` + orderID + `","enableGiftScreen":false}`
			if _, err := db.PrepareAttempt(ctx, journal.Attempt{UUID: uuid, OrderID: orderID, Kind: journal.KindDebit, Amount: 540,
				Policy: journal.PolicyKiosk, Terminal: "sim", RequestBody: []byte(body)}); err != nil {
				t.Fatal(err)
			}
			if _, err := db.MarkSent(ctx, uuid); err != nil {
				t.Fatal(err)
			}
		}))
	if a, err := e.db.Attempt(e.ctx, uuid); err != nil || a.State != journal.StateDeclined {
		t.Fatalf("recovered attempt %+v %v", a, err)
	}
	if o := e.order(orderID); o.Status != journal.OrderCancelled {
		t.Errorf("an order recovered as declined, nothing charged, is %q: it would stay open forever", o.Status)
	}
}

// The process stopped while the meal-voucher part of a split tender was out.
// At the next start, recovery resends it and the terminal says it was
// charged; the card part never existed. The order must not stay "open" with
// a part charged and nothing on any screen: it needs staff's attention.
func TestRecoveredPartlyPaidOrderNeedsAttention(t *testing.T) {
	const orderID = "20261122-007"
	uuid := "01a20000-0000-7000-8000-000000000007"
	e := newEnv(t, withSetup(func(dir string, db *journal.DB) {
		ctx := context.Background()
		if err := db.CreateOrder(ctx, journal.Order{ID: orderID, Currency: "EUR", Total: 540, Data: []byte(`{}`), CreatedAt: time.Now()}); err != nil {
			t.Fatal(err)
		}
		body := `{"amount":260,"transactionType":"debit","idempotentUuid":"` + uuid + `","cartId":"` + orderID +
			`","enableGiftScreen":false,"acceptedPayment":{"acceptedMediumType":"` + localapi.MediumTypeLunchVouchersOnly + `"}}`
		if _, err := db.PrepareAttempt(ctx, journal.Attempt{UUID: uuid, OrderID: orderID, Kind: journal.KindDebit, Amount: 260,
			Policy: journal.PolicyKiosk, Terminal: "sim", RequestBody: []byte(body)}); err != nil {
			t.Fatal(err)
		}
		if _, err := db.MarkSent(ctx, uuid); err != nil {
			t.Fatal(err)
		}
	}))
	a, err := e.db.Attempt(e.ctx, uuid)
	if err != nil || a.State != journal.StateApproved {
		t.Fatalf("recovered attempt %+v %v", a, err)
	}
	if o := e.order(orderID); o.Status != journal.OrderNeedsAttention {
		t.Errorf("order with 260 of 540 charged and no attempt left is %q after recovery: staff are never told", o.Status)
	}
}

// A terminal that approves something else than what was asked (1 cent for
// the whole cart, another currency, a refund for a debit) pays nothing:
// the customer is sent to staff, never shown "approved", no order ticket
// is printed, and the journal keeps the order for staff.
func TestApprovalThatDisagreesSendsTheCustomerToStaff(t *testing.T) {
	for _, m := range []terminalsim.Misreport{{Amount: 1}, {Currency: "CHF"}, {Type: "refund"}} {
		t.Run(fmt.Sprintf("%+v", m), func(t *testing.T) {
			e := newEnv(t)
			e.sim.Script(terminalsim.Approve().After(0).Misreporting(m))
			e.cart("croissant", 1)
			e.must(e.s.Pay(MethodCard))
			v := e.waitFor("outcome", func(v CheckoutView) bool { return v.Phase != PhasePaying && v.Phase != PhaseCanceling })
			if v.Phase != PhaseUnknown || v.Payment.Paid != 0 || v.Payment.Due != 130 {
				t.Fatalf("phase %s, payment %+v: want the customer sent to staff, nothing paid", v.Phase, v.Payment)
			}
			if tickets := e.printedFrom("print"); len(tickets) != 0 {
				t.Fatalf("an order ticket was printed for an order not paid: %+v", tickets)
			}
			if o := e.order(v.OrderID); o.Status != journal.OrderNeedsAttention {
				t.Fatalf("order %s, want needs_attention", o.Status)
			}
		})
	}
}
