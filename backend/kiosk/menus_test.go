package kiosk

import (
	"strings"
	"testing"

	"github.com/comptoir-pos/comptoir/backend/orders"
)

// A burger menu: a main, a side and a drink chosen among products of the
// catalog, at a menu price. The fries and the cola are 10 % eaten in and
// 5.5 % taken away, the burger 10 % either way, the beer 20 % and not
// payable by meal voucher.
const menusCatalog = `{"currency": "EUR", "categories": [
 {"id": "menus", "name": {"en": "Menus"}, "products": [
  {"id": "menu-burger", "name": {"en": "Burger menu"}, "price": 1200, "vatRate": 1000, "mealVoucher": true,
   "options": [
     {"id": "main", "name": {"en": "Your burger"}, "min": 1, "max": 1, "choices": [
       {"id": "classic", "product": "burger"},
       {"id": "cheese", "product": "cheeseburger", "price": 100}]},
     {"id": "side", "name": {"en": "Your side"}, "min": 1, "max": 1, "choices": [
       {"id": "fries", "product": "fries"},
       {"id": "salad", "product": "salad", "name": {"en": "Small salad"}}]},
     {"id": "drink", "name": {"en": "Your drink"}, "min": 1, "max": 1, "choices": [
       {"id": "cola", "product": "cola"},
       {"id": "beer", "product": "beer", "price": 150}]},
     {"id": "sauce", "name": {"en": "Sauce"}, "min": 0, "max": 1, "choices": [
       {"id": "bbq", "name": {"en": "Barbecue"}, "price": 0}]}
   ]}]},
 {"id": "single", "name": {"en": "On its own"}, "products": [
  {"id": "burger", "name": {"en": "Burger"}, "price": 900, "vatRate": 1000, "mealVoucher": true, "image": "images/burger.svg"},
  {"id": "cheeseburger", "name": {"en": "Cheeseburger"}, "price": 1000, "vatRate": 1000, "mealVoucher": true},
  {"id": "fries", "name": {"en": "Fries"}, "price": 350, "vatRate": 1000, "vatRateTakeAway": 550, "mealVoucher": true},
  {"id": "salad", "name": {"en": "Salad"}, "price": 450, "vatRate": 1000, "vatRateTakeAway": 550, "mealVoucher": true},
  {"id": "cola", "name": {"en": "Cola"}, "price": 300, "vatRate": 1000, "vatRateTakeAway": 550, "mealVoucher": true},
  {"id": "beer", "name": {"en": "Beer"}, "price": 500, "vatRate": 2000}
 ]}]}`

func TestApportionSharesAMenusPriceByThePartsPrices(t *testing.T) {
	for _, tc := range []struct {
		name    string
		price   int64
		parts   []menuPart
		want    []VATPart
		voucher int64
	}{
		// 1200 × 900/1550 = 696.8, × 350/1550 = 270.97, × 300/1550 = 232.3:
		// the 2 cents rounding leaves go to the burger.
		{"one rate", 1200, []menuPart{{1000, 900, true}, {1000, 350, true}, {1000, 300, true}}, []VATPart{{Rate: 1000, Amount: 1200}}, 1200},
		{"taken away", 1200, []menuPart{{1000, 900, true}, {550, 350, true}, {550, 300, false}}, []VATPart{{Rate: 550, Amount: 502}, {Rate: 1000, Amount: 698}}, 968},
		{"a beer", 1200, []menuPart{{1000, 900, true}, {1000, 350, true}, {2000, 500, false}}, []VATPart{{Rate: 1000, Amount: 858}, {Rate: 2000, Amount: 342}}, 858},
		{"one part", 990, []menuPart{{550, 300, true}}, []VATPart{{Rate: 550, Amount: 990}}, 990},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, voucher := apportion(tc.price, tc.parts)
			var sum int64
			for _, p := range got {
				sum += p.Amount
			}
			if sum != tc.price || len(got) != len(tc.want) || voucher != tc.voucher {
				t.Fatalf("got %+v (voucher %d), want %+v (voucher %d)", got, voucher, tc.want, tc.voucher)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Fatalf("got %+v, want %+v", got, tc.want)
				}
			}
		})
	}
}

func TestAMenuIsTaxedPartByPartWhereItIsEaten(t *testing.T) {
	e := newEnv(t, withCatalog(menusCatalog))
	e.must(e.s.Start("en"))
	v := e.must(e.s.ChooseDining(DiningEatIn))

	// The parts take their products' names and pictures.
	var menu ProductView
	for _, c := range e.s.Catalog().Categories {
		for _, p := range c.Products {
			if p.ID == "menu-burger" {
				menu = p
			}
		}
	}
	if ch := menu.Options[0].Choices[0]; ch.Name["en"] != "Burger" || ch.Product != "burger" || ch.Image != "/media/images/burger.svg" {
		t.Fatalf("menu part %+v", ch)
	}
	if ch := menu.Options[1].Choices[1]; ch.Name["en"] != "Small salad" {
		t.Fatalf("a part's own name: %+v", ch)
	}

	// The default choices are a whole menu: AddItem takes it.
	v = e.must(e.s.AddItem("menu-burger", 1))
	l := v.Lines[0]
	if l.UnitPrice != 1200 || len(l.Choices) != 3 || len(l.VATParts) != 1 || l.VATParts[0] != (VATPart{Rate: 1000, Amount: 1200}) {
		t.Fatalf("default menu %+v", l)
	}
	e.must(e.s.SetQuantity(l.ID, 0))

	// With a beer: 12.00 + 1.50, the beer's share and supplement at 20 %.
	v = e.must(e.s.AddWithChoices("menu-burger", 2, []string{"main/classic", "side/fries", "drink/beer", "sauce/bbq"}))
	l = v.Lines[0]
	if l.UnitPrice != 1350 || l.Total != 2700 || len(l.VATParts) != 2 || l.VATParts[0] != (VATPart{Rate: 1000, Amount: 858}) || l.VATParts[1] != (VATPart{Rate: 2000, Amount: 342}) {
		t.Fatalf("menu with a beer %+v", l)
	}
	// 2 × 8.58 at 10 % = 1.56; 2 × (3.42 + 1.50) at 20 % = 1.64.
	if got := taxes(v); got[1000] != 156 || got[2000] != 164 || len(got) != 2 {
		t.Fatalf("taxes %+v", v.Taxes)
	}
	// Meal vouchers pay the burger's and the fries' shares, not the beer.
	if v.VoucherEligible != 2*858 {
		t.Fatalf("voucher eligible %d", v.VoucherEligible)
	}

	// Taken away, the fries' share moves to 5.5 %, the beer's stays.
	v = e.must(e.s.ChooseDining(DiningTakeAway))
	l = v.Lines[0]
	if len(l.VATParts) != 3 || l.VATParts[0] != (VATPart{Rate: 550, Amount: 240}) || l.VATParts[2] != (VATPart{Rate: 2000, Amount: 342}) {
		t.Fatalf("taken away %+v", l.VATParts)
	}

	// The receipt rebuilt from the journal names the parts once, with the
	// supplement, and the terminal got the split in tax_breakdown.
	e.must(e.s.Pay(MethodCard))
	v = e.waitPhase(PhaseApproved)
	r, _, err := orders.OrderReceipt(e.ctx, e.db, e.s.Settings(), v.OrderID)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, rl := range r.Order.Lines {
		names = append(names, rl.Name)
	}
	if got := strings.Join(names, " | "); got != "Burger menu (Burger, Fries, Barbecue) | + Beer" || r.Order.Total() != 2700 {
		t.Fatalf("receipt lines %q, total %d", got, r.Order.Total())
	}
	// 2 × 2.40 at 5.5 % = 0.25; 2 × 6.18 at 10 % = 1.12; 2 × 4.92 at 20 % = 1.64.
	if tb := e.sentTaxes(v.OrderID); len(tb) != 3 || tb[0].TaxAmount != 25 || tb[1].TaxAmount != 112 || tb[2].TaxAmount != 164 {
		t.Fatalf("tax_breakdown %+v", tb)
	}
}

func TestMenuPartsAreChecked(t *testing.T) {
	for _, tc := range []struct{ from, to, field, reason string }{
		{`"product": "cola"}`, `"product": "coke"}`, "options[2].choices[0].product", `"coke" is not another product`},
		{`"product": "cola"}`, `"product": "menu-burger"}`, "options[2].choices[0].product", "not another product"},
		{`"product": "cola"}`, `"product": "cola", "vatRate": 550}`, "options[2].choices[0].vatRate", "its product's rate"},
		{`{"id": "cola", "name": {"en": "Cola"}, "price": 300`, `{"id": "cola", "name": {"en": "Cola"}, "price": 300, "options": [{"id": "o", "name": {"en": "O"}, "min": 0, "max": 1, "choices": [{"id": "x", "product": "beer"}]}]`,
			"options[2].choices[0].product", "is a menu itself"},
	} {
		cat := strings.Replace(menusCatalog, tc.from, tc.to, 1)
		_, err := ParseCatalog("catalog.json", []byte(cat))
		if err == nil || !strings.Contains(err.Error(), tc.field) || !strings.Contains(err.Error(), tc.reason) {
			t.Errorf("%s: %v", tc.to, err)
		}
	}
}
