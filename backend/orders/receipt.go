// Package orders is an order as the journal records it: its lines as the
// customer chose them (the kiosk's UI shows the same), and its receipt
// rebuilt from the journal for staff's reprints, the fiscal journal and
// `comptoir receipt`. The kiosk, staff mode and the fiscal journal read an
// order here, so that none of them needs the kiosk.
package orders

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/payment"
	"github.com/comptoir-pos/comptoir/backend/receipt"
	"github.com/comptoir-pos/comptoir/backend/settings"
)

// Data is the order's Data in the journal, as the kiosk recorded it.
type Data struct {
	Number   string     `json:"number"`
	Language string     `json:"language"`
	Method   string     `json:"method"`
	Dining   string     `json:"dining,omitempty"`
	Lines    []LineView `json:"lines"`
}

// OrderReceipt rebuilds an order's customer receipt from the journal: its
// lines (as the kiosk recorded them), and a payment part for each approved
// debit, with what the terminal returned for it. For reprints by staff and
// `comptoir receipt`; the kiosk prints from memory right after paying.
func OrderReceipt(ctx context.Context, db *journal.DB, st settings.Settings, orderID string) (receipt.Receipt, receipt.Options, error) {
	ord, err := db.Order(ctx, orderID)
	if err != nil {
		return receipt.Receipt{}, receipt.Options{}, err
	}
	var data Data
	if len(ord.Data) > 0 && json.Unmarshal(ord.Data, &data) != nil {
		return receipt.Receipt{}, receipt.Options{}, fmt.Errorf("kiosk: order %s: its recorded lines cannot be read", orderID)
	}
	lang := data.Language
	if lang == "" {
		lang = st.DefaultLanguage
	}
	pick := func(t Text) string {
		for _, l := range append([]string{lang, st.DefaultLanguage}, settings.DefaultLanguages...) {
			if v := t[l]; v != "" {
				return v
			}
		}
		return ""
	}
	o := receipt.Order{Number: data.Number, Dining: data.Dining, Time: ord.CreatedAt, Currency: ord.Currency}
	for _, l := range data.Lines {
		o.Lines = append(o.Lines, ReceiptLines(l, pick)...)
	}
	if len(o.Lines) == 0 {
		// An amount keyed at the counter (comptoir pay --amount): its
		// receipt has the total, the payments and the card tickets.
		o.Lines = []receipt.Line{receipt.KeyedAmount(ord.Total, lang)}
	}
	r := receipt.Receipt{Merchant: st.Merchant, Order: o}
	atts, err := db.AttemptsForOrder(ctx, orderID)
	if err != nil {
		return receipt.Receipt{}, receipt.Options{}, err
	}
	for _, a := range atts {
		if a.State != journal.StateApproved || a.Kind != journal.KindDebit {
			continue
		}
		c, ok := payment.ChargeOf(a)
		if !ok {
			c = payment.Charge{TransactionID: a.TransactionID}
		}
		// What the journal says was charged: the answer's, or what staff or
		// the history settled.
		c.Amount, c.GiftAmount = a.Paid(), a.Gift()
		if payment.TraitsOf(a.Channel).Phone {
			// Paid on the customer's phone: as the kiosk's own receipt says.
			r.Payments = append(r.Payments, receipt.Part{Kind: receipt.KindLink, Amount: c.Amount, Tip: c.GiftAmount, TransactionID: c.TransactionID})
			continue
		}
		r.Payments = append(r.Payments, CardPart(c))
	}
	return r, receipt.Options{Columns: st.ReceiptColumns, Locale: lang}, nil
}

// CardPart is a receipt's part for an approved card charge: only what a
// receipt may show of the provider's transaction (its customer ticket, not
// the merchant's; no issuer, no card token).
func CardPart(c payment.Charge) receipt.Part {
	kind := receipt.KindCard
	if isMealVoucher(c.PaymentApplication) {
		kind = receipt.KindVoucher
	}
	return receipt.Part{Kind: kind, Amount: c.Amount, Tip: c.GiftAmount, Scheme: c.Scheme,
		TransactionID: c.TransactionID, ClientCardTicket: c.ClientTicket}
}

// isMealVoucher: the terminal's payment application is a meal voucher's
// (CONECS cards, Restoflash, ANCV's chèques), as the specification lists
// them.
func isMealVoucher(app string) bool {
	a := strings.ToUpper(app)
	return strings.HasPrefix(a, "CONECS") || a == "RESTOFLASH" || a == "ANCV"
}
