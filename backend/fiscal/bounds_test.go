package fiscal

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// The ledger signs a sale only within the kiosk's bounds, each bound
// itself included and one past it refused, and only when its lines, total
// and VAT bases add up: a bug above the ledger is never signed for ever.
func TestTheLedgerSignsOnlyWithinTheBounds(t *testing.T) {
	line := func(qty int, unit int64) Line {
		return Line{Name: "x", Qty: qty, UnitPrice: unit, Total: int64(qty) * unit, VATRate: 1000}
	}
	sale := func(lines ...Line) Ticket {
		t := Ticket{Order: "o", Lines: lines}
		for _, l := range lines {
			t.TotalInclTax += l.Total
		}
		return t
	}
	withVAT := func(t Ticket, v VAT) Ticket { t.VAT = []VAT{v}; return t }
	big := line(1, MaxLineAmount)
	tests := []struct {
		name string
		sale Ticket
		ok   bool
		line int // the line named, 0 for the order
	}{
		{"one of a kind", sale(line(1, 100)), true, 0},
		{"the most of a kind", sale(line(MaxLineQty, 100)), true, 0},
		{"one more than the most", sale(line(MaxLineQty+1, 100)), false, 1},
		{"none of a kind", sale(line(0, 100)), false, 1},
		{"a line at its bound", sale(big), true, 0},
		{"a unit price past the bound", sale(line(1, 100), line(1, MaxLineAmount+1)), false, 2},
		{"a negative price", sale(line(1, -1)), false, 1},
		{"a line past its bound by quantity", sale(line(2, MaxLineAmount/2+1)), false, 1},
		{"a line that is not qty x price", sale(Line{Name: "x", Qty: 2, UnitPrice: 100, Total: 201, VATRate: 1000}), false, 1},
		{"a VAT rate at 100 %", sale(Line{Name: "x", Qty: 1, UnitPrice: 100, Total: 100, VATRate: MaxVATRate}), true, 0},
		{"a VAT rate past 100 %", sale(Line{Name: "x", Qty: 1, UnitPrice: 100, Total: 100, VATRate: MaxVATRate + 1}), false, 1},
		{"an order at its bound", sale(big, big, big, big, big), true, 0},
		{"an order past its bound", sale(big, big, big, big, big, line(1, 1)), false, 0},
		{"a total that is not the lines'", Ticket{Order: "o", Lines: []Line{line(1, 100)}, TotalInclTax: 99}, false, 0},
		{"a VAT base that adds up", withVAT(sale(line(1, 110)), VAT{Rate: 1000, Gross: 110, Tax: 10, Net: 100}), true, 0},
		{"a VAT base at 100 %", withVAT(sale(line(1, 110)), VAT{Rate: MaxVATRate, Gross: 110, Tax: 55, Net: 55}), true, 0},
		{"a VAT base past 100 %", withVAT(sale(line(1, 110)), VAT{Rate: MaxVATRate + 1, Gross: 110, Tax: 10, Net: 100}), false, 0},
		{"a VAT base with a negative rate", withVAT(sale(line(1, 110)), VAT{Rate: -1, Gross: 110, Tax: 10, Net: 100}), false, 0},
		{"a VAT base with a negative net", withVAT(sale(line(1, 110)), VAT{Rate: 1000, Gross: 110, Tax: 120, Net: -10}), false, 0},
		{"a VAT base with a negative tax", withVAT(sale(line(1, 110)), VAT{Rate: 1000, Gross: 110, Tax: -10, Net: 120}), false, 0},
		{"a VAT base whose parts do not add up", withVAT(sale(line(1, 110)), VAT{Rate: 1000, Gross: 110, Tax: 10, Net: 99}), false, 0},
		{"VAT bases over the total", withVAT(sale(line(1, 110)), VAT{Rate: 1000, Gross: 111, Tax: 11, Net: 100}), false, 0},
		{"a VAT base at 0 %", withVAT(sale(line(1, 110)), VAT{Rate: 0, Gross: 110, Tax: 0, Net: 110}), true, 0},
		{"a VAT base of a free line", withVAT(sale(line(1, 0)), VAT{Rate: 1000, Gross: 0, Tax: 0, Net: 0}), true, 0},
		{"a VAT base at the order's bound", withVAT(sale(big, big, big, big, big), VAT{Rate: 1000, Gross: MaxOrderAmount, Tax: 454_545, Net: MaxOrderAmount - 454_545}), true, 0},
		{"two VAT bases each under the total, over it together", func() Ticket {
			s := sale(line(1, 110))
			s.VAT = []VAT{{Rate: 1000, Gross: 60, Tax: 5, Net: 55}, {Rate: 2000, Gross: 60, Tax: 10, Net: 50}}
			return s
		}(), false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkSale(tt.sale)
			if tt.ok {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var be *BoundsError
			if !errors.As(err, &be) || be.Line != tt.line || be.Order != "o" {
				t.Fatalf("got %v, want a bounds error on line %d", err, tt.line)
			}
			// The message names the line at fault, or none for the order.
			if named := strings.Contains(err.Error(), "line "); named != (tt.line > 0) ||
				named && !strings.Contains(err.Error(), fmt.Sprintf("order o, line %d: ", tt.line)) {
				t.Fatalf("the message %q, for line %d", err, tt.line)
			}
		})
	}
}
