package payment

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/localapi"
	"github.com/comptoir-pos/comptoir/backend/terminalsim"
)

// mute forwards /payment to the simulator (or not, when drop), and never
// lets an answer through: every attempt ends unknown at its request-open
// limit, whatever the terminal did.
type mute struct {
	*localapi.Client
	drop bool
}

func (m *mute) PaymentBody(ctx context.Context, body []byte) (*localapi.Transaction, error) {
	if !m.drop {
		m.Client.PaymentBody(ctx, body)
	}
	return nil, &localapi.HTTPError{Endpoint: "/payment", StatusCode: 500}
}

// unknownEnv is an env whose attempts end unknown quickly.
func unknownEnv(t *testing.T, drop bool, check time.Duration) (*env, Limits) {
	lim := testLimits
	lim.KioskTimeout, lim.RequestOpen = 200*time.Millisecond, 300*time.Millisecond
	lim.UnknownCheck = check
	e := newEnv(t, lim)
	e.close()
	e.open(&mute{Client: e.client, drop: drop}, lim)
	e.recover()
	return e, lim
}

func (e *env) unknownAttempt(order string, amount int64) View {
	e.t.Helper()
	e.order(order, amount)
	v := e.wait(e.start(Request{OrderID: order, Amount: amount, Policy: journal.PolicyKiosk}))
	if v.State != journal.StateUnknown {
		e.t.Fatalf("attempt %+v, want unknown", v)
	}
	return v
}

// An unknown outcome is settled from the terminal's history when exactly
// one transaction is it: approved, with its transactionId and what it
// charged, and an event saying so.
func TestUnknownSettledFromTheHistory(t *testing.T) {
	e, _ := unknownEnv(t, false, 0)
	v := e.unknownAttempt("H1", 1200)
	charges := e.sim.ChargesFor(v.UUID)
	if len(charges) != 1 {
		t.Fatalf("ledger %+v", charges)
	}
	settled, err := e.o.SettleUnknown(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(settled) != 1 || settled[0].State != journal.StateApproved || !settled[0].OrderPaid {
		t.Fatalf("settled %+v", settled)
	}
	a := e.attempt(v.UUID)
	if a.State != journal.StateApproved || a.TransactionID != charges[0].TransactionID || !a.Charged || a.ChargedAmount != 1200 {
		t.Fatalf("journal %+v", a)
	}
	evs := e.eventsOf(v.UUID)
	last := evs[len(evs)-1]
	if last.Kind != journal.EventResolution || last.Actor != SettledBy || !strings.Contains(last.Detail, charges[0].TransactionID) {
		t.Fatalf("last event %+v", last)
	}
	if e.orderStatus("H1") != journal.OrderPaid {
		t.Fatalf("order %s", e.orderStatus("H1"))
	}
}

// An attempt that never reached the terminal is missing from its history:
// not charged, but only once any payment its last request could have
// started has ended.
func TestUnknownNotChargedOnceTheHistoryIsComplete(t *testing.T) {
	e, lim := unknownEnv(t, true, 0)
	v := e.unknownAttempt("N1", 800)
	if settled, err := e.o.SettleUnknown(e.ctx); err != nil || len(settled) != 0 {
		t.Fatalf("settled %+v, %v: too early to say", settled, err)
	}
	if e.attempt(v.UUID).State != journal.StateUnknown {
		t.Fatal("settled before the history was complete")
	}
	e.o.cfg.Now = func() time.Time { return time.Now().Add(lim.SettleAfter) }
	settled, err := e.o.SettleUnknown(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(settled) != 1 || settled[0].State != journal.StateDeclined {
		t.Fatalf("settled %+v", settled)
	}
	if st := e.orderStatus("N1"); st != journal.OrderOpen {
		t.Fatalf("order %s: the customer may pay again", st)
	}
}

// Two transactions of the history could be the attempt: staff decide.
func TestUnknownAmbiguousStaysWithStaff(t *testing.T) {
	e, lim := unknownEnv(t, false, 0)
	v := e.unknownAttempt("M1", 1200)
	// A payment of the same amount keyed on the terminal: no cartId.
	b := terminalsim.Approve()
	if _, err := e.sim.StartOnKeypad(1200, &b); err != nil {
		t.Fatal(err)
	}
	if err := e.sim.WaitIdle(e.ctx); err != nil {
		t.Fatal(err)
	}
	e.o.cfg.Now = func() time.Time { return time.Now().Add(lim.SettleAfter) }
	if settled, err := e.o.SettleUnknown(e.ctx); err != nil || len(settled) != 0 {
		t.Fatalf("settled %+v, %v", settled, err)
	}
	if e.attempt(v.UUID).State != journal.StateUnknown {
		t.Fatal("an ambiguous outcome was settled")
	}
}

// Recovery and a periodic check settle unknown outcomes by themselves.
func TestUnknownSettledByThePeriodicCheck(t *testing.T) {
	e, _ := unknownEnv(t, false, 20*time.Millisecond)
	v := e.unknownAttempt("P1", 600)
	for e.attempt(v.UUID).State == journal.StateUnknown {
		select {
		case <-e.ctx.Done():
			t.Fatal("never settled")
		case <-time.After(5 * time.Millisecond):
		}
	}
	if st := e.attempt(v.UUID).State; st != journal.StateApproved {
		t.Fatalf("settled as %s", st)
	}
	// The check stops with the orchestrator.
	e.close()
}
