package payment

import (
	"errors"
	"testing"

	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/terminalsim"
)

// Rule 1 with an order new to the journal (Request.NewOrder): the order is
// committed with its first attempt, before the request leaves; an order
// whose id is taken is refused as such, and nothing is sent.
func TestANewOrderIsCommittedWithItsFirstAttempt(t *testing.T) {
	e := readyEnv(t, testLimits)
	newOrder := func(id string) Request {
		return Request{OrderID: id, Amount: 500, Policy: journal.PolicyKiosk,
			NewOrder: &journal.NewOrder{Order: journal.Order{ID: id, Currency: "EUR", Total: 500}}}
	}
	e.sim.Script(terminalsim.Approve())
	h := e.start(newOrder("N1"))
	if v := e.wait(h); v.State != journal.StateApproved {
		t.Fatalf("view %+v", v)
	}
	if o, err := e.db.Order(e.ctx, "N1"); err != nil || o.Total != 500 || o.Status != journal.OrderPaid {
		t.Fatalf("the new order: %+v %v", o, err)
	}
	before := len(e.sim.Ledger())
	if _, err := e.o.Start(e.ctx, newOrder("N1")); !errors.Is(err, journal.ErrOrderExists) {
		t.Fatalf("a new order on a taken id: %v", err)
	}
	if n := len(e.sim.Ledger()); n != before || e.sim.State().Transactions != 1 {
		t.Fatalf("sent for a refused order: ledger %d, transactions %d", n, e.sim.State().Transactions)
	}
}
