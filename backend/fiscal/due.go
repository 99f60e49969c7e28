package fiscal

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/comptoir-pos/comptoir/backend/fault"
	"github.com/comptoir-pos/comptoir/backend/journal"
)

// Latest names the last day, month and fiscal year closed.
type Latest struct {
	Day   string `json:"day,omitempty"`
	Month string `json:"month,omitempty"`
	Year  string `json:"year,omitempty"`
}

func (lt *Latest) set(period, name string) {
	switch period {
	case PeriodDay:
		lt.Day = name
	case PeriodMonth:
		lt.Month = name
	case PeriodYear:
		lt.Year = name
	}
}

func (lt Latest) of(period string) string {
	return map[string]string{PeriodDay: lt.Day, PeriodMonth: lt.Month, PeriodYear: lt.Year}[period]
}

// latest is what the last closing names. Closings recorded before they
// carried it are walked back once, to the last of each period.
func (l *Ledger) latest(ctx context.Context) (Latest, error) {
	r, ok, err := l.db.FiscalLast(ctx, journal.FiscalClosing)
	if err != nil || !ok {
		return Latest{}, err
	}
	tip, err := decodeClosing(r)
	if err != nil {
		return Latest{}, err
	}
	if tip.Latest != nil {
		return *tip.Latest, nil
	}
	var lt Latest
	err = l.rd.backward(ctx, journal.FiscalClosing, func(r journal.FiscalRecord) (bool, error) {
		c, err := decodeClosing(r)
		if err != nil {
			return false, err
		}
		if lt.of(c.Period) == "" {
			lt.set(c.Period, c.Name)
		}
		return lt.Day == "" || lt.Month == "" || lt.Year == "", nil
	})
	return lt, err
}

// named is the closing of a period by its name (ok false: none).
func (l *Ledger) named(ctx context.Context, period, name string) (Closing, bool, error) {
	rec, err := l.db.FiscalBySource(ctx, journal.FiscalClosing, ClosingSource(period, name))
	l.rd.reads.Add(1)
	if fault.CodeOf(err) == fault.ENOTFOUND {
		return Closing{}, false, nil
	}
	if err != nil {
		return Closing{}, false, err
	}
	c, err := decodeClosing(rec)
	return c, err == nil, err
}

// lastOf is the last closing of a period, nil if none.
func (l *Ledger) lastOf(ctx context.Context, period string) (*Closing, error) {
	lt, err := l.latest(ctx)
	if err != nil || lt.of(period) == "" {
		return nil, err
	}
	c, ok, err := l.named(ctx, period, lt.of(period))
	if err == nil && !ok {
		err = fmt.Errorf("fiscal: the last closing names the %s %s, which has no closing: run comptoir verify", period, lt.of(period))
	}
	if err != nil {
		return nil, err
	}
	return &c, nil
}

// ticketsAfter calls f on the tickets that follow the last one last
// covers (from the first ticket when last is nil), in order, until f says
// stop: from the row of last's last ticket, found by its source.
func (l *Ledger) ticketsAfter(ctx context.Context, last *Closing, f func(journal.FiscalRecord) (bool, error)) error {
	var afterID int64
	if last != nil && last.LastTicket > 0 {
		if last.LastTicketSource == "" {
			// A closing recorded before it named its last ticket.
			return l.rd.forward(ctx, journal.FiscalTicket, last.LastTicket+1, 200, f)
		}
		r, err := l.db.FiscalBySource(ctx, journal.FiscalTicket, last.LastTicketSource)
		l.rd.reads.Add(1)
		if err == nil && r.Seq != last.LastTicket {
			err = errors.New("it is numbered otherwise")
		}
		if err != nil {
			return fmt.Errorf("fiscal: ticket %d, the last of %s, is not where the closing names it (%v): run comptoir verify", last.LastTicket, last.Name, err)
		}
		afterID = r.ID
	}
	return l.rd.after(ctx, journal.FiscalTicket, afterID, 200, f)
}

// CloseDue records every closing that is due at now: each day with
// tickets not closed yet, up to yesterday; each month over with a day
// closed; each fiscal year over with a month closed. It is what the kiosk
// does at start when staff did not close. It finds the last closings by
// name and reads the tickets since the last day closed: what it reads
// grows with what it closes, not with the journal's age.
func (l *Ledger) CloseDue(ctx context.Context, now time.Time, loc *time.Location, yearStart int) ([]Closing, error) {
	var out []Closing
	today := now.In(loc).Format(time.DateOnly)
	for {
		last, err := l.lastOf(ctx, PeriodDay)
		if err != nil {
			return out, err
		}
		var next *journal.FiscalRecord
		err = l.ticketsAfter(ctx, last, func(r journal.FiscalRecord) (bool, error) {
			next = &r
			return false, nil
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
	months, err := l.monthsToClose(ctx)
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
	years, err := l.yearsToClose(ctx, yearStart)
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

// firstDay is the name of the first day closed ("" if none): the chain's
// first closing, as days close before their months.
func (l *Ledger) firstDay(ctx context.Context) (string, error) {
	var first string
	err := l.rd.after(ctx, journal.FiscalClosing, 0, 1, func(r journal.FiscalRecord) (bool, error) {
		c, err := decodeClosing(r)
		if c.Period == PeriodDay {
			first = c.Name
		}
		return false, err
	})
	return first, err
}

// monthsToClose are the months after the last month closed, up to the
// last day closed, that have a day closed, oldest first.
func (l *Ledger) monthsToClose(ctx context.Context) ([]string, error) {
	lt, err := l.latest(ctx)
	if err != nil || lt.Day == "" {
		return nil, err
	}
	from := lt.Month
	if from == "" {
		if from, err = l.firstDay(ctx); err != nil || from == "" {
			return nil, err
		}
	} else {
		from = nextMonth(from, 1)
	}
	var out []string
	for m := from[:7]; m <= lt.Day[:7]; m = nextMonth(m, 1) {
		start, _ := time.Parse("2006-01", m)
		days, err := l.anyClosingIn(ctx, PeriodDay, start, start.AddDate(0, 1, 0))
		if err != nil {
			return nil, err
		}
		if days {
			out = append(out, m)
		}
	}
	return out, nil
}

// yearsToClose are the fiscal years (named by their first month) after
// the last one closed, up to the last month closed, that have a month
// closed, oldest first.
func (l *Ledger) yearsToClose(ctx context.Context, yearStart int) ([]string, error) {
	lt, err := l.latest(ctx)
	if err != nil || lt.Month == "" {
		return nil, err
	}
	fiscalYear := func(month string) string {
		t, _ := time.Parse("2006-01", month[:7])
		y := t.Year()
		if int(t.Month()) < yearStart {
			y--
		}
		return fmt.Sprintf("%04d-%02d", y, yearStart)
	}
	var from string
	if lt.Year != "" {
		from = nextMonth(lt.Year, 12)
	} else {
		first, err := l.firstDay(ctx)
		if err != nil || first == "" {
			return nil, err
		}
		from = fiscalYear(first)
	}
	var out []string
	for y := from; y <= fiscalYear(lt.Month); y = nextMonth(y, 12) {
		start, _ := time.Parse("2006-01", y)
		months, err := l.anyClosingIn(ctx, PeriodMonth, start, start.AddDate(1, 0, 0))
		if err != nil {
			return nil, err
		}
		if months {
			out = append(out, y)
		}
	}
	return out, nil
}

// anyClosingIn says whether a closing of a period is named within
// [from, to).
func (l *Ledger) anyClosingIn(ctx context.Context, period string, from, to time.Time) (bool, error) {
	for _, name := range periodNames(period, from, to) {
		_, ok, err := l.named(ctx, period, name)
		if err != nil || ok {
			return ok, err
		}
	}
	return false, nil
}

// periodNames are the names of the days or months within [from, to).
func periodNames(period string, from, to time.Time) []string {
	var names []string
	for t := from; t.Before(to); {
		if period == PeriodMonth {
			names, t = append(names, t.Format("2006-01")), t.AddDate(0, 1, 0)
		} else {
			names, t = append(names, t.Format(time.DateOnly)), t.AddDate(0, 0, 1)
		}
	}
	return names
}

// nextMonth is the month n months after m (yyyy-MM…).
func nextMonth(m string, n int) string {
	t, _ := time.Parse("2006-01", m[:7])
	return t.AddDate(0, n, 0).Format("2006-01")
}
