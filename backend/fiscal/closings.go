package fiscal

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/comptoir-pos/comptoir/backend/journal"
)

// Closing periods.
const (
	PeriodDay   = "day"
	PeriodMonth = "month"
	PeriodYear  = "year" // the fiscal year
)

// Closing is a recorded closing (a "Z"): a period's totals, computed from
// its tickets (a day) or from the closings it is made of (a month from its
// days, a year from its months), with the perpetual grand total, which is
// never reset.
type Closing struct {
	Number   int64     `json:"number"`
	Period   string    `json:"period"` // day, month, year
	Name     string    `json:"name"`   // 2026-11-24, 2026-11, 2026 (the fiscal year's start)
	From     time.Time `json:"from"`
	To       time.Time `json:"to"`
	At       time.Time `json:"at"`
	Kiosk    string    `json:"kiosk"`
	Software string    `json:"software"`
	// FirstTicket and LastTicket are the numbers of the tickets it covers
	// (0, 0: none); Tickets how many.
	FirstTicket int64 `json:"firstTicket"`
	LastTicket  int64 `json:"lastTicket"`
	Tickets     int64 `json:"tickets"`
	// ByVAT and ByMeans are the period's totals by rate and by means of
	// payment; Total the period's grand total (VAT included, credits
	// subtracted); Perpetual the grand total since the first ticket.
	ByVAT     []VAT        `json:"byVat"`
	ByMeans   []MeansTotal `json:"byMeans"`
	Total     int64        `json:"total"`
	TotalExcl int64        `json:"totalExclTax"`
	Perpetual int64        `json:"perpetual"`
	// Days or Months it is made of (a month, a year): their closing numbers.
	Parts []int64 `json:"parts,omitempty"`
	// PublicKey (base64 of its DER) and KeyFingerprint are the key the
	// records are signed with, printed so that the paper says which key
	// verifies them.
	PublicKey      string `json:"publicKey,omitempty"`
	KeyFingerprint string `json:"keyFingerprint,omitempty"`
	// Chains are how far the other chains went when the closing was made:
	// the running counts of tickets and events, and their heads.
	Chains map[string]ChainHead `json:"chains,omitempty"`
	// Latest names the last day, month and fiscal year closed when this
	// closing was made (itself included); LastTicketSource is the source of
	// a day's last ticket. The next closing finds where to start by these
	// names, not by walking the chains.
	Latest           *Latest `json:"latest,omitempty"`
	LastTicketSource string  `json:"lastTicketSource,omitempty"`
	// Fingerprint is the closing record's own head ("Z17-…"), read from
	// the record, not part of what it signs: what `comptoir verify
	// --expect` is given from the paper.
	Fingerprint string `json:"fingerprint,omitempty"`
}

// ChainHead is how far a chain went: its last record's number (the count,
// as records are numbered from 1 without gaps), its head fingerprint and
// its signature.
type ChainHead struct {
	Count int64  `json:"count"`
	Head  string `json:"head,omitempty"`
	Sig   string `json:"sig,omitempty"`
}

// MeansTotal is what a means of payment took (credits subtracted).
type MeansTotal struct {
	Means  string `json:"means"`
	Amount int64  `json:"amount"`
	Tip    int64  `json:"tip"`
	Count  int64  `json:"count"`
}

// ClosingSource names a closing in its chain: "day:2026-11-24".
func ClosingSource(period, name string) string { return period + ":" + name }

// totals adds tickets or closings up.
type totals struct {
	vat   map[int]*VAT
	means map[string]*MeansTotal
	total int64
	excl  int64
}

func newTotals() *totals { return &totals{vat: map[int]*VAT{}, means: map[string]*MeansTotal{}} }

// running is the running total of m under k, started as start the first
// time k comes.
func running[K comparable, V any](m map[K]*V, k K, start V) *V {
	x := m[k]
	if x == nil {
		x = &start
		m[k] = x
	}
	return x
}

func (t *totals) addVAT(v VAT) {
	x := running(t.vat, v.Rate, VAT{Rate: v.Rate})
	x.Gross, x.Tax, x.Net = x.Gross+v.Gross, x.Tax+v.Tax, x.Net+v.Net
}

func (t *totals) addMeans(m MeansTotal) {
	x := running(t.means, m.Means, MeansTotal{Means: m.Means})
	x.Amount, x.Tip, x.Count = x.Amount+m.Amount, x.Tip+m.Tip, x.Count+m.Count
}

func (t *totals) ticket(tk Ticket) {
	for _, v := range tk.VAT {
		t.addVAT(v)
	}
	for _, p := range tk.Payments {
		t.addMeans(MeansTotal{Means: p.Means, Amount: p.Amount, Tip: p.Tip, Count: 1})
	}
	t.total += tk.TotalInclTax
	t.excl += tk.TotalExclTax
}

func (t *totals) closing(c Closing) {
	for _, v := range c.ByVAT {
		t.addVAT(v)
	}
	for _, m := range c.ByMeans {
		t.addMeans(m)
	}
	t.total += c.Total
	t.excl += c.TotalExcl
}

func (t *totals) into(c *Closing) {
	c.ByVAT, c.ByMeans = []VAT{}, []MeansTotal{}
	for _, v := range t.vat {
		c.ByVAT = append(c.ByVAT, *v)
	}
	sort.Slice(c.ByVAT, func(i, j int) bool { return c.ByVAT[i].Rate < c.ByVAT[j].Rate })
	for _, m := range t.means {
		c.ByMeans = append(c.ByMeans, *m)
	}
	sort.Slice(c.ByMeans, func(i, j int) bool { return c.ByMeans[i].Means < c.ByMeans[j].Means })
	c.Total, c.TotalExcl = t.total, t.excl
}

// eachRecord walks a chain in order, from its first record.
func (l *Ledger) eachRecord(ctx context.Context, kind string, f func(journal.FiscalRecord) error) error {
	return l.rd.forward(ctx, kind, 1, 500, func(r journal.FiscalRecord) (bool, error) { return true, f(r) })
}

// CloseDay records the closing of a day (yyyy-MM-dd in loc): the tickets
// that follow the last day closed, up to the first one recorded at or
// after the day's end (a clock moved back leaves no ticket out: it goes
// to the next day). Days close in order: a day before the last one
// closed, or one not over, is refused. Closing a day again returns its
// closing. It reads the day's tickets and the last closing, found by
// name, never the journal from its start.
func (l *Ledger) CloseDay(ctx context.Context, day string, loc *time.Location) (Closing, error) {
	start, err := time.ParseInLocation(time.DateOnly, day, loc)
	if err != nil {
		return Closing{}, fmt.Errorf("fiscal: day %q is not yyyy-MM-dd", day)
	}
	end := start.AddDate(0, 0, 1)
	if rec, err := l.db.FiscalBySource(ctx, journal.FiscalClosing, ClosingSource(PeriodDay, day)); err == nil {
		return decodeClosing(rec)
	}
	rec, _, err := l.append(ctx, journal.FiscalClosing, ClosingSource(PeriodDay, day), func(seq int64, at time.Time) (any, error) {
		if at.Before(end) {
			return nil, fmt.Errorf("fiscal: day %s is not over", day)
		}
		// Read inside the closing's transaction: no other closing comes
		// between the last day and this one.
		last, err := l.lastOf(ctx, PeriodDay)
		if err != nil {
			return nil, err
		}
		c := Closing{Number: seq, Period: PeriodDay, Name: day, From: start, To: end, At: at}
		if last != nil {
			if !last.From.Before(start) {
				return nil, fmt.Errorf("fiscal: day %s is before the last day closed, %s", day, last.Name)
			}
			c.LastTicket, c.LastTicketSource, c.Perpetual = last.LastTicket, last.LastTicketSource, last.Perpetual
		}
		t := newTotals()
		err = l.ticketsAfter(ctx, last, func(r journal.FiscalRecord) (bool, error) {
			if !r.At.Before(end) {
				return false, nil
			}
			var tk Ticket
			if err := json.Unmarshal(r.Payload, &tk); err != nil {
				return false, fmt.Errorf("fiscal: ticket %d: %w", r.Seq, err)
			}
			t.ticket(tk)
			if c.FirstTicket == 0 {
				c.FirstTicket = r.Seq
			}
			c.LastTicket, c.LastTicketSource, c.Tickets = r.Seq, r.Source, c.Tickets+1
			return true, nil
		})
		if err != nil {
			return nil, err
		}
		t.into(&c)
		c.Perpetual += c.Total
		return c, l.stamp(ctx, &c)
	})
	if err != nil {
		return Closing{}, err
	}
	return decodeClosing(rec)
}

// decodeClosing reads a closing record; its Fingerprint is the record's
// own head.
func decodeClosing(r journal.FiscalRecord) (Closing, error) {
	var c Closing
	if err := json.Unmarshal(r.Payload, &c); err != nil {
		return Closing{}, fmt.Errorf("fiscal: closing %d: %w", r.Seq, err)
	}
	c.Fingerprint = HeadFingerprint(r)
	return c, nil
}

// stamp writes on a closing being made what ties it to the rest: the
// till, the software, the key's fingerprint, and how far every other
// chain went (its count and the last record's signature), so that a
// closing on paper pins them all.
func (l *Ledger) stamp(ctx context.Context, c *Closing) error {
	lt, err := l.latest(ctx)
	if err != nil {
		return err
	}
	lt.set(c.Period, c.Name)
	c.Latest = &lt
	c.Kiosk, c.Software = l.Kiosk, l.Software
	c.PublicKey, c.KeyFingerprint = PublicKeyText(l.PublicKey()), ShortFingerprint(l.PublicKey())
	c.Chains = map[string]ChainHead{}
	for _, kind := range []string{journal.FiscalTicket, journal.FiscalEvent, journal.FiscalArchive} {
		r, ok, err := l.db.FiscalLast(ctx, kind)
		if err != nil {
			return err
		}
		h := ChainHead{}
		if ok {
			h = ChainHead{Count: r.Seq, Head: HeadFingerprint(r), Sig: r.Sig}
		}
		c.Chains[kind] = h
	}
	return nil
}

// closeOf records the closing of a month or a year from the closings of
// the period below it that fall inside [from, to), found by name.
func (l *Ledger) closeOf(ctx context.Context, period, name, below string, from, to time.Time) (Closing, error) {
	if rec, err := l.db.FiscalBySource(ctx, journal.FiscalClosing, ClosingSource(period, name)); err == nil {
		return decodeClosing(rec)
	}
	parts, err := l.closingsIn(ctx, below, from, to)
	if err != nil {
		return Closing{}, err
	}
	rec, _, err := l.append(ctx, journal.FiscalClosing, ClosingSource(period, name), func(seq int64, at time.Time) (any, error) {
		if at.Before(to) {
			return nil, fmt.Errorf("fiscal: %s %s is not over", period, name)
		}
		c := Closing{Number: seq, Period: period, Name: name, From: from, To: to, At: at, Parts: []int64{}}
		// The perpetual total so far: the last day's.
		if last, err := l.lastOf(ctx, PeriodDay); err != nil {
			return nil, err
		} else if last != nil {
			c.Perpetual = last.Perpetual
		}
		t := newTotals()
		for _, p := range parts {
			t.closing(p)
			c.Parts = append(c.Parts, p.Number)
			if c.FirstTicket == 0 && p.FirstTicket != 0 {
				c.FirstTicket = p.FirstTicket
			}
			if p.Tickets > 0 {
				c.LastTicket = p.LastTicket
			}
			c.Tickets += p.Tickets
		}
		t.into(&c)
		if n := len(parts); n > 0 {
			// The days' own perpetual total is the truth: the same sum.
			c.Perpetual = parts[n-1].Perpetual
		}
		return c, l.stamp(ctx, &c)
	})
	if err != nil {
		return Closing{}, err
	}
	return decodeClosing(rec)
}

// closingsIn are the closings of a period (day or month) named within
// [from, to), in order.
func (l *Ledger) closingsIn(ctx context.Context, period string, from, to time.Time) ([]Closing, error) {
	var out []Closing
	for _, name := range periodNames(period, from, to) {
		c, ok, err := l.named(ctx, period, name)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, c)
		}
	}
	return out, nil
}

// CloseMonth records a month's closing (yyyy-MM) from its days.
func (l *Ledger) CloseMonth(ctx context.Context, month string, loc *time.Location) (Closing, error) {
	from, err := time.ParseInLocation("2006-01", month, loc)
	if err != nil {
		return Closing{}, fmt.Errorf("fiscal: month %q is not yyyy-MM", month)
	}
	return l.closeOf(ctx, PeriodMonth, month, PeriodDay, from, from.AddDate(0, 1, 0))
}

// CloseYear records the fiscal year's closing that starts in month
// startMonth (1-12) of year, from its months.
func (l *Ledger) CloseYear(ctx context.Context, year, startMonth int, loc *time.Location) (Closing, error) {
	if startMonth < 1 || startMonth > 12 {
		return Closing{}, fmt.Errorf("fiscal: the fiscal year starts in month %d", startMonth)
	}
	from := time.Date(year, time.Month(startMonth), 1, 0, 0, 0, 0, loc)
	return l.closeOf(ctx, PeriodYear, from.Format("2006-01"), PeriodMonth, from, from.AddDate(1, 0, 0))
}

// Text is the closing as printed on the terminal's paper (columns wide).
func (c Closing) Text(columns int, money func(int64) string) string {
	if columns < 24 {
		columns = 24
	}
	var b strings.Builder
	rule := strings.Repeat("-", columns) + "\n"
	two := func(l, r string) {
		pad := columns - utf8.RuneCountInString(l) - utf8.RuneCountInString(r)
		if pad < 1 {
			pad = 1
		}
		b.WriteString(l + strings.Repeat(" ", pad) + r + "\n")
	}
	title := map[string]string{PeriodDay: "Z DAILY CLOSING", PeriodMonth: "MONTHLY CLOSING", PeriodYear: "YEARLY CLOSING"}[c.Period]
	b.WriteString(title + " " + c.Name + "\n")
	two(fmt.Sprintf("Closing no. %d", c.Number), c.Kiosk)
	b.WriteString(c.At.Local().Format("02/01/2006 15:04") + "\n")
	b.WriteString(rule)
	if c.Tickets > 0 {
		two("Tickets", fmt.Sprintf("%d (%d-%d)", c.Tickets, c.FirstTicket, c.LastTicket))
	} else {
		two("Tickets", "0")
	}
	b.WriteString(rule)
	b.WriteString("VAT rate: gross / VAT / net\n")
	for _, v := range c.ByVAT {
		rate := fmt.Sprintf("%g %%", float64(v.Rate)/100)
		if v.Rate < 0 {
			rate = "?"
		}
		two(rate, money(v.Gross)+" / "+money(v.Tax)+" / "+money(v.Net))
	}
	b.WriteString(rule)
	for _, m := range c.ByMeans {
		two(fmt.Sprintf("%s (%d)", m.Means, m.Count), money(m.Amount+m.Tip))
	}
	b.WriteString(rule)
	two("TOTAL", money(c.Total))
	two("Total excl. VAT", money(c.TotalExcl))
	two("Perpetual total", money(c.Perpetual))
	b.WriteString(rule)
	if c.Chains != nil {
		two("Tickets to date", fmt.Sprint(c.Chains[journal.FiscalTicket].Count))
		two("Events to date", fmt.Sprint(c.Chains[journal.FiscalEvent].Count))
	}
	if c.Fingerprint != "" {
		two("Chain", c.Fingerprint)
	}
	if c.KeyFingerprint != "" {
		two("Key", c.KeyFingerprint)
		b.WriteString("Public key:\n")
		for k := c.PublicKey; k != ""; {
			n := min(columns, len(k))
			b.WriteString(k[:n] + "\n")
			k = k[n:]
		}
	}
	b.WriteString(c.Software + "\n")
	return b.String()
}

// Closings are every closing recorded (days, months, fiscal years),
// newest first.
func (l *Ledger) Closings(ctx context.Context) ([]Closing, error) {
	var out []Closing
	err := l.eachRecord(ctx, journal.FiscalClosing, func(r journal.FiscalRecord) error {
		c, err := decodeClosing(r)
		if err == nil {
			out = append(out, c)
		}
		return err
	})
	slices.Reverse(out)
	return out, err
}

// ClosingNumbered is the closing numbered n (ok false: none).
func (l *Ledger) ClosingNumbered(ctx context.Context, n int64) (Closing, bool, error) {
	r, ok, err := l.rd.bySeq(ctx, journal.FiscalClosing, n)
	if err != nil || !ok {
		return Closing{}, false, err
	}
	c, err := decodeClosing(r)
	return c, err == nil, err
}
