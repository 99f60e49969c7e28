package fiscal

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/journal"
)

// names are closings as "period name tickets".
func names(cs []Closing) string {
	var out []string
	for _, c := range cs {
		out = append(out, fmt.Sprintf("%s %s %d", c.Period, c.Name, c.Tickets))
	}
	return strings.Join(out, ",")
}

// A month or a fiscal year closed by hand before any day (a kiosk that
// sold nothing yet) leaves the closings due to come as they would be:
// nothing is due for it, and the days after it close.
func TestAPeriodClosedByHandBeforeAnyDayLeavesTheDueClosings(t *testing.T) {
	for _, tc := range []struct {
		name  string
		first func(*env) (Closing, error)
		at    time.Time // when it is closed
		sale  time.Time
		want  string
	}{
		{"a month", func(e *env) (Closing, error) { return e.ledger.CloseMonth(e.ctx, "2026-09", paris) },
			time.Date(2026, 10, 2, 8, 0, 0, 0, paris), time.Date(2026, 10, 5, 9, 0, 0, 0, paris), "day 2026-10-05 1"},
		{"a fiscal year", func(e *env) (Closing, error) { return e.ledger.CloseYear(e.ctx, 2025, 1, paris) },
			time.Date(2026, 1, 2, 8, 0, 0, 0, paris), time.Date(2026, 1, 5, 9, 0, 0, 0, paris), "day 2026-01-05 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := &testClock{t: tc.at}
			e := newClockedEnv(t, clock)
			if c, err := tc.first(e); err != nil || c.Tickets != 0 {
				t.Fatalf("closed by hand %+v %v", c, err)
			}
			if cs, err := e.ledger.CloseDue(e.ctx, clock.Now(), paris, 1); err != nil || len(cs) != 0 {
				t.Fatalf("due after it: %s %v", names(cs), err)
			}
			clock.Set(tc.sale)
			e.sale("o-1")
			e.record()
			clock.Set(tc.sale.AddDate(0, 0, 1))
			cs, err := e.ledger.CloseDue(e.ctx, clock.Now(), paris, 1)
			if err != nil || names(cs) != tc.want {
				t.Fatalf("due: %s %v, want %s", names(cs), err, tc.want)
			}
			if cs, err := e.ledger.CloseDue(e.ctx, clock.Now(), paris, 1); err != nil || len(cs) != 0 {
				t.Fatalf("due again: %s %v", names(cs), err)
			}
		})
	}
}

// A fiscal year is named by the month it starts in and holds the months
// from it to the one before it, a year later: June goes to the year
// before, July (its start month) to its own.
func TestAFiscalYearHoldsTheMonthsFromItsStart(t *testing.T) {
	clock := &testClock{t: time.Date(2026, 6, 10, 9, 0, 0, 0, paris)}
	e := newClockedEnv(t, clock)
	e.sellAt(clock, clock.Now(), "june")
	e.sellAt(clock, time.Date(2026, 7, 15, 9, 0, 0, 0, paris), "july")
	clock.Set(time.Date(2027, 7, 2, 8, 0, 0, 0, paris))
	cs, err := e.ledger.CloseDue(e.ctx, clock.Now(), paris, 7)
	if err != nil {
		t.Fatal(err)
	}
	want := "day 2026-06-10 1,day 2026-07-15 1,month 2026-06 1,month 2026-07 1,year 2025-07 1,year 2026-07 1"
	if names(cs) != want {
		t.Fatalf("closings %s, want %s", names(cs), want)
	}
}

// The last closing names the last day closed, and that day its last
// ticket by its source: when either is not where it is named (records
// removed or changed), the next closing stops and says so, rather than
// count tickets again or from the start.
func TestAClosingStopsWhenItsLastDayOrTicketIsNotWhereNamed(t *testing.T) {
	for _, tc := range []struct {
		name, sql, why string
	}{
		{"the last day removed", `DELETE FROM fiscal_records WHERE kind = 'closing' AND source = 'day:2026-10-31'`, "has no closing"},
		{"the last ticket named otherwise", `UPDATE fiscal_records SET payload = replace(payload, '"lastTicketSource":"order:b"', '"lastTicketSource":"order:a"') WHERE kind = 'closing' AND source = 'day:2026-10-31'`,
			"is not where the closing names it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := &testClock{t: time.Date(2026, 10, 30, 9, 0, 0, 0, paris)}
			e := newClockedEnv(t, clock)
			e.sellAt(clock, clock.Now(), "a")
			e.sellAt(clock, time.Date(2026, 10, 31, 9, 0, 0, 0, paris), "b")
			clock.Set(time.Date(2026, 11, 1, 8, 0, 0, 0, paris))
			if cs, err := e.ledger.CloseDue(e.ctx, clock.Now(), paris, 1); err != nil || names(cs) != "day 2026-10-30 1,day 2026-10-31 1,month 2026-10 2" {
				t.Fatalf("closings %s %v", names(cs), err)
			}
			e.tamper(tc.sql)
			e.sellAt(clock, time.Date(2026, 11, 2, 9, 0, 0, 0, paris), "c")
			clock.Set(time.Date(2026, 11, 3, 8, 0, 0, 0, paris))
			if c, err := e.ledger.CloseDay(e.ctx, "2026-11-02", paris); err == nil || !strings.Contains(err.Error(), tc.why) {
				t.Fatalf("closed %+v (%v), want it refused: %s", c, err, tc.why)
			}
		})
	}
}

// sellAt sets clock to at, then sells id and records its ticket.
func (e *env) sellAt(clock *testClock, at time.Time, id string) {
	e.t.Helper()
	clock.Set(at)
	e.sale(id)
	e.record()
}

// hintless is a ledger on a journal of closings recorded before they
// named the last closings and tickets, from start for days days of
// perDay tickets.
func hintless(t *testing.T, start time.Time, days, perDay int) (*Ledger, *testClock, time.Time) {
	t.Helper()
	clock := &testClock{t: start}
	dir := t.TempDir()
	db, err := journal.Open(t.Context(), dir, journal.WithClock(clock.Now))
	if err != nil {
		t.Fatal(err)
	}
	path := db.Path()
	db.Close()
	key, err := LoadOrCreateKey(dir)
	if err != nil {
		t.Fatal(err)
	}
	next := bulkJournal(t, path, key, start, days, perDay, false)
	if db, err = journal.Open(t.Context(), dir, journal.WithClock(clock.Now)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return NewLedger(db, key, "kiosk-1", "test"), clock, next
}

// Closings that do not name the last ones are walked back from the last,
// to the last day, month and fiscal year, and no further: what is due
// next closes exactly (each day on its own, nothing closed twice), and
// what it reads does not grow with the journal's age.
func TestClosingsWithoutHintsAreWalkedBackToTheLastOfEachPeriod(t *testing.T) {
	// 1 December 2024 to 5 February 2026: the last closing a day, the
	// last fiscal year closed 2025's.
	l, clock, next := hintless(t, time.Date(2024, 12, 1, 0, 0, 0, 0, paris), 432, 1)
	ctx := t.Context()
	clock.Set(next.Add(10 * time.Hour))
	if cs, err := l.CloseDue(ctx, clock.Now(), paris, 1); err != nil || len(cs) != 0 {
		t.Fatalf("nothing new, closed %s %v", names(cs), err)
	}
	for d := range 2 { // 6 and 7 February, one ticket each
		addDay(t, ctx, l, clock, next.AddDate(0, 0, d), 1)
	}
	clock.Set(next.AddDate(0, 0, 2).Add(time.Hour))
	before := l.rd.reads.Load()
	cs, err := l.CloseDue(ctx, clock.Now(), paris, 1)
	if err != nil || names(cs) != "day 2026-02-06 1,day 2026-02-07 1" {
		t.Fatalf("closings %s %v", names(cs), err)
	}
	// 432 days, 14 months and a year closed: each walk back reads about
	// forty of them, far fewer than the journal holds.
	held, err := l.db.FiscalTip(ctx, journal.FiscalClosing)
	if err != nil {
		t.Fatal(err)
	}
	if reads := l.rd.reads.Load() - before; reads >= held {
		t.Fatalf("closing two days read %d records, the journal holds %d closings", reads, held)
	}
	if cs[1].Perpetual != 434*1200 {
		t.Fatalf("perpetual %d", cs[1].Perpetual)
	}
}

// The last closing a fiscal year's (a journal whose last day closed was
// the year's last): the walk back goes on past the year and its last month
// to the last day.
func TestClosingsWithoutHintsEndingWithAYearFindTheLastDay(t *testing.T) {
	l, clock, next := hintless(t, time.Date(2025, 12, 1, 0, 0, 0, 0, paris), 31, 1)
	ctx := t.Context()
	if tip, _, _ := l.db.FiscalLast(ctx, journal.FiscalClosing); !strings.HasPrefix(tip.Source, "year:") {
		t.Fatalf("the last closing is %s", tip.Source)
	}
	addDay(t, ctx, l, clock, next, 1)
	clock.Set(next.AddDate(0, 0, 1).Add(time.Hour))
	c, err := l.CloseDay(ctx, "2026-01-01", paris)
	if err != nil || c.Tickets != 1 || c.FirstTicket != 32 || c.Perpetual != 32*1200 {
		t.Fatalf("closing %+v %v", c, err)
	}
}
