package kiosk

import (
	"fmt"
	"math"
	"slices"
)

// Limits of a catalog and of a cart. Whatever the customer taps and
// whatever the catalog file says, an amount stays within them, so that no
// sum can wrap: a cart, an order ticket, a receipt and the fiscal ticket
// only ever see positive amounts that the terminal can take. A price
// beyond MaxPrice is a typing error in the catalog, not a sale.
const (
	MaxPrice   = 100_000 // cents: 1 000.00, a product's price or an option's
	MaxVATRate = 10_000  // basis points: 100 %
	// MaxQty is how many of one line a cart holds (1 to 99).
	MaxQty = 99
	// MaxUnitPrice bounds one unit of a line: a product with its dearest
	// options (as many of each group as the group allows). A catalog whose
	// product can exceed it is refused when it is loaded.
	MaxUnitPrice = 200_000 // cents: 2 000.00
	// MaxLines is how many different lines a cart holds.
	MaxLines = 50
	// MaxOrderTotal bounds an order's total: far above a kiosk's or a
	// counter's sale, far below what any terminal's amount field holds
	// (a 32-bit count of cents stops at 21 474 836.47).
	MaxOrderTotal = 1_000_000 // cents: 10 000.00
)

// addCents is a+b, and false when the sum would leave int64 or either is
// negative: amounts here are never negative, so a negative one is already
// a wrapped sum.
func addCents(a, b int64) (int64, bool) {
	if a < 0 || b < 0 || a > math.MaxInt64-b {
		return 0, false
	}
	return a + b, true
}

// mulCents is n×c, and false when the product would leave int64 or either
// is negative.
func mulCents(n, c int64) (int64, bool) {
	if n < 0 || c < 0 || (n != 0 && c > math.MaxInt64/n) {
		return 0, false
	}
	return n * c, true
}

// cartTotal is the lines' total, and false when a line or the sum breaks
// the cart's limits (a line's quantity, its unit price, the order's total).
func cartTotal(lines []cartLine) (int64, bool) {
	if len(lines) > MaxLines {
		return 0, false
	}
	var total int64
	for _, l := range lines {
		if l.Qty < 1 || l.Qty > MaxQty || l.UnitPrice < 0 || l.UnitPrice > MaxUnitPrice {
			return 0, false
		}
		lt, ok := mulCents(int64(l.Qty), l.UnitPrice)
		if !ok || lt != l.Total {
			return 0, false
		}
		if total, ok = addCents(total, lt); !ok {
			return 0, false
		}
	}
	return total, total <= MaxOrderTotal
}

// dearestUnit is the most one unit of a product can cost: its price and,
// in each group, as many of its dearest choices as the group allows. It
// fails past MaxUnitPrice (checked at each step, so nothing wraps).
func dearestUnit(p productJSON) (int64, error) {
	unit := p.Price
	for _, g := range p.Options {
		prices := make([]int64, 0, len(g.Choices))
		for _, ch := range g.Choices {
			prices = append(prices, ch.Price)
		}
		// The dearest first; a group's max is at most its number of choices
		// (parseGroups checked it), 1 when left out.
		slices.Sort(prices)
		slices.Reverse(prices)
		most := max(g.Max, 1)
		for _, pr := range prices[:min(most, len(prices))] {
			var ok bool
			if unit, ok = addCents(unit, pr); !ok || unit > MaxUnitPrice {
				return 0, fmt.Errorf("with its dearest options one unit would cost more than %d cents (the most a line's unit may cost)", MaxUnitPrice)
			}
		}
	}
	if unit > MaxUnitPrice {
		return 0, fmt.Errorf("one unit costs %d cents, more than %d (the most a line's unit may cost)", unit, MaxUnitPrice)
	}
	return unit, nil
}
