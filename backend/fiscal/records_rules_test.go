package fiscal

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/journal"
)

// eventsAfter are the events recorded after the first n.
func (e *env) eventsAfter(n int) []Event {
	e.t.Helper()
	rs, err := e.db.FiscalRecords(e.ctx, journal.FiscalEvent, 0, 0)
	if err != nil {
		e.t.Fatal(err)
	}
	var out []Event
	for _, r := range rs[n:] {
		var ev Event
		if err := json.Unmarshal(r.Payload, &ev); err != nil {
			e.t.Fatal(err)
		}
		out = append(out, ev)
	}
	return out
}

func types(evs []Event) string {
	var out []string
	for _, ev := range evs {
		out = append(out, ev.Type)
	}
	return strings.Join(out, ",")
}

// A start finds the clock moved back against the newest record of any
// chain, whichever chain it is in and whatever chains are still empty.
func TestAClockMovedBackIsJudgedAgainstTheNewestRecordOfAnyChain(t *testing.T) {
	clock := &testClock{t: time.Date(2026, 11, 24, 9, 0, 0, 0, paris)}
	e := newClockedEnv(t, clock)
	if _, err := e.ledger.Event(e.ctx, EventStop, "", ""); err != nil {
		t.Fatal(err)
	}
	clock.Set(time.Date(2026, 11, 24, 10, 0, 0, 0, paris))
	e.sale("o-1")
	e.record() // the newest record: a ticket; no closing, no archive
	clock.Set(time.Date(2026, 11, 24, 9, 30, 0, 0, paris))
	if err := e.ledger.Start(e.ctx, ""); err != nil {
		t.Fatal(err)
	}
	if got := types(e.eventsAfter(1)); got != "clock,start" {
		t.Fatalf("events %s", got)
	}
}

// An update is judged against the software of the last start, not of
// the events recorded since (by a newer version before its own start).
func TestAnUpdateIsJudgedAgainstTheLastStartsSoftware(t *testing.T) {
	e := newEnv(t)
	e.ledger.Software = "Comptoir 1"
	if err := e.ledger.Start(e.ctx, ""); err != nil {
		t.Fatal(err)
	}
	e.ledger.Software = "Comptoir 2"
	if _, err := e.ledger.Event(e.ctx, EventSetting, "", "language"); err != nil {
		t.Fatal(err)
	}
	if err := e.ledger.Start(e.ctx, ""); err != nil {
		t.Fatal(err)
	}
	evs := e.eventsAfter(2)
	if got := types(evs); got != "recovered,update,start" || evs[1].Detail != "from Comptoir 1 to Comptoir 2" {
		t.Fatalf("events %s %+v", got, evs)
	}
}

// The clock jumps when it moves apart from the time elapsed by more than
// ClockJump, either way: exactly ClockJump is drift.
func TestAClockJumpIsMoreThanClockJumpEitherWay(t *testing.T) {
	t0 := time.Date(2026, 11, 24, 9, 0, 0, 0, paris)
	for _, tc := range []struct {
		name string
		move time.Duration
		jump bool
	}{
		{"forward by ClockJump", ClockJump, false},
		{"back by ClockJump", -ClockJump, false},
		{"forward by more", ClockJump + time.Millisecond, true},
		{"back by more", -ClockJump - time.Millisecond, true},
	} {
		var w ClockWatch
		w.Observe(t0, time.Minute)
		want := time.Duration(0)
		if tc.jump {
			want = tc.move
		}
		if got := w.Observe(t0.Add(time.Second+tc.move), time.Minute+time.Second); got != want {
			t.Errorf("%s: %v, want %v", tc.name, got, want)
		}
	}
}

// An event says how far each chain went, naming only the chains that
// have records.
func TestAnEventNamesOnlyTheChainsThatHaveRecords(t *testing.T) {
	e := newEnv(t)
	if _, err := e.ledger.Event(e.ctx, EventStart, "", ""); err != nil {
		t.Fatal(err)
	}
	e.sale("o-1")
	e.record()
	if _, err := e.ledger.Event(e.ctx, EventStop, "", ""); err != nil {
		t.Fatal(err)
	}
	evs := e.eventsAfter(0)
	if evs[0].Tips != nil {
		t.Errorf("the first event names %v", evs[0].Tips)
	}
	if fmt.Sprint(evs[1].Tips) != fmt.Sprint(map[string]int64{journal.FiscalTicket: 1, journal.FiscalEvent: 1}) {
		t.Errorf("the second event names %v", evs[1].Tips)
	}
}

// A reprint counts the copies of its own ticket: other tickets' reprints
// and other events between them do not count, however far back its last
// copy is.
func TestAReprintCountsTheCopiesOfItsOwnTicket(t *testing.T) {
	e := newEnv(t)
	e.sale("a")
	e.sale("b")
	e.record()
	copyOf := func(order string) int {
		t.Helper()
		f, err := e.ledger.Duplicate(e.ctx, order)
		if err != nil {
			t.Fatal(err)
		}
		return f.Duplicate
	}
	setting := func() {
		if _, err := e.ledger.Event(e.ctx, EventSetting, "", "x"); err != nil {
			t.Fatal(err)
		}
	}
	got := []int{copyOf("a")}
	setting()
	got = append(got, copyOf("a"), copyOf("b"))
	for range 9 {
		setting()
	}
	got = append(got, copyOf("a"), copyOf("b"))
	if fmt.Sprint(got) != "[1 2 1 3 2]" {
		t.Fatalf("copies %v", got)
	}
}

// archiveEnv is a kiosk's October and November: sales, events, the days
// and October closed; its November archive written at December's start.
func archiveEnv(t *testing.T) (e *env, raw []byte, dir string) {
	clock := &testClock{t: time.Date(2026, 10, 30, 9, 0, 0, 0, paris)}
	e = newClockedEnv(t, clock)
	e.sale("oct-1")
	e.sale("oct-2")
	e.record()
	if _, err := e.ledger.Event(e.ctx, EventStart, "", ""); err != nil {
		t.Fatal(err)
	}
	clock.Set(time.Date(2026, 11, 2, 9, 0, 0, 0, paris))
	if _, err := e.ledger.CloseDue(e.ctx, clock.Now(), paris, 1); err != nil {
		t.Fatal(err)
	}
	e.sale("nov-1")
	e.record()
	if _, err := e.ledger.Event(e.ctx, EventStop, "", ""); err != nil {
		t.Fatal(err)
	}
	clock.Set(time.Date(2026, 12, 1, 9, 0, 0, 0, paris))
	dir = t.TempDir()
	// What a process killed while writing an archive left.
	if err := os.WriteFile(filepath.Join(dir, ".tmp-comptoir-fiscal-123"), []byte("half"), 0o600); err != nil {
		t.Fatal(err)
	}
	path, _, err := e.ledger.Archive(e.ctx, "2026-11", paris, dir)
	if err != nil {
		t.Fatal(err)
	}
	if raw, err = os.ReadFile(path); err != nil {
		t.Fatal(err)
	}
	return e, raw, dir
}

// A month's archive holds every chain's records of that month and none
// before it; with several chains it verifies whole; what a killed
// process left half written is removed.
func TestAnArchiveHoldsItsMonthsRecordsOfEveryChain(t *testing.T) {
	_, raw, dir := archiveEnv(t)
	v, err := VerifyArchive(bytes.NewReader(raw), nil)
	if err != nil || !v.OK {
		t.Fatalf("verify %+v %v", v.Broken, err)
	}
	// November: one ticket, October's last day and October closed on the
	// 2nd, the stop.
	want := map[string]int64{journal.FiscalTicket: 1, journal.FiscalClosing: 2, journal.FiscalEvent: 1}
	if fmt.Sprint(v.Header.Records) != fmt.Sprint(want) || v.Records != 4 {
		t.Fatalf("records %v (%d lines), want %v", v.Header.Records, v.Records, want)
	}
	for i, l := range strings.Split(strings.TrimSpace(string(raw)), "\n")[1:] {
		var al ArchiveLine
		if err := json.Unmarshal([]byte(l), &al); err != nil {
			t.Fatal(err)
		}
		if at := time.UnixMilli(al.At).In(paris); at.Month() != time.November {
			t.Errorf("line %d is of %s", i+2, at)
		}
	}
	if stale, _ := filepath.Glob(filepath.Join(dir, ".tmp-comptoir-fiscal-*")); len(stale) != 0 {
		t.Errorf("left %v", stale)
	}
}

// An archive is read only in its format, and whole: a header in another
// format is refused, an archive cut at its end shows by its header's
// counts.
func TestAnArchiveIsReadWholeAndInItsFormatOnly(t *testing.T) {
	_, raw, _ := archiveEnv(t)
	other := bytes.Replace(raw, []byte(`"format":"`+ArchiveFormat+`"`), []byte(`"format":"comptoir-fiscal-archive-0"`), 1)
	if bytes.Equal(other, raw) {
		t.Fatal("the format was not changed")
	}
	if v, err := VerifyArchive(bytes.NewReader(other), nil); err == nil {
		t.Fatalf("another format read: %+v", v)
	}
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	cut := strings.Join(lines[:len(lines)-1], "\n") + "\n"
	v, err := VerifyArchive(strings.NewReader(cut), nil)
	if err != nil || v.OK || v.Broken == nil || !strings.Contains(v.Broken.Why, "header counts") {
		t.Fatalf("an archive cut at its end: %+v %v", v.Broken, err)
	}
}

// A sale out of bounds is refused and the paid orders after it are still
// recorded, in the same pass.
func TestAnOrderRefusedLeavesTheOthersToBeRecorded(t *testing.T) {
	e := newEnv(t)
	data := `{"number":"9","language":"fr","lines":[{"name":{"fr":"Café"},"qty":100,"unitPrice":250,"total":25000,"vatRate":1000}]}`
	if err := e.db.CreateOrder(e.ctx, journal.Order{ID: "a-bad", Currency: "EUR", Total: 25000, Data: json.RawMessage(data)}); err != nil {
		t.Fatal(err)
	}
	e.attempt("a-bad", journal.KindDebit, 25000, "")
	e.sale("b-good")
	if n := e.record(); n != 1 {
		t.Fatalf("%d tickets", n)
	}
	if ts := e.tickets(); len(ts) != 1 || ts[0].Order != "b-good" {
		t.Fatalf("tickets %+v", ts)
	}
	// The money given back on the refused sale is still a credit, its VAT
	// from the order, referring to no ticket.
	e.attempt("a-bad", journal.KindRefund, 5000, "")
	if n := e.record(); n != 1 {
		t.Fatalf("%d credits", n)
	}
	c := e.tickets()[1]
	if c.Type != TicketRefund || c.RefersTo != 0 || c.TotalInclTax != -5000 || len(c.VAT) != 1 || c.VAT[0].Rate != 1000 || c.VAT[0].Gross != -5000 {
		t.Fatalf("credit %+v", c)
	}
}

// A credit gives back the tip as money, negative beside the amount, not
// as goods; its one line has no rate of its own (its VAT is in its bases
// by rate).
func TestACreditGivesBackItsTipAsMoneyNotGoods(t *testing.T) {
	e := newEnv(t)
	e.tippedSale("o-1", 150)
	e.record()
	e.tipped("o-1", journal.KindRefund, 1100, 150)
	e.record()
	c := e.tickets()[1]
	if p := c.Payments; len(p) != 1 || p[0].Amount != -1100 || p[0].Tip != -150 {
		t.Fatalf("credit payments %+v", p)
	}
	if c.TotalInclTax != -1100 || len(c.Lines) != 1 || c.Lines[0].VATRate != -1 || len(c.VAT) != 2 {
		t.Fatalf("credit %+v", c)
	}
}

// Part of a tip given back with part of the goods: the credit's goods are
// the money given back less its tip, its VAT shared on them alone; a
// reversal of a tipped card part gives back that part's goods and its
// tip apart, even though it asks for both in one amount.
func TestACreditCountsOnlyItsGoodsAsGoods(t *testing.T) {
	credit := func(c Ticket, goods, tip int64) string {
		var vat int64
		for _, v := range c.VAT {
			vat += v.Gross
		}
		if c.TotalInclTax != -goods || vat != -goods || len(c.Lines) != 1 || c.Lines[0].Total != -goods ||
			len(c.Payments) != 1 || c.Payments[0].Amount != -goods || c.Payments[0].Tip != -tip {
			return fmt.Sprintf("%+v", c)
		}
		return ""
	}
	e := newEnv(t)
	e.tippedSale("o-1", 150)
	e.record()
	e.tipped("o-1", journal.KindRefund, 300, 50)
	e.record()
	if bad := credit(e.tickets()[1], 300, 50); bad != "" {
		t.Fatalf("a refund of 3.00 and 0.50 of tip: %s", bad)
	}

	e = newEnv(t)
	data := `{"number":"9","language":"fr","lines":[
		{"name":{"fr":"Café"},"qty":2,"unitPrice":250,"total":500,"vatRate":1000},
		{"name":{"fr":"Bière"},"qty":1,"unitPrice":600,"total":600,"vatRate":2000}]}`
	if err := e.db.CreateOrder(e.ctx, journal.Order{ID: "o-2", Currency: "EUR", Total: 1100, Data: json.RawMessage(data)}); err != nil {
		t.Fatal(err)
	}
	e.tipped("o-2", journal.KindDebit, 300, 0)
	card := e.tipped("o-2", journal.KindDebit, 800, 100)
	e.record()
	e.attempt("o-2", journal.KindReversal, 900, card.TransactionID)
	e.record()
	ts := e.tickets()
	if bad := credit(ts[len(ts)-1], 800, 100); bad != "" {
		t.Fatalf("a reversal of a card part of 8.00 with 1.00 of tip: %s", bad)
	}

	// A refund naming its debit keeps its own split of goods and tip: the
	// debit's tip is read only for a reversal, which asks for one amount.
	e = newEnv(t)
	e.tippedSale("o-3", 150)
	debit, err := e.db.AttemptsForOrder(e.ctx, "o-3")
	if err != nil || len(debit) != 1 {
		t.Fatalf("the sale's debit: %+v, %v", debit, err)
	}
	e.record()
	e.tipped("o-3", journal.KindRefund, 300, 50, debit[0].TransactionID)
	e.record()
	if bad := credit(e.tickets()[1], 300, 50); bad != "" {
		t.Fatalf("a refund naming its debit, of 3.00 and 0.50 of tip: %s", bad)
	}

}

// A ticket is in its order's currency.
func TestATicketIsInItsOrdersCurrency(t *testing.T) {
	e := newEnv(t)
	data := `{"number":"1","language":"fr","lines":[{"name":{"fr":"Café"},"qty":1,"unitPrice":400,"total":400,"vatRate":810}]}`
	if err := e.db.CreateOrder(e.ctx, journal.Order{ID: "o-1", Currency: "CHF", Total: 400, Data: json.RawMessage(data)}); err != nil {
		t.Fatal(err)
	}
	e.attempt("o-1", journal.KindDebit, 400, "")
	e.record()
	if ts := e.tickets(); len(ts) != 1 || ts[0].Currency != "CHF" {
		t.Fatalf("tickets %+v", ts)
	}
}
