package staff

import (
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/payment"
)

// paidOrder journals an order of amount and has the kiosk take it: the
// order and its approved debit.
func (e *env) paidOrder(amount int64) (string, payment.View) {
	e.t.Helper()
	ord := e.order(amount)
	return ord, e.pay(ord, amount, journal.PolicyKiosk, journal.StateApproved)
}

// unknownOrder is an env with staff unlocked and an order of amount whose
// debit is unknown (the terminal still waits for the customer).
func unknownOrder(t *testing.T, amount int64) (*env, Session, string, payment.View) {
	t.Helper()
	lim := testLimits
	lim.KioskTimeout, lim.RequestOpen = 50*time.Millisecond, 300*time.Millisecond
	e := newEnv(t, withLimits(lim))
	s := e.unlock()
	ord := e.order(amount)
	return e, s, ord, unknownAttempt(e, ord, amount)
}

// customer has the customer act on the terminal (present a card, refuse
// it) and waits until the terminal is idle again.
func (e *env) customer(act func() error) {
	e.t.Helper()
	if err := act(); err != nil {
		e.t.Fatal(err)
	}
	if err := e.sim.WaitIdle(e.ctx); err != nil {
		e.t.Fatal(err)
	}
}
