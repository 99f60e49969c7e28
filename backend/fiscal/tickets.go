package fiscal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"time"

	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/orders"
	"github.com/comptoir-pos/comptoir/backend/payment"
	"github.com/comptoir-pos/comptoir/backend/receipt"
	"github.com/comptoir-pos/comptoir/backend/settings"
)

// Ticket types.
const (
	TicketSale     = "sale"
	TicketRefund   = "refund"   // money given back on the terminal, or by API
	TicketReversal = "reversal" // a whole payment cancelled on the terminal
)

// Ticket is a recorded ticket: everything its receipt says, written once.
// A credit (refund, reversal) is a negative ticket of its own referring to
// its sale: amounts are negative, the sale is never edited.
type Ticket struct {
	Number   int64     `json:"number"` // gapless, per kiosk: the ticket chain's seq
	Type     string    `json:"type"`
	At       time.Time `json:"at"`
	Kiosk    string    `json:"kiosk"`
	Software string    `json:"software"`
	Order    string    `json:"order"`
	// OrderNumber is the number the customer was given.
	OrderNumber string `json:"orderNumber,omitempty"`
	// RefersTo is a credit's sale ticket number (0: the sale has no
	// ticket, recorded before the fiscal journal); Attempt the payment
	// attempt that gave the money back.
	RefersTo int64  `json:"refersTo,omitempty"`
	Attempt  string `json:"attempt,omitempty"`
	Currency string `json:"currency"`
	Dining   string `json:"dining,omitempty"`
	Lines    []Line `json:"lines"`
	VAT      []VAT  `json:"vat"`
	// TotalInclTax is what the ticket is for, VAT included; TotalExclTax
	// without it (lines of unknown VAT, amounts keyed at a counter, count
	// in neither VAT nor TotalExclTax).
	TotalInclTax int64     `json:"totalInclTax"`
	TotalExclTax int64     `json:"totalExclTax"`
	Payments     []Payment `json:"payments"`
}

// Line is one line of a ticket. VATRate is in basis points (1000: 10 %),
// -1 when not known; Parts split a menu between rates.
type Line struct {
	Name      string        `json:"name"`
	Qty       int           `json:"qty"`
	UnitPrice int64         `json:"unitPrice"` // cents, VAT included
	Total     int64         `json:"total"`
	VATRate   int           `json:"vatRate"`
	Parts     []receiptPart `json:"parts,omitempty"`
}

type receiptPart struct {
	Rate   int   `json:"rate"`
	Amount int64 `json:"amount"`
}

// VAT is one rate's total: Gross = Net + Tax.
type VAT struct {
	Rate  int   `json:"rate"`
	Gross int64 `json:"gross"`
	Tax   int64 `json:"tax"`
	Net   int64 `json:"net"`
}

// Payment is one means of payment of a ticket.
type Payment struct {
	Means         string `json:"means"` // card, link, cash...
	Scheme        string `json:"scheme,omitempty"`
	Amount        int64  `json:"amount"`
	Tip           int64  `json:"tip,omitempty"`
	TransactionID string `json:"transactionId,omitempty"`
}

// SaleSource and CreditSource name a ticket's source in its chain.
func SaleSource(orderID string) string   { return "order:" + orderID }
func CreditSource(attempt string) string { return "attempt:" + attempt }

// RecordTickets records a ticket for every paid order and every approved
// refund or reversal that has none yet, oldest first. It is safe to call
// again at any time (after a crash too): a source is recorded once. It
// returns how many it recorded.
func (l *Ledger) RecordTickets(ctx context.Context, log *slog.Logger) (int, error) {
	// After a first full look, only what changed since the last one (less
	// a margin for writes committed while it looked).
	l.mu.Lock()
	since, started := l.lookedAt, l.db.Now()
	l.mu.Unlock()
	if !since.IsZero() {
		since = since.Add(-lookMargin)
	}
	st, err := settings.LoadSettings(ctx, l.db, log)
	if err != nil {
		return 0, err
	}
	n := 0
	orders, err := l.db.PaidOrdersWithoutTicket(ctx, since)
	if err != nil {
		return n, err
	}
	for _, id := range orders {
		_, created, err := l.recordSale(ctx, st, id)
		var be *BoundsError
		switch {
		case errors.As(err, &be):
			// Out of bounds: never signed, the others go on.
			if err := l.refuse(ctx, id, err); err != nil {
				return n, err
			}
		case err != nil:
			return n, err
		case created:
			n++
		}
	}
	credits, err := l.db.GiveBacksWithoutTicket(ctx, since)
	if err != nil {
		return n, err
	}
	for _, a := range credits {
		t, err := l.credit(ctx, st, a)
		if err != nil {
			return n, err
		}
		if _, created, err := l.append(ctx, journal.FiscalTicket, CreditSource(a.UUID), func(seq int64, at time.Time) (any, error) {
			t.Number, t.At = seq, at
			return t, nil
		}); err != nil {
			return n, err
		} else if created {
			n++
		}
	}
	l.mu.Lock()
	l.lookedAt = started
	l.mu.Unlock()
	return n, nil
}

// lookMargin is how far before its last look RecordTickets looks again.
const lookMargin = time.Minute

// recordSale records a paid order's sale ticket, once.
func (l *Ledger) recordSale(ctx context.Context, st settings.Settings, id string) (journal.FiscalRecord, bool, error) {
	if rec, err := l.db.FiscalBySource(ctx, journal.FiscalTicket, SaleSource(id)); err == nil {
		return rec, false, nil
	}
	r, _, err := orders.OrderReceipt(ctx, l.db, st, id)
	if err != nil {
		return journal.FiscalRecord{}, false, fmt.Errorf("fiscal: the sale of order %s: %w", id, err)
	}
	if err := checkSale(l.sale(0, time.Time{}, id, r)); err != nil {
		return journal.FiscalRecord{}, false, err
	}
	return l.append(ctx, journal.FiscalTicket, SaleSource(id), func(seq int64, at time.Time) (any, error) {
		return l.sale(seq, at, id, r), nil
	})
}

// RecordSale records a paid order's sale ticket now (once), for its
// receipt: the mentions the receipt prints.
func (l *Ledger) RecordSale(ctx context.Context, orderID string) (*receipt.Fiscal, error) {
	o, err := l.db.Order(ctx, orderID)
	if err != nil {
		return nil, err
	}
	if o.Status != journal.OrderPaid {
		return nil, fmt.Errorf("fiscal: order %s is %s, not paid: no sale ticket", orderID, o.Status)
	}
	st, err := settings.LoadSettings(ctx, l.db, nil)
	if err != nil {
		return nil, err
	}
	rec, _, err := l.recordSale(ctx, st, orderID)
	if err != nil {
		if rerr := l.refuse(ctx, orderID, err); rerr != nil && rerr != err {
			return nil, errors.Join(err, rerr)
		}
		return nil, err
	}
	return &receipt.Fiscal{Ticket: rec.Seq, Till: l.Kiosk, Software: l.Software, Head: HeadFingerprint(rec)}, nil
}

// Duplicate records a reprint of a sale's receipt as a technical event,
// and returns the mentions of the copy: DUPLICATA n° k, k counting the
// reprints of that ticket.
func (l *Ledger) Duplicate(ctx context.Context, orderID string) (*receipt.Fiscal, error) {
	sale, err := l.RecordSale(ctx, orderID)
	if err != nil {
		return nil, err
	}
	ticket, err := l.db.FiscalBySource(ctx, journal.FiscalTicket, SaleSource(orderID))
	if err != nil {
		return nil, err
	}
	// The last copy is the newest duplicate event of the ticket: the
	// events since the ticket was recorded are read back, not the chain.
	copies := 0
	err = l.rd.backward(ctx, journal.FiscalEvent, func(r journal.FiscalRecord) (bool, error) {
		var e Event
		if json.Unmarshal(r.Payload, &e) == nil && e.Type == EventDuplicate && e.Ticket == sale.Ticket {
			copies = e.Copy
			return false, nil
		}
		return !r.At.Before(ticket.At), nil
	})
	if err != nil {
		return nil, err
	}
	sale.Duplicate = copies + 1
	if _, _, err := l.event(ctx, "", Event{Type: EventDuplicate, Ticket: sale.Ticket, Copy: sale.Duplicate,
		Detail: fmt.Sprintf("receipt of ticket %d reprinted (copy %d)", sale.Ticket, sale.Duplicate)}); err != nil {
		return nil, err
	}
	return sale, nil
}

// sale is the ticket of a paid order's receipt.
func (l *Ledger) sale(seq int64, at time.Time, orderID string, r receipt.Receipt) Ticket {
	t := Ticket{Number: seq, Type: TicketSale, At: at, Kiosk: l.Kiosk, Software: l.Software, Order: orderID,
		OrderNumber: r.Order.Number, Currency: orDefault(r.Order.Currency, settings.DefaultCurrency), Dining: r.Order.Dining,
		Lines: []Line{}, Payments: []Payment{}}
	for _, ln := range r.Order.Lines {
		line := Line{Name: ln.Name, Qty: ln.Qty, UnitPrice: ln.UnitPrice, Total: ln.Total(), VATRate: ln.VATRate}
		for _, p := range ln.Parts {
			line.Parts = append(line.Parts, receiptPart{Rate: p.Rate, Amount: p.Amount})
		}
		t.Lines = append(t.Lines, line)
	}
	t.VAT = vatOf(receipt.VATSummary(r.Order))
	t.TotalInclTax = r.Order.Total()
	for _, v := range t.VAT {
		t.TotalExclTax += v.Net
	}
	for _, p := range r.Payments {
		t.Payments = append(t.Payments, Payment{Means: p.Kind, Scheme: p.Scheme, Amount: p.Amount, Tip: p.Tip, TransactionID: p.TransactionID})
	}
	return t
}

func vatOf(rs []receipt.RateTotal) []VAT {
	out := make([]VAT, 0, len(rs))
	for _, r := range rs {
		out = append(out, VAT{Rate: r.Rate, Gross: r.Gross, Tax: r.Tax, Net: r.Net})
	}
	return out
}

// credit is the negative ticket of a refund or a reversal: what it gave
// back, its VAT in the sale's proportions, referring to the sale.
func (l *Ledger) credit(ctx context.Context, st settings.Settings, a journal.Attempt) (Ticket, error) {
	typ := TicketRefund
	if a.Kind == journal.KindReversal {
		typ = TicketReversal
	}
	t := Ticket{Type: typ, Kiosk: l.Kiosk, Software: l.Software, Order: a.OrderID, Attempt: a.UUID, Payments: []Payment{}}
	var sale *Ticket
	if rec, err := l.db.FiscalBySource(ctx, journal.FiscalTicket, SaleSource(a.OrderID)); err == nil {
		var s Ticket
		if json.Unmarshal(rec.Payload, &s) == nil {
			sale = &s
			t.RefersTo = rec.Seq
		}
	}
	if sale == nil {
		r, _, err := orders.OrderReceipt(ctx, l.db, st, a.OrderID)
		if err != nil {
			return Ticket{}, fmt.Errorf("fiscal: the credit %s: %w", a.UUID, err)
		}
		s := l.sale(0, a.FinalAt, a.OrderID, r)
		sale = &s
	}
	t.OrderNumber, t.Currency, t.Dining = sale.OrderNumber, sale.Currency, sale.Dining
	// What was given back of the sale's goods: the money given back less
	// its tip (a tip given back is money, not goods), the sale's total at
	// most.
	paid, tip := l.givenBack(ctx, a)
	goods := min(paid, sale.TotalInclTax)
	t.Lines = []Line{{Name: fmt.Sprintf("%s of ticket %d", typ, t.RefersTo), Qty: -1, UnitPrice: goods, Total: -goods, VATRate: -1}}
	t.VAT = prorate(sale.VAT, goods, sale.TotalInclTax)
	t.TotalInclTax = -goods
	for _, v := range t.VAT {
		t.TotalExclTax += v.Net
	}
	means := "card"
	if payment.TraitsOf(a.Channel).WithoutCard {
		means = "card (by API)"
	}
	t.Payments = append(t.Payments, Payment{Means: means, Amount: -paid, Tip: -tip, TransactionID: a.TransactionID})
	return t, nil
}

// givenBack splits the money a refund or a reversal gave back into what
// paid for goods and the tip. A reversal asks for its debit's whole total
// in one amount: its tip is the debit's (the debit found by its
// transaction; none found, all of it counts as paid for goods, which the
// sale's total bounds).
func (l *Ledger) givenBack(ctx context.Context, a journal.Attempt) (paid, tip int64) {
	paid, tip = a.Paid(), a.Gift()
	if a.Kind != journal.KindReversal || a.InitialTransactionID == "" {
		return paid, tip
	}
	d, err := l.db.AttemptByTransaction(ctx, a.InitialTransactionID)
	if err != nil || d.Kind != journal.KindDebit || d.OrderID != a.OrderID {
		return paid, tip
	}
	tip = min(d.Gift(), a.Total())
	return a.Total() - tip, tip
}

// prorate is part/whole of each rate's VAT, negative (a credit), the
// cents left by rounding given to the largest rate so that the grosses
// add up to -part of what the rates cover.
func prorate(vat []VAT, part, whole int64) []VAT {
	out := []VAT{}
	if whole <= 0 || part <= 0 || len(vat) == 0 {
		return out
	}
	var covered, sum int64
	for _, v := range vat {
		covered += v.Gross
	}
	target := covered * part / whole
	if part >= whole {
		target = covered
	}
	for _, v := range vat {
		g := v.Gross * part / whole
		if part >= whole {
			g = v.Gross
		}
		out = append(out, VAT{Rate: v.Rate, Gross: g})
		sum += g
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Gross > out[j].Gross })
	out[0].Gross += target - sum
	sort.SliceStable(out, func(i, j int) bool { return out[i].Rate < out[j].Rate })
	for i := range out {
		tax := receipt.TaxIncluded(out[i].Gross, out[i].Rate)
		out[i] = VAT{Rate: out[i].Rate, Gross: -out[i].Gross, Tax: -tax, Net: -(out[i].Gross - tax)}
	}
	return out
}

func orDefault(s, def string) string {
	if s != "" {
		return s
	}
	return def
}
