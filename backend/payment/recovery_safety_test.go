package payment

// Recovery must only ask the terminal that knows the uuid, and only while it
// still does.

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/localapi"
	"github.com/comptoir-pos/comptoir/backend/terminalsim"
)

// An attempt left open on terminal A must never be resent to terminal B:
// B does not know the uuid and starts a new payment. Here the kiosk crashes
// while A holds the payment, the customer pays on A, and the kiosk restarts
// configured for another terminal (a replacement, or --demo vs a real one:
// commands_pay.go names them by URL or "demo"). Resending the body to B
// would be a second charge for one order: the attempt becomes unknown.
func TestRecoveryResendsToAnotherTerminal(t *testing.T) {
	e := readyEnv(t, testLimits)
	e.sim.Script(terminalsim.Hold())
	h := e.kiosk("RT1", 1500)
	if err := e.sim.WaitPhase(e.ctx, h.UUID(), terminalsim.PhaseBanking); err != nil {
		t.Fatal(err)
	}
	e.close() // the kiosk dies; terminal A goes on
	if err := e.sim.PresentCard(); err != nil {
		t.Fatal(err) // the customer is charged on A
	}

	simB, clientB := runSim(t, terminalsim.Config{TimeScale: 0.001, NoTestAmounts: true})
	e.open(clientB, testLimits)
	e.o.cfg.TerminalID = "sim-B" // a different terminal than the attempt's "sim"
	views, _ := e.o.Recover(e.ctx)

	onA, onB := len(e.sim.ChargesFor(h.UUID())), len(simB.ChargesFor(h.UUID()))
	if onB != 0 || onA+onB > 1 {
		t.Errorf("attempt of terminal %q resent to %q: %d charge(s) on A, %d on B; recovered %+v",
			e.attempt(h.UUID()).Terminal, "sim-B", onA, onB, views)
	}
}

// Recovery gives a resumed attempt at least one client timeout, but never
// past the idempotency window (less its margin): there the terminal has
// forgotten the uuid and a resend, after HTTP 500s here, would start a new
// payment (invariant 8).
func TestRecoveryNeverResendsPastTheIdempotencyWindow(t *testing.T) {
	e := readyEnv(t, testLimits)
	e.order("IW1", 100)
	id := "0193b1c2-0000-7000-8000-0000000000a1"
	body, err := e.o.ch.Body(NewAttempt{UUID: id, Request: Request{OrderID: "IW1", Amount: 100}, Policy: Policy{Kind: journal.KindDebit}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.db.PrepareAttempt(e.ctx, journal.Attempt{UUID: id, OrderID: "IW1", Kind: journal.KindDebit,
		Amount: 100, Policy: journal.PolicyKiosk, Terminal: "sim", RequestBody: body}); err != nil {
		t.Fatal(err)
	}
	att, err := e.db.MarkSent(e.ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	e.close()

	// The kiosk restarts just inside the window; the terminal answers 500.
	skew := testLimits.Idempotency - 200*time.Millisecond
	now := func() time.Time { return time.Now().Add(skew) }
	var mu sync.Mutex
	var latest time.Duration
	fake := &fakeTerminal{payment: func(ctx context.Context, body []byte) (*localapi.Transaction, error) {
		mu.Lock()
		if age := now().Sub(att.FirstSentAt); age > latest {
			latest = age
		}
		mu.Unlock()
		return nil, &localapi.HTTPError{Endpoint: "/payment", StatusCode: 500}
	}}
	e.open(fake, testLimits)
	e.o.cfg.Now = now
	e.o.Recover(e.ctx)

	mu.Lock()
	defer mu.Unlock()
	if latest >= testLimits.Idempotency {
		t.Errorf("resent %s after the first send; the idempotency window is %s", latest, testLimits.Idempotency)
	}
}
