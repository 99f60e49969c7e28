package payment

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/localapi"
	"github.com/comptoir-pos/comptoir/backend/terminalsim"
)

// The steps the orchestrator's tests take again and again, each written
// once: a kiosk debit started, the orchestrator restarted on another
// terminal, the simulated terminal reaching a state.

// runSim starts a simulated terminal of cfg on a free port, closed when
// the test ends, and a client of it.
func runSim(tb testing.TB, cfg terminalsim.Config) (*terminalsim.Terminal, *localapi.Client) {
	tb.Helper()
	sim, err := terminalsim.New(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	if err := sim.Start("127.0.0.1:0"); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { sim.Close() })
	client, err := localapi.NewClient(sim.URL())
	if err != nil {
		tb.Fatal(err)
	}
	return sim, client
}

// readyEnv is a new env whose orchestrator has recovered: ready to take
// payments.
func readyEnv(t *testing.T, lim Limits) *env {
	t.Helper()
	e := newEnv(t, lim)
	e.recover()
	return e
}

// channelEnv is a ready env whose orchestrator drives ch, the terminal
// terminalID, alone (no vendor, no other channel): the simulated terminal
// stays idle unless ch reaches it.
func channelEnv(t *testing.T, ch Channel, terminalID string, lim Limits) *env {
	t.Helper()
	e := newEnv(t, lim)
	db := e.reopen()
	e.events = &recorder{}
	o, err := New(Config{Journal: db, Channel: ch, TerminalID: terminalID, Limits: lim, Emitter: e.events})
	if err != nil {
		t.Fatal(err)
	}
	e.o = o
	t.Cleanup(e.close)
	e.recover()
	return e
}

// kiosk journals an order of amount and starts its kiosk debit, the
// terminal scripted with script first (none: its default behaviour).
func (e *env) kiosk(order string, amount int64, script ...terminalsim.Behaviour) *Handle {
	e.t.Helper()
	if len(script) > 0 { // an env without a terminal (links) scripts none
		e.sim.Script(script...)
	}
	e.order(order, amount)
	return e.start(Request{OrderID: order, Amount: amount, Policy: journal.PolicyKiosk})
}

// restartOn restarts the orchestrator on term with lim and recovers, as a
// process started against another terminal would.
func (e *env) restartOn(term Terminal, lim Limits) {
	e.t.Helper()
	e.close()
	e.open(term, lim)
	e.recover()
}

// answeredOnce waits until h's first send is journaled with its answer
// (an HTTP 500, a lost answer).
func (e *env) answeredOnce(h *Handle) {
	e.t.Helper()
	waitView(e.t, e, h, func(View) bool { return len(e.eventsOf(h.UUID())) >= 3 })
}

// atPhase waits until the terminal runs h's payment in phase.
func (e *env) atPhase(h *Handle, phase terminalsim.Phase) {
	e.t.Helper()
	if err := e.sim.WaitPhase(e.ctx, h.UUID(), phase); err != nil {
		e.t.Fatal(err)
	}
}

// abortHeld waits until the terminal holds the customer's cancel, past the
// handover, until its payment ends.
func (e *env) abortHeld() {
	e.t.Helper()
	if err := e.sim.WaitFor(e.ctx, func(s terminalsim.State) bool { return s.Current != nil && s.Current.AbortsHeld > 0 }); err != nil {
		e.t.Fatal(err)
	}
}

// payOnceAttached has the customer present a card as soon as a request
// (a resend, a recovery's) is attached to the payment in progress.
func (e *env) payOnceAttached() {
	go func() {
		e.sim.WaitFor(e.ctx, func(s terminalsim.State) bool { return s.Current != nil && s.Current.Waiters > 0 })
		e.sim.PresentCard()
	}()
}

// paying is a fake terminal whose /payment answers with answer, given the
// request as sent and as decoded.
func paying(answer func(ctx context.Context, body []byte, req localapi.PaymentRequest) (*localapi.Transaction, error)) *fakeTerminal {
	return &fakeTerminal{payment: func(ctx context.Context, body []byte) (*localapi.Transaction, error) {
		var req localapi.PaymentRequest
		json.Unmarshal(body, &req)
		return answer(ctx, body, req)
	}}
}
