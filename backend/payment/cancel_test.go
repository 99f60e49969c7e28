package payment

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/localapi"
	"github.com/comptoir-pos/comptoir/backend/terminalsim"
	"github.com/google/uuid"
)

// switchable forwards to the simulator, and refuses connections while off.
type switchable struct {
	*localapi.Client
	off atomic.Bool
}

func (s *switchable) refused(endpoint string) error {
	return &localapi.TransportError{Endpoint: endpoint, Err: errRefused}
}

func (s *switchable) PaymentBody(ctx context.Context, body []byte) (*localapi.Transaction, error) {
	if s.off.Load() {
		return nil, s.refused("/payment")
	}
	return s.Client.PaymentBody(ctx, body)
}

func (s *switchable) Abort(ctx context.Context, req *localapi.AbortRequest) (*localapi.AbortResponse, error) {
	if s.off.Load() {
		return nil, s.refused("/abort")
	}
	return s.Client.Abort(ctx, req)
}

func (s *switchable) Transactions(ctx context.Context, req *localapi.TransactionsRequest) (*localapi.TransactionList, error) {
	if s.off.Load() {
		return nil, s.refused("/transactions")
	}
	return s.Client.Transactions(ctx, req)
}

// neverStarted fails if the simulator ever started a payment with this uuid.
func neverStarted(t *testing.T, sim *terminalsim.Terminal, id string) {
	t.Helper()
	if tx, known := sim.Transaction(id); known {
		t.Fatalf("the terminal ran the cancelled attempt: %s", tx.Raw)
	}
	if n := len(sim.ChargesFor(id)); n != 0 {
		t.Fatalf("the cancelled attempt charged %d times", n)
	}
}

// The first /payment fails before the terminal registers it (HTTP 500),
// then the terminal is busy with another payment when the customer
// presses Cancel. The /abort is answered "already in progress": Comptoir
// must neither give up on the cancel nor keep resending /payment, or the
// resend would start the payment once the terminal is free, after the
// customer walked away.
func TestCancelWhileTheTerminalIsBusyWithAnother(t *testing.T) {
	lim := testLimits
	lim.SettleAfter = 300 * time.Millisecond // the history is complete soon after the last send
	lim.ResendPause = 20 * time.Millisecond
	e := readyEnv(t, lim)
	h := e.kiosk("B1", 900, terminalsim.HTTP500NotCharged(), terminalsim.Hold())
	e.answeredOnce(h)

	other := uuid.NewString() // someone else's payment takes the terminal
	done := make(chan error, 1)
	go func() {
		_, err := e.client.Payment(e.ctx, &localapi.PaymentRequest{Amount: 100, IdempotentUUID: other})
		done <- err
	}()
	if err := e.sim.WaitPhase(e.ctx, other, terminalsim.PhaseBanking); err != nil {
		t.Fatal(err)
	}
	h.Cancel()
	v := e.wait(h)
	if v.State != journal.StateCancelled {
		t.Fatalf("state %s (%s), want cancelled", v.State, v.Message)
	}
	// The terminal is free again: nothing of the cancelled attempt may follow.
	if err := e.sim.PresentCard(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	neverStarted(t, e.sim, h.UUID())
	evs := e.eventsOf(h.UUID())
	sends := 0
	for _, ev := range evs {
		if ev.Kind == journal.EventSent || ev.Kind == journal.EventResent {
			sends++
		}
	}
	if e.attempt(h.UUID()).SendCount != sends {
		t.Fatalf("send count %d, %d send events", e.attempt(h.UUID()).SendCount, sends)
	}
}

// The same with the terminal unreachable when the customer cancels: the
// /abort gets no answer and is asked again until the terminal answers;
// nothing runs for the attempt, the history does not list it: cancelled,
// and never started.
func TestCancelWhileTheTerminalIsUnreachable(t *testing.T) {
	lim := testLimits
	lim.SettleAfter = 300 * time.Millisecond // the history is complete soon after the last send
	lim.ResendPause = 20 * time.Millisecond
	e := newEnv(t, lim)
	sw := &switchable{Client: e.client}
	e.restartOn(sw, lim)
	h := e.kiosk("U1", 900, terminalsim.HTTP500NotCharged())
	e.answeredOnce(h)
	sw.off.Store(true)
	h.Cancel()
	// Several aborts are refused while the terminal is away...
	waitView(t, e, h, func(v View) bool {
		n := 0
		for _, ev := range e.eventsOf(h.UUID()) {
			if ev.Kind == journal.EventResponse && len(ev.Detail) > 6 && ev.Detail[:6] == "abort " {
				n++
			}
		}
		return n >= 2
	})
	if got := e.attempt(h.UUID()).SendCount; got != 1 {
		t.Fatalf("%d sends after the cancel", got)
	}
	sw.off.Store(false) // ...then it is back
	v := e.wait(h)
	if v.State != journal.StateCancelled {
		t.Fatalf("state %s (%s), want cancelled", v.State, v.Message)
	}
	neverStarted(t, e.sim, h.UUID())
	if e.attempt(h.UUID()).SendCount != 1 {
		t.Fatalf("the cancelled attempt was sent %d times", e.attempt(h.UUID()).SendCount)
	}
}

// Cancel after the payment ran and ended on the terminal, its answer lost:
// the /abort says "Nothing to abort", and the history shows the charge.
// The customer was charged: approved, and the kiosk says so.
func TestCancelAfterAChargeWhoseAnswerWasLost(t *testing.T) {
	lim := testLimits
	lim.ResendPause = time.Hour // the resend would come too late
	e := readyEnv(t, lim)
	h := e.kiosk("L1", 900, terminalsim.HTTP500Charged())
	e.answeredOnce(h)
	h.Cancel()
	v := e.wait(h)
	if v.State != journal.StateApproved || !v.ChargedDespiteCancel || v.TransactionID == "" {
		t.Fatalf("view %+v", v)
	}
	charges := e.sim.ChargesFor(h.UUID())
	if len(charges) != 1 || charges[0].TransactionID != v.TransactionID {
		t.Fatalf("ledger %+v, view %+v", charges, v)
	}
	if a := e.attempt(h.UUID()); a.TransactionID != v.TransactionID || !a.Charged || a.ChargedAmount != 900 {
		t.Fatalf("journal %+v", a)
	}
	if e.orderStatus("L1") != journal.OrderPaid {
		t.Fatalf("order %s", e.orderStatus("L1"))
	}
}

// hangingAborts forwards to the simulator, but its /abort never answers.
type hangingAborts struct{ *localapi.Client }

func (h hangingAborts) Abort(ctx context.Context, req *localapi.AbortRequest) (*localapi.AbortResponse, error) {
	<-ctx.Done()
	return nil, &localapi.TransportError{Endpoint: "/abort", Sent: true, Canceled: true, Err: ctx.Err()}
}

// An attempt whose cancel was pending when the process died is recovered
// without a blind resend: the terminal never registered it (its /payment
// failed with HTTP 500), so a resend would start it now.
func TestRecoveryOfAPendingCancelDoesNotStartThePayment(t *testing.T) {
	lim := testLimits
	lim.SettleAfter = 300 * time.Millisecond // the history is complete soon after the last send
	lim.ResendPause = time.Hour
	e := newEnv(t, lim)
	e.restartOn(hangingAborts{e.client}, lim)
	h := e.kiosk("R1", 900, terminalsim.HTTP500NotCharged())
	e.answeredOnce(h)
	h.Cancel()
	waitView(t, e, h, func(v View) bool { return v.State == journal.StateAbortRequested })
	e.close() // the process dies with the cancel pending

	e.open(e.client, lim)
	if got := e.attempt(h.UUID()).State; got != journal.StateAbortRequested {
		t.Fatalf("state before recovery %s", got)
	}
	views := e.recover()
	if len(views) == 0 || e.attempt(h.UUID()).State != journal.StateCancelled {
		t.Fatalf("recovered %+v, attempt %s", views, e.attempt(h.UUID()).State)
	}
	if got := e.attempt(h.UUID()).SendCount; got != 1 {
		t.Fatalf("sent %d times", got)
	}
	neverStarted(t, e.sim, h.UUID())
}
