package fiscal

import (
	"context"
	"encoding/json"
	"fmt"
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

func (t *totals) addVAT(v VAT) {
	x := t.vat[v.Rate]
	if x == nil {
		x = &VAT{Rate: v.Rate}
		t.vat[v.Rate] = x
	}
	x.Gross, x.Tax, x.Net = x.Gross+v.Gross, x.Tax+v.Tax, x.Net+v.Net
}

func (t *totals) addMeans(m MeansTotal) {
	x := t.means[m.Means]
	if x == nil {
		x = &MeansTotal{Means: m.Means}
		t.means[m.Means] = x
	}
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

// lastClosing is the chain's last closing of a period kind, nil if none.
func (l *Ledger) lastClosing(ctx context.Context, period string) (*Closing, error) {
	var last *Closing
	err := l.eachRecord(ctx, journal.FiscalClosing, func(r journal.FiscalRecord) error {
		var c Closing
		if err := json.Unmarshal(r.Payload, &c); err != nil {
			return fmt.Errorf("fiscal: closing %d: %w", r.Seq, err)
		}
		if c.Period == period {
			last = &c
		}
		return nil
	})
	return last, err
}

// eachRecord walks a chain in order.
func (l *Ledger) eachRecord(ctx context.Context, kind string, f func(journal.FiscalRecord) error) error {
	for after := int64(0); ; {
		rs, err := l.db.FiscalRecords(ctx, kind, after, 500)
		if err != nil {
			return err
		}
		for _, r := range rs {
			if err := f(r); err != nil {
				return err
			}
			after = r.ID
		}
		if len(rs) < 500 {
			return nil
		}
	}
}

// CloseDay records the closing of a day (yyyy-MM-dd in loc): the tickets
// after the last day closed, recorded before the day's end. Days close in
// order: a day before the last one closed, or one whose tickets are not
// all past, is refused. Closing a day again returns its closing.
func (l *Ledger) CloseDay(ctx context.Context, day string, loc *time.Location) (Closing, error) {
	start, err := time.ParseInLocation(time.DateOnly, day, loc)
	if err != nil {
		return Closing{}, fmt.Errorf("fiscal: day %q is not yyyy-MM-dd", day)
	}
	end := start.AddDate(0, 0, 1)
	if rec, err := l.db.FiscalBySource(ctx, journal.FiscalClosing, ClosingSource(PeriodDay, day)); err == nil {
		return decodeClosing(rec)
	}
	last, err := l.lastClosing(ctx, PeriodDay)
	if err != nil {
		return Closing{}, err
	}
	var after, perpetual int64
	if last != nil {
		if !last.From.Before(start) {
			return Closing{}, fmt.Errorf("fiscal: day %s is before the last day closed, %s", day, last.Name)
		}
		after, perpetual = last.LastTicket, last.Perpetual
	}
	rec, _, err := l.append(ctx, journal.FiscalClosing, ClosingSource(PeriodDay, day), func(seq int64, at time.Time) (any, error) {
		if at.Before(end) {
			return nil, fmt.Errorf("fiscal: day %s is not over", day)
		}
		c := Closing{Number: seq, Period: PeriodDay, Name: day, From: start, To: end, At: at, Kiosk: l.Kiosk, Software: l.Software}
		t := newTotals()
		err := l.eachRecord(ctx, journal.FiscalTicket, func(r journal.FiscalRecord) error {
			if r.Seq <= after || !r.At.Before(end) {
				return nil
			}
			var tk Ticket
			if err := json.Unmarshal(r.Payload, &tk); err != nil {
				return fmt.Errorf("fiscal: ticket %d: %w", r.Seq, err)
			}
			t.ticket(tk)
			if c.FirstTicket == 0 {
				c.FirstTicket = r.Seq
			}
			c.LastTicket, c.Tickets = r.Seq, c.Tickets+1
			return nil
		})
		if err != nil {
			return nil, err
		}
		if c.Tickets == 0 {
			c.LastTicket = after
		}
		t.into(&c)
		c.Perpetual = perpetual + c.Total
		return c, nil
	})
	if err != nil {
		return Closing{}, err
	}
	return decodeClosing(rec)
}

func decodeClosing(r journal.FiscalRecord) (Closing, error) {
	var c Closing
	if err := json.Unmarshal(r.Payload, &c); err != nil {
		return Closing{}, fmt.Errorf("fiscal: closing %d: %w", r.Seq, err)
	}
	return c, nil
}

// closeOf records the closing of a month or a year from the closings of
// the period below it that fall inside [from, to).
func (l *Ledger) closeOf(ctx context.Context, period, name, below string, from, to time.Time) (Closing, error) {
	if rec, err := l.db.FiscalBySource(ctx, journal.FiscalClosing, ClosingSource(period, name)); err == nil {
		return decodeClosing(rec)
	}
	var parts []Closing
	err := l.eachRecord(ctx, journal.FiscalClosing, func(r journal.FiscalRecord) error {
		c, err := decodeClosing(r)
		if err != nil {
			return err
		}
		if c.Period == below && !c.From.Before(from) && c.To.Compare(to) <= 0 {
			parts = append(parts, c)
		}
		return nil
	})
	if err != nil {
		return Closing{}, err
	}
	last, err := l.lastClosing(ctx, period)
	if err != nil {
		return Closing{}, err
	}
	var perpetual int64
	if last != nil {
		perpetual = last.Perpetual
	}
	rec, _, err := l.append(ctx, journal.FiscalClosing, ClosingSource(period, name), func(seq int64, at time.Time) (any, error) {
		if at.Before(to) {
			return nil, fmt.Errorf("fiscal: %s %s is not over", period, name)
		}
		c := Closing{Number: seq, Period: period, Name: name, From: from, To: to, At: at, Kiosk: l.Kiosk, Software: l.Software, Parts: []int64{}}
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
		c.Perpetual = perpetual + c.Total
		if n := len(parts); n > 0 {
			// The days' own perpetual total is the truth: the same sum.
			c.Perpetual = parts[n-1].Perpetual
		}
		return c, nil
	})
	if err != nil {
		return Closing{}, err
	}
	return decodeClosing(rec)
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

// CloseDue records every closing that is due at now: each day with
// tickets not closed yet, up to yesterday; each month over with a day
// closed; each fiscal year over with a month closed. It is what the kiosk
// does at start when staff did not close.
func (l *Ledger) CloseDue(ctx context.Context, now time.Time, loc *time.Location, yearStart int) ([]Closing, error) {
	var out []Closing
	today := now.In(loc).Format(time.DateOnly)
	for {
		last, err := l.lastClosing(ctx, PeriodDay)
		if err != nil {
			return out, err
		}
		var after int64
		if last != nil {
			after = last.LastTicket
		}
		var next *journal.FiscalRecord
		err = l.eachRecord(ctx, journal.FiscalTicket, func(r journal.FiscalRecord) error {
			if next == nil && r.Seq > after {
				next = &r
			}
			return nil
		})
		if err != nil {
			return out, err
		}
		if next == nil {
			break
		}
		day := next.At.In(loc).Format(time.DateOnly)
		if day >= today {
			break
		}
		c, err := l.CloseDay(ctx, day, loc)
		if err != nil {
			return out, err
		}
		out = append(out, c)
	}
	months, err := l.periodsToClose(ctx, PeriodDay, PeriodMonth, func(c Closing) string { return c.From.In(loc).Format("2006-01") })
	if err != nil {
		return out, err
	}
	for _, m := range months {
		start, _ := time.ParseInLocation("2006-01", m, loc)
		if start.AddDate(0, 1, 0).After(now) {
			continue
		}
		c, err := l.CloseMonth(ctx, m, loc)
		if err != nil {
			return out, err
		}
		out = append(out, c)
	}
	years, err := l.periodsToClose(ctx, PeriodMonth, PeriodYear, func(c Closing) string {
		f := c.From.In(loc)
		y := f.Year()
		if int(f.Month()) < yearStart {
			y--
		}
		return time.Date(y, time.Month(yearStart), 1, 0, 0, 0, 0, loc).Format("2006-01")
	})
	if err != nil {
		return out, err
	}
	for _, y := range years {
		start, _ := time.ParseInLocation("2006-01", y, loc)
		if start.AddDate(1, 0, 0).After(now) {
			continue
		}
		c, err := l.CloseYear(ctx, start.Year(), yearStart, loc)
		if err != nil {
			return out, err
		}
		out = append(out, c)
	}
	return out, nil
}

// periodsToClose are the names of the periods above that closings of the
// period below fall in, and that have no closing yet, oldest first.
func (l *Ledger) periodsToClose(ctx context.Context, below, above string, name func(Closing) string) ([]string, error) {
	seen, closed := map[string]bool{}, map[string]bool{}
	var names []string
	err := l.eachRecord(ctx, journal.FiscalClosing, func(r journal.FiscalRecord) error {
		c, err := decodeClosing(r)
		if err != nil {
			return err
		}
		switch c.Period {
		case below:
			if n := name(c); !seen[n] {
				seen[n] = true
				names = append(names, n)
			}
		case above:
			closed[c.Name] = true
		}
		return nil
	})
	var out []string
	for _, n := range names {
		if !closed[n] {
			out = append(out, n)
		}
	}
	return out, err
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
	b.WriteString(c.Software + "\n")
	return b.String()
}
