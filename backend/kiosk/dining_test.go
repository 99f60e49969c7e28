package kiosk

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/localapi"
	"github.com/comptoir-pos/comptoir/backend/orders"
	"github.com/comptoir-pos/comptoir/backend/settings"
)

// A sandwich: 10 % eaten in, 5.5 % taken away; a soda: 5.5 % either way.
const diningCatalog = `{"currency": "EUR", "categories": [{"id": "food", "name": {"fr": "Repas", "en": "Food"}, "products": [
  {"id": "sandwich", "name": {"fr": "Sandwich", "en": "Sandwich"}, "price": 660, "vatRate": 1000, "vatRateTakeAway": 550},
  {"id": "soda", "name": {"fr": "Soda", "en": "Soda"}, "price": 300, "vatRate": 550}
]}]}`

// taxes is the VAT of a view by rate.
func taxes(v CheckoutView) map[int]int64 {
	m := map[int]int64{}
	for _, t := range v.Taxes {
		m[t.Rate] = t.Amount
	}
	return m
}

// sentTaxes is the tax_breakdown the terminal got with the order's first
// payment request.
func (e *env) sentTaxes(orderID string) []localapi.Tax {
	e.t.Helper()
	atts, _ := e.db.AttemptsForOrder(e.ctx, orderID)
	var body struct {
		ReceiptTicket struct {
			TaxBreakdown []localapi.Tax `json:"tax_breakdown"`
		} `json:"receiptTicket"`
	}
	if len(atts) == 0 || json.Unmarshal(atts[0].RequestBody, &body) != nil {
		e.t.Fatalf("no payment request for order %s", orderID)
	}
	return body.ReceiptTicket.TaxBreakdown
}

func TestEatInOrTakeAwayDecidesTheVAT(t *testing.T) {
	e := newEnv(t, withCatalog(diningCatalog))
	v := e.must(e.s.Start("fr"))
	if v.Phase != PhaseDining || !v.DiningAsked || v.Dining != "" {
		t.Fatalf("after Start: %+v", v)
	}
	if v, _ := e.s.AddItem("sandwich", 1); v.Error != ErrWrongPhase {
		t.Fatalf("a product added before the customer said where they eat: %+v", v)
	}
	if v, _ := e.s.ChooseDining("terrace"); v.Error != ErrDining || v.Phase != PhaseDining {
		t.Fatalf("an unknown dining: %+v", v)
	}
	e.must(e.s.ChooseDining(DiningTakeAway))
	e.must(e.s.AddItem("sandwich", 1))
	v = e.must(e.s.AddItem("soda", 1))
	// 660 at 5.5 % holds 34.4 → 34, 300 at 5.5 % holds 15.6 → 16: one rate, 960 at 5.5 % holds 50.
	if v.Lines[0].VATRate != 550 || len(v.Taxes) != 1 || taxes(v)[550] != 50 {
		t.Fatalf("taken away: lines %+v taxes %+v", v.Lines, v.Taxes)
	}
	// Changed while ordering: the lines take the other rates.
	v = e.must(e.s.ChooseDining(DiningEatIn))
	if v.Dining != DiningEatIn || v.Lines[0].VATRate != 1000 || v.Lines[1].VATRate != 550 || taxes(v)[1000] != 60 || taxes(v)[550] != 16 {
		t.Fatalf("eaten in: lines %+v taxes %+v", v.Lines, v.Taxes)
	}
	if v.Total != 960 {
		t.Fatalf("the price changed with the VAT: %d", v.Total)
	}

	v = e.must(e.s.Pay(MethodCard))
	if v, _ := e.s.ChooseDining(DiningTakeAway); v.Error != ErrWrongPhase || v.Dining != DiningEatIn {
		t.Fatalf("dining changed after Pay: %+v", v)
	}
	v = e.waitPhase(PhaseApproved)

	// The terminal got the eaten-in VAT in tax_breakdown.
	got := map[int]int64{} // a rate that is not a whole percent has no tax_percentage: -1
	for _, tx := range e.sentTaxes(v.OrderID) {
		pct := -1
		if tx.TaxPercentage != nil {
			pct = *tx.TaxPercentage
		}
		got[pct] = tx.TaxAmount
	}
	if got[10] != 60 || got[-1] != 16 {
		t.Fatalf("tax_breakdown %+v", got)
	}
	// The journal keeps it, and the rebuilt receipt and the order ticket say it.
	var data orders.Data
	if err := json.Unmarshal(e.order(v.OrderID).Data, &data); err != nil || data.Dining != string(DiningEatIn) {
		t.Fatalf("order data %s (%v)", e.order(v.OrderID).Data, err)
	}
	e.waitFor("order ticket", func(CheckoutView) bool { return len(e.printedFrom("print")) == 1 })
	if tk := e.printedFrom("print")[0].Text; !strings.Contains(tk, "SUR PLACE") {
		t.Fatalf("order ticket %q", tk)
	}
	r, _, err := orders.OrderReceipt(context.Background(), e.db, e.s.Settings(), v.OrderID)
	if err != nil || r.Order.Dining != string(DiningEatIn) || r.Order.Lines[0].VATRate != 1000 {
		t.Fatalf("rebuilt receipt %+v (%v)", r.Order, err)
	}
}

func TestAShopThatServesOneWayDoesNotAsk(t *testing.T) {
	e := newEnv(t, withCatalog(diningCatalog), withSetup(func(_ string, db *journal.DB) {
		if err := db.SetSetting(context.Background(), settings.SettingDining, json.RawMessage(`"take_away"`)); err != nil {
			t.Fatal(err)
		}
	}))
	v := e.must(e.s.Start("en"))
	if v.Phase != PhaseOrdering || v.Dining != DiningTakeAway || v.DiningAsked {
		t.Fatalf("after Start: %+v", v)
	}
	if v, _ := e.s.ChooseDining(DiningEatIn); v.Error != ErrWrongPhase {
		t.Fatalf("dining changed in a shop that serves one way: %+v", v)
	}
	if v := e.must(e.s.AddItem("sandwich", 1)); v.Lines[0].VATRate != 550 {
		t.Fatalf("line %+v", v.Lines[0])
	}
}
