package kiosk

import (
	"database/sql"
	"log/slog"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/fault"
	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/terminalsim"
)

// The order is recorded with its first attempt, in one transaction. A
// journal that cannot record the attempt (a full disk) records no order
// either: back to the cart with the error, the cart kept, nothing sent,
// and the order's number not spent.
func TestAnOrderIsRecordedWithItsFirstAttemptOrNotAtAll(t *testing.T) {
	e := newEnv(t)
	journalSQL(t, e.db, `CREATE TRIGGER test_no_attempt BEFORE INSERT ON attempts
		BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END`)
	e.cart("croissant", 2)
	v, err := e.s.Pay(MethodCard)
	if err == nil {
		t.Fatalf("Pay on a full disk: no error: %+v %+v", v, v.Payment)
	}
	if v.Phase != PhaseOrdering || v.Error != ErrJournal || len(v.Lines) != 1 || v.Lines[0].Qty != 2 {
		t.Fatalf("after a full disk: phase %s error %q lines %+v", v.Phase, v.Error, v.Lines)
	}
	shown := e.s.Checkout()
	if shown.OrderID != "" {
		t.Fatalf("an order shown after a full disk: %+v", shown)
	}
	if n := countOrders(t, e.db); n != 0 {
		t.Fatalf("%d order(s) recorded without their attempt", n)
	}
	if _, ok, _ := e.db.Setting(e.ctx, settingOrderSequence); ok {
		t.Fatal("the order sequence moved for an order not recorded")
	}
	if n := e.sim.State().Transactions; n != 0 {
		t.Fatalf("%d payment(s) reached the terminal", n)
	}

	// The disk has room again: the same cart is paid, as order number 1.
	journalSQL(t, e.db, `DROP TRIGGER test_no_attempt`)
	e.must(e.s.Pay(MethodCard))
	v = e.outcome()
	if v.Phase != PhaseApproved || v.OrderNumber != "1" {
		t.Fatalf("paid: phase %s number %q", v.Phase, v.OrderNumber)
	}
	if o := e.order(v.OrderID); o.Total != v.Total {
		t.Fatalf("order %+v", o)
	}
}

// A Cancel before anything was sent records nothing: no order, no attempt.
// Try again records the order with the attempt; cancelling the order
// instead leaves nothing to close.
func TestACancelBeforeTheSendRecordsNoOrder(t *testing.T) {
	for _, then := range []string{"retry", "cancel the order"} {
		t.Run(then, func(t *testing.T) {
			logs := &logLines{}
			e := newEnv(t, withLogger(slog.New(logs)))
			e.cart("croissant", 1)
			e.s.seqMu.Lock() // the order is numbered once Cancel is in
			paid := make(chan CheckoutView, 1)
			go func() { v, _ := e.s.Pay(MethodCard); paid <- v }()
			e.waitPhase(PhasePaying)
			e.must(e.s.Cancel())
			e.s.seqMu.Unlock()
			<-paid
			v := e.outcome()
			if v.Phase != PhaseDeclined || v.Payment.Outcome != OutcomeCancelled || v.OrderID == "" {
				t.Fatalf("after a cancel before the send: %+v %+v", v, v.Payment)
			}
			if _, err := e.db.Order(e.ctx, v.OrderID); fault.CodeOf(err) != fault.ENOTFOUND {
				t.Fatalf("order %s recorded though nothing was sent: %v", v.OrderID, err)
			}
			if then == "cancel the order" {
				e.must(e.s.CancelOrder())
				if n := countOrders(t, e.db); n != 0 {
					t.Fatalf("%d order(s) after cancelling an order never sent", n)
				}
				if len(logs.lines) != 0 {
					t.Fatalf("logged: %q", logs.lines)
				}
				return
			}
			e.must(e.s.Retry())
			paidView := e.outcome()
			if paidView.Phase != PhaseApproved || paidView.OrderID != v.OrderID {
				t.Fatalf("retry: phase %s order %q (was %q)", paidView.Phase, paidView.OrderID, v.OrderID)
			}
			atts, err := e.db.AttemptsForOrder(e.ctx, v.OrderID)
			if err != nil || len(atts) != 1 || atts[0].State != journal.StateApproved {
				t.Fatalf("attempts %+v %v", atts, err)
			}
		})
	}
}

// countOrders counts the journal's orders through a second connection.
func countOrders(t *testing.T, db *journal.DB) int {
	t.Helper()
	conn, err := sql.Open("sqlite", db.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var n int
	if err := conn.QueryRow(`SELECT count(*) FROM orders`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// An order whose number is taken between its numbering and its recording
// (by another writer of the journal) takes the next free number: its
// payment is not refused for it, and the other order is left alone.
func TestANumberTakenBeforeTheRecordMovesToTheNext(t *testing.T) {
	e := newEnv(t)
	ord := &order{total: 500, currency: "EUR", method: MethodCard, created: time.Now()}
	n, number, err := e.s.nextOrder(e.ctx, ord)
	if err != nil || number != "1" {
		t.Fatalf("numbered %q: %v", number, err)
	}
	ord.id, ord.number, ord.pending = n.Order.ID, number, &n
	taken := journal.Order{ID: n.Order.ID, Currency: "EUR", Total: 999}
	if err := e.db.CreateOrder(e.ctx, taken); err != nil {
		t.Fatal(err)
	}
	att := &attempt{step: StepCard, amount: 500, wake: make(chan struct{}, 1)}
	gen := e.staged(PhasePaying, att, nil, ord, PaymentView{Method: MethodCard, Step: StepCard, Amount: 500, Due: 500})
	e.must(e.s.launch(gen, att))
	v := e.outcome()
	if v.Phase != PhaseApproved || v.OrderNumber != "2" || v.OrderID == taken.ID {
		t.Fatalf("after a taken number: phase %s number %q id %q", v.Phase, v.OrderNumber, v.OrderID)
	}
	if o := e.order(v.OrderID); o.Total != 500 {
		t.Fatalf("the order paid: %+v", o)
	}
	if o := e.order(taken.ID); o.Total != 999 || o.Status != journal.OrderOpen {
		t.Fatalf("the other order: %+v", o)
	}
	if atts, err := e.db.AttemptsForOrder(e.ctx, taken.ID); err != nil || len(atts) != 0 {
		t.Fatalf("attempts on the other order: %+v %v", atts, err)
	}
}

// A retry on an order already recorded that the journal cannot record
// (its attempt refused) fails that attempt: the order stays the one the
// customer pays, never sent back to the cart as a new one.
func TestARecordedOrderIsNeverSentBackToTheCart(t *testing.T) {
	e := newEnv(t)
	e.sim.Script(terminalsim.Decline())
	e.cart("croissant", 1)
	e.must(e.s.Pay(MethodCard))
	declined := e.outcome()
	if declined.Phase != PhaseDeclined {
		t.Fatalf("first attempt: %s", declined.Phase)
	}
	journalSQL(t, e.db, `CREATE TRIGGER test_no_attempt BEFORE INSERT ON attempts
		BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END`)
	v, err := e.s.Retry()
	if err != nil || v.Phase != PhaseFailed || v.OrderID != declined.OrderID || v.Error != "" {
		t.Fatalf("a retry the journal refused: %v phase %s order %q (was %q) error %q", err, v.Phase, v.OrderID, declined.OrderID, v.Error)
	}
}
