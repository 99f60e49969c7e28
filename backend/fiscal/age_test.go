package fiscal

import (
	"context"
	"crypto/ed25519"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
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

// bulkJournal writes, in one transaction, what days days of the kiosk
// leave in a journal: perDay tickets of 12.00 a day, each day closed, each
// month and fiscal year (from January) closed after its last day, every
// record signed and chained as the ledger does; without hints, as closings
// were recorded before they named the last closings and tickets. It
// returns the next day.
func bulkJournal(tb testing.TB, path string, key ed25519.PrivateKey, start time.Time, days, perDay int, hints bool) time.Time {
	tb.Helper()
	raw, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		tb.Fatal(err)
	}
	defer raw.Close()
	tx, err := raw.Begin()
	if err != nil {
		tb.Fatal(err)
	}
	seq, prev := map[string]int64{}, map[string]string{}
	add := func(kind, source string, at time.Time, v func(n int64) any) {
		seq[kind]++
		payload, _ := json.Marshal(v(seq[kind]))
		r := journal.FiscalRecord{Kind: kind, Seq: seq[kind], At: at, Source: source, Payload: payload, PrevSig: prev[kind]}
		r.Sig = base64.StdEncoding.EncodeToString(ed25519.Sign(key, SignedBytes(r)))
		prev[kind] = r.Sig
		if _, err := tx.Exec(`INSERT INTO fiscal_records (kind, seq, at, source, payload, prev_sig, sig) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			kind, r.Seq, at.UnixMilli(), source, string(payload), r.PrevSig, r.Sig); err != nil {
			tb.Fatal(err)
		}
	}
	var perpetual int64
	var month, year Closing
	var latest Latest
	closeOf := func(c *Closing, period, name string, from, to, at time.Time) {
		latest.set(period, name)
		add(journal.FiscalClosing, ClosingSource(period, name), at, func(n int64) any {
			lt := latest
			c.Number, c.Period, c.Name, c.From, c.To, c.At, c.Perpetual, c.Latest = n, period, name, from, to, at, perpetual, &lt
			if !hints {
				c.Latest, c.LastTicketSource = nil, ""
			}
			return *c
		})
		*c = Closing{}
	}
	day := start
	for d := range days {
		day = start.AddDate(0, 0, d)
		dc := Closing{}
		for i := range perDay {
			at := day.Add(9*time.Hour + time.Duration(i)*time.Minute)
			add(journal.FiscalTicket, fmt.Sprintf("order:%s-%d", day.Format("20060102"), i), at, func(n int64) any {
				if dc.FirstTicket == 0 {
					dc.FirstTicket = n
				}
				dc.LastTicket, dc.LastTicketSource, dc.Tickets = n, fmt.Sprintf("order:%s-%d", day.Format("20060102"), i), dc.Tickets+1
				return Ticket{Number: n, Type: TicketSale, At: at, Kiosk: "bench", Currency: "EUR",
					Lines:        []Line{{Name: "menu", Qty: 1, UnitPrice: 1200, Total: 1200, VATRate: 1000}},
					VAT:          []VAT{{Rate: 1000, Gross: 1200, Tax: 109, Net: 1091}},
					TotalInclTax: 1200, TotalExclTax: 1091, Payments: []Payment{{Means: "card", Amount: 1200}}}
			})
		}
		total := int64(perDay) * 1200
		perpetual += total
		dc.Total, month.Total, year.Total = total, month.Total+total, year.Total+total
		end := day.AddDate(0, 0, 1)
		closeOf(&dc, PeriodDay, day.Format(time.DateOnly), day, end, end.Add(time.Hour))
		if end.Day() == 1 {
			from := end.AddDate(0, -1, 0)
			closeOf(&month, PeriodMonth, from.Format("2006-01"), from, end, end.Add(time.Hour+time.Minute))
			if end.Month() == time.January {
				from := end.AddDate(-1, 0, 0)
				closeOf(&year, PeriodYear, from.Format("2006-01"), from, end, end.Add(time.Hour+2*time.Minute))
			}
		}
	}
	if err := tx.Commit(); err != nil {
		tb.Fatal(err)
	}
	return day.AddDate(0, 0, 1)
}

// Closings recorded before they named the last closings and their last
// ticket are read by walking back, once: the next days, the month and the
// fiscal year close from them exactly, and name them from then on.
func TestClosingsWithoutHintsCloseOnFromThem(t *testing.T) {
	// 1-30 December, then 31 December and 1 January.
	l, clock, next := hintless(t, time.Date(2025, 12, 1, 0, 0, 0, 0, paris), 30, 3)
	for range 2 {
		addDay(t, t.Context(), l, clock, next, 2)
		next = next.AddDate(0, 0, 1)
	}
	clock.Set(next.Add(time.Hour))
	cs, err := l.CloseDue(t.Context(), clock.Now(), paris, 1)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range cs {
		got = append(got, fmt.Sprintf("%s %s %d %d", c.Period, c.Name, c.Tickets, c.Perpetual))
	}
	want := "day 2025-12-31 2 110400,day 2026-01-01 2 112800,month 2025-12 92 110400,year 2025-01 92 110400"
	if strings.Join(got, ",") != want {
		t.Fatalf("closings %s", strings.Join(got, ","))
	}
	tip, _, _ := l.db.FiscalLast(t.Context(), journal.FiscalClosing)
	if c, _ := decodeClosing(tip); c.Latest == nil || *c.Latest != (Latest{Day: "2026-01-01", Month: "2025-12", Year: "2025-01"}) {
		t.Fatalf("the last closing names %+v", c.Latest)
	}
	if day, ok, err := l.named(t.Context(), PeriodDay, "2026-01-01"); err != nil || !ok || day.LastTicketSource != "order:20260101-1" {
		t.Fatalf("the last day names its last ticket %q (%v)", day.LastTicketSource, err)
	}
	if v, err := l.Verify(t.Context()); err != nil || !v.OK {
		t.Fatalf("verify %+v %v", v.Broken, err)
	}
}

// BenchmarkCloseDay closes one more day of 40 tickets on a journal a
// month old and on one five years old (10 tickets a day, every day,
// month and fiscal year closed): the cost is the day's, not the
// journal's age.
func BenchmarkCloseDay(b *testing.B) {
	for _, age := range []struct {
		name string
		days int
	}{{"age=1month", 31}, {"age=5years", 5 * 365}} {
		b.Run(age.name, func(b *testing.B) {
			start := time.Date(2021, 1, 1, 0, 0, 0, 0, paris)
			clock := &testClock{t: start}
			ctx := context.Background()
			dir := b.TempDir()
			db, err := journal.Open(ctx, dir, journal.WithClock(clock.Now))
			if err != nil {
				b.Fatal(err)
			}
			path := db.Path()
			db.Close()
			key, err := LoadOrCreateKey(dir)
			if err != nil {
				b.Fatal(err)
			}
			next := bulkJournal(b, path, key, start, age.days, 10, true)
			if db, err = journal.Open(ctx, dir, journal.WithClock(clock.Now)); err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			l := NewLedger(db, key, "bench", "bench")
			if v, err := l.Verify(ctx); err != nil || !v.OK {
				b.Fatalf("the journal built does not verify: %+v %v", v.Broken, err)
			}
			b.ResetTimer()
			for range b.N {
				b.StopTimer()
				addDay(b, ctx, l, clock, next, 40)
				clock.Set(next.AddDate(0, 0, 1).Add(time.Hour))
				before := l.rd.reads.Load()
				b.StartTimer()
				cs, err := l.CloseDue(ctx, clock.Now(), paris, 1)
				if err != nil || len(cs) == 0 || cs[0].Tickets != 40 {
					b.Fatalf("%+v %v", cs, err)
				}
				b.StopTimer()
				b.ReportMetric(float64(l.rd.reads.Load()-before), "records-read/op")
				next = next.AddDate(0, 0, 1)
				b.StartTimer()
			}
		})
	}
}
