package kiosk

// The checkout's money rules that a wrong settle would break, each stated
// by its test's name (docs/testing.md lists them).

import (
	"context"
	"testing"

	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/settings"
	"github.com/comptoir-pos/comptoir/backend/terminalsim"
)

// settledOutcome waits until the checkout shows the outcome of its last
// part (nothing paying, nothing cancelling).
func (e *env) settledOutcome() CheckoutView {
	e.t.Helper()
	return e.waitFor("outcome", func(v CheckoutView) bool { return v.Phase != PhasePaying && v.Phase != PhaseCanceling })
}

// A card part the terminal approves for less than was asked is money
// taken that pays nothing until staff look at it: the customer is sent to
// staff, and no further card part asks them for the rest.
func TestRuleAShortCardApprovalIsNeverFollowedByAnotherCardPart(t *testing.T) {
	e := newEnv(t)
	e.sim.Script(terminalsim.Approve().After(0).Misreporting(terminalsim.Misreport{Amount: 100}), terminalsim.Approve().After(0))
	e.cart("croissant", 1) // 130
	e.must(e.s.Pay(MethodCard))
	v := e.settledOutcome()
	if v.Phase != PhaseUnknown || v.Payment.Paid != 0 || v.Payment.Due != 130 {
		t.Fatalf("phase %s, payment %+v: want the customer sent to staff, nothing paid", v.Phase, v.Payment)
	}
	if atts, err := e.db.AttemptsForOrder(e.ctx, v.OrderID); err != nil || len(atts) != 1 {
		t.Fatalf("attempts %+v, %v: a second part followed a short approval", atts, err)
	}
	if d := e.debits(); len(d) != 1 {
		t.Fatalf("ledger %+v", d)
	}
	if o := e.order(v.OrderID); o.Status != journal.OrderNeedsAttention {
		t.Fatalf("order %s", o.Status)
	}
}

// The same for the meal-voucher part of a split payment: approved for
// less than was asked, it starts no card part for the rest.
func TestRuleAShortMealVoucherApprovalStartsNoCardPart(t *testing.T) {
	e := newEnv(t)
	e.sim.Script(terminalsim.Approve().After(0).Misreporting(terminalsim.Misreport{Amount: 100}), terminalsim.Approve().After(0))
	e.cart("croissant", 2, "cola", 1) // 540, 260 eligible
	e.must(e.s.Pay(MethodVoucherThenCard))
	v := e.settledOutcome()
	if v.Phase != PhaseUnknown || v.Payment.Paid != 0 || v.Payment.Due != 540 {
		t.Fatalf("phase %s, payment %+v: want the customer sent to staff, nothing paid", v.Phase, v.Payment)
	}
	if atts, err := e.db.AttemptsForOrder(e.ctx, v.OrderID); err != nil || len(atts) != 1 {
		t.Fatalf("attempts %+v, %v: a card part followed a short voucher approval", atts, err)
	}
	if d := e.debits(); len(d) != 1 {
		t.Fatalf("ledger %+v", d)
	}
}

// A tip chosen on the terminal is the customer's gift, never a payment of
// the order: after a meal-voucher part approved with a tip, the card part
// asks for all the rest, and the order is paid by the two parts' amounts.
func TestRuleATipNeverPaysForTheOrder(t *testing.T) {
	e := newEnv(t, withSetup(func(_ string, db *journal.DB) {
		if err := db.SetSetting(context.Background(), settings.SettingMode, []byte(`"counter"`)); err != nil {
			t.Fatal(err)
		}
	}))
	e.sim.SetTipsEnabled(true)
	e.sim.Script(terminalsim.Approve().After(0).WithTip(100).WithTipDelay(0), terminalsim.Approve().After(0).WithTipDelay(0))
	e.cart("croissant", 2, "cola", 1) // 540, 260 eligible
	e.must(e.s.Pay(MethodVoucherThenCard))
	v := e.settledOutcome()
	if v.Phase != PhaseApproved || v.Payment.Paid != 540 || v.Payment.Due != 0 {
		t.Fatalf("phase %s, payment %+v", v.Phase, v.Payment)
	}
	d := e.debits()
	if len(d) != 2 || d[0].Amount != 260 || d[0].GiftAmount != 100 || d[1].Amount != 280 || d[1].GiftAmount != 0 {
		t.Fatalf("ledger %+v: the card part must ask 540 - 260, the tip aside", d)
	}
	m, err := e.db.OrderMoney(e.ctx, v.OrderID)
	if err != nil || m.Paid != 540 || m.Gifts != 100 {
		t.Fatalf("money %+v, %v", m, err)
	}
}
