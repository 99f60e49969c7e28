package kiosk

import (
	"context"
	"time"

	"github.com/comptoir-pos/comptoir/backend/terminalsim"
)

// The steps of a card payment at the kiosk that the checkout's tests take
// again and again, each written once.

// payByCard has the customer order items (product/qty pairs) and pay by
// card, the terminal scripted with b, and waits until the terminal runs
// the payment in phase.
func (e *env) payByCard(b terminalsim.Behaviour, phase terminalsim.Phase, items ...any) {
	e.t.Helper()
	e.sim.Script(b)
	e.cart(items...)
	e.must(e.s.Pay(MethodCard))
	e.waitSim(phase)
}

// cancelHeld has the customer cancel past the handover, and waits until
// the terminal holds the abort until its payment ends.
func (e *env) cancelHeld() {
	e.t.Helper()
	e.must(e.s.Cancel())
	ctx, cancel := context.WithTimeout(e.ctx, 5*time.Second)
	defer cancel()
	if err := e.sim.WaitFor(ctx, func(s terminalsim.State) bool { return s.Current != nil && s.Current.AbortsHeld > 0 }); err != nil {
		e.t.Fatal(err)
	}
}

// outcome waits until the payment, and any cancel of it, is over.
func (e *env) outcome() CheckoutView {
	e.t.Helper()
	return e.waitFor("outcome", func(v CheckoutView) bool { return v.Phase != PhaseCanceling && v.Phase != PhasePaying })
}
