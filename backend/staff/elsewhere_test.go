package staff

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/cloudapi"
	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/reconcile"
)

// backOfficeRefund refunds amount of a transaction directly at the
// provider, as its back office does: Comptoir is not asked.
func backOfficeRefund(e *env, transactionID string, amount int64) {
	e.t.Helper()
	ws, err := cloudapi.NewWebservices(cloudapi.DefaultWebservicesURL(e.cloud.URL()), e.cloud.Key())
	if err != nil {
		e.t.Fatal(err)
	}
	body, _ := json.Marshal(cloudapi.RefundRequest{Amount: amount, UserEmail: "manager@shop.example",
		Vendor: cloudapi.RefundVendor{SoftwareName: "Back office", SoftwareVersion: "1"}})
	if _, err := ws.Refund(e.ctx, transactionID, body); err != nil {
		e.t.Fatal(err)
	}
}

// After 5.00 given back in the provider's back office, a 24.50 order can
// be given back 19.50 at most: the provider's record is read before the
// refund, the refund made elsewhere is recorded against the order (an
// adopted attempt, in the audit trail), and the card-present refund of the
// whole 24.50 is refused, nothing sent; so is a second refund by API of
// the transaction, which the provider makes once.
func TestMoneyGivenBackOutsideComptoirIsSeenBeforeAGiveBack(t *testing.T) {
	e, sid, debit := paidLinkToRefund(t)
	backOfficeRefund(e, debit.TransactionID, 500)
	if v := e.debitView(sid, debit.UUID); !v.GivenBackElsewhereSeen {
		t.Fatalf("the Webservices are set up, and staff are told refunds elsewhere are not seen: %+v", v)
	}
	_, err := e.st.Refund(e.ctx, sid, debit.OrderID, 2450)
	if se := wantCode(t, err, EINVALID); !strings.Contains(se.Message, "19.50") {
		t.Fatalf("refund of the whole order: %s", se.Message)
	}
	if n := len(e.sim.Ledger()); n != 0 {
		t.Fatalf("%d movements on the terminal: a refund was sent", n)
	}
	m, _ := e.db.OrderMoney(e.ctx, debit.OrderID)
	if m.Refunded != 500 || m.Givable() != 1950 {
		t.Fatalf("the order's money %+v", m)
	}
	if v := e.debitView(sid, debit.UUID); v.RefundableLeft != 1950 {
		t.Fatalf("staff offer %d back", v.RefundableLeft)
	}
	atts, _ := e.db.AttemptsForOrder(e.ctx, debit.OrderID)
	adopted := atts[len(atts)-1]
	if adopted.Kind != journal.KindRefund || adopted.Amount != 500 || adopted.SendCount != 0 || e.lastEvent(adopted.UUID).Kind != journal.EventAdopted {
		t.Fatalf("the refund made elsewhere, as journaled: %+v", adopted)
	}
	_, err = e.st.RefundByAPI(e.ctx, sid, debit.UUID, 100)
	wantCode(t, err, EINVALID)
	// Seen once: reading again records nothing more.
	if _, err := e.st.Refund(e.ctx, sid, debit.OrderID, 1950); err != nil {
		t.Fatal(err)
	}
	if m, _ := e.db.OrderMoney(e.ctx, debit.OrderID); m.Refunded != 2450 || m.Givable() != 0 {
		t.Fatalf("after the rest was refunded: %+v", m)
	}
	audit, _ := e.st.Audit(e.ctx, sid, 20)
	n := 0
	for _, a := range audit {
		if a.Action == GivenBackAdopted {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d adoptions in the audit trail: %+v", n, audit)
	}
}

// Without the Webservices, refunds made elsewhere are not seen, and the
// staff screen says so.
func TestRefundsElsewhereAreNotSeenWithoutTheWebservices(t *testing.T) {
	e := newEnv(t)
	sid := e.unlock().ID
	v := e.pay(e.order(1000), 1000, journal.PolicyKiosk, journal.StateApproved)
	if d := e.debitView(sid, v.UUID); d.GivenBackElsewhereSeen || d.RefundableLeft != 1000 {
		t.Fatalf("%+v", d)
	}
}

// An approval over the LAN that the provider's record does not show is
// set aside for staff with the reason; once they have checked (the back
// office shows it under another id), they accept it and the order is paid.
func TestStaffAcceptAnApprovalTheProviderDidNotShow(t *testing.T) {
	e := newEnv(t)
	sid := e.unlock().ID
	order := e.order(1300)
	v := e.pay(order, 1300, journal.PolicyKiosk, journal.StateApproved)
	// As the witness would have journaled it: awaiting, then denied.
	id := "0192f0c4-0000-7000-8000-00000000beef"
	other := e.order(1300)
	if _, err := e.db.PrepareAttempt(e.ctx, journal.Attempt{UUID: id, OrderID: other, Kind: journal.KindDebit, Amount: 1300,
		Policy: journal.PolicyKiosk, Terminal: "sim-2", RequestBody: []byte(`{"amount":1300}`)}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.db.MarkSent(e.ctx, id); err != nil {
		t.Fatal(err)
	}
	if _, err := e.db.Transition(e.ctx, id, journal.StateSent, journal.StateApproved, journal.TransitionInfo{TransactionID: "rogue-1",
		Charged: &journal.Charge{Amount: 1300}, AwaitWitness: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.db.RecordWitness(e.ctx, id, journal.WitnessWord{To: journal.WitnessDenied, Who: "system:witness"}); err != nil {
		t.Fatal(err)
	}
	d := e.debitView(sid, id)
	if !d.NeedsAttention || !d.CanAccept || d.Witness != journal.WitnessDenied || !strings.Contains(d.Flag, "does not show") || d.RefundableLeft != 0 {
		t.Fatalf("the denied approval as staff see it: %+v", d)
	}
	if paid := e.debitView(sid, v.UUID); paid.CanAccept || paid.Witness != "" {
		t.Fatalf("a plain approval: %+v", paid)
	}
	got, err := e.st.AcceptOrder(e.ctx, sid, id, "the back office lists it under another id")
	if err != nil || got.OrderStatus != journal.OrderPaid || got.Witness != journal.WitnessAccepted || got.Flag != "" {
		t.Fatalf("accepted %+v %v", got, err)
	}
}

// reconcileWithTheProvider has staff's reconciliation read the provider's
// Webservices (the simulated cloud's), and restarts staff with it.
func (e *env) reconcileWithTheProvider() {
	e.t.Helper()
	ws, err := cloudapi.NewWebservices(cloudapi.DefaultWebservicesURL(e.cloud.URL()), e.cloud.Key())
	if err != nil {
		e.t.Fatal(err)
	}
	e.cfg.Reconcile = func(ctx context.Context, day string) (reconcile.Report, error) {
		return reconcile.Day(ctx, e.db, reconcile.Sources{Provider: reconcile.FromWebservices(ws, e.clock.Now)}, day,
			reconcile.Config{Location: time.Local, Now: e.clock.Now})
	}
	e.restart()
}
