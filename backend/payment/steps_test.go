package payment

import (
	"context"
	"encoding/json"

	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/localapi"
	"github.com/comptoir-pos/comptoir/backend/terminalsim"
)

// The steps the orchestrator's tests take again and again, each written
// once: a kiosk debit started, the orchestrator restarted on another
// terminal, the simulated terminal reaching a state.

// kiosk journals an order of amount and starts its kiosk debit, the
// terminal scripted with script first (none: its default behaviour).
func (e *env) kiosk(order string, amount int64, script ...terminalsim.Behaviour) *Handle {
	e.t.Helper()
	e.sim.Script(script...)
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
