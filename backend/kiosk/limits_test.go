package kiosk

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
)

// A quantity that would wrap the line's count (have + qty past MaxInt) is
// refused, and the cart is left as it was: no negative quantity, no line
// at 0.00, nothing for the order ticket or the fiscal ticket to print.
func TestAddItemRefusesAQuantityThatWouldWrap(t *testing.T) {
	e := newEnv(t)
	e.cart("croissant", 1)
	for _, tc := range []struct {
		name string
		call func() (CheckoutView, error)
	}{
		{"AddItem MaxInt", func() (CheckoutView, error) { return e.s.AddItem("croissant", math.MaxInt) }},
		{"AddItem MaxInt-1", func() (CheckoutView, error) { return e.s.AddItem("croissant", math.MaxInt-1) }},
		{"AddItem MinInt", func() (CheckoutView, error) { return e.s.AddItem("croissant", math.MinInt) }},
		{"AddWithChoices MaxInt", func() (CheckoutView, error) { return e.s.AddWithChoices("croissant", math.MaxInt, nil) }},
		{"SetQuantity MaxInt", func() (CheckoutView, error) { return e.s.SetQuantity("croissant", math.MaxInt) }},
		{"SetQuantity MaxQty+1", func() (CheckoutView, error) { return e.s.SetQuantity("croissant", MaxQty+1) }},
		{"AddItem up to MaxQty+1", func() (CheckoutView, error) { return e.s.AddItem("croissant", MaxQty) }},
	} {
		v, err := tc.call()
		if err != nil {
			t.Fatal(err)
		}
		if v.Error != ErrQuantity {
			t.Fatalf("%s: error %q, want %q", tc.name, v.Error, ErrQuantity)
		}
		if len(v.Lines) != 1 || v.Lines[0].Qty != 1 || v.Lines[0].Total != 130 || v.Total != 130 {
			t.Fatalf("%s: the cart changed: %+v total %d", tc.name, v.Lines, v.Total)
		}
	}
	// Up to MaxQty is a sale.
	if v := e.must(e.s.AddItem("croissant", MaxQty-1)); v.Lines[0].Qty != MaxQty || v.Total != MaxQty*130 {
		t.Fatalf("%d croissants: %+v", MaxQty, v.Lines)
	}
}

// boundsCatalog has a product at the highest price and an option group
// that can bring one unit to MaxUnitPrice exactly.
func boundsCatalog(products int) string {
	var sb strings.Builder
	sb.WriteString(`{"currency": "EUR", "categories": [{"id": "c", "name": {"fr": "C"}, "products": [
  {"id": "dear", "name": {"fr": "Cher"}, "price": 100000, "vatRate": 2000},
  {"id": "full", "name": {"fr": "Plein"}, "price": 100000, "vatRate": 2000, "options": [
    {"id": "o", "name": {"fr": "O"}, "min": 0, "max": 2, "choices": [
      {"id": "a", "name": {"fr": "A"}, "price": 60000}, {"id": "b", "name": {"fr": "B"}, "price": 40000}, {"id": "z", "name": {"fr": "Z"}, "price": 0}]}]}`)
	for i := range products {
		fmt.Fprintf(&sb, `,
  {"id": "p%d", "name": {"fr": "P%d"}, "price": 100, "vatRate": 550}`, i, i)
	}
	sb.WriteString("]}]}")
	return sb.String()
}

// An order's total is checked at each change of the cart: past
// MaxOrderTotal the change is refused and the cart stays as it was.
func TestCartTotalHasACeiling(t *testing.T) {
	e := newEnv(t, withCatalog(boundsCatalog(0)))
	e.cart("dear", 9)
	// 9 × 1 000.00 + 2 000.00 would pass 10 000.00.
	v, _ := e.s.AddWithChoices("full", 1, []string{"o/a", "o/b"})
	if v.Error != ErrOrderLimit || v.Total != 900_000 || len(v.Lines) != 1 {
		t.Fatalf("over the ceiling: error %q total %d lines %d", v.Error, v.Total, len(v.Lines))
	}
	if v, _ = e.s.SetQuantity("dear", 11); v.Error != ErrOrderLimit || v.Total != 900_000 {
		t.Fatalf("SetQuantity over the ceiling: error %q total %d", v.Error, v.Total)
	}
	// Exactly the ceiling is a sale.
	if v := e.must(e.s.AddItem("dear", 1)); v.Total != MaxOrderTotal {
		t.Fatalf("total %d, want %d", v.Total, MaxOrderTotal)
	}
	if v, _ = e.s.AddItem("full", 1); v.Error != ErrOrderLimit || v.Total != MaxOrderTotal {
		t.Fatalf("one more: error %q total %d", v.Error, v.Total)
	}
}

// A cart holds at most MaxLines different lines.
func TestCartLinesHaveACeiling(t *testing.T) {
	e := newEnv(t, withCatalog(boundsCatalog(MaxLines+1)))
	e.cart()
	for i := range MaxLines {
		e.must(e.s.AddItem(fmt.Sprintf("p%d", i), 1))
	}
	v, _ := e.s.AddItem(fmt.Sprintf("p%d", MaxLines), 1)
	if v.Error != ErrOrderLimit || len(v.Lines) != MaxLines {
		t.Fatalf("line %d: error %q, %d lines", MaxLines+1, v.Error, len(v.Lines))
	}
	// More of a line already there is still possible.
	if v := e.must(e.s.AddItem("p0", 1)); v.Lines[0].Qty != 2 {
		t.Fatalf("p0: %+v", v.Lines[0])
	}
}

// A product that could cost more than MaxUnitPrice with its dearest
// options is refused when the catalog is loaded, naming the product.
func TestCatalogRefusesAProductDearerThanALineMayBe(t *testing.T) {
	ok := boundsCatalog(0)
	if _, err := ParseCatalog("catalog.json", []byte(ok)); err != nil {
		t.Fatalf("a product at MaxUnitPrice exactly: %v", err)
	}
	for name, edit := range map[string]func(string) string{
		"options add up": func(s string) string { return strings.Replace(s, `"price": 40000}`, `"price": 40001}`, 1) },
		"max takes three": func(s string) string {
			return strings.Replace(strings.Replace(s, `"max": 2`, `"max": 3`, 1), `"price": 0}]}]}`, `"price": 5}]}]}`, 1)
		},
	} {
		_, err := ParseCatalog("catalog.json", []byte(edit(ok)))
		var ce *CatalogError
		if !errors.As(err, &ce) {
			t.Fatalf("%s: error %v is not a *CatalogError", name, err)
		}
		if ce.Field != "categories[0].products[1].price" || !strings.Contains(ce.Reason, "dearest options") {
			t.Fatalf("%s: field %q reason %q", name, ce.Field, ce.Reason)
		}
	}
}

// The checked sums never wrap: a sum or a product past int64 is refused,
// and so is a cart whose line says another total than its quantity gives.
func TestCheckedCents(t *testing.T) {
	if _, ok := addCents(math.MaxInt64, 1); ok {
		t.Error("MaxInt64+1 accepted")
	}
	if _, ok := addCents(-1, 1); ok {
		t.Error("a negative amount accepted")
	}
	if _, ok := mulCents(math.MaxInt64, 2); ok {
		t.Error("MaxInt64×2 accepted")
	}
	if _, ok := mulCents(math.MinInt64, 1); ok {
		t.Error("MinInt64×1 accepted")
	}
	if v, ok := mulCents(MaxQty, MaxUnitPrice); !ok || v != MaxQty*MaxUnitPrice {
		t.Errorf("MaxQty×MaxUnitPrice = %d, %v", v, ok)
	}
	line := func(qty int, unit, total int64) cartLine {
		return cartLine{LineView: LineView{Qty: qty, UnitPrice: unit, Total: total}}
	}
	for name, lines := range map[string][]cartLine{
		"wrapped quantity": {line(math.MinInt, 130, 0)},
		"wrong total":      {line(2, 130, 0)},
		"past the ceiling": {line(MaxQty, MaxUnitPrice, MaxQty*MaxUnitPrice)},
	} {
		if _, ok := cartTotal(lines); ok {
			t.Errorf("%s: accepted", name)
		}
	}
	if v, ok := cartTotal([]cartLine{line(2, 130, 260), line(1, 320, 320)}); !ok || v != 580 {
		t.Errorf("a fair cart: %d, %v", v, ok)
	}
}

// Pay checks the cart's bounds again, whatever put the lines there: a
// line beyond them never becomes a charge.
func TestPayRefusesACartBeyondItsBounds(t *testing.T) {
	e := newEnv(t)
	e.cart("croissant", 1)
	e.s.mu.Lock()
	l := e.s.co.lines[0]
	l.Qty = MaxQty + 1
	l.Total = int64(l.Qty) * l.UnitPrice
	e.s.co.lines[0] = l
	e.s.mu.Unlock()
	if v, _ := e.s.Pay(MethodCard); v.Error != ErrOrderLimit || v.Phase != PhaseOrdering {
		t.Fatalf("Pay of a line of %d: %s %q", l.Qty, v.Phase, v.Error)
	}
	if d := e.debits(); len(d) != 0 {
		t.Fatalf("charged %+v", d)
	}
}
