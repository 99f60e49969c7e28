package journal

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func outboxKinds(t *testing.T, db *DB) []string {
	t.Helper()
	es, err := db.Unpublished(context.Background(), 1000)
	if err != nil {
		t.Fatal(err)
	}
	var ks []string
	for _, e := range es {
		ks = append(ks, e.Kind+":"+e.OrderID)
	}
	return ks
}

// Every fact other machines need is in the outbox, in the order the
// journal concluded it: an order paid (with its lines), money given back
// by Comptoir, adopted from the provider and resolved by staff, an order
// cancelled, one needing staff, a fiscal closing. Nothing else is: an
// attempt declined, an order created.
func TestOutboxHasEveryFactInOrder(t *testing.T) {
	ctx := t.Context()
	db := openMemory(t)
	if err := db.CreateOrder(ctx, Order{ID: "p", Currency: "EUR", Total: 990, Data: []byte(`{"number":"A7","lines":[]}`)}); err != nil {
		t.Fatal(err)
	}
	if got := outboxKinds(t, db); len(got) != 0 {
		t.Fatalf("a new order is in the outbox: %v", got)
	}
	finish(t, db, Attempt{UUID: newUUID(t), OrderID: "p", Kind: KindDebit, Amount: 990, Policy: PolicyKiosk,
		Terminal: "T1", RequestBody: []byte(`{}`)}, StateDeclined)
	debit := approve(t, db, "p", 990, Charge{Amount: 990})
	finish(t, db, refundOf(t, "p", 300, "T1"), StateApproved)
	if _, err := db.AdoptGiveBack(ctx, AdoptedGiveBack{OrderID: "p", Kind: KindRefund, TransactionID: "bo-1",
		InitialTransactionID: debit.TransactionID, Amount: 200, Who: "system:reconcile"}); err != nil {
		t.Fatal(err)
	}
	unknown := finish(t, db, refundOf(t, "p", 100, "T2"), StateUnknown) // the order needs staff
	if _, err := db.Resolve(ctx, unknown.UUID, Resolution{To: StateApproved, Who: "ana", Note: "seen on the terminal",
		TransactionID: "tx-r-1", Charged: &Charge{Amount: 100}}); err != nil { // and is paid again
		t.Fatal(err)
	}
	newOrder(t, db, "c", "EUR", 500)
	if err := db.CloseOrder(ctx, "c", "customer left"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := db.AppendFiscal(ctx, FiscalClosing, "day:2026-03-01", func(FiscalRecord, *FiscalRecord) ([]byte, string, error) {
		return []byte(`{"total":990}`), "sig-1", nil
	}); err != nil {
		t.Fatal(err)
	}
	want := []string{"order.paid:p", "giveback:p", "giveback:p", "order.attention:p", "order.paid:p", "giveback:p",
		"order.cancelled:c", "fiscal.closing:"}
	if got := outboxKinds(t, db); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("outbox\n got %v\nwant %v", got, want)
	}
	if es, err := db.Unpublished(ctx, 0); err != nil || len(es) != len(want) {
		t.Fatalf("no limit given: %d rows of %d, %v", len(es), len(want), err)
	}
	es, _ := db.Unpublished(ctx, 1)
	if len(es) != 1 {
		t.Fatalf("a limit of 1: %d rows", len(es))
	}
	var f OrderFact
	if err := json.Unmarshal(es[0].Payload, &f); err != nil {
		t.Fatal(err)
	}
	if f.OrderID != "p" || f.To != OrderPaid || f.From != OrderOpen || f.Total != 990 || f.Paid != 990 ||
		f.Currency != "EUR" || !strings.Contains(string(f.Data), `"number":"A7"`) || len(es[0].MsgID) != 36 {
		t.Fatalf("paid fact %+v (%s)", f, es[0].MsgID)
	}
}

// The outbox row is written in the transaction of its fact: when it
// cannot be written, the fact is not either (the approval stays sent, to
// be applied again), so no fact is ever known here and missing there.
func TestOutboxRowOrNoFact(t *testing.T) {
	ctx := t.Context()
	db := openMemory(t)
	newOrder(t, db, "o", "EUR", 990)
	a := finish(t, db, Attempt{UUID: newUUID(t), OrderID: "o", Kind: KindDebit, Amount: 990, Policy: PolicyKiosk,
		Terminal: "T1", RequestBody: []byte(`{}`)}, StateSent)
	if _, err := db.w.ExecContext(ctx, `CREATE TRIGGER outbox_broken BEFORE INSERT ON outbox BEGIN SELECT RAISE(ABORT, 'disk full'); END`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Transition(ctx, a.UUID, StateSent, StateApproved, TransitionInfo{Charged: &Charge{Amount: 990}}); err == nil {
		t.Fatal("an approval was journaled without its outbox row")
	}
	if got, _ := db.Attempt(ctx, a.UUID); got.State != StateSent || orderStatus(t, db, "o") != OrderOpen {
		t.Fatalf("attempt %s, order %s after a failed outbox write", got.State, orderStatus(t, db, "o"))
	}
	if _, err := db.w.ExecContext(ctx, `DROP TRIGGER outbox_broken`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Transition(ctx, a.UUID, StateSent, StateApproved, TransitionInfo{Charged: &Charge{Amount: 990}}); err != nil {
		t.Fatal(err)
	}
	if got := outboxKinds(t, db); len(got) != 1 || got[0] != "order.paid:o" {
		t.Fatalf("outbox %v", got)
	}
}

// A row is marked published once, keeps its first time, and is no longer
// read; its fact never changes; published rows are pruned, others kept.
func TestOutboxPublishedOnce(t *testing.T) {
	ctx := t.Context()
	clock := newStepClock()
	db := openMemory(t, WithClock(clock.Now))
	for _, id := range []string{"a", "b", "c"} {
		newOrder(t, db, id, "EUR", 100)
		approve(t, db, id, 100, Charge{Amount: 100})
	}
	es, _ := db.Unpublished(ctx, 10)
	if len(es) != 3 || es[0].Seq >= es[1].Seq || es[1].Seq >= es[2].Seq {
		t.Fatalf("unpublished %+v", es)
	}
	if err := db.MarkPublished(ctx, es[0].Seq, es[1].Seq); err != nil {
		t.Fatal(err)
	}
	var first int64
	_ = db.r.QueryRowContext(ctx, `SELECT published_at FROM outbox WHERE seq = ?`, es[0].Seq).Scan(&first)
	if err := db.MarkPublished(ctx, es[0].Seq); err != nil {
		t.Fatal(err)
	}
	var again int64
	_ = db.r.QueryRowContext(ctx, `SELECT published_at FROM outbox WHERE seq = ?`, es[0].Seq).Scan(&again)
	if first == 0 || again != first {
		t.Fatalf("published at %d then %d", first, again)
	}
	if left, _ := db.Unpublished(ctx, 10); len(left) != 1 || left[0].OrderID != "c" {
		t.Fatalf("left %+v", left)
	}
	_, err := db.w.ExecContext(ctx, `UPDATE outbox SET payload = '{}' WHERE seq = ?`, es[0].Seq)
	if err == nil || !strings.Contains(err.Error(), "written once") {
		t.Fatalf("a fact was rewritten: %v", err)
	}
	n, err := db.PruneOutbox(ctx, clock.Now().Add(time.Hour))
	if err != nil || n != 2 {
		t.Fatalf("pruned %d, %v", n, err)
	}
	if left, _ := db.Unpublished(ctx, 10); len(left) != 1 {
		t.Fatalf("an unpublished row was pruned: %+v", left)
	}
}

// A commit wakes whoever waits for the outbox.
func TestOutboxWrittenSignals(t *testing.T) {
	db := openMemory(t)
	select {
	case <-db.OutboxWritten():
	default:
	}
	newOrder(t, db, "o", "EUR", 100)
	select {
	case <-db.OutboxWritten():
	case <-time.After(10 * time.Second):
		t.Fatal("no signal after a commit")
	}
}

// An order's fact tells other machines all the money it gave back,
// reversed and refunded alike: head office and the kitchen read it there.
func TestAnOrdersFactSaysAllItGaveBack(t *testing.T) {
	ctx := t.Context()
	db := openMemory(t)
	debit := approvedDebit(t, db, "g", 1000, 600, 0, "T1")
	finish(t, db, reversalOf(t, debit, 600, "T1"), StateApproved)
	if err := db.CloseOrder(ctx, "g", "the customer left"); err != nil {
		t.Fatal(err)
	}
	es, err := db.Unpublished(ctx, 100)
	if err != nil {
		t.Fatal(err)
	}
	var f OrderFact
	for _, e := range es {
		if e.Kind == OutboxCancelled {
			if err := json.Unmarshal(e.Payload, &f); err != nil {
				t.Fatal(err)
			}
		}
	}
	if f.OrderID != "g" || f.To != OrderCancelled || f.GivenBack != 600 {
		t.Fatalf("the cancelled order's fact %+v: want 600 given back", f)
	}
}

// An order's lines are opaque to the journal: an order without any reads
// back without any, ready to be sent as JSON, and lines damaged in the file
// after they were written never stop its payment being recorded: the order
// reads back and its fact goes out without them.
func TestAnOrderWithoutLinesOrWithDamagedOnesIsStillPaid(t *testing.T) {
	ctx := t.Context()
	db := openMemory(t)
	newOrder(t, db, "bare", "EUR", 500)
	newOrder(t, db, "damaged", "EUR", 700)
	if _, err := db.w.ExecContext(ctx, `UPDATE orders SET data = '{"lines":[' WHERE id = 'damaged'`); err != nil {
		t.Fatal(err)
	}
	approve(t, db, "bare", 500, Charge{Amount: 500})
	approve(t, db, "damaged", 700, Charge{Amount: 700})
	for _, id := range []string{"bare", "damaged"} {
		o, err := db.Order(ctx, id)
		if err != nil || o.Data != nil || o.Status != OrderPaid {
			t.Fatalf("order %s: %+v, %v", id, o, err)
		}
		if _, err := json.Marshal(o); err != nil {
			t.Fatalf("order %s as JSON: %v", id, err)
		}
	}
	es, err := db.Unpublished(ctx, 0)
	if err != nil || len(es) != 2 {
		t.Fatalf("outbox %d rows, %v", len(es), err)
	}
	for _, e := range es {
		var f OrderFact
		if err := json.Unmarshal(e.Payload, &f); err != nil || f.Data != nil || f.Paid != f.Total || f.To != OrderPaid {
			t.Fatalf("fact %s: %+v, %v", e.Payload, f, err)
		}
	}
}
