package staff

import (
	"strings"
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

// purgedOfCardData purges the card details and holds that neither the
// events of the attempts nor the audit trail keep any: the card tickets
// (the simulated terminal's say CUSTOMER COPY and MERCHANT COPY) or the
// other strings given (a card token).
func (e *env) purgedOfCardData(sid string, uuids []string, more ...string) {
	e.t.Helper()
	if n, err := e.db.PurgeCardDetails(e.ctx, time.Now().Add(time.Hour)); err != nil || n == 0 {
		e.t.Errorf("purge: %d card details removed (%v), want some", n, err)
	}
	check := func(where, text string) {
		e.t.Helper()
		for _, s := range append([]string{"CUSTOMER COPY", "MERCHANT COPY"}, more...) {
			if strings.Contains(text, s) {
				e.t.Errorf("%s keeps card data (%q) after the purge: %.200s", where, s, text)
			}
		}
	}
	for _, uuid := range uuids {
		for _, ev := range e.events(uuid) {
			check("event "+string(ev.Kind)+" of "+uuid, ev.Detail+string(ev.RawResponse))
		}
		if a, err := e.db.Attempt(e.ctx, uuid); err == nil {
			check("attempt "+uuid, string(a.RequestBody)+string(a.Response))
		}
	}
	audit, err := e.st.Audit(e.ctx, sid, 0)
	if err != nil {
		e.t.Fatal(err)
	}
	for _, a := range audit {
		check("audit line "+a.Action, a.Detail+string(a.Raw))
	}
}
