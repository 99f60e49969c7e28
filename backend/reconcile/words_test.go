package reconcile

import (
	"strings"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/cloudapi"
	"github.com/comptoir-pos/comptoir/backend/device"
	"github.com/comptoir-pos/comptoir/backend/journal"
)

// The lists' words are read in any case: a payment listed as OK, of type
// DEBIT, agrees with its approved attempt, and one no order knows is
// charged_no_order, named a debit (staff's fixes read the kind).
func TestRuleTheListsWordsAreReadInAnyCase(t *testing.T) {
	e := newEnv(t)
	a := e.attempt(noon, journal.ChannelLocal, 1250, journal.StateApproved, "TX-1", &journal.Charge{Amount: 1250})
	listed := onTerminal("TX-1", "OK", a.OrderID, 1250, 0, noon.Add(10*time.Second))
	listed.Type = "DEBIT"
	orphan := onTerminal("TX-2", "Ok", "elsewhere", 700, 0, noon.Add(time.Minute))
	orphan.Type = " Debit"
	e.terminal = []device.HistoryEntry{listed, orphan}
	byProvider := atProvider("TX-1", "oK", a.OrderID, "S1", 1250, 0, noon.Add(11*time.Second))
	byProvider.TransactionType = "Debit"
	e.provider = []cloudapi.HistoryEntry{byProvider}
	r := e.run(noon.Add(time.Hour), "S1")
	wantKinds(t, r, "terminal:charged_no_order")
	if d := r.Differences[0]; d.TransactionID != "TX-2" || d.OtherType != device.HistoryDebit || d.OtherAmount != 700 {
		t.Fatalf("difference %+v", d)
	}
}

// A status nobody listed (in_progress, none) is neither approved nor
// failed: an approved attempt listed so is not said "most likely not
// charged"; once it stays so past the pending limit, it is reported as
// pending for too long, never dropped.
func TestRuleAStatusNobodyListedIsNeverReadAsNotCharged(t *testing.T) {
	e := newEnv(t)
	a := e.attempt(noon, journal.ChannelLocal, 1250, journal.StateApproved, "TX-1", &journal.Charge{Amount: 1250})
	e.provider = []cloudapi.HistoryEntry{atProvider("TX-1", "in_progress", a.OrderID, "S1", 1250, 0, noon.Add(10*time.Second)),
		atProvider("TX-9", "", "elsewhere", "S1", 300, 0, noon.Add(time.Minute))}
	e.terminal = []device.HistoryEntry{onTerminal("TX-1", "ok", a.OrderID, 1250, 0, noon.Add(10*time.Second))}
	wantKinds(t, e.run(noon.Add(30*time.Minute), "S1"))
	r := e.run(noon.Add(2*time.Hour), "S1")
	wantKinds(t, r, "provider:pending_too_long", "provider:pending_too_long")
	if !strings.Contains(r.Differences[0].Message+r.Differences[1].Message, "as in_progress since") {
		t.Fatalf("differences %+v", r.Differences)
	}
	// A status that plainly says failed is still read as not charged.
	e.provider[0].Status = "FAILED"
	wantKinds(t, e.run(noon.Add(30*time.Minute), "S1"), "provider:state_mismatch")
}

// A transaction no attempt stands for is read whatever shape of ISO 8601
// its time is written in, and one whose time cannot be read is reported,
// never dropped: it may be of the day.
func TestRuleATransactionOfUnreadableTimeIsReportedNotDropped(t *testing.T) {
	e := newEnv(t)
	a := e.attempt(noon, journal.ChannelLocal, 1250, journal.StateApproved, "TX-1", &journal.Charge{Amount: 1250})
	e.terminal = []device.HistoryEntry{onTerminal("TX-1", "ok", a.OrderID, 1250, 0, noon.Add(10*time.Second))}
	at := func(tx, created string) cloudapi.HistoryEntry {
		p := atProvider(tx, "ok", "elsewhere-"+tx, "S1", 500, 0, noon)
		p.CreatedAt = created
		return p
	}
	e.provider = []cloudapi.HistoryEntry{
		atProvider("TX-1", "ok", "order-01", "S1", 1250, 0, noon.Add(10*time.Second)),
		at("TX-2", "2026-11-24 13:30:00+02"), // 12:30 in Paris
		at("TX-3", "2026-11-24T11:31Z"),      // no seconds
		at("TX-4", "24/11/2026 12:32"),       // unreadable
		at("TX-5", "2026-11-23 10:00:00+01"), // the day before: not this day's
	}
	r := e.run(noon.Add(time.Hour), "S1")
	wantKinds(t, r, "provider:charged_no_order", "provider:charged_no_order", "provider:unreadable_time")
	if d := r.Differences[2]; d.TransactionID != "TX-4" || !strings.Contains(d.Message, "24/11/2026 12:32") || d.Action == "" {
		t.Fatalf("difference %+v", d)
	}
	for _, l := range r.Lines {
		for _, p := range l.Provider {
			if p.TransactionID == "TX-4" && p.CreatedAsListed != "24/11/2026 12:32" {
				t.Fatalf("line %+v", p)
			}
		}
	}
}
