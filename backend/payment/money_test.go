package payment

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/localapi"
	"github.com/comptoir-pos/comptoir/backend/terminalsim"
)

// pay runs one approved debit of amount for a new order of that total.
func (e *env) paid(order string, amount int64, b terminalsim.Behaviour, policy journal.Policy) View {
	e.t.Helper()
	e.order(order, amount)
	e.sim.Script(b)
	v := e.wait(e.start(Request{OrderID: order, Amount: amount, Policy: policy}))
	if v.State != journal.StateApproved {
		e.t.Fatalf("debit of %s: %+v", order, v)
	}
	return v
}

// reverse starts a reversal of the debit and waits for its outcome.
func (e *env) reverse(debit string) View {
	e.t.Helper()
	rv, err := e.o.Reverse(e.ctx, debit)
	if err != nil {
		e.t.Fatal(err)
	}
	return rv
}

// readyWithTips lets the terminal offer a tip, then recovers.
func (e *env) readyWithTips() {
	e.t.Helper()
	e.sim.SetTipsEnabled(true)
	e.recover()
}

// given is what the simulator's ledger gave back for a cart.
func (e *env) given(order string) (taken, back int64) {
	for _, l := range e.sim.Ledger() {
		if l.CartID != order {
			continue
		}
		if l.Net > 0 {
			taken += l.Net
		} else {
			back -= l.Net
		}
	}
	return taken, back
}

// A tip chosen on the terminal is what the journal records as charged,
// beside the gift the kiosk asked for, and everything that counts money
// counts it.
func TestTipChosenOnTheTerminalIsJournaled(t *testing.T) {
	eachChannel(t, testLimits, testTipChosenOnTheTerminalIsJournaled)
}

func testTipChosenOnTheTerminalIsJournaled(t *testing.T, e *env) {
	e.readyWithTips()
	v := e.paid("T1", 2000, terminalsim.Approve().WithTip(150), journal.PolicyCounter)
	if v.GiftAmount != 150 || v.ChargedAmount != 2000 {
		t.Fatalf("view %+v", v)
	}
	a := e.attempt(v.UUID)
	if a.GiftAmount != 0 || !a.Charged || a.ChargedGift != 150 || a.ChargedAmount != 2000 {
		t.Fatalf("journal: asked gift %d, charged %v %d+%d", a.GiftAmount, a.Charged, a.ChargedAmount, a.ChargedGift)
	}
	sum, err := e.o.Summary(e.ctx, "T1")
	if err != nil {
		t.Fatal(err)
	}
	if sum.Gifts != 150 || sum.Taken() != 2150 || sum.Givable() != 2150 {
		t.Fatalf("summary %+v", sum)
	}
	// The whole of it, tip included, can be given back; not a cent more.
	if _, err := e.o.Start(e.ctx, Request{OrderID: "T1", Amount: 2151, Policy: journal.PolicyRefund}); err == nil {
		t.Fatal("a refund above what was charged was started")
	}
	r := e.wait(e.start(Request{OrderID: "T1", Amount: 2150, Policy: journal.PolicyRefund}))
	if r.State != journal.StateApproved {
		t.Fatalf("refund %+v", r)
	}
	if taken, back := e.given("T1"); taken != 2150 || back != 2150 {
		t.Fatalf("ledger: taken %d, given back %d", taken, back)
	}
}

// An approval that disagrees with the request (an amount under or over
// it, another currency, a refund answered for a debit) is recorded as
// charged, flagged, and pays nothing: the order needs staff.
func TestApprovalThatDisagreesIsFlaggedAndPaysNothing(t *testing.T) {
	tests := []struct {
		name string
		odd  func(*localapi.Transaction)
		want string
	}{
		{"under", func(tx *localapi.Transaction) { tx.Amount -= 100 }, "900 charged where 1000 was asked"},
		{"over", func(tx *localapi.Transaction) { tx.Amount += 1 }, "1001 charged where 1000 was asked"},
		{"currency", func(tx *localapi.Transaction) { tx.CurrencyCode = "CHF" }, `currency "CHF"`},
		{"type", func(tx *localapi.Transaction) { tx.TransactionType = "refund" }, "a refund where a debit was asked"},
		{"a tip the kiosk's terminal could not ask", func(tx *localapi.Transaction) { tx.GiftAmount = 150 }, "a tip of 150 where 0 was asked"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, testLimits)
			fake := &fakeTerminal{payment: func(ctx context.Context, body []byte) (*localapi.Transaction, error) {
				var req localapi.PaymentRequest
				json.Unmarshal(body, &req)
				tx := &localapi.Transaction{Status: localapi.StatusOK, TransactionID: "tx-odd", Amount: req.Amount,
					CurrencyCode: "EUR", TransactionType: "debit", IdempotentUUID: req.IdempotentUUID}
				tt.odd(tx)
				tx.Raw, _ = json.Marshal(tx)
				return tx, nil
			}}
			e.close()
			e.open(fake, testLimits)
			e.recover()
			v := e.wait(e.kiosk("D1", 1000))
			if v.State != journal.StateApproved || !strings.Contains(v.Flag, tt.want) || v.OrderPaid ||
				!strings.Contains(v.Message, "call staff") {
				t.Fatalf("view %+v", v)
			}
			if a := e.attempt(v.UUID); a.Flag != v.Flag || a.Amount != 1000 {
				t.Fatalf("journal %+v", a)
			}
			if st := e.orderStatus("D1"); st != journal.OrderNeedsAttention {
				t.Fatalf("order %s, want needs_attention", st)
			}
			if sum, err := e.o.Summary(e.ctx, "D1"); err != nil || sum.Paid != 0 || sum.Due() != 1000 {
				t.Fatalf("summary %+v, %v", sum, err)
			}
		})
	}
}

// A reversal is journaled before it leaves and gives back the whole
// debit, tip included; after it, nothing more can be given back, and a
// refund blocks a reversal of the same order.
func TestReversalThenRefundAndRefundThenReversal(t *testing.T) {
	eachChannel(t, testLimits, testReversalThenRefundAndRefundThenReversal)
}

func testReversalThenRefundAndRefundThenReversal(t *testing.T, e *env) {
	e.readyWithTips()
	d := e.paid("V1", 2000, terminalsim.Approve().WithTip(200), journal.PolicyCounter)
	rv := e.reverse(d.UUID)
	if rv.State != journal.StateApproved || rv.Kind != journal.KindReversal || rv.Amount != 2200 || rv.TransactionID == "" {
		t.Fatalf("reversal %+v", rv)
	}
	a := e.attempt(rv.UUID)
	if string(a.RequestBody) != `{"amount":2200,"initialTransactionId":"`+d.TransactionID+`"}` || a.InitialTransactionID != d.TransactionID {
		t.Fatalf("journaled reversal %+v", a)
	}
	if _, err := e.o.Start(e.ctx, Request{OrderID: "V1", Amount: 1, Policy: journal.PolicyRefund}); err == nil {
		t.Fatal("a refund was started after a reversal of everything")
	}
	if _, err := e.o.Reverse(e.ctx, d.UUID); err == nil {
		t.Fatal("a second reversal was started")
	}

	d2 := e.paid("V2", 1000, terminalsim.Approve(), journal.PolicyKiosk)
	if r := e.wait(e.start(Request{OrderID: "V2", Amount: 300, Policy: journal.PolicyRefund})); r.State != journal.StateApproved {
		t.Fatalf("refund %+v", r)
	}
	if _, err := e.o.Reverse(e.ctx, d2.UUID); err == nil || !strings.Contains(err.Error(), "given back 700 at most") {
		t.Fatalf("a reversal after a refund: %v", err)
	}
	for _, o := range []string{"V1", "V2"} {
		if taken, back := e.given(o); back > taken {
			t.Fatalf("order %s: taken %d, given back %d", o, taken, back)
		}
	}
}

// A reversal whose answer is lost (or is an HTTP 500) is settled from the
// terminal's history, never guessed and never made twice; one that never
// reached the terminal is sent again, since the history shows none.
func TestReversalAnswerLost(t *testing.T) {
	for _, how := range []terminalsim.Answer{terminalsim.AnswerLost, terminalsim.AnswerHTTP500, terminalsim.AnswerHTTP500NotStarted} {
		t.Run(string(how), func(t *testing.T) {
			e := readyEnv(t, testLimits)
			d := e.paid("L1", 1500, terminalsim.Approve(), journal.PolicyKiosk)
			if err := e.sim.FailNextReversalAnswers(how); err != nil {
				t.Fatal(err)
			}
			rv := e.reverse(d.UUID)
			if rv.State != journal.StateApproved || rv.TransactionID == "" {
				t.Fatalf("reversal %+v", rv)
			}
			var reversals []terminalsim.LedgerEntry
			for _, l := range e.sim.Ledger() {
				if l.Kind == "reversal" {
					reversals = append(reversals, l)
				}
			}
			if len(reversals) != 1 || reversals[0].TransactionID != rv.TransactionID {
				t.Fatalf("ledger reversals %+v, journal %s", reversals, rv.TransactionID)
			}
			a := e.attempt(rv.UUID)
			want := map[terminalsim.Answer]int{terminalsim.AnswerLost: 1, terminalsim.AnswerHTTP500: 1, terminalsim.AnswerHTTP500NotStarted: 2}[how]
			if a.SendCount != want {
				t.Fatalf("sent %d times, want %d", a.SendCount, want)
			}
		})
	}
}

// The terminal refuses a reversal after 16 hours: nothing was given back,
// and a refund remains possible.
func TestReversalRefused(t *testing.T) { eachChannel(t, testLimits, testReversalRefused) }

func testReversalRefused(t *testing.T, e *env) {
	e.recover()
	d := e.paid("F1", 1500, terminalsim.Approve(), journal.PolicyKiosk)
	e.sim.Advance(17 * time.Hour)
	rv := e.reverse(d.UUID)
	if rv.State != journal.StateFailed || !strings.Contains(rv.Message, "time window expired") {
		t.Fatalf("reversal %+v", rv)
	}
	if sum, _ := e.o.Summary(e.ctx, "F1"); sum.Givable() != 1500 {
		t.Fatalf("summary %+v", sum)
	}
}

// A transaction already reversed on the terminal itself: the reversal
// attempt records that the money was given back, once.
func TestReversalOfATransactionAlreadyReversed(t *testing.T) {
	e := readyEnv(t, testLimits)
	d := e.paid("A1", 1500, terminalsim.Approve(), journal.PolicyKiosk)
	if _, err := e.client.Reversal(e.ctx, &localapi.ReversalRequest{InitialTransactionID: d.TransactionID, Amount: 1500}); err != nil {
		t.Fatal(err)
	}
	rv := e.reverse(d.UUID)
	if rv.State != journal.StateApproved || rv.TransactionID == "" {
		t.Fatalf("reversal %+v", rv)
	}
	if sum, _ := e.o.Summary(e.ctx, "A1"); sum.Givable() != 0 || sum.Reversed != 1500 {
		t.Fatalf("summary %+v", sum)
	}
}

// A reversal left sent by a crash is recovered from the history.
func TestReversalRecovery(t *testing.T) {
	e := readyEnv(t, testLimits)
	d := e.paid("K1", 1500, terminalsim.Approve(), journal.PolicyKiosk)
	// The process records the send, the reversal is made, and it dies
	// before reading the answer.
	if err := e.sim.FailNextReversalAnswers(terminalsim.AnswerLost); err != nil {
		t.Fatal(err)
	}
	lr := &lostReversal{Client: e.client}
	e.close()
	e.open(lr, testLimits)
	lr.o = e.o
	e.recover()
	h, err := e.o.StartReversal(e.ctx, d.UUID)
	if err != nil {
		t.Fatal(err)
	}
	<-h.Done() // stopped by the lost answer (the wrapper closes the orchestrator)
	e.close()
	e.open(e.client, testLimits)
	if st := e.attempt(h.UUID()).State; st != journal.StateSent {
		t.Fatalf("after the crash: %s", st)
	}
	e.recover()
	a := e.attempt(h.UUID())
	if a.State != journal.StateApproved || a.SendCount != 1 || a.TransactionID == "" {
		t.Fatalf("recovered %+v", a)
	}
	// A reversal prepared but never sent fails at recovery.
	d2 := e.paid("K2", 700, terminalsim.Approve(), journal.PolicyKiosk)
	body, _ := json.Marshal(localapi.ReversalRequest{Amount: 700, InitialTransactionID: d2.TransactionID})
	pre, err := e.db.PrepareAttempt(e.ctx, journal.Attempt{UUID: "01a20000-0000-7000-8000-0000000000b2", OrderID: "K2",
		Kind: journal.KindReversal, Amount: 700, Policy: journal.PolicyReversal, Terminal: "sim",
		InitialTransactionID: d2.TransactionID, RequestBody: body})
	if err != nil {
		t.Fatal(err)
	}
	e.close()
	e.open(e.client, testLimits)
	e.recover()
	if st := e.attempt(pre.UUID).State; st != journal.StateFailed {
		t.Fatalf("prepared reversal recovered as %s", st)
	}
	if n := len(e.sim.Ledger()); n != 3 { // two debits, one reversal
		t.Fatalf("ledger %+v", e.sim.Ledger())
	}
}

// lostReversal sends the reversal, then plays a process killed before it
// could read the answer: the orchestrator stops with the attempt sent.
type lostReversal struct {
	*localapi.Client
	o *Orchestrator
}

func (l *lostReversal) ReversalBody(ctx context.Context, body []byte) (*localapi.ReversalResponse, error) {
	resp, err := l.Client.ReversalBody(ctx, body)
	go l.o.Close()
	<-ctx.Done()
	return resp, err
}
