package fiscal

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/google/uuid"
)

// tipped journals an approved attempt of kind on the order for amount,
// with a tip (the terminal's gift amount) on top.
func (e *env) tipped(order string, kind journal.Kind, amount, tip int64, initial ...string) journal.Attempt {
	e.t.Helper()
	id := uuid.Must(uuid.NewV7()).String()
	policy := map[journal.Kind]journal.Policy{journal.KindDebit: journal.PolicyKiosk, journal.KindRefund: journal.PolicyRefund}[kind]
	body, _ := json.Marshal(map[string]any{"amount": amount, "giftAmount": tip})
	if _, err := e.db.PrepareAttempt(e.ctx, journal.Attempt{UUID: id, OrderID: order, Kind: kind, Amount: amount, GiftAmount: tip,
		Policy: policy, Terminal: "sim", InitialTransactionID: strings.Join(initial, ""), RequestBody: body}); err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.db.MarkSent(e.ctx, id); err != nil {
		e.t.Fatal(err)
	}
	a, err := e.db.Transition(e.ctx, id, journal.StateSent, journal.StateApproved, journal.TransitionInfo{
		TransactionID: "TX-" + id[len(id)-6:], Charged: &journal.Charge{Amount: amount, GiftAmount: tip}})
	if err != nil {
		e.t.Fatal(err)
	}
	return a
}

// tippedSale records the kiosk's order of fiscal_test's sale (a coffee at
// 10 %, a beer at 20 %: 11.00), paid with a tip.
func (e *env) tippedSale(id string, tip int64) {
	e.t.Helper()
	data := `{"number":"8","language":"fr","lines":[
		{"name":{"fr":"Café"},"qty":2,"unitPrice":250,"total":500,"vatRate":1000},
		{"name":{"fr":"Bière"},"qty":1,"unitPrice":600,"total":600,"vatRate":2000}]}`
	if err := e.db.CreateOrder(e.ctx, journal.Order{ID: id, Currency: "EUR", Total: 1100, Data: json.RawMessage(data)}); err != nil {
		e.t.Fatal(err)
	}
	e.tipped(id, journal.KindDebit, 1100, tip)
}

// sums are a period's totals added up here, one ticket at a time, apart
// from the ledger's own sums.
type sums struct {
	vat               map[int]VAT
	means             map[string]MeansTotal
	total, excl       int64
	tickets           int64
	firstTkt, lastTkt int64
}

func sumTickets(ts []Ticket, in func(Ticket) bool) sums {
	s := sums{vat: map[int]VAT{}, means: map[string]MeansTotal{}}
	for _, tk := range ts {
		if !in(tk) {
			continue
		}
		for _, v := range tk.VAT {
			x := s.vat[v.Rate]
			s.vat[v.Rate] = VAT{Rate: v.Rate, Gross: x.Gross + v.Gross, Tax: x.Tax + v.Tax, Net: x.Net + v.Net}
		}
		for _, p := range tk.Payments {
			x := s.means[p.Means]
			s.means[p.Means] = MeansTotal{Means: p.Means, Amount: x.Amount + p.Amount, Tip: x.Tip + p.Tip, Count: x.Count + 1}
		}
		s.total += tk.TotalInclTax
		s.excl += tk.TotalExclTax
		s.tickets++
		if s.firstTkt == 0 {
			s.firstTkt = tk.Number
		}
		s.lastTkt = tk.Number
	}
	return s
}

// matches says how c differs from the sums ("" when it does not): its
// totals by rate (listed by rate, lowest first), by means (tip and count
// included), its totals and the tickets it covers.
func (s sums) matches(c Closing) string {
	var diff []string
	if c.Total != s.total || c.TotalExcl != s.excl {
		diff = append(diff, fmt.Sprintf("total %d excl. %d, want %d and %d", c.Total, c.TotalExcl, s.total, s.excl))
	}
	if c.Tickets != s.tickets || c.FirstTicket != s.firstTkt || c.LastTicket != s.lastTkt {
		diff = append(diff, fmt.Sprintf("tickets %d (%d-%d), want %d (%d-%d)", c.Tickets, c.FirstTicket, c.LastTicket, s.tickets, s.firstTkt, s.lastTkt))
	}
	var rates []int
	for r := range s.vat {
		rates = append(rates, r)
	}
	sort.Ints(rates)
	var want []VAT
	for _, r := range rates {
		want = append(want, s.vat[r])
	}
	if fmt.Sprint(c.ByVAT) != fmt.Sprint(want) {
		diff = append(diff, fmt.Sprintf("by rate %v, want %v", c.ByVAT, want))
	}
	got := map[string]MeansTotal{}
	for _, m := range c.ByMeans {
		got[m.Means] = m
	}
	if fmt.Sprint(got) != fmt.Sprint(s.means) || len(c.ByMeans) != len(s.means) {
		diff = append(diff, fmt.Sprintf("by means %v, want %v", c.ByMeans, s.means))
	}
	return strings.Join(diff, "; ")
}

// A day's closing sums its tickets (sales and credits) by rate, listed by
// rate, and by means of payment, tip included and each payment counted;
// it names its first and last ticket. A month's closing sums its days the
// same way, from the first ticket of its first day with tickets to the
// last of its last: a day without tickets, first in the month or not,
// adds nothing. A month without tickets, or without any day closed, adds
// nothing either and carries the perpetual total on.
func TestAMonthsClosingSumsItsDaysByMeansTipIncluded(t *testing.T) {
	clock := &testClock{t: time.Date(2026, 10, 29, 8, 0, 0, 0, paris)}
	e := newClockedEnv(t, clock)
	// 28 October, before any ticket: a day closed without tickets.
	if c, err := e.ledger.CloseDay(e.ctx, "2026-10-28", paris); err != nil || c.Tickets != 0 || c.FirstTicket != 0 || c.LastTicket != 0 {
		t.Fatalf("an empty day %+v %v", c, err)
	}
	clock.Set(time.Date(2026, 10, 29, 9, 0, 0, 0, paris))
	e.tippedSale("s1", 150)
	e.sale("s2")
	e.record()
	clock.Set(time.Date(2026, 10, 30, 9, 0, 0, 0, paris))
	e.tippedSale("s3", 70)
	e.record()
	clock.Set(time.Date(2026, 10, 30, 10, 0, 0, 0, paris))
	e.tipped("s1", journal.KindRefund, 1100, 150) // s1 given back whole, its tip too
	e.record()
	clock.Set(time.Date(2026, 11, 1, 8, 0, 0, 0, paris))
	closings, err := e.ledger.CloseDue(e.ctx, clock.Now(), paris, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(closings) != 3 || closings[2].Period != PeriodMonth || closings[2].Name != "2026-10" {
		t.Fatalf("closings %+v", closings)
	}
	ts := e.tickets()
	if len(ts) != 4 {
		t.Fatalf("%d tickets", len(ts))
	}
	on := func(day string) func(Ticket) bool {
		return func(tk Ticket) bool { return tk.At.In(paris).Format(time.DateOnly) == day }
	}
	var perpetual int64
	for i, day := range []string{"2026-10-29", "2026-10-30"} {
		s := sumTickets(ts, on(day))
		perpetual += s.total
		c := closings[i]
		if c.Name != day {
			t.Fatalf("closing %d is %s, want %s", i, c.Name, day)
		}
		if d := s.matches(c); d != "" || c.Perpetual != perpetual {
			t.Errorf("day %s: %s (perpetual %d, want %d)", day, d, c.Perpetual, perpetual)
		}
	}
	october := closings[2]
	if d := sumTickets(ts, func(Ticket) bool { return true }).matches(october); d != "" {
		t.Errorf("October: %s", d)
	}
	if october.Perpetual != perpetual || fmt.Sprint(october.Parts) != fmt.Sprint([]int64{1, closings[0].Number, closings[1].Number}) {
		t.Errorf("October's perpetual %d (want %d), its days %v", october.Perpetual, perpetual, october.Parts)
	}
	// The tips count in the means, not in the goods: the card took 33.00
	// and 2.20 of tips, gave back 11.00 and 1.50, in four payments.
	if card := october.ByMeans; len(card) != 1 || card[0] != (MeansTotal{Means: "card", Amount: 2200, Tip: 70, Count: 4}) || october.Total != 2200 {
		t.Errorf("October by means %+v, total %d", card, october.Total)
	}

	// November: two days closed without tickets, after October's.
	clock.Set(time.Date(2026, 11, 3, 8, 0, 0, 0, paris))
	for _, day := range []string{"2026-11-01", "2026-11-02"} {
		if _, err := e.ledger.CloseDay(e.ctx, day, paris); err != nil {
			t.Fatal(err)
		}
	}
	clock.Set(time.Date(2026, 12, 1, 8, 0, 0, 0, paris))
	november, err := e.ledger.CloseMonth(e.ctx, "2026-11", paris)
	if err != nil {
		t.Fatal(err)
	}
	// December: no day closed at all.
	clock.Set(time.Date(2027, 1, 1, 8, 0, 0, 0, paris))
	december, err := e.ledger.CloseMonth(e.ctx, "2026-12", paris)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []Closing{november, december} {
		if d := sumTickets(nil, nil).matches(m); d != "" || m.Total != 0 || m.Perpetual != perpetual {
			t.Errorf("%s: %s, perpetual %d (want %d)", m.Name, d, m.Perpetual, perpetual)
		}
	}
	if len(november.Parts) != 2 || len(december.Parts) != 0 {
		t.Errorf("parts %v and %v", november.Parts, december.Parts)
	}
}

// A fiscal year starts in a month of the year, January to December; no
// other month.
func TestAFiscalYearStartsInAMonthOfTheYear(t *testing.T) {
	for _, tc := range []struct {
		start int
		ok    bool
	}{{0, false}, {1, true}, {12, true}, {13, false}, {-1, false}} {
		t.Run(fmt.Sprint(tc.start), func(t *testing.T) {
			// Long after any year it could name is over.
			clock := &testClock{t: time.Date(2029, 1, 1, 8, 0, 0, 0, paris)}
			e := newClockedEnv(t, clock)
			c, err := e.ledger.CloseYear(e.ctx, 2026, tc.start, paris)
			if (err == nil) != tc.ok {
				t.Fatalf("a year starting in month %d: %+v %v", tc.start, c, err)
			}
			if tc.ok && (c.Period != PeriodYear || c.From.Month() != time.Month(tc.start) || c.From.Year() != 2026) {
				t.Fatalf("closing %+v", c)
			}
		})
	}
}

// cents prints an amount the way the tests read it.
func cents(n int64) string { return fmt.Sprintf("%d.%02d", n/100, n%100) }

// The printed closing fills the paper's width (24 columns at the least):
// a label on the left, its value on the right, at least one space
// between; each rate as a percentage ("?" for none, "0 %" for zero), each
// means with its number of payments and its money, tip included; the
// range of tickets only when there are any.
func TestThePrintedClosingFillsItsColumns(t *testing.T) {
	c := Closing{Number: 17, Period: PeriodDay, Name: "2026-11-24", Kiosk: "kiosk-1", Software: "comptoir 1.0",
		At: time.Date(2026, 11, 25, 0, 5, 0, 0, time.UTC), Tickets: 3, FirstTicket: 4, LastTicket: 6,
		ByVAT: []VAT{{Rate: -1, Gross: 100, Tax: 0, Net: 100}, {Rate: 0, Gross: 200, Tax: 0, Net: 200},
			{Rate: 550, Gross: 211, Tax: 11, Net: 200}, {Rate: 2000, Gross: 120, Tax: 20, Net: 100}},
		ByMeans: []MeansTotal{{Means: "card", Amount: 631, Tip: 150, Count: 3}},
		Total:   631, TotalExcl: 600, Perpetual: 12345}
	for _, tc := range []struct{ asked, width int }{{10, 24}, {24, 24}, {32, 32}, {48, 48}} {
		t.Run(fmt.Sprint(tc.asked), func(t *testing.T) {
			text := c.Text(tc.asked, cents)
			lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
			want := map[string]string{ // label: value, each on one line
				"Closing no. 17": "kiosk-1", "Tickets": "3 (4-6)", "?": "1.00 / 0.00 / 1.00", "0 %": "2.00 / 0.00 / 2.00",
				"5.5 %": "2.11 / 0.11 / 2.00", "20 %": "1.20 / 0.20 / 1.00", "card (3)": "7.81",
				"TOTAL": "6.31", "Total excl. VAT": "6.00", "Perpetual total": "123.45",
			}
			rules := 0
			for _, l := range lines {
				if strings.Trim(l, "-") == "" {
					if utf8.RuneCountInString(l) != tc.width {
						t.Errorf("a rule %d wide, want %d", len(l), tc.width)
					}
					rules++
					continue
				}
				for label, value := range want {
					if strings.HasPrefix(l, label+" ") && strings.HasSuffix(l, " "+value) && strings.TrimSpace(l[len(label):len(l)-len(value)]) == "" {
						if utf8.RuneCountInString(l) != tc.width {
							t.Errorf("%q is %d wide, want %d", l, utf8.RuneCountInString(l), tc.width)
						}
						delete(want, label)
					}
				}
			}
			if len(want) != 0 || rules != 5 {
				t.Errorf("not printed: %v (%d rules)\n%s", want, rules, text)
			}
		})
	}
	// A label and a value wider than the paper keep one space between.
	long := c
	long.Kiosk = "the-kiosk-by-the-front-door"
	if !strings.Contains(long.Text(24, cents), "\nClosing no. 17 the-kiosk-by-the-front-door\n") {
		t.Errorf("a long line:\n%s", long.Text(24, cents))
	}
	// No tickets: no range.
	empty := Closing{Number: 1, Period: PeriodDay, Name: "2026-11-24"}
	if text := empty.Text(24, cents); !strings.Contains(text, "\nTickets"+strings.Repeat(" ", 16)+"0\n") {
		t.Errorf("no tickets:\n%s", text)
	}
}

// Closing a day sums every ticket recorded in it: its first and last
// ticket are the day's, whatever came the day before.
func TestADaysClosingNamesItsFirstAndLastTicket(t *testing.T) {
	clock := &testClock{t: time.Date(2026, 11, 23, 9, 0, 0, 0, paris)}
	e := newClockedEnv(t, clock)
	e.sale("a")
	e.sale("b")
	e.record()
	clock.Set(time.Date(2026, 11, 24, 9, 0, 0, 0, paris))
	for _, id := range []string{"c", "d", "e"} {
		e.sale(id)
	}
	e.record()
	clock.Set(time.Date(2026, 11, 25, 8, 0, 0, 0, paris))
	cs, err := e.ledger.CloseDue(e.ctx, clock.Now(), paris, 1)
	if err != nil || len(cs) != 2 {
		t.Fatalf("closings %+v %v", cs, err)
	}
	for i, want := range [][3]int64{{2, 1, 2}, {3, 3, 5}} {
		if c := cs[i]; c.Tickets != want[0] || c.FirstTicket != want[1] || c.LastTicket != want[2] || c.Total != 1100*want[0] {
			t.Errorf("day %s: %d tickets (%d-%d), total %d; want %v", c.Name, c.Tickets, c.FirstTicket, c.LastTicket, c.Total, want)
		}
	}
}
