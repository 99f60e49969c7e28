package orders

import (
	"strings"

	"github.com/comptoir-pos/comptoir/backend/receipt"
)

// Text is a name in every offered language: {"fr": "...", "en": "...", "es": "..."}.
type Text map[string]string

// LineChoice is an option chosen for a cart line.
type LineChoice struct {
	Group   string `json:"group"`
	ID      string `json:"id"`
	Name    Text   `json:"name"`
	Price   int64  `json:"price"`   // cents, VAT included, for one
	VATRate int    `json:"vatRate"` // basis points
	// Product: a menu's part, this product of the catalog.
	Product string `json:"product,omitempty"`
}

// VATPart is the share of a menu's price taxed at one rate.
type VATPart struct {
	Rate   int   `json:"rate"`   // basis points
	Amount int64 `json:"amount"` // cents, VAT included, for one
}

// LineView is one cart line.
type LineView struct {
	ID        string `json:"id"`
	ProductID string `json:"productId"`
	Name      Text   `json:"name"`
	Qty       int    `json:"qty"`
	UnitPrice int64  `json:"unitPrice"`
	Total     int64  `json:"total"`
	VATRate   int    `json:"vatRate"`
	// Choices are the options chosen; UnitPrice includes their prices.
	Choices []LineChoice `json:"choices,omitempty"`
	// VATParts split the product's own price (UnitPrice less the choices'
	// prices) between VAT rates: a menu's price, shared between its parts
	// in proportion to their prices alone, each at its own rate. Empty: the
	// product's price is at VATRate.
	VATParts []VATPart `json:"vatParts,omitempty"`
}

// ReceiptLines are a cart line as receipts and VAT count it: the product
// at its rate, and each option with a price at its own. name gives the
// names (nil: none, for VAT only).
func ReceiptLines(l LineView, name func(Text) string) []receipt.Line {
	nm := func(t Text, prefix string) string {
		if name == nil {
			return ""
		}
		return prefix + name(t)
	}
	base := l.UnitPrice
	for _, ch := range l.Choices {
		base -= ch.Price
	}
	title := nm(l.Name, "")
	var free []string
	for _, ch := range l.Choices {
		if ch.Price == 0 && name != nil {
			free = append(free, name(ch.Name))
		}
	}
	if len(free) > 0 {
		title += " (" + strings.Join(free, ", ") + ")"
	}
	out := []receipt.Line{{Qty: l.Qty, Name: title, UnitPrice: base, VATRate: l.VATRate}}
	for _, p := range l.VATParts {
		out[0].Parts = append(out[0].Parts, receipt.VATPart{Rate: p.Rate, Amount: p.Amount})
	}
	for _, ch := range l.Choices {
		if ch.Price > 0 {
			out = append(out, receipt.Line{Qty: l.Qty, Name: nm(ch.Name, "+ "), UnitPrice: ch.Price, VATRate: ch.VATRate})
		}
	}
	return out
}
