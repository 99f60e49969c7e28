package kiosk

import (
	"strings"
	"testing"

	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/receipt"
)

func TestOrderReceiptFromTheJournal(t *testing.T) {
	e := newEnv(t)
	e.cart("croissant", 2, "cafe-creme", 1)
	v := e.must(e.s.Pay(MethodCard))
	v = e.waitPhase(PhaseApproved)
	e.waitFor("order paid", func(CheckoutView) bool { return e.order(v.OrderID).Status == journal.OrderPaid })

	r, opt, err := OrderReceipt(e.ctx, e.db, e.s.Settings(), v.OrderID)
	if err != nil {
		t.Fatal(err)
	}
	if r.Order.Number != v.OrderNumber || len(r.Order.Lines) != 2 || r.Order.Total() != v.Total || len(r.Payments) != 1 {
		t.Fatalf("receipt %+v", r)
	}
	text := receipt.CustomerReceiptText(r, opt)
	for _, want := range []string{"Croissant", r.Payments[0].TransactionID} {
		if !strings.Contains(text, want) {
			t.Errorf("receipt text lacks %q:\n%s", want, text)
		}
	}
	if _, _, err := OrderReceipt(e.ctx, e.db, e.s.Settings(), "nope"); journal.ErrorCode(err) != journal.ENOTFOUND {
		t.Errorf("unknown order: %v", err)
	}
}
