// Package receipt lays out the customer receipt and the order ticket on the
// terminal's printer (ESC/POS, built with backend/escpos) and as plain text
// (for /print with format text, and /share-receipt), and computes the tax
// breakdown the receiptTicket of /payment carries.
//
// Amounts are int64 cents, VAT included. VAT rates are int basis points
// (2000 = 20 %, 550 = 5.5 %, 0 = zero rate): integers hold the fractional
// rates (5.5 %, 2.1 %, 8.1 %, 2.6 %) exactly, so no tax computation ever
// touches floating point.
//
// Everything printed that comes from outside (merchant settings, product
// names, the terminal's answers) goes through escpos.Sanitize: it can never
// inject a printer command. Of a card payment only what the terminal
// returned is printed: scheme, masked PAN (refused if it shows more than
// ten digits), transaction id and the terminal's clientCardTicket verbatim.
package receipt

import (
	"fmt"
	"image"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/comptoir-pos/comptoir/backend/device"
	"github.com/comptoir-pos/comptoir/backend/escpos"
)

// Merchant is the shop, from the settings.
type Merchant struct {
	Name      string
	Address   []string // one entry a printed line
	VATNumber string
	SIRET     string      // the French establishment number, when there is one
	Country   string      // ISO 3166 alpha-2; FR prints the French mentions (no other country's yet)
	Logo      image.Image // optional; printed dithered, at most the paper's width
	Footer    []string    // one entry a paragraph, word-wrapped
	// QRURL is the digital receipt's address, printed as a QR code; empty
	// for none. "{order}" is replaced by the order number, path-escaped.
	// Only a template CheckQRURL accepts is printed.
	QRURL string
}

// Line is one line of an order.
type Line struct {
	Qty       int    // may be negative for a return
	Name      string // product name, printed word-wrapped
	UnitPrice int64  // cents, VAT included
	VATRate   int    // basis points: 2000 = 20 %, 550 = 5.5 %, 0 = zero rate; VATUnknown: not known
	// Parts, when set, split UnitPrice between rates (a menu whose parts
	// are taxed at different rates) and VATRate is not used; their amounts
	// add up to UnitPrice.
	Parts []VATPart
}

// VATPart is the share of a line's unit price taxed at one rate.
type VATPart struct {
	Rate   int   // basis points
	Amount int64 // cents, VAT included, for one
}

// VATUnknown is the rate of a line whose VAT is not known: an amount keyed
// at the counter, with no products behind it. No VAT is printed or sent
// for it, rather than a rate nobody chose.
const VATUnknown = -1

// KeyedAmount is the one line of an order taken as a bare amount (no
// products): its total, named "Payment" in the receipt's language, of
// unknown VAT.
func KeyedAmount(total int64, locale string) Line {
	return Line{Qty: 1, Name: words(locale).Payment, UnitPrice: total, VATRate: VATUnknown}
}

// Total is Qty × UnitPrice.
func (l Line) Total() int64 { return int64(l.Qty) * l.UnitPrice }

// Order is what was sold.
type Order struct {
	Number string // the order number shown to the customer
	// Dining is where the order is eaten, DiningEatIn or DiningTakeAway
	// ("" when the shop does not ask): the VAT rates of the lines follow
	// it, and the receipt and the order ticket say it.
	Dining   string
	Time     time.Time
	Lines    []Line
	Currency string // ISO 4217: EUR (default), CHF, GBP
}

// Total is the sum of the line totals, VAT included.
func (o Order) Total() int64 {
	var t int64
	for _, l := range o.Lines {
		t += l.Total()
	}
	return t
}

// Part kinds.
const (
	KindCard = "card"
	KindCash = "cash"
	KindLink = "link" // a payment link paid on the customer's phone
	// KindVoucher: a meal voucher (titre-restaurant) taken by the terminal.
	KindVoucher = "meal_voucher"
)

// Part is one tender of a payment: several parts make a split payment.
type Part struct {
	Kind   string // KindCard, KindCash, or another word printed as is
	Amount int64  // cents charged for the order, tip excluded
	Tip    int64  // cents (the terminal's giftAmount)
	// Card fields: only what the terminal returned.
	Scheme           string
	MaskedPAN        string
	TransactionID    string
	ClientCardTicket string // the terminal's customer ticket, printed verbatim
}

// Receipt is everything a customer receipt shows. Payments is empty on
// the receiptTicket sent with /payment (the card is not read yet).
type Receipt struct {
	Merchant Merchant
	Order    Order
	Payments []Part
	// Fiscal: the recorded ticket's number and what names the till, once
	// the sale is recorded (nil: not printed).
	Fiscal *Fiscal
}

// Fiscal are a recorded ticket's mentions.
type Fiscal struct {
	Ticket   int64  // the ticket's number, gapless per till
	Till     string // the kiosk's id
	Software string // the software and its version
	// Duplicate is the number of this reprint (DUPLICATA n° k); 0 for
	// the original.
	Duplicate int
	// Head is the recorded ticket's chain fingerprint ("T42-9f3a1c7b22d0"):
	// read back from paper, it proves that the records up to this ticket
	// were not rewritten or cut (comptoir verify --expect).
	Head string
}

// french says whether the French cash-register mentions print: the
// ticket's number and till, the SIRET, the total without VAT, the
// software. Elsewhere they are not printed (no other country's mentions
// are covered); a copy's mark and the chain fingerprint print everywhere.
func (m Merchant) french() bool { return m.Country == "FR" }

// Options are the layout's settings.
type Options struct {
	Columns int    // 32 (58 mm) or 48 (80 mm); 0 means 48
	Locale  string // fr, en, es; other values read as en
}

func (o Options) cols() int {
	if o.Columns == 0 {
		return escpos.Columns80mm
	}
	return o.Columns
}

// MaxShareLength is the longest text ShareText returns, in characters.
const MaxShareLength = 2000

// mode says what a layout is built for.
type mode struct {
	text       bool // plain text: no logo, QR as its URL, no cut
	noCut      bool // the terminal prints it with its own ticket
	cardTicket bool // include the terminal's clientCardTicket
}

// CustomerReceipt is the customer receipt as ESC/POS bytes, for /print
// with format escpos.
func CustomerReceipt(r Receipt, opt Options) ([]byte, error) {
	return customer(r, opt, mode{cardTicket: true}).Bytes()
}

// CustomerReceiptText is the customer receipt as plain text on lines of
// opt.Columns characters, for /print with format text.
func CustomerReceiptText(r Receipt, opt Options) string {
	return render(customer(r, opt, mode{text: true, cardTicket: true}), opt.cols())
}

// ShareText is the customer receipt as /share-receipt takes it: text, the
// terminal's card ticket left out (the terminal links its own), at most
// MaxShareLength characters (cut at a line, ending with "…").
func ShareText(r Receipt, opt Options) string {
	s := render(customer(r, opt, mode{text: true}), opt.cols())
	if utf8.RuneCountInString(s) <= MaxShareLength {
		return s
	}
	lines := strings.SplitAfter(s, "\n")
	var sb strings.Builder
	n := 0
	for _, l := range lines {
		ln := utf8.RuneCountInString(l)
		if n+ln > MaxShareLength-2 {
			break
		}
		sb.WriteString(l)
		n += ln
	}
	sb.WriteString("…\n")
	return sb.String()
}

// ShareReceiptTicket is the receiptTicket of /share-receipt: ShareText,
// format text, with the tax breakdown.
func ShareReceiptTicket(r Receipt, opt Options) *device.ReceiptTicket {
	return &device.ReceiptTicket{Data: ShareText(r, opt), Format: device.FormatText, TaxBreakdown: TaxBreakdown(r.Order)}
}

// ReceiptTicket is the receiptTicket sent with /payment: the customer
// receipt (without a cut: the terminal prints it with its card ticket) as
// text or as ESC/POS hex, and the order's tax breakdown. format is
// device.FormatText (or empty) or device.FormatESCPOS.
func ReceiptTicket(r Receipt, format device.Format, opt Options) (*device.ReceiptTicket, error) {
	t := &device.ReceiptTicket{Format: format, TaxBreakdown: TaxBreakdown(r.Order)}
	switch format {
	case device.FormatText, "":
		t.Format = device.FormatText
		t.Data = render(customer(r, opt, mode{text: true, cardTicket: true}), opt.cols())
	case device.FormatESCPOS:
		h, err := customer(r, opt, mode{noCut: true, cardTicket: true}).Hex()
		if err != nil {
			return nil, err
		}
		t.Data = h
	default:
		return nil, fmt.Errorf("receipt: unknown receipt format %q", format)
	}
	return t, nil
}

// OrderTicket is the collection ticket as ESC/POS bytes: the order number
// large, then the items.
func OrderTicket(o Order, opt Options) ([]byte, error) {
	return orderTicket(o, opt, mode{}).Bytes()
}

// OrderTicketText is the collection ticket as plain text.
func OrderTicketText(o Order, opt Options) string {
	return render(orderTicket(o, opt, mode{text: true}), opt.cols())
}

// render decodes a text-mode job back to plain text, alignment applied,
// trailing blank lines dropped.
func render(b *escpos.Builder, cols int) string {
	out, err := b.Bytes()
	if err != nil {
		return ""
	}
	doc, _ := escpos.Decode(out)
	return trimRender(doc.Render(cols))
}

// trimRender drops the spaces ending each line and the blank lines ending
// the text.
func trimRender(s string) string {
	ls := strings.Split(s, "\n")
	for i, l := range ls {
		ls[i] = strings.TrimRight(l, " ")
	}
	return strings.TrimRight(strings.Join(ls, "\n"), "\n") + "\n"
}

func dateTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.Format("02/01/2006 15:04")
}

func customer(r Receipt, opt Options, m mode) *escpos.Builder {
	w := words(opt.Locale)
	f := Formatter{Locale: opt.Locale, Currency: r.Order.Currency}
	b := escpos.New(escpos.Options{Columns: opt.cols()}).Init()
	customerHeader(b, r, w, m)
	total := customerLines(b, r.Order, f, w)
	customerVAT(b, r, f, w)
	customerPayments(b, r, f, w, m, total)
	customerFooter(b, r, w, m)
	return b
}

// customerHeader is the merchant, the order's number and time, and for a
// French till its ticket number and any duplicate's mark.
func customerHeader(b *escpos.Builder, r Receipt, w labels, m mode) {
	mer, o, fis := r.Merchant, r.Order, r.Fiscal
	b.Align(escpos.AlignCenter)
	if mer.Logo != nil && !m.text {
		b.Image(mer.Logo)
	}
	if strings.TrimSpace(mer.Name) != "" {
		b.Bold(true).Size(1, 2).Wrapped(mer.Name).Normal()
	}
	for _, a := range mer.Address {
		b.Wrapped(a)
	}
	if mer.VATNumber != "" {
		b.Wrapped(w.VATNo + " " + mer.VATNumber)
	}
	if mer.SIRET != "" && mer.french() {
		b.Wrapped("SIRET " + mer.SIRET)
	}
	if fis != nil && fis.Duplicate > 0 {
		b.Bold(true).Size(1, 2).Line(fmt.Sprintf(w.Duplicate, fis.Duplicate)).Normal()
	}
	b.Align(escpos.AlignLeft).Rule('-')
	b.TwoColumns(dateTime(o.Time), w.Order+" "+o.Number)
	if fis != nil && mer.french() {
		b.TwoColumns(fmt.Sprintf(w.Ticket, fis.Ticket), w.Till+" "+fis.Till)
	}
	if d := diningLabel(w, o.Dining); d != "" {
		b.Align(escpos.AlignCenter).Bold(true).Line(d).Bold(false).Align(escpos.AlignLeft)
	}
	b.Rule('-')
}

// customerLines prints the order's lines and its total, and returns the total.
func customerLines(b *escpos.Builder, o Order, f Formatter, w labels) int64 {
	for _, l := range o.Lines {
		b.TwoColumns(l.Name, f.Format(l.Total()))
		if l.Qty != 1 {
			b.Line("  " + strconv.Itoa(l.Qty) + " x " + f.Format(l.UnitPrice))
		}
	}
	b.Rule('-')
	total := o.Total()
	b.Bold(true).Size(1, 2).TwoColumns(w.Total, f.Format(total)).Normal()
	return total
}

// customerVAT is the table of VAT per rate, and for a French till the total
// net of VAT.
func customerVAT(b *escpos.Builder, r Receipt, f Formatter, w labels) {
	s := VATSummary(r.Order)
	if len(s) == 0 {
		return
	}
	cols := b.Cols()
	cw := min(10, (cols-6)/3)
	first := cols - 3*cw
	row := func(a, n, t, g string) {
		b.Line(padRight(a, first) + padLeft(n, cw) + padLeft(t, cw) + padLeft(g, cw))
	}
	row(w.Rate, w.Net, w.VAT, w.Gross)
	var net int64
	for _, rt := range s {
		row(f.Rate(rt.Rate), f.Number(rt.Net), f.Number(rt.Tax), f.Number(rt.Gross))
		net += rt.Net
	}
	if r.Fiscal != nil && r.Merchant.french() {
		b.TwoColumns(w.TotalNet, f.Format(net))
	}
}

// customerPayments is the tip and what was paid, then each payment: its
// means, card and transaction, and the card ticket when it is printed here.
func customerPayments(b *escpos.Builder, r Receipt, f Formatter, w labels, m mode, total int64) {
	var tips int64
	for _, p := range r.Payments {
		tips += p.Tip
	}
	if tips != 0 {
		b.TwoColumns(w.Tip, f.Format(tips))
		b.Bold(true).TwoColumns(w.Paid, f.Format(total+tips)).Bold(false)
	}
	if len(r.Payments) > 0 {
		b.Rule('-')
	}
	for i, p := range r.Payments {
		label := w.Payment
		if len(r.Payments) > 1 {
			label = fmt.Sprintf(w.Part, i+1, len(r.Payments))
		}
		label += " - " + kindLabel(w, p.Kind)
		b.TwoColumns(label, f.Format(p.Amount+p.Tip))
		if p.Tip != 0 {
			b.TwoColumns("  "+w.Tip, f.Format(p.Tip))
		}
		card := strings.TrimSpace(strings.Join([]string{p.Scheme, maskedPAN(p.MaskedPAN)}, " "))
		if card != "" {
			b.Wrapped("  " + card)
		}
		if p.TransactionID != "" {
			b.Wrapped("  " + w.Txn + " " + shortTxn(p.TransactionID))
		}
		if m.cardTicket && strings.TrimSpace(p.ClientCardTicket) != "" {
			b.Feed(1)
			for _, l := range verbatim(p.ClientCardTicket, b.Cols()) {
				b.Line(l)
			}
			b.Feed(1)
		}
	}
}

// customerFooter is the digital receipt's QR code, the merchant's footer,
// the fiscal signature, and the feed and cut.
func customerFooter(b *escpos.Builder, r Receipt, w labels, m mode) {
	mer, fis := r.Merchant, r.Fiscal
	b.Align(escpos.AlignCenter)
	if u := qrURL(mer.QRURL, r.Order.Number); u != "" {
		b.Feed(1).Wrapped(w.Digital)
		if m.text {
			b.Line(u)
		} else {
			b.QR(u, escpos.QROptions{})
		}
	}
	if len(mer.Footer) > 0 {
		b.Feed(1)
		for _, p := range mer.Footer {
			b.Wrapped(p)
		}
	}
	if fis != nil && fis.Head != "" {
		b.Feed(1).Wrapped(w.Signature + " " + fis.Head)
	}
	if fis != nil && fis.Software != "" && mer.french() {
		b.Wrapped(fis.Software)
	}
	b.Align(escpos.AlignLeft)
	if !m.text {
		b.Feed(2)
		if !m.noCut {
			b.PartialCut()
		}
	}
}

func orderTicket(o Order, opt Options, m mode) *escpos.Builder {
	w := words(opt.Locale)
	b := escpos.New(escpos.Options{Columns: opt.cols()}).Init()
	b.Align(escpos.AlignCenter).Line(w.Order)
	num := escpos.Sanitize(o.Number)
	size := 4
	for size > 1 && utf8.RuneCountInString(num)*size > b.Columns() {
		size--
	}
	b.Bold(true).Size(size, size).Line(num).Normal()
	if t := dateTime(o.Time); t != "" {
		b.Line(t)
	}
	if d := diningLabel(w, o.Dining); d != "" {
		b.Bold(true).Size(2, 2).Line(d).Normal()
	}
	b.Line(w.Collect)
	b.Align(escpos.AlignLeft).Rule('=')
	b.Bold(true).Size(1, 2)
	for _, l := range o.Lines {
		b.Wrapped(strconv.Itoa(l.Qty) + " x " + l.Name)
	}
	b.Normal().Rule('=')
	if !m.text {
		b.Feed(2).PartialCut()
	}
	return b
}

// LinkTicket is a payment link printed for a customer who pays on their
// phone away from the kiosk: the order's number, the amount, the link as a
// QR code (and its address, for a phone that cannot scan), and until when
// it can be paid.
func LinkTicket(o Order, link string, amount int64, until time.Time, opt Options) ([]byte, error) {
	return linkTicket(o, link, amount, until, opt, mode{}).Bytes()
}

// LinkTicketText is the link ticket as plain text (the QR code left out).
func LinkTicketText(o Order, link string, amount int64, until time.Time, opt Options) string {
	return render(linkTicket(o, link, amount, until, opt, mode{text: true}), opt.cols())
}

func linkTicket(o Order, link string, amount int64, until time.Time, opt Options, m mode) *escpos.Builder {
	w := words(opt.Locale)
	f := Formatter{Locale: opt.Locale, Currency: o.Currency}
	b := escpos.New(escpos.Options{Columns: opt.cols()}).Init()
	b.Align(escpos.AlignCenter).Line(w.Order)
	b.Bold(true).Size(2, 2).Line(escpos.Sanitize(o.Number)).Normal()
	b.Bold(true).Size(1, 2).Line(w.Total + " " + f.Format(amount)).Normal()
	b.Wrapped(w.ScanToPay)
	if !m.text {
		b.QR(link, escpos.QROptions{Size: 6, Level: escpos.QRLevelM})
		b.LF()
	}
	b.Wrapped(link)
	if t := dateTime(until); t != "" {
		b.Wrapped(fmt.Sprintf(w.LinkValid, t))
	}
	if !m.text {
		b.Feed(2).PartialCut()
	}
	return b
}

// Where an order is eaten (Order.Dining).
const (
	DiningEatIn    = "eat_in"
	DiningTakeAway = "take_away"
)

func diningLabel(w labels, dining string) string {
	switch dining {
	case DiningEatIn:
		return w.EatIn
	case DiningTakeAway:
		return w.TakeAway
	}
	return ""
}

func kindLabel(w labels, kind string) string {
	switch kind {
	case KindCard, "":
		return w.Card
	case KindCash:
		return w.Cash
	case KindLink:
		return w.Link
	case KindVoucher:
		return w.Voucher
	}
	return kind
}

// shortTxnLen is how much of a transaction id a receipt prints: enough for
// staff to find it in the history, short enough not to fill a line.
const shortTxnLen = 8

// shortTxn is the end of a transaction id, marked as cut when it is (in
// ASCII: every printer's code page has it).
func shortTxn(id string) string {
	r := []rune(id)
	if len(r) <= shortTxnLen+3 {
		return id
	}
	return "..." + string(r[len(r)-shortTxnLen:])
}

// maskedPAN returns a masked card number as given, or "" if it shows more
// than the first six and last four digits PCI DSS allows.
func maskedPAN(s string) string {
	s = strings.TrimSpace(escpos.Sanitize(s))
	digits := 0
	for _, r := range s {
		if r >= '0' && r <= '9' {
			digits++
		}
	}
	if digits > 10 {
		return ""
	}
	return s
}

// verbatim splits the terminal's ticket into its lines, sanitised, each
// cut (not word-wrapped, to keep its layout) at cols characters.
func verbatim(ticket string, cols int) []string {
	ticket = strings.TrimRight(strings.ReplaceAll(ticket, "\r\n", "\n"), "\n")
	var out []string
	for _, l := range strings.Split(ticket, "\n") {
		r := []rune(strings.TrimRight(escpos.Sanitize(l), " "))
		for len(r) > cols {
			out = append(out, string(r[:cols]))
			r = r[cols:]
		}
		out = append(out, string(r))
	}
	return out
}

// qrURL is the address printed as the receipt's QR code: none when the
// template is not one CheckQRURL accepts (a setting stored before it was
// checked, or written around the checks), so a bad setting never prints.
func qrURL(tmpl, number string) string {
	if tmpl == "" || CheckQRURL(tmpl) != nil {
		return ""
	}
	return strings.ReplaceAll(tmpl, "{order}", url.PathEscape(number))
}

func padLeft(s string, n int) string {
	return strings.Repeat(" ", max(n-utf8.RuneCountInString(s), 1)) + s
}

func padRight(s string, n int) string {
	return s + strings.Repeat(" ", max(n-utf8.RuneCountInString(s), 0))
}
