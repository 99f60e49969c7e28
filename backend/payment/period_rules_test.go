package payment

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/cloudapi"
	"github.com/comptoir-pos/comptoir/backend/journal"
)

// The two readings of a list's startTime and endTime the specification
// leaves open: the ends of one period, or a time of day on every day.
const (
	onePeriod = "one period"
	timeOfDay = "a time of day on every day"
)

// listed says whether a provider reading the filters one way lists a
// transaction created at c (UTC, as asked): dates yyyy-MM-dd, the end date
// exclusive (the v4 history) or inclusive (the Webservices), times
// HH:mm:ss, 00:00:00 and 23:59:59 when not given.
func listed(reading, startDate, endDate, startTime, endTime string, endInclusive bool, c time.Time) bool {
	if startTime == "" {
		startTime = "00:00:00"
	}
	if endTime == "" {
		endTime = "23:59:59"
	}
	day, clock := c.UTC().Format(time.DateOnly), c.UTC().Format(time.TimeOnly)
	afterStart := startDate == "" || day > startDate || day == startDate && clock >= startTime
	beforeEnd := endDate == "" || day < endDate || endInclusive && day == endDate && clock <= endTime
	if reading == timeOfDay {
		afterStart = (startDate == "" || day >= startDate) && clock >= startTime
		beforeEnd = (endDate == "" || day < endDate || endInclusive && day == endDate) && clock <= endTime
	}
	return afterStart && beforeEnd
}

// readingCloud is the cloud's history of one terminal as a provider reads
// its filters one way.
type readingCloud struct {
	CloudAPI
	reading string
	entries []cloudapi.HistoryEntry
}

func (r readingCloud) Transactions(_ context.Context, q cloudapi.TransactionsRequest) (*cloudapi.TransactionsPage, error) {
	var out []cloudapi.HistoryEntry
	for _, e := range r.entries {
		c, _ := time.Parse(time.RFC3339, e.CreatedAt)
		if listed(r.reading, q.StartDate, q.EndDate, q.StartTime, q.EndTime, false, c) {
			out = append(out, e)
		}
	}
	return &cloudapi.TransactionsPage{Total: len(out), Limit: q.Limit, Count: len(out), Transactions: out}, nil
}

// readingBatch is the Webservices' list as a provider reads its filters
// one way (the end date inclusive).
func readingBatch(reading string, entries []cloudapi.HistoryEntry) func(context.Context, cloudapi.BatchRequest, time.Time) ([]cloudapi.HistoryEntry, error) {
	return func(_ context.Context, q cloudapi.BatchRequest, now time.Time) ([]cloudapi.HistoryEntry, error) {
		if q.EndDate == "" {
			q.EndDate, q.EndTime = now.UTC().Format(time.DateOnly), now.UTC().Format(time.TimeOnly) // BatchAll closes it so
		}
		var out []cloudapi.HistoryEntry
		for _, e := range entries {
			c, err := time.Parse(time.RFC3339, e.CreatedAt)
			if err != nil || listed(reading, q.StartDate, q.EndDate, q.StartTime, q.EndTime, true, c) {
				out = append(out, e)
			}
		}
		return out, nil
	}
}

// A payment sent five minutes before midnight and made just after it is
// found in the cloud's history whichever way the provider reads a list's
// times: the history is asked by whole days and kept by its createdAt, so
// a transaction of the order made before the attempt is not a second
// candidate either.
func TestRuleTheCloudHistoryIsTheSameWhicheverWayItsTimesAreRead(t *testing.T) {
	since := time.Date(2026, 11, 27, 23, 55, 0, 0, time.UTC)
	a := journal.Attempt{UUID: "u1", OrderID: "O1", Kind: journal.KindDebit, Amount: 900}
	entries := []cloudapi.HistoryEntry{
		{TransactionID: "T1", Status: "ok", Type: "debit", Amount: 900, CartID: "O1", CreatedAt: since.Add(7 * time.Minute).Format(time.RFC3339)},
		{TransactionID: "T0", Status: "ko", Type: "debit", Amount: 900, CartID: "O1", CreatedAt: since.Add(-15 * time.Minute).Format(time.RFC3339)},
	}
	for _, reading := range []string{onePeriod, timeOfDay} {
		m, err := Cloud(readingCloud{reading: reading, entries: entries}, "SN-1", nil, 0).Lookup(context.Background(), a, since, heldBy())
		if err != nil || m.Verdict != InHistory || m.Charge.TransactionID != "T1" || !m.Charge.Approved {
			t.Errorf("times read as %s: %s (%d candidates), %v", reading, m, m.Candidates, err)
		}
	}
}

// The company's list of a period is asked by whole days, never times, and
// kept by createdAt: whichever way the provider reads a list's times, it
// holds the same transactions, those just past midnight included; one
// whose time cannot be read is kept.
func TestRuleTheCompanysListOfAPeriodIsTheSameWhicheverWayItsTimesAreRead(t *testing.T) {
	from := time.Date(2026, 11, 27, 23, 50, 0, 0, time.UTC)
	to := from.Add(30 * time.Minute)
	at := func(id string, d time.Duration) cloudapi.HistoryEntry {
		return cloudapi.HistoryEntry{TransactionID: id, CreatedAt: from.Add(d).Format(time.RFC3339)}
	}
	entries := []cloudapi.HistoryEntry{at("before", -time.Minute), at("at the start", 0), at("before midnight", 5*time.Minute),
		at("after midnight", 15*time.Minute), at("at the end", 30*time.Minute), at("a day later", 24*time.Hour),
		{TransactionID: "undated", CreatedAt: "yesterday"}}
	for _, tc := range []struct {
		to, now time.Time
		want    string
		endDate string // the day after the period's end (or now's), widened by 14 h
	}{
		{to, to.Add(72 * time.Hour), "[at the start before midnight after midnight undated]", "2026-11-29"},
		{time.Time{}, to, "[at the start before midnight after midnight at the end a day later undated]", "2026-11-29"},
		{time.Time{}, to.Add(72 * time.Hour), "[at the start before midnight after midnight at the end a day later undated]", "2026-12-02"},
	} {
		for _, reading := range []string{onePeriod, timeOfDay} {
			var asked cloudapi.BatchRequest
			batch := readingBatch(reading, entries)
			got, err := CompanyList(context.Background(), func(ctx context.Context, q cloudapi.BatchRequest, now time.Time) ([]cloudapi.HistoryEntry, error) {
				asked = q
				return batch(ctx, q, now)
			}, cloudapi.BatchRequest{SerialNumbers: []string{"SN-1"}}, from, tc.to, tc.now)
			var ids []string
			for _, e := range got {
				ids = append(ids, e.TransactionID)
			}
			if err != nil || fmt.Sprint(ids) != tc.want {
				t.Errorf("to %s, times read as %s: %v %v, want %s", tc.to, reading, ids, err, tc.want)
			}
			if asked.StartTime != "" || asked.EndTime != "" || asked.StartDate != "2026-11-27" || asked.EndDate != tc.endDate ||
				asked.Timezone != "UTC" || len(asked.SerialNumbers) != 1 {
				t.Errorf("asked %+v: whole days from 2026-11-27 to %s, for the terminal", asked, tc.endDate)
			}
		}
	}
}

// A refund by API made just after midnight is found in the company's list
// whichever way the provider reads its times.
func TestRuleARefundByAPIIsFoundInTheListWhicheverWayItsTimesAreRead(t *testing.T) {
	since := time.Date(2026, 11, 27, 23, 55, 0, 0, time.UTC)
	now := since.Add(15 * time.Minute)
	a := journal.Attempt{UUID: "u1", OrderID: "O1", Kind: journal.KindRefund, Amount: 500, InitialTransactionID: "T1"}
	entries := []cloudapi.HistoryEntry{
		{TransactionID: "R1", Status: "ok", Type: "refund", Amount: 500, CreatedAt: since.Add(7 * time.Minute).Format(time.RFC3339)},
	}
	for _, reading := range []string{onePeriod, timeOfDay} {
		ch := Webservices(readingList{batch: readingBatch(reading, entries)}, WebservicesOptions{Now: func() time.Time { return now }})
		m, err := ch.Lookup(context.Background(), a, since, heldBy())
		if err != nil || m.Verdict != InHistory || m.Charge.TransactionID != "R1" {
			t.Errorf("times read as %s: %s, %v", reading, m, err)
		}
	}
}

// readingList is the Webservices with a list read one way, and no
// transaction to fetch.
type readingList struct {
	WebservicesAPI
	batch func(context.Context, cloudapi.BatchRequest, time.Time) ([]cloudapi.HistoryEntry, error)
}

func (r readingList) BatchAll(ctx context.Context, q cloudapi.BatchRequest, now time.Time) ([]cloudapi.HistoryEntry, error) {
	return r.batch(ctx, q, now)
}

func (r readingList) Details(context.Context, string) (*cloudapi.TransactionDetails, error) {
	return nil, &cloudapi.HTTPError{Status: 404}
}

// The cloud's history keeps each transaction it lists once, even when a
// page shift lists it twice, and keeps apart those it lists without an id:
// each is read as listed, the one naming the attempt among them.
func TestRuleTheCloudHistoryKeepsEachTransactionOnceAndThoseWithoutAnIdApart(t *testing.T) {
	a := lookupAttempt(journal.KindDebit, 900)
	shifted := cloudapi.HistoryEntry{TransactionID: "T1", Status: "ok", Type: "debit", Amount: 900, CartID: "O1"}
	h := &historyCloud{entries: []cloudapi.HistoryEntry{shifted, shifted}}
	m, err := Cloud(h, "SN-1", nil, 0).Lookup(context.Background(), a, time.Now().Add(-time.Hour), heldBy())
	want{verdict: InHistory, tx: "T1", approved: true}.check(t, m, err)
	h = &historyCloud{entries: []cloudapi.HistoryEntry{
		{Status: "ok", Type: "debit", Amount: 900, CartID: "O1", IdempotentUUID: a.UUID},
		{Status: "ko", Type: "debit", Amount: 900, CartID: "O1", IdempotentUUID: "01a20000-0000-7000-8000-0000000000bb"},
	}}
	m, err = Cloud(h, "SN-1", nil, 0).Lookup(context.Background(), a, time.Now().Add(-time.Hour), heldBy())
	want{verdict: InHistory, approved: true}.check(t, m, err)
}
