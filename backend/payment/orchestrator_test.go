package payment

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/fault"
	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/localapi"
	"github.com/comptoir-pos/comptoir/backend/terminalsim"
)

func TestKioskPaymentApproved(t *testing.T) { eachChannel(t, testLimits, testKioskPaymentApproved) }

func testKioskPaymentApproved(t *testing.T, e *env) {
	e.recover()
	h := e.kiosk("A001", 1250)
	v := e.wait(h)
	if v.State != journal.StateApproved || !v.OrderPaid || v.TransactionID == "" || v.Charge == nil || v.Charge.ClientTicket == "" {
		t.Fatalf("view = %+v", v)
	}
	att := e.attempt(h.UUID())
	body := bodyOf(t, att)
	if body["enableGiftScreen"] != false || body["cartId"] != "A001" || body["idempotentUuid"] != h.UUID() || body["transactionType"] != "debit" {
		t.Errorf("kiosk body = %s", att.RequestBody)
	}
	if body["vendor"].(map[string]any)["softwareName"] != "Comptoir" {
		t.Errorf("no vendor in %s", att.RequestBody)
	}
	if att.TransactionID != v.TransactionID || att.SendCount != 1 || len(att.Response) == 0 {
		t.Errorf("journal attempt = %+v", att)
	}
	if e.orderStatus("A001") != journal.OrderPaid {
		t.Errorf("order status = %s", e.orderStatus("A001"))
	}
	if e.charges(h.UUID()) != 1 {
		t.Errorf("%d charges", e.charges(h.UUID()))
	}
	// The UI saw every step, ending with the outcome.
	views := e.events.all()
	if len(views) < 2 || views[len(views)-1].State != journal.StateApproved {
		t.Errorf("emitted %+v", views)
	}
}

func TestCounterLeavesTheTipScreenToTheTerminal(t *testing.T) {
	eachChannel(t, testLimits, testCounterLeavesTheTipScreenToTheTerminal)
}

func testCounterLeavesTheTipScreenToTheTerminal(t *testing.T, e *env) {
	e.recover()
	e.sim.SetTipsEnabled(true)
	e.sim.Script(terminalsim.Approve().WithTip(200))
	e.order("C1", 1000)
	h := e.start(Request{OrderID: "C1", Amount: 1000, Policy: journal.PolicyCounter})
	v := e.wait(h)
	if _, present := bodyOf(t, e.attempt(h.UUID()))["enableGiftScreen"]; present {
		t.Error("counter mode sent enableGiftScreen")
	}
	if v.State != journal.StateApproved || v.GiftAmount != 200 {
		t.Fatalf("view = %+v", v)
	}
}

// Invariant 1: the attempt row, with its uuid and exact body, is committed
// before the request leaves.
func TestAttemptIsCommittedBeforeTheRequestLeaves(t *testing.T) {
	e := newEnv(t, testLimits)
	var seen atomic.Bool
	e.restartOn(paying(func(ctx context.Context, body []byte, req localapi.PaymentRequest) (*localapi.Transaction, error) {
		// Read back through a second handle, as another process would.
		att, err := e.db.Attempt(ctx, req.IdempotentUUID)
		if err != nil {
			t.Errorf("attempt not in the journal when the request left: %v", err)
		} else if string(att.RequestBody) != string(body) || att.State != journal.StateSent || att.SendCount != 1 {
			t.Errorf("journal has %s (%s, %d sends), the request is %s", att.RequestBody, att.State, att.SendCount, body)
		}
		seen.Store(true)
		return nil, &localapi.TransportError{Endpoint: "/payment", Err: errors.New("connect: connection refused")}
	}), testLimits)
	h := e.kiosk("B1", 500)
	v := e.wait(h)
	if !seen.Load() {
		t.Fatal("the request never left")
	}
	// A send that certainly never left the machine fails the attempt, and
	// the row says so.
	if v.State != journal.StateFailed || !strings.Contains(v.Message, "unreachable") {
		t.Errorf("view = %+v", v)
	}
	if a := e.attempt(h.UUID()); a.State != journal.StateFailed || a.Error == "" {
		t.Errorf("journal = %+v", a)
	}
}

// Invariant 3: a client timeout resends the same body with the same uuid,
// which attaches to the payment in progress: one charge.
func TestClientTimeoutResendsTheSameRequest(t *testing.T) {
	lim := testLimits
	lim.KioskTimeout = 40 * time.Millisecond
	e := readyEnv(t, lim)
	h := e.kiosk("T1", 800, terminalsim.Hold())
	// Let several client timeouts pass, then the customer pays.
	deadline := time.Now().Add(5 * time.Second)
	for e.attempt(h.UUID()).SendCount < 3 {
		if time.Now().After(deadline) {
			t.Fatal("no resend after client timeouts")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := e.sim.PresentCard(); err != nil {
		t.Fatal(err)
	}
	v := e.wait(h)
	if v.State != journal.StateApproved {
		t.Fatalf("view = %+v", v)
	}
	if n := e.charges(h.UUID()); n != 1 {
		t.Fatalf("%d charges", n)
	}
	var resent int
	for _, ev := range e.eventsOf(h.UUID()) {
		if ev.Kind == journal.EventResent {
			resent++
		}
	}
	if resent < 2 {
		t.Errorf("%d resent events", resent)
	}
}

// Lost answers (connection closed, HTTP 500 after the charge) are asked
// again with the same uuid: the known transaction comes back, one charge.
func TestLostAnswerIsAskedAgain(t *testing.T) {
	for _, b := range []terminalsim.Behaviour{terminalsim.AnswerLostAfterCharge(), terminalsim.HTTP500Charged()} {
		t.Run(string(b.Answer), func(t *testing.T) {
			e := readyEnv(t, testLimits)
			h := e.kiosk("L1", 990, b)
			v := e.wait(h)
			if v.State != journal.StateApproved || e.charges(h.UUID()) != 1 || e.attempt(h.UUID()).SendCount != 2 {
				t.Fatalf("view = %+v, charges %d", v, e.charges(h.UUID()))
			}
		})
	}
}

// A crash mid-payment: the attempt stays open; recovery resends its exact
// request, attaches to the payment still in progress, and records the charge.
func TestRecoveryAttachesToThePaymentInProgress(t *testing.T) {
	e := readyEnv(t, testLimits)
	h := e.kiosk("R1", 1500, terminalsim.Hold())
	e.atPhase(h, terminalsim.PhaseBanking)
	body := e.attempt(h.UUID()).RequestBody
	e.close() // the process dies; the terminal goes on

	e.open(e.client, testLimits)
	if _, err := e.o.Start(e.ctx, Request{OrderID: "X", Amount: 1, Policy: journal.PolicyKiosk}); !errors.Is(err, ErrNotReady) {
		t.Fatalf("a new payment before recovery: %v", err)
	}
	e.payOnceAttached()
	views := e.recover()
	if len(views) != 1 || views[0].State != journal.StateApproved || views[0].UUID != h.UUID() {
		t.Fatalf("recovered %+v", views)
	}
	a := e.attempt(h.UUID())
	if string(a.RequestBody) != string(body) || a.SendCount != 2 || e.charges(h.UUID()) != 1 {
		t.Errorf("attempt %+v, charges %d", a, e.charges(h.UUID()))
	}
	if e.orderStatus("R1") != journal.OrderPaid {
		t.Errorf("order %s", e.orderStatus("R1"))
	}
}

func TestRecoveryOfAttemptsThatMustNotBeSent(t *testing.T) {
	e := readyEnv(t, testLimits)
	e.order("P1", 100)
	e.order("P2", 200)
	clock := time.Now()
	prepare := func(order string) journal.Attempt {
		body, _ := e.o.ch.Body(NewAttempt{UUID: "0193b1c2-0000-7000-8000-00000000000" + order[1:], Request: Request{OrderID: order, Amount: 100}, Policy: Policy{Kind: journal.KindDebit}})
		a, err := e.db.PrepareAttempt(e.ctx, journal.Attempt{UUID: "0193b1c2-0000-7000-8000-00000000000" + order[1:], OrderID: order,
			Kind: journal.KindDebit, Amount: 100, Policy: journal.PolicyKiosk, Terminal: "sim-" + order, RequestBody: body})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	never := prepare("P1") // crashed between the commit and the send
	old := prepare("P2")
	if _, err := e.db.MarkSent(e.ctx, old.UUID); err != nil {
		t.Fatal(err)
	}
	e.close()
	// Two days later: the idempotency window has passed for the sent one.
	e.open(e.client, testLimits)
	e.o.cfg.Now = func() time.Time { return clock.Add(48 * time.Hour) }
	views := e.recover()
	got := map[string]journal.State{}
	for _, v := range views {
		got[v.UUID] = v.State
	}
	if got[never.UUID] != journal.StateFailed || got[old.UUID] != journal.StateUnknown {
		t.Fatalf("recovered %v", got)
	}
	if e.charges(never.UUID)+e.charges(old.UUID) != 0 || len(e.sim.Ledger()) != 0 {
		t.Error("recovery sent something it must not")
	}
	if e.orderStatus("P2") != journal.OrderNeedsAttention {
		t.Errorf("order P2 %s", e.orderStatus("P2"))
	}
}

func TestRecoveryWithTheTerminalUnreachable(t *testing.T) {
	e := readyEnv(t, testLimits)
	h := e.kiosk("U1", 300, terminalsim.Hold())
	e.atPhase(h, terminalsim.PhaseBanking)
	e.close()
	dead, _ := localapi.NewClient("127.0.0.1:1")
	e.open(dead, testLimits)
	if _, err := e.o.Recover(e.ctx); !errors.Is(err, ErrTerminalUnreachable) {
		t.Fatalf("recover: %v", err)
	}
	if a := e.attempt(h.UUID()); a.State != journal.StateSent {
		t.Fatalf("attempt %s after an unreachable recovery", a.State)
	}
	if _, err := e.o.Start(e.ctx, Request{OrderID: "U1", Amount: 300, Policy: journal.PolicyKiosk}); !errors.Is(err, ErrNotReady) {
		t.Errorf("start while recovery is incomplete: %v", err)
	}
	// The terminal is back: recovery completes.
	e.close()
	e.open(e.client, testLimits)
	e.payOnceAttached()
	if views := e.recover(); len(views) != 1 || views[0].State != journal.StateApproved {
		t.Fatalf("recovered %+v", views)
	}
}

// Invariant 5: a ko is final for its uuid; a retry is a new attempt.
func TestDeclineThenRetryWithANewUUID(t *testing.T) {
	eachChannel(t, testLimits, testDeclineThenRetryWithANewUUID)
}

func testDeclineThenRetryWithANewUUID(t *testing.T, e *env) {
	e.recover()
	first := e.wait(e.kiosk("D1", 700, terminalsim.Decline()))
	if first.State != journal.StateDeclined || first.OrderPaid {
		t.Fatalf("first = %+v", first)
	}
	if e.orderStatus("D1") != journal.OrderOpen {
		t.Errorf("order %s after a decline", e.orderStatus("D1"))
	}
	second := e.wait(e.start(Request{OrderID: "D1", Amount: 700, Policy: journal.PolicyKiosk}))
	if second.State != journal.StateApproved || second.UUID == first.UUID || !second.OrderPaid {
		t.Fatalf("second = %+v", second)
	}
	if len(e.sim.Ledger()) != 1 {
		t.Errorf("ledger %+v", e.sim.Ledger())
	}
}

// Invariant 2: one unresolved attempt per order and per terminal.
func TestOneUnresolvedAttemptPerOrderAndTerminal(t *testing.T) {
	eachChannel(t, testLimits, testOneUnresolvedAttemptPerOrderAndTerminal)
}

func testOneUnresolvedAttemptPerOrderAndTerminal(t *testing.T, e *env) {
	e.recover()
	e.order("O2", 500)
	h := e.kiosk("O1", 500, terminalsim.Hold())
	for _, order := range []string{"O1", "O2"} {
		if _, err := e.o.Start(e.ctx, Request{OrderID: order, Amount: 500, Policy: journal.PolicyKiosk}); fault.CodeOf(err) != fault.ECONFLICT {
			t.Errorf("second attempt on %s: %v", order, err)
		}
	}
	e.atPhase(h, terminalsim.PhaseBanking)
	if err := e.sim.PresentCard(); err != nil {
		t.Fatal(err)
	}
	if v := e.wait(h); v.State != journal.StateApproved {
		t.Fatalf("view %+v", v)
	}
	if _, err := e.o.Start(e.ctx, Request{OrderID: "O1", Amount: 500, Policy: journal.PolicyKiosk}); err == nil {
		t.Error("a paid order accepted another debit")
	}
	if v := e.wait(e.start(Request{OrderID: "O2", Amount: 500, Policy: journal.PolicyKiosk})); v.State != journal.StateApproved {
		t.Errorf("O2 = %+v", v)
	}
}

// Invariant 6: cancel before the handover aborts; nothing is charged.
func TestCancelBeforeHandover(t *testing.T) { eachChannel(t, testLimits, testCancelBeforeHandover) }

func testCancelBeforeHandover(t *testing.T, e *env) {
	e.recover()
	h := e.kiosk("K1", 650, terminalsim.HoldBeforeHandover())
	e.atPhase(h, terminalsim.PhasePreparing)
	if n := e.o.Driving(); n != 1 {
		t.Fatalf("driving %d attempts, want 1 while the terminal holds it", n)
	}
	h.Cancel()
	v := e.wait(h)
	if v.State != journal.StateCancelled || v.Abort != e.abortBeforeHandover() || v.ChargedDespiteCancel {
		t.Fatalf("view = %+v", v)
	}
	for deadline := time.Now().Add(5 * time.Second); e.o.Driving() != 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("still driving %d attempts after the outcome", e.o.Driving())
		}
	}
	if e.charges(h.UUID()) != 0 {
		t.Error("charged after a successful abort")
	}
	var sawCancelling bool
	for _, ev := range e.events.all() {
		sawCancelling = sawCancelling || ev.Abort == AbortPending
	}
	if !sawCancelling {
		t.Error("the UI was never told the cancel was pending")
	}
	var abortRequested bool
	for _, ev := range e.eventsOf(h.UUID()) {
		abortRequested = abortRequested || ev.To == journal.StateAbortRequested
	}
	if !abortRequested {
		t.Error("no abort_requested transition in the audit trail")
	}
}

// Invariant 6: after the handover the abort is refused once the payment
// completes; the /payment answer decides: the customer was charged, the order
// is paid, and the view says so.
func TestCancelAfterHandoverWhenTheCustomerPays(t *testing.T) {
	eachChannel(t, testLimits, testCancelAfterHandoverWhenTheCustomerPays)
}

func testCancelAfterHandoverWhenTheCustomerPays(t *testing.T, e *env) {
	v := cancelAfterHandover(t, e, "K2", e.sim.PresentCard)
	if v.State != journal.StateApproved || !v.ChargedDespiteCancel || !v.OrderPaid || e.charges(v.UUID) != 1 {
		t.Fatalf("view = %+v", v)
	}
	if e.orderStatus("K2") != journal.OrderPaid {
		t.Errorf("order %s", e.orderStatus("K2"))
	}
}

func TestCancelAfterHandoverWhenTheCardIsRefused(t *testing.T) {
	eachChannel(t, testLimits, testCancelAfterHandoverWhenTheCardIsRefused)
}

func testCancelAfterHandoverWhenTheCardIsRefused(t *testing.T, e *env) {
	v := cancelAfterHandover(t, e, "K3", e.sim.Decline)
	if v.State != journal.StateCancelled || v.OrderPaid || e.charges(v.UUID) != 0 {
		t.Fatalf("view = %+v", v)
	}
}

// cancelAfterHandover has the customer cancel a kiosk debit of order once
// the card is asked for, checks that while the terminal holds the abort the
// attempt is not final, then ends the payment with card (the card presented
// or refused) and returns the attempt's last view: the payment's own end
// decides.
func cancelAfterHandover(t *testing.T, e *env, order string, card func() error) View {
	t.Helper()
	e.recover()
	h := e.kiosk(order, 900, terminalsim.Hold())
	e.atPhase(h, terminalsim.PhaseBanking)
	h.Cancel()
	e.abortHeld()
	if v := h.View(); v.Final() || v.Abort != AbortPending {
		t.Fatalf("before the payment ends: %+v", v)
	}
	if err := card(); err != nil {
		t.Fatal(err)
	}
	return e.wait(h)
}

// A busy terminal is reported, not retried blindly.
func TestBusyTerminalIsReported(t *testing.T) {
	e := readyEnv(t, testLimits)
	hold := terminalsim.Hold()
	if _, err := e.sim.StartOnKeypad(400, &hold); err != nil {
		t.Fatal(err)
	}
	h := e.kiosk("Y1", 500)
	v := e.wait(h)
	if v.State != journal.StateFailed || !strings.Contains(v.Message, "busy") {
		t.Fatalf("view = %+v", v)
	}
	if a := e.attempt(h.UUID()); a.SendCount != 1 {
		t.Errorf("%d sends to a busy terminal", a.SendCount)
	}
}

// Invariant 4: a response for another uuid is never applied.
func TestAnswerForAnotherUUIDIsIgnored(t *testing.T) {
	e := newEnv(t, testLimits)
	var calls atomic.Int32
	e.restartOn(paying(func(_ context.Context, _ []byte, req localapi.PaymentRequest) (*localapi.Transaction, error) {
		if calls.Add(1) == 1 {
			return &localapi.Transaction{Status: "ok", TransactionID: "FOREIGN", Amount: req.Amount,
				IdempotentUUID: "0193b1c2-ffff-7000-8000-000000000000", Raw: []byte(`{"status":"ok"}`)}, nil
		}
		return &localapi.Transaction{Status: "ko", TransactionID: "MINE", Amount: req.Amount,
			IdempotentUUID: req.IdempotentUUID, Raw: []byte(`{"status":"ko"}`)}, nil
	}), testLimits)
	h := e.kiosk("W1", 500)
	v := e.wait(h)
	if v.State != journal.StateDeclined || v.TransactionID != "MINE" {
		t.Fatalf("view = %+v", v)
	}
	var ignored bool
	for _, ev := range e.eventsOf(h.UUID()) {
		ignored = ignored || strings.Contains(ev.Detail, "ignored")
	}
	if !ignored {
		t.Error("the foreign answer is not in the audit trail")
	}
}

// Invariant 3: after the request-open limit with no answer, unknown.
func TestUnknownAfterTheRequestOpenLimit(t *testing.T) {
	lim := testLimits
	lim.KioskTimeout = 30 * time.Millisecond
	lim.RequestOpen = 300 * time.Millisecond
	e := readyEnv(t, lim)
	h := e.kiosk("N1", 1000, terminalsim.Hold())
	v := e.wait(h)
	if v.State != journal.StateUnknown || v.SendCount < 2 || !strings.Contains(v.Message, "staff") {
		t.Fatalf("view = %+v", v)
	}
	if e.orderStatus("N1") != journal.OrderNeedsAttention {
		t.Errorf("order %s", e.orderStatus("N1"))
	}
}

// Split tender: the terminal never splits, so a meal-voucher card pays the
// eligible part and a bank card the rest, each its own attempt.
func TestSplitTender(t *testing.T) { eachChannel(t, testLimits, testSplitTender) }

func testSplitTender(t *testing.T, e *env) {
	e.recover()
	e.order("S1", 3000)
	voucher := e.wait(e.start(Request{OrderID: "S1", Amount: 1900, Policy: journal.PolicyKiosk,
		AcceptedMedium: localapi.MediumTypeLunchVouchersOnly, UseExternalIDs: true, ExternalOrderNumber: "S1"}))
	if voucher.State != journal.StateApproved || voucher.OrderPaid {
		t.Fatalf("voucher part = %+v", voucher)
	}
	if _, err := e.o.Start(e.ctx, Request{OrderID: "S1", Amount: 1200, Policy: journal.PolicyKiosk}); err == nil {
		t.Error("a debit beyond what the order owes was accepted")
	}
	card := e.wait(e.start(Request{OrderID: "S1", Amount: 1100, Policy: journal.PolicyKiosk,
		AcceptedMedium: localapi.MediumTypeBankCardsOnly, UseExternalIDs: true, ExternalOrderNumber: "S1"}))
	if card.State != journal.StateApproved || !card.OrderPaid {
		t.Fatalf("card part = %+v", card)
	}
	vb, cb := bodyOf(t, e.attempt(voucher.UUID)), bodyOf(t, e.attempt(card.UUID))
	if vb["acceptedPayment"].(map[string]any)["acceptedMediumType"] != "lunch_vouchers_only" {
		t.Errorf("voucher body %v", vb)
	}
	if vb["checkoutExternalId"] == cb["checkoutExternalId"] || vb["checkoutExternalId"] == nil {
		t.Errorf("checkoutExternalId not distinct: %v / %v", vb["checkoutExternalId"], cb["checkoutExternalId"])
	}
	sum, err := e.o.Summary(e.ctx, "S1")
	if err != nil || sum.Paid != 3000 {
		t.Errorf("summary %+v %v", sum, err)
	}
}

func TestRefund(t *testing.T) { eachChannel(t, testLimits, testRefund) }

func testRefund(t *testing.T, e *env) {
	e.recover()
	if v := e.wait(e.kiosk("F1", 1200)); v.State != journal.StateApproved {
		t.Fatalf("debit %+v", v)
	}
	if _, err := e.o.Start(e.ctx, Request{OrderID: "F1", Amount: 1300, Policy: journal.PolicyRefund}); err == nil {
		t.Error("a refund beyond the charge was accepted")
	}
	h := e.start(Request{OrderID: "F1", Amount: 500, Policy: journal.PolicyRefund})
	v := e.wait(h)
	body := bodyOf(t, e.attempt(h.UUID()))
	if v.State != journal.StateApproved || body["transactionType"] != "refund" || body["enableGiftScreen"] != nil {
		t.Fatalf("refund %+v, body %v", v, body)
	}
}

func TestPayCancelledByContextRunsAbortThenWait(t *testing.T) {
	eachChannel(t, testLimits, testPayCancelledByContextRunsAbortThenWait)
}

func testPayCancelledByContextRunsAbortThenWait(t *testing.T, e *env) {
	e.recover()
	e.sim.Script(terminalsim.HoldBeforeHandover())
	e.order("Z1", 100)
	ctx, cancel := context.WithCancel(e.ctx)
	go func() {
		e.sim.WaitFor(e.ctx, func(s terminalsim.State) bool { return s.Current != nil })
		cancel() // Ctrl-C at the command line
	}()
	v, err := e.o.Pay(ctx, Request{OrderID: "Z1", Amount: 100, Policy: journal.PolicyKiosk})
	if err != nil || v.State != journal.StateCancelled || v.Abort != e.abortBeforeHandover() {
		t.Fatalf("view %+v, err %v", v, err)
	}
}

func TestLimitsValidate(t *testing.T) {
	if err := DefaultLimits.Validate(); err != nil {
		t.Fatal(err)
	}
	bad := DefaultLimits
	bad.RequestOpen = 25 * time.Hour
	if bad.Validate() == nil {
		t.Error("a request-open limit beyond the idempotency window was accepted")
	}
	bad = DefaultLimits
	bad.KioskTimeout = 0
	if bad.Validate() == nil {
		t.Error("a zero client timeout was accepted")
	}
}

// An HTTP 500 on every send may hide a charge (the simulator's
// http500_charged does): never a failure, unknown once the limit passes.
func TestPersistentHTTP500EndsUnknown(t *testing.T) {
	lim := testLimits
	lim.RequestOpen = 200 * time.Millisecond
	e := readyEnv(t, lim)
	e.sim.SetDefault(terminalsim.HTTP500NotCharged())
	h := e.kiosk("H1", 1000)
	v := e.wait(h)
	if v.State != journal.StateUnknown || v.SendCount < 2 || len(e.sim.Ledger()) != 0 {
		t.Fatalf("view = %+v", v)
	}
}

// A dial timeout is a timeout, but nothing left the machine: failed at once
// rather than resent for the whole request-open limit.
func TestDialTimeoutOnTheFirstSendFails(t *testing.T) {
	e := newEnv(t, testLimits)
	var calls atomic.Int32
	e.restartOn(&fakeTerminal{payment: func(context.Context, []byte) (*localapi.Transaction, error) {
		calls.Add(1)
		return nil, &localapi.TransportError{Endpoint: "/payment", Timeout: true, Err: errors.New("dial tcp: i/o timeout")}
	}}, testLimits)
	v := e.wait(e.kiosk("DT1", 100))
	if v.State != journal.StateFailed || calls.Load() != 1 {
		t.Fatalf("view %+v after %d calls", v, calls.Load())
	}
}

// After a timed-out send, a refusal of a resend proves nothing about the
// first send: keep asking; the same uuid eventually tells.
func TestRefusalOfAResendIsNotAnOutcome(t *testing.T) {
	v, sends := afterATimeout(t, func(localapi.PaymentRequest) error {
		return &localapi.APIError{Endpoint: "/payment", Code: localapi.CodeBusy, Arg: "someone-else", Message: localapi.BusyMessage("someone-else")}
	})
	if v.State != journal.StateApproved || sends != 3 {
		t.Fatalf("view %+v after %d sends", v, sends)
	}
}

func TestStartAfterClose(t *testing.T) {
	e := readyEnv(t, testLimits)
	e.order("SC1", 100)
	o := e.o
	o.Close()
	if _, err := o.Start(e.ctx, Request{OrderID: "SC1", Amount: 100, Policy: journal.PolicyKiosk}); !errors.Is(err, ErrClosed) {
		t.Errorf("start after close: %v", err)
	}
}
