package kiosk

import (
	"context"
	"strings"
	"testing"

	"github.com/comptoir-pos/comptoir/backend/orders"
)

// A coffee in two sizes (one, required), with syrups (several, optional;
// one at its own VAT rate and not payable by meal voucher).
const optionsCatalog = `{"currency": "EUR", "categories": [{"id": "drinks", "name": {"fr": "Boissons", "en": "Drinks"}, "products": [
  {"id": "latte", "name": {"fr": "Latte", "en": "Latte"}, "price": 400, "vatRate": 1000, "vatRateTakeAway": 550, "mealVoucher": true,
   "options": [
     {"id": "size", "name": {"fr": "Taille", "en": "Size"}, "min": 1, "max": 1, "choices": [
       {"id": "m", "name": {"fr": "Moyen", "en": "Medium"}, "price": 0},
       {"id": "l", "name": {"fr": "Grand", "en": "Large"}, "price": 80}]},
     {"id": "syrup", "name": {"fr": "Sirops", "en": "Syrups"}, "min": 0, "max": 2, "choices": [
       {"id": "vanilla", "name": {"fr": "Vanille", "en": "Vanilla"}, "price": 50},
       {"id": "caramel", "name": {"fr": "Caramel", "en": "Caramel"}, "price": 50, "vatRate": 2000, "mealVoucher": false}]}
   ]}
]}]}`

func TestChoicesMakeTheLineTheirPricesAndTheirVAT(t *testing.T) {
	e := newEnv(t, withCatalog(optionsCatalog))
	e.must(e.s.Start("en"))
	e.must(e.s.ChooseDining(DiningEatIn))
	for _, bad := range [][]string{{}, {"size/xl"}, {"size/m", "size/l"}, {"size/m", "syrup/vanilla", "syrup/vanilla"}} {
		if v, _ := e.s.AddWithChoices("latte", 1, bad); v.Error != ErrChoices {
			t.Fatalf("%v: %+v", bad, v.Error)
		}
	}
	// AddItem takes the default choices: the first size.
	if v := e.must(e.s.AddItem("latte", 1)); len(v.Lines) != 1 || v.Lines[0].Choices[0].ID != "m" || v.Lines[0].UnitPrice != 400 {
		t.Fatalf("default choices %+v", v.Lines)
	}
	e.must(e.s.SetQuantity("latte~size/m", 0))
	v := e.must(e.s.AddWithChoices("latte", 2, []string{"syrup/caramel", "size/l"}))
	if len(v.Lines) != 1 {
		t.Fatalf("lines %+v", v.Lines)
	}
	l := v.Lines[0]
	// 4.00 + 0.80 + 0.50, choices in the catalog's order.
	if l.UnitPrice != 530 || l.Total != 1060 || len(l.Choices) != 2 || l.Choices[0].ID != "l" || l.Choices[1].VATRate != 2000 || l.Choices[0].VATRate != 1000 {
		t.Fatalf("line %+v", l)
	}
	// VAT: 2 x 4.80 at 10 % and 2 x 0.50 at 20 %; vouchers: all but the caramel.
	if got := taxes(v); got[1000] != 87 || got[2000] != 17 {
		t.Fatalf("taxes %+v", v.Taxes)
	}
	if v.VoucherEligible != 960 {
		t.Fatalf("voucher eligible %d", v.VoucherEligible)
	}
	// The same product with other choices is another line; the same
	// choices in another order, the same line.
	e.must(e.s.AddWithChoices("latte", 1, []string{"size/m"}))
	v = e.must(e.s.AddWithChoices("latte", 1, []string{"size/l", "syrup/caramel"}))
	if len(v.Lines) != 2 || v.Lines[0].Qty != 3 {
		t.Fatalf("lines %+v", v.Lines)
	}
	// Taken away: the product's rate follows, an option's own rate stays.
	v = e.must(e.s.ChooseDining(DiningTakeAway))
	if v.Lines[0].VATRate != 550 || v.Lines[0].Choices[0].VATRate != 550 || v.Lines[0].Choices[1].VATRate != 2000 {
		t.Fatalf("taken away %+v", v.Lines[0])
	}
	// Editing a line's choices; into an identical line, they merge.
	v = e.must(e.s.SetChoices(v.Lines[1].ID, []string{"size/l", "syrup/caramel"}))
	if len(v.Lines) != 1 || v.Lines[0].Qty != 4 {
		t.Fatalf("after edit %+v", v.Lines)
	}
	if v, _ := e.s.SetChoices(v.Lines[0].ID, []string{"syrup/caramel"}); v.Error != ErrChoices || len(v.Lines) != 1 || v.Lines[0].Qty != 4 {
		t.Fatalf("a refused edit changed the cart: %+v", v)
	}

	// The receipt rebuilt from the journal shows the choices.
	v = e.must(e.s.Pay(MethodCard))
	v = e.waitPhase(PhaseApproved)
	r, _, err := orders.OrderReceipt(context.Background(), e.db, e.s.Settings(), v.OrderID)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, l := range r.Order.Lines {
		names = append(names, l.Name)
	}
	if got := strings.Join(names, " | "); got != "Latte | + Large | + Caramel" || r.Order.Total() != 4*530 {
		t.Fatalf("receipt lines %q, total %d", got, r.Order.Total())
	}
}

func TestOptionGroupsAreChecked(t *testing.T) {
	for _, tc := range []struct{ edit, field string }{
		{`"min": 1, "max": 1`, ""},
		{`"min": 2, "max": 1`, "options[0].max"},
		{`"min": 0, "max": 3`, "options[0].max"},
	} {
		cat := strings.Replace(optionsCatalog, `"min": 1, "max": 1`, tc.edit, 1)
		_, err := ParseCatalog("catalog.json", []byte(cat))
		if tc.field == "" && err != nil {
			t.Fatalf("valid catalog refused: %v", err)
		}
		if tc.field != "" && (err == nil || !strings.Contains(err.Error(), tc.field)) {
			t.Fatalf("%s: %v", tc.edit, err)
		}
	}
	cat := strings.Replace(optionsCatalog, `"price": 80}`, `"price": 80, "colour": "red"}`, 1)
	if _, err := ParseCatalog("catalog.json", []byte(cat)); err == nil || !strings.Contains(err.Error(), `unknown field "colour"`) || !strings.Contains(err.Error(), "line 6") {
		t.Fatalf("unknown choice field: %v", err)
	}
}

// A line is one product with one set of choices, whatever the catalog's
// ids hold: a product whose id reads like another's with a choice
// ("burger~x/truffle"), or choices and groups whose ids hold the '+' that
// joins them, make lines of their own, at their own prices.
func TestLineIDsDoNotCollide(t *testing.T) {
	cat := `{"currency":"EUR","categories":[{"id":"c","name":{"fr":"C"},"products":[
	 {"id":"burger","name":{"fr":"Burger"},"price":1500,"vatRate":1000,
	  "options":[{"id":"x","name":{"fr":"Extra"},"min":0,"max":1,"choices":[{"id":"truffle","name":{"fr":"Truffe"},"price":2000}]}]},
	 {"id":"burger~x/truffle","name":{"fr":"Autocollant"},"price":10,"vatRate":2000},
	 {"id":"bowl","name":{"fr":"Bol"},"price":900,"vatRate":1000,"options":[
	  {"id":"x","name":{"fr":"Base"},"min":1,"max":1,"choices":[{"id":"a","name":{"fr":"A"},"price":0},{"id":"a+b","name":{"fr":"AB"},"price":300}]},
	  {"id":"c","name":{"fr":"Sauce"},"min":0,"max":1,"choices":[{"id":"z","name":{"fr":"Z"},"price":100}]},
	  {"id":"b+c","name":{"fr":"Topping"},"min":0,"max":1,"choices":[{"id":"z","name":{"fr":"Z2"},"price":700}]}]}]}]}`
	e := newEnv(t, withCatalog(cat))
	e.must(e.s.Start("fr"))
	e.must(e.s.ChooseDining(DiningEatIn))
	e.must(e.s.AddItem("burger~x/truffle", 1))
	v := e.must(e.s.AddWithChoices("burger", 5, []string{"x/truffle"}))
	if len(v.Lines) != 2 || v.Total != 10+5*3500 {
		t.Fatalf("a sticker and 5 truffle burgers: %+v, total %d", v.Lines, v.Total)
	}
	for _, l := range v.Lines {
		if want := map[string]int64{"burger~x/truffle": 10, "burger": 3500}[l.ProductID]; l.UnitPrice != want || (l.ProductID == "burger") != (l.Qty == 5) {
			t.Fatalf("line %+v", l)
		}
	}
	sticker := v.Lines[0].ID
	v = e.must(e.s.AddWithChoices("bowl", 1, []string{"x/a+b", "c/z"}))
	v = e.must(e.s.AddWithChoices("bowl", 1, []string{"x/a", "b+c/z"}))
	if len(v.Lines) != 4 || v.Lines[2].UnitPrice != 1300 || v.Lines[3].UnitPrice != 1600 || v.Lines[2].ID == v.Lines[3].ID {
		t.Fatalf("two bowls of other choices: %+v", v.Lines[2:])
	}
	// Each line is reached by its own id.
	v = e.must(e.s.SetQuantity(sticker, 0))
	if len(v.Lines) != 3 || v.Lines[0].ProductID != "burger" || v.Lines[0].Qty != 5 {
		t.Fatalf("after removing the sticker: %+v", v.Lines)
	}
}
