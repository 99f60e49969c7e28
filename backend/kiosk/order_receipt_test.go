package kiosk

import (
	"strings"
	"testing"

	"github.com/comptoir-pos/comptoir/backend/fault"
	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/orders"
	"github.com/comptoir-pos/comptoir/backend/payment"
	"github.com/comptoir-pos/comptoir/backend/receipt"
	"github.com/comptoir-pos/comptoir/backend/terminalsim"
)

func TestOrderReceiptFromTheJournal(t *testing.T) {
	e := newEnv(t)
	e.cart("croissant", 2, "cafe-creme", 1)
	v := e.must(e.s.Pay(MethodCard))
	v = e.waitPhase(PhaseApproved)
	e.waitFor("order paid", func(CheckoutView) bool { return e.order(v.OrderID).Status == journal.OrderPaid })

	r, opt, err := orders.OrderReceipt(e.ctx, e.db, e.s.Settings(), v.OrderID)
	if err != nil {
		t.Fatal(err)
	}
	if r.Order.Number != v.OrderNumber || len(r.Order.Lines) != 2 || r.Order.Total() != v.Total || len(r.Payments) != 1 {
		t.Fatalf("receipt %+v", r)
	}
	text := receipt.CustomerReceiptText(r, opt)
	txn := r.Payments[0].TransactionID
	for _, want := range []string{"Croissant", "Transaction ..." + txn[len(txn)-8:], "Carte"} {
		if !strings.Contains(text, want) {
			t.Errorf("receipt text lacks %q:\n%s", want, text)
		}
	}
	if _, _, err := orders.OrderReceipt(e.ctx, e.db, e.s.Settings(), "nope"); fault.CodeOf(err) != fault.ENOTFOUND {
		t.Errorf("unknown order: %v", err)
	}
}

// An amount keyed at the counter has no lines: its receipt still has the
// total, the payment with the terminal's tip, and the card ticket, and no
// VAT it does not know.
func TestOrderReceiptOfAKeyedAmount(t *testing.T) {
	e := newEnv(t)
	if err := e.db.CreateOrder(e.ctx, journal.Order{ID: "keyed-1", Currency: "EUR", Total: 1250}); err != nil {
		t.Fatal(err)
	}
	e.sim.SetTipsEnabled(true)
	e.sim.Script(terminalsim.Approve().WithTip(150))
	v, err := e.o.Pay(e.ctx, payment.Request{OrderID: "keyed-1", Amount: 1250, Policy: journal.PolicyCounter})
	if err != nil || v.State != journal.StateApproved {
		t.Fatalf("pay %+v, %v", v, err)
	}
	r, opt, err := orders.OrderReceipt(e.ctx, e.db, e.s.Settings(), "keyed-1")
	if err != nil {
		t.Fatal(err)
	}
	if r.Order.Total() != 1250 || len(r.Payments) != 1 || r.Payments[0].Tip != 150 || r.Payments[0].TransactionID != v.TransactionID {
		t.Fatalf("receipt %+v", r)
	}
	if s := receipt.VATSummary(r.Order); len(s) != 0 {
		t.Fatalf("VAT of a keyed amount: %+v", s)
	}
	text := receipt.CustomerReceiptText(r, opt)
	for _, want := range []string{"12", "1,50", v.TransactionID} {
		if !strings.Contains(strings.ReplaceAll(text, ".", ","), want) {
			t.Errorf("receipt text lacks %q:\n%s", want, text)
		}
	}
}

// A part paid with a meal-voucher card is called a meal voucher on the
// receipt, never "Card ... CONECS".
func TestOrderReceiptCallsAMealVoucherOne(t *testing.T) {
	e := newEnv(t)
	e.sim.Script(terminalsim.Approve().After(0).WithCard("conecs"), terminalsim.Approve().After(0))
	e.cart("croissant", 2, "cola", 1)
	e.must(e.s.Pay(MethodVoucherThenCard))
	v := e.waitPhase(PhaseApproved)
	e.waitFor("order paid", func(CheckoutView) bool { return e.order(v.OrderID).Status == journal.OrderPaid })
	r, opt, err := orders.OrderReceipt(e.ctx, e.db, e.s.Settings(), v.OrderID)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Payments) != 2 || r.Payments[0].Kind != receipt.KindVoucher || r.Payments[1].Kind != receipt.KindCard {
		t.Fatalf("parts %+v", r.Payments)
	}
	if text := receipt.CustomerReceiptText(r, opt); !strings.Contains(text, "Titre-restaurant") {
		t.Errorf("receipt:\n%s", text)
	}
}
