package fiscal

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/journal"
)

// ageJournal fills a journal with days of synthetic tickets (perDay each,
// written straight to the ticket chain), closing each day, month and
// fiscal year as the kiosk does, from start for days days. It returns the
// clock at the last day's end.
func ageJournal(tb testing.TB, ctx context.Context, l *Ledger, clock *testClock, start time.Time, days, perDay int) time.Time {
	tb.Helper()
	day := start
	for d := range days {
		day = start.AddDate(0, 0, d)
		addDay(tb, ctx, l, clock, day, perDay)
		clock.Set(day.AddDate(0, 0, 1).Add(time.Hour))
		if _, err := l.CloseDue(ctx, clock.Now(), paris, 1); err != nil {
			tb.Fatal(err)
		}
	}
	return day.AddDate(0, 0, 1)
}

// addDay writes perDay tickets of 12.00 (10 % VAT, by card) on day.
func addDay(tb testing.TB, ctx context.Context, l *Ledger, clock *testClock, day time.Time, perDay int) {
	tb.Helper()
	for i := range perDay {
		clock.Set(day.Add(9*time.Hour + time.Duration(i)*time.Minute))
		src := fmt.Sprintf("order:%s-%d", day.Format("20060102"), i)
		_, _, err := l.append(ctx, journal.FiscalTicket, src, func(seq int64, at time.Time) (any, error) {
			return Ticket{Number: seq, Type: TicketSale, At: at, Kiosk: l.Kiosk, Currency: "EUR",
				Lines:        []Line{{Name: "menu", Qty: 1, UnitPrice: 1200, Total: 1200, VATRate: 1000}},
				VAT:          []VAT{{Rate: 1000, Gross: 1200, Tax: 109, Net: 1091}},
				TotalInclTax: 1200, TotalExclTax: 1091, Payments: []Payment{{Means: "card", Amount: 1200}}}, nil
		})
		if err != nil {
			tb.Fatal(err)
		}
	}
}

// readsToCloseADay is how many records closing one more day of perDay
// tickets reads, on a journal of days days.
func readsToCloseADay(t *testing.T, days, perDay int) int64 {
	clock := &testClock{t: time.Date(2026, 1, 1, 8, 0, 0, 0, paris)}
	e := newClockedEnv(t, clock)
	next := ageJournal(t, e.ctx, e.ledger, clock, clock.Now().Truncate(24*time.Hour), days, perDay)
	addDay(t, e.ctx, e.ledger, clock, next, perDay)
	clock.Set(next.AddDate(0, 0, 1).Add(time.Hour))
	before := e.ledger.rd.reads.Load()
	cs, err := e.ledger.CloseDue(e.ctx, clock.Now(), paris, 1)
	if err != nil || len(cs) != 1 || cs[0].Tickets != int64(perDay) {
		t.Fatalf("%+v %v", cs, err)
	}
	return e.ledger.rd.reads.Load() - before
}

// Closing a day reads that day and the last closings, not the journal
// from its start: a journal of four months reads about what one of ten
// days does (a halving search grows with the logarithm of its rows), and
// far fewer records than it holds.
func TestClosingReadsItsPeriodNotTheJournal(t *testing.T) {
	if testing.Short() {
		t.Skip("builds four months of records")
	}
	young := readsToCloseADay(t, 10, 3)
	old := readsToCloseADay(t, 120, 3)
	t.Logf("records read to close a day: %d on 10 days, %d on 120 days", young, old)
	if old > 2*young || old > 120*3/2 {
		t.Fatalf("closing a day reads %d records on a journal of 120 days, %d on 10 days", old, young)
	}
}

// BenchmarkCloseDay closes one more day of 40 tickets on a journal a
// month old and on one five years old (10 tickets a day, every day,
// month and year closed): the cost is the day's, not the journal's age.
// Building five years of records takes a few minutes: run it with
// -benchtime=20x.
func BenchmarkCloseDay(b *testing.B) {
	for _, age := range []struct {
		name string
		days int
	}{{"age=1month", 31}, {"age=5years", 5 * 365}} {
		b.Run(age.name, func(b *testing.B) {
			clock := &testClock{t: time.Date(2021, 1, 1, 8, 0, 0, 0, paris)}
			ctx := context.Background()
			dir := b.TempDir()
			db, err := journal.Open(ctx, dir, journal.WithClock(clock.Now))
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			key, err := LoadOrCreateKey(dir)
			if err != nil {
				b.Fatal(err)
			}
			l := NewLedger(db, key, "bench", "bench")
			next := ageJournal(b, ctx, l, clock, clock.Now().Truncate(24*time.Hour), age.days, 10)
			b.ResetTimer()
			for range b.N {
				b.StopTimer()
				addDay(b, ctx, l, clock, next, 40)
				clock.Set(next.AddDate(0, 0, 1).Add(time.Hour))
				before := l.rd.reads.Load()
				b.StartTimer()
				if _, err := l.CloseDue(ctx, clock.Now(), paris, 1); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				b.ReportMetric(float64(l.rd.reads.Load()-before), "records-read/op")
				next = next.AddDate(0, 0, 1)
				b.StartTimer()
			}
		})
	}
}
