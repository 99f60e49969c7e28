package staff

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/comptoir-pos/comptoir/backend/device"
	"github.com/comptoir-pos/comptoir/backend/fiscal"
	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/orders"
	"github.com/comptoir-pos/comptoir/backend/payment"
	"github.com/comptoir-pos/comptoir/backend/receipt"
	"github.com/comptoir-pos/comptoir/backend/settings"
)

// Kinds of money movement in a report.
const (
	KindDebit    = "debit"
	KindRefund   = "refund"
	KindReversal = "reversal"
)

// Total is a sum of approved movements of one kind (and one scheme).
type Total struct {
	Kind   string `json:"kind"`             // debit, refund, reversal
	Scheme string `json:"scheme,omitempty"` // VISA, CB...; "" in the by-kind totals
	Count  int    `json:"count"`
	Amount int64  `json:"amount"` // cents, tips excluded
	Gift   int64  `json:"gift"`   // cents
}

// Sum is Amount + Gift.
func (t Total) Sum() int64 { return t.Amount + t.Gift }

// Totals are one side's sums.
type Totals struct {
	ByScheme []Total `json:"byScheme"` // kind and scheme
	ByKind   []Total `json:"byKind"`
	// Net is what the day brought in: debits (tips included) less refunds
	// and reversals.
	Net int64 `json:"net"`
}

// Report is the end-of-day report.
type Report struct {
	Day         string       `json:"day"`
	Currency    string       `json:"currency"`
	Locale      string       `json:"locale"`
	GeneratedAt time.Time    `json:"generatedAt"`
	Journal     Totals       `json:"journal"`
	Terminal    Totals       `json:"terminal"`
	Differences []Difference `json:"differences"`
	// Sales is the VAT of the orders paid this day, by dining mode and
	// rate: what the accountant files. Refunds and reversals are in the
	// totals above, not taken off here.
	Sales []Sale `json:"sales"`
}

// Sale is one dining mode and VAT rate of the day's paid orders, VAT
// included in Gross. Dining is eat_in, take_away, or "" for orders taken
// without asking; Rate is in basis points (1000 is 10 %), -1 for amounts
// keyed at the counter, whose VAT is not known.
type Sale struct {
	Dining string `json:"dining"`
	Rate   int    `json:"rate"`
	Orders int    `json:"orders"`
	Gross  int64  `json:"gross"`
	Tax    int64  `json:"tax"`
	Net    int64  `json:"net"`
}

// DiffCurrency is a movement in another currency than the kiosk's, left
// out of the report's totals.
const DiffCurrency = "currency_mismatch"

// otherCurrency is the difference of an attempt that moved money in
// another currency than the report's (the provider's word when it named
// one, else its order's), and whether it did.
func otherCurrency(ord *journal.Order, a journal.Attempt, currency string) (Difference, bool) {
	cur := settings.DefaultCurrency
	switch {
	case a.ChargedCurrency != "":
		cur = strings.ToUpper(a.ChargedCurrency)
	case ord != nil && ord.Currency != "":
		cur = strings.ToUpper(ord.Currency)
	}
	if strings.EqualFold(cur, currency) {
		return Difference{}, false
	}
	return Difference{Kind: DiffCurrency, At: a.CreatedAt, TransactionID: a.TransactionID, AttemptUUID: a.UUID, OrderID: a.OrderID,
		JournalAmount: a.Total(), JournalState: a.State,
		Message: fmt.Sprintf("The %s of order %s is in %s, not in the kiosk's %s: left out of the totals.", a.Kind, a.OrderID, cur, currency)}, true
}

// entryInOtherCurrency is the difference of a terminal's transaction in
// another currency than the report's, and whether it is.
func entryInOtherCurrency(e device.HistoryEntry, at time.Time, currency string) (Difference, bool) {
	if e.CurrencyCode == "" || strings.EqualFold(e.CurrencyCode, currency) {
		return Difference{}, false
	}
	return Difference{Kind: DiffCurrency, At: at, TransactionID: e.TransactionID, OrderID: e.CartID,
		TerminalAmount: e.Amount + e.GiftAmount, TerminalStatus: e.Status,
		Message: fmt.Sprintf("The terminal's %s %s is in %s, not in the kiosk's %s: left out of the totals.", e.Type, e.TransactionID, strings.ToUpper(e.CurrencyCode), currency)}, true
}

type totaler map[[2]string]*Total

func (t totaler) add(kind, scheme string, amount, gift int64) {
	if scheme == "" {
		scheme = "?"
	}
	k := [2]string{kind, scheme}
	if t[k] == nil {
		t[k] = &Total{Kind: kind, Scheme: scheme}
	}
	t[k].Count++
	t[k].Amount += amount
	t[k].Gift += gift
}

var kindOrder = map[string]int{KindDebit: 0, KindRefund: 1, KindReversal: 2}

func (t totaler) totals() Totals {
	out := Totals{ByScheme: []Total{}, ByKind: []Total{}}
	byKind := map[string]*Total{}
	for _, v := range t {
		out.ByScheme = append(out.ByScheme, *v)
		if byKind[v.Kind] == nil {
			byKind[v.Kind] = &Total{Kind: v.Kind}
		}
		k := byKind[v.Kind]
		k.Count, k.Amount, k.Gift = k.Count+v.Count, k.Amount+v.Amount, k.Gift+v.Gift
		if v.Kind == KindDebit {
			out.Net += v.Sum()
		} else {
			out.Net -= v.Sum()
		}
	}
	less := func(a, b Total) bool {
		if kindOrder[a.Kind] != kindOrder[b.Kind] {
			return kindOrder[a.Kind] < kindOrder[b.Kind]
		}
		return a.Scheme < b.Scheme
	}
	sort.Slice(out.ByScheme, func(i, j int) bool { return less(out.ByScheme[i], out.ByScheme[j]) })
	for _, v := range byKind {
		out.ByKind = append(out.ByKind, *v)
	}
	sort.Slice(out.ByKind, func(i, j int) bool { return less(out.ByKind[i], out.ByKind[j]) })
	return out
}

// Report is the end-of-day report of a day (yyyy-MM-dd in the kiosk's
// zone; "" today): totals by scheme and by kind from the journal and from
// the terminal's history, and the differences Compare finds.
func (s *Staff) Report(ctx context.Context, sessionID, day string) (Report, error) {
	sess, err := s.session(sessionID)
	if err != nil {
		return Report{}, err
	}
	d, err := s.readDay(ctx, day)
	if err != nil {
		return Report{}, err
	}
	st, err := settings.LoadSettings(ctx, s.cfg.Journal, s.log)
	if err != nil {
		return Report{}, journalErr(err, "Reading the settings")
	}
	// The kiosk's currency (the setting, else the catalog's, else EUR): a
	// movement in another is not added to its totals, and is a difference.
	r := Report{Day: d.start.Format(time.DateOnly), Currency: s.currency(ctx), Locale: st.DefaultLanguage, GeneratedAt: s.now()}
	jt, tt := totaler{}, totaler{}
	var odd []Difference
	orders := orderCache{}
	schemeOf := map[string]string{} // transactionId → scheme, for reversals
	for _, a := range d.atts {
		if tx, ok := payment.ChargeOf(a); ok {
			schemeOf[tx.TransactionID] = tx.Scheme
		}
	}
	for _, a := range d.atts {
		tx, ok := payment.ChargeOf(a)
		if a.State != journal.StateApproved || !inDay(a.CreatedAt, d.start, d.end) {
			continue
		}
		if diff, other := otherCurrency(s.order(ctx, orders, a.OrderID), a, r.Currency); other {
			odd = append(odd, diff)
			continue
		}
		gift, scheme := a.Gift(), ""
		if ok {
			scheme = tx.Scheme
			if !a.Charged {
				gift = tx.GiftAmount
			}
		}
		switch line := payment.TraitsOf(a.Channel).ReportLine; {
		case a.Kind == journal.KindReversal:
			scheme = schemeOf[a.InitialTransactionID]
		case line != "":
			// Paid on the customer's phone, say: its own line, which the
			// terminal's totals never have.
			scheme = line
		}
		jt.add(string(a.Kind), scheme, a.Paid(), gift)
	}
	for _, rv := range d.reversals {
		if inDay(rv.at, d.start, d.end) {
			jt.add(KindReversal, schemeOf[rv.rec.InitialTransactionID], rv.rec.Amount, 0)
		}
	}
	for _, e := range d.entries {
		c, err := e.Created()
		if err != nil || !inDay(c, d.start, d.end) || e.Status != device.StatusOK {
			continue
		}
		if diff, other := entryInOtherCurrency(e, c, r.Currency); other {
			odd = append(odd, diff)
			continue
		}
		switch e.Type {
		case device.HistoryDebit, device.HistoryRefund, device.HistoryReversal:
			tt.add(e.Type, e.Scheme, e.Amount, e.GiftAmount)
		}
	}
	r.Journal, r.Terminal = jt.totals(), tt.totals()
	r.Differences = append(s.compare(ctx, d).Differences, odd...)
	if r.Sales, err = s.sales(ctx, st, d); err != nil {
		return Report{}, err
	}
	s.audit(ctx, sess.Who, "report", r.Day, fmt.Sprintf("end-of-day report: journal net %d, terminal net %d, %d difference(s)", r.Journal.Net, r.Terminal.Net, len(r.Differences)), nil)
	return r, nil
}

// sales sums the VAT of the orders an approved debit of the day paid,
// from the lines the kiosk recorded (each with the rate of its dining
// mode), each order once.
func (s *Staff) sales(ctx context.Context, st settings.Settings, d dayData) ([]Sale, error) {
	type key struct {
		dining string
		rate   int
	}
	sums := map[key]*Sale{}
	seen := map[string]bool{}
	for _, a := range d.atts {
		if a.Kind != journal.KindDebit || a.State != journal.StateApproved || !inDay(a.CreatedAt, d.start, d.end) || seen[a.OrderID] {
			continue
		}
		seen[a.OrderID] = true
		ord, err := s.cfg.Journal.Order(ctx, a.OrderID)
		if err != nil || ord.Status != journal.OrderPaid {
			continue // not paid in full (yet): not a sale
		}
		rec, _, err := orders.OrderReceipt(ctx, s.cfg.Journal, st, a.OrderID)
		if err != nil {
			return nil, journalErr(err, "Reading the day's orders")
		}
		add := func(rate int, gross, tax int64) {
			k := key{rec.Order.Dining, rate}
			if sums[k] == nil {
				sums[k] = &Sale{Dining: k.dining, Rate: rate}
			}
			sums[k].Orders++
			sums[k].Gross += gross
			sums[k].Tax += tax
			sums[k].Net += gross - tax
		}
		var unknown int64
		for _, l := range rec.Order.Lines {
			if l.VATRate == receipt.VATUnknown {
				unknown += l.Total()
			}
		}
		for _, t := range receipt.VATSummary(rec.Order) {
			add(t.Rate, t.Gross, t.Tax)
		}
		if unknown != 0 {
			add(receipt.VATUnknown, unknown, 0)
		}
	}
	out := make([]Sale, 0, len(sums))
	for _, v := range sums {
		out = append(out, *v)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Dining != out[j].Dining {
			return out[i].Dining < out[j].Dining
		}
		return out[i].Rate > out[j].Rate
	})
	return out, nil
}

// rateText is a VAT rate in basis points as a percentage: "10 %", "5.5 %".
func rateText(bp int) string {
	if bp < 0 {
		return "VAT ?"
	}
	s := strconv.FormatFloat(float64(bp)/100, 'f', -1, 64)
	return s + " %"
}

// diningText is a dining mode on the printed report.
func diningText(d string) string {
	switch d {
	case receipt.DiningEatIn:
		return "eat in"
	case receipt.DiningTakeAway:
		return "take away"
	}
	return "not asked"
}

// decimal is cents as 12.34, for CSV: no grouping, a point, a sign.
func decimal(cents int64) string {
	sign := ""
	if cents < 0 {
		sign, cents = "-", -cents
	}
	return fmt.Sprintf("%s%d.%02d", sign, cents/100, cents%100)
}

// formatMoney is an amount for a sentence: "3.80 EUR" (the currency left
// out when unknown).
func formatMoney(cents int64, currency string) string {
	if currency == "" {
		return decimal(cents)
	}
	return decimal(cents) + " " + strings.ToUpper(currency)
}

// CSV is the report for a spreadsheet: one row per total (section totals),
// then one per difference.
func (r Report) CSV() []byte {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.Write([]string{"section", "source", "kind", "scheme", "count", "amount", "gift", "total", "currency", "day"})
	for _, side := range []struct {
		name string
		t    Totals
	}{{"journal", r.Journal}, {"terminal", r.Terminal}} {
		for _, t := range side.t.ByScheme {
			w.Write([]string{"by_scheme", side.name, t.Kind, t.Scheme, strconv.Itoa(t.Count), decimal(t.Amount), decimal(t.Gift), decimal(t.Sum()), r.Currency, r.Day})
		}
		for _, t := range side.t.ByKind {
			w.Write([]string{"by_kind", side.name, t.Kind, "", strconv.Itoa(t.Count), decimal(t.Amount), decimal(t.Gift), decimal(t.Sum()), r.Currency, r.Day})
		}
		w.Write([]string{"net", side.name, "", "", "", "", "", decimal(side.t.Net), r.Currency, r.Day})
	}
	w.Write(nil)
	w.Write([]string{"sales", "dining", "vat_rate_percent", "orders", "gross", "vat", "net", "currency", "day"})
	for _, v := range r.Sales {
		rate := ""
		if v.Rate >= 0 {
			rate = strconv.FormatFloat(float64(v.Rate)/100, 'f', -1, 64)
		}
		w.Write([]string{"sales", v.Dining, rate, strconv.Itoa(v.Orders), decimal(v.Gross), decimal(v.Tax), decimal(v.Net), r.Currency, r.Day})
	}
	w.Write(nil)
	w.Write([]string{"difference", "kind", "at", "transaction_id", "attempt_uuid", "order_id", "journal_amount", "terminal_amount", "message"})
	for _, d := range r.Differences {
		w.Write([]string{"difference", d.Kind, d.At.UTC().Format(time.RFC3339), d.TransactionID, d.AttemptUUID, d.OrderID,
			decimal(d.JournalAmount), decimal(d.TerminalAmount), d.Message})
	}
	w.Flush()
	return b.Bytes()
}

// Text is the report laid out on lines of columns characters (32 or 48),
// for /print with format text.
func (r Report) Text(columns int) string {
	if columns < 24 {
		columns = 48
	}
	f := receipt.Formatter{Locale: r.Locale, Currency: r.Currency}
	var b strings.Builder
	line := func(left, right string) {
		pad := columns - utf8.RuneCountInString(left) - utf8.RuneCountInString(right)
		if pad < 1 {
			b.WriteString(left + "\n")
			left, pad = "", columns-utf8.RuneCountInString(right)
		}
		b.WriteString(left + strings.Repeat(" ", max(pad, 0)) + right + "\n")
	}
	rule := strings.Repeat("-", columns) + "\n"
	b.WriteString("END OF DAY " + r.Day + "\n")
	b.WriteString(rule)
	for _, side := range []struct {
		name string
		t    Totals
	}{{"JOURNAL (kiosk)", r.Journal}, {"TERMINAL (history)", r.Terminal}} {
		b.WriteString(side.name + "\n")
		for _, t := range side.t.ByScheme {
			line(fmt.Sprintf(" %s %s x%d", t.Kind, t.Scheme, t.Count), f.Format(t.Sum()))
		}
		for _, t := range side.t.ByKind {
			line(fmt.Sprintf(" %s total x%d", t.Kind, t.Count), f.Format(t.Sum()))
			if t.Gift != 0 {
				line("  of which tips", f.Format(t.Gift))
			}
		}
		line(" NET", f.Format(side.t.Net))
		b.WriteString(rule)
	}
	if len(r.Sales) > 0 {
		b.WriteString("SALES (VAT included)\n")
		for _, v := range r.Sales {
			line(fmt.Sprintf(" %s %s x%d", diningText(v.Dining), rateText(v.Rate), v.Orders), f.Format(v.Gross))
			if v.Rate >= 0 {
				line("  of which VAT", f.Format(v.Tax))
			}
		}
		b.WriteString(rule)
	}
	if len(r.Differences) == 0 {
		b.WriteString("No difference between the journal and the terminal.\n")
		return b.String()
	}
	fmt.Fprintf(&b, "DIFFERENCES: %d\n", len(r.Differences))
	for _, d := range r.Differences {
		for _, l := range wrap("- "+d.Message, columns) {
			b.WriteString(l + "\n")
		}
		if d.TransactionID != "" {
			for _, l := range wrap("  tx "+d.TransactionID, columns) {
				b.WriteString(l + "\n")
			}
		}
	}
	return b.String()
}

// wrap cuts s into lines of at most n characters, at spaces where it can.
func wrap(s string, n int) []string {
	var out []string
	var cur string
	for _, w := range strings.Fields(s) {
		for utf8.RuneCountInString(w) > n {
			if cur != "" {
				out, cur = append(out, cur), ""
			}
			rs := []rune(w)
			out, w = append(out, string(rs[:n])), string(rs[n:])
		}
		switch {
		case cur == "":
			cur = w
		case utf8.RuneCountInString(cur)+1+utf8.RuneCountInString(w) <= n:
			cur += " " + w
		default:
			out, cur = append(out, cur), w
		}
	}
	if cur != "" {
		out = append(out, cur)
	}
	return out
}

// PrintReport prints the report on the terminal's printer (text).
func (s *Staff) PrintReport(ctx context.Context, sessionID string, r Report) error {
	sess, err := s.session(sessionID)
	if err != nil {
		return err
	}
	st, err := settings.LoadSettings(ctx, s.cfg.Journal, s.log)
	if err != nil {
		return journalErr(err, "Reading the settings")
	}
	tctx, cancel := s.terminalCtx(ctx)
	defer cancel()
	resp, err := s.cfg.Terminal.Print(tctx, device.Print{Data: r.Text(st.ReceiptColumns), Format: device.FormatText})
	if err != nil {
		s.audit(ctx, sess.Who, "report_print_failed", r.Day, err.Error(), device.RawOf(err))
		return terminalErr(err, receiptMessage, "The report was not printed")
	}
	s.audit(ctx, sess.Who, "report_printed", r.Day, "end-of-day report printed", resp.Raw)
	return nil
}

// PrintZ records the closing of a day that is over (once: printing it
// again prints the same closing) and prints it on the terminal's printer.
func (s *Staff) PrintZ(ctx context.Context, sessionID, day string) (fiscal.Closing, error) {
	sess, err := s.session(sessionID)
	if err != nil {
		return fiscal.Closing{}, err
	}
	if s.cfg.Ledger == nil {
		return fiscal.Closing{}, errorf(EINVALID, "The fiscal journal is not kept on this kiosk.")
	}
	if _, err := s.cfg.Ledger.RecordTickets(ctx, s.log); err != nil {
		return fiscal.Closing{}, errorf(EINTERNAL, "The tickets could not be recorded: %v.", err)
	}
	c, err := s.cfg.Ledger.CloseDay(ctx, day, s.cfg.Location)
	if err != nil {
		return fiscal.Closing{}, errorf(EINVALID, "The day could not be closed: %s.", strings.TrimPrefix(err.Error(), "fiscal: "))
	}
	return c, s.printClosing(ctx, sess.Who, c)
}
