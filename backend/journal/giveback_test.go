package journal

import (
	"strings"
	"testing"
)

// Money the provider gave back outside Comptoir (a back-office refund, a
// reversal on the terminal's keypad) counts in what the order gave back
// once adopted, so that no give-back offers more than is left; adopted
// once; a refund by API of the same transaction is refused after it, as
// the provider would; more given back than taken sends the order to staff.
func TestAdoptGiveBack(t *testing.T) {
	ctx := t.Context()
	db := openMemory(t)
	newOrder(t, db, "o", "EUR", 990)
	debit := approve(t, db, "o", 990, Charge{Amount: 990})
	g := AdoptedGiveBack{OrderID: "o", Kind: KindRefund, TransactionID: "bo-refund-1", InitialTransactionID: debit.TransactionID,
		Amount: 500, Currency: "eur", Raw: []byte(`{"transactionId":"bo-refund-1","type":"refund","amount":500}`), Who: "system:reconcile"}
	a, err := db.AdoptGiveBack(ctx, g)
	if err != nil {
		t.Fatal(err)
	}
	m, _ := db.OrderMoney(ctx, "o")
	if m.Refunded != 500 || m.Givable() != 490 || a.State != StateApproved || a.SendCount != 0 {
		t.Fatalf("money %+v, attempt %+v", m, a)
	}
	evs, _ := db.Events(ctx, a.UUID)
	if len(evs) != 1 || evs[0].Kind != EventAdopted || evs[0].Actor != "system:reconcile" {
		t.Fatalf("events %+v", evs)
	}
	_, err = db.AdoptGiveBack(ctx, g)
	wantCode(t, err, ECONFLICT)
	// The provider refunds a transaction once by API: the journal now knows.
	id := newUUID(t)
	_, err = db.PrepareAttempt(ctx, Attempt{UUID: id, OrderID: "o", Kind: KindRefund, Channel: ChannelWebservices, Amount: 400,
		Policy: PolicyRefund, Terminal: "webservices/" + debit.TransactionID, InitialTransactionID: debit.TransactionID,
		RequestBody: []byte(`{"amount":400}`)})
	wantCode(t, err, ECONFLICT)
	// More than what is left: the card-present refund of 9.90 is refused.
	id = newUUID(t)
	_, err = db.PrepareAttempt(ctx, Attempt{UUID: id, OrderID: "o", Kind: KindRefund, Amount: 990, Policy: PolicyRefund,
		Terminal: "T-refund", RequestBody: []byte(`{"amount":990,"transactionType":"refund","idempotentUuid":"` + id + `","cartId":"o"}`)})
	wantCode(t, err, ECONFLICT)
	if st := orderStatus(t, db, "o"); st != OrderPaid {
		t.Fatalf("status %s after a partial refund elsewhere", st)
	}
	// A reversal made on the keypad of the whole 9.90: more than was left.
	if _, err := db.AdoptGiveBack(ctx, AdoptedGiveBack{OrderID: "o", Kind: KindReversal, TransactionID: "kp-rev-1",
		InitialTransactionID: debit.TransactionID, Amount: 990, Who: "system:reconcile"}); err != nil {
		t.Fatal(err)
	}
	o, _ := db.Order(ctx, "o")
	if o.Status != OrderNeedsAttention || !strings.Contains(o.Attention, "gave back 1490 of the 990") {
		t.Fatalf("order after more given back than taken %+v", o)
	}
	for _, bad := range []AdoptedGiveBack{
		{OrderID: "o", Kind: KindDebit, TransactionID: "x", Amount: 1, Who: "w"},
		{OrderID: "o", Kind: KindReversal, TransactionID: "x", Amount: 1, Who: "w"},
		{OrderID: "o", Kind: KindRefund, TransactionID: "x", Amount: 0, Who: "w"},
		{OrderID: "o", Kind: KindRefund, TransactionID: "x", Amount: 1},
		{OrderID: "nope", Kind: KindRefund, TransactionID: "x", Amount: 1, Who: "w"},
	} {
		if _, err := db.AdoptGiveBack(ctx, bad); err == nil {
			t.Fatalf("adopted %+v", bad)
		}
	}
}
