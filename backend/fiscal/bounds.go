package fiscal

import (
	"context"
	"errors"
	"fmt"

	"github.com/comptoir-pos/comptoir/backend/journal"
)

// The bounds of a sale the ledger signs: the same the kiosk's cart keeps.
// A line or an order beyond them is a bug above the ledger, and a signed
// ticket is for ever: it is refused, recorded as an event, and the order
// waits for staff.
const (
	MinLineQty     = 1
	MaxLineQty     = 99
	MaxLineAmount  = 1_000_000 // cents, VAT included: 10 000.00 a line
	MaxOrderAmount = 5_000_000 // cents, VAT included: 50 000.00 an order
	MaxVATRate     = 10_000    // basis points: 100 %
)

// BoundsError says which part of a sale is out of bounds.
type BoundsError struct {
	Order string
	Line  int // from 1; 0: the order as a whole
	Why   string
}

func (e *BoundsError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("fiscal: order %s, line %d: %s: the ticket is not signed", e.Order, e.Line, e.Why)
	}
	return fmt.Sprintf("fiscal: order %s: %s: the ticket is not signed", e.Order, e.Why)
}

// checkSale is nil when every line, VAT base and total of a sale ticket
// is within bounds, and adds up.
func checkSale(t Ticket) error {
	bad := func(line int, format string, a ...any) error {
		return &BoundsError{Order: t.Order, Line: line, Why: fmt.Sprintf(format, a...)}
	}
	var sum int64
	for i, l := range t.Lines {
		n := i + 1
		switch {
		case l.Qty < MinLineQty || l.Qty > MaxLineQty:
			return bad(n, "quantity %d is outside %d..%d", l.Qty, MinLineQty, MaxLineQty)
		case l.UnitPrice < 0 || l.UnitPrice > MaxLineAmount:
			return bad(n, "unit price %d is outside 0..%d", l.UnitPrice, MaxLineAmount)
		case l.Total != int64(l.Qty)*l.UnitPrice || l.Total > MaxLineAmount:
			return bad(n, "amount %d is not %d x %d within %d", l.Total, l.Qty, l.UnitPrice, MaxLineAmount)
		case l.VATRate != -1 && (l.VATRate < 0 || l.VATRate > MaxVATRate):
			return bad(n, "VAT rate %d is outside 0..%d", l.VATRate, MaxVATRate)
		}
		if len(l.Parts) > 0 {
			var parts int64
			for _, p := range l.Parts {
				if p.Rate < 0 || p.Rate > MaxVATRate || p.Amount < 0 {
					return bad(n, "a part at rate %d for %d is out of bounds", p.Rate, p.Amount)
				}
				parts += p.Amount
			}
			if parts != l.UnitPrice {
				return bad(n, "its parts add up to %d, not its unit price %d", parts, l.UnitPrice)
			}
		}
		sum += l.Total
		if sum > MaxOrderAmount {
			return bad(0, "the lines add up to more than %d", MaxOrderAmount)
		}
	}
	if t.TotalInclTax != sum {
		return bad(0, "the total %d is not the sum of the lines %d", t.TotalInclTax, sum)
	}
	var gross int64
	for _, v := range t.VAT {
		if v.Rate < 0 || v.Rate > MaxVATRate || v.Net < 0 || v.Tax < 0 || v.Gross != v.Net+v.Tax || v.Gross > MaxOrderAmount {
			return bad(0, "the VAT base at rate %d (gross %d, net %d, VAT %d) is out of bounds", v.Rate, v.Gross, v.Net, v.Tax)
		}
		gross += v.Gross
	}
	if gross > sum {
		return bad(0, "the VAT bases add up to %d, more than the total %d", gross, sum)
	}
	return nil
}

// refuse records, once per order, that its ticket was refused: an event
// in the fiscal journal, an entry in the audit trail, and the order set
// aside for staff (needs attention: it is no sale until they look).
func (l *Ledger) refuse(ctx context.Context, orderID string, cause error) error {
	var be *BoundsError
	if !errors.As(cause, &be) {
		return cause
	}
	_, created, err := l.event(ctx, "refused:"+orderID, Event{Type: EventRefused, Detail: be.Error()})
	if err != nil {
		return err
	}
	if !created {
		return nil
	}
	l.mu.Lock()
	tell := l.onRefused
	l.mu.Unlock()
	if tell != nil {
		tell(orderID, be.Error())
	}
	if err := l.db.FlagOrder(ctx, orderID, "its fiscal ticket was refused: "+be.Error()); err != nil {
		return err
	}
	return l.db.AppendAudit(ctx, journal.AuditRecord{Who: "system:fiscal", Action: "fiscal_refused", Subject: orderID,
		Detail: be.Error() + ": the order waits for staff"})
}
