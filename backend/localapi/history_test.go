package localapi

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

// pagedHistory is a Transactor over a fixed list, newest first, that
// records what it was asked.
type pagedHistory struct {
	entries []HistoryEntry
	asked   []TransactionsRequest
	fail    error
}

func (p *pagedHistory) Transactions(ctx context.Context, req *TransactionsRequest) (*TransactionList, error) {
	p.asked = append(p.asked, *req)
	if p.fail != nil {
		return nil, p.fail
	}
	end := min(req.Offset+req.Limit, len(p.entries))
	page := p.entries[min(req.Offset, len(p.entries)):end]
	return &TransactionList{Count: len(page), Limit: req.Limit, Offset: req.Offset, Total: len(p.entries), Transactions: page}, nil
}

func TestHistoryReadsEveryPageOfTheWindow(t *testing.T) {
	base := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	var all []HistoryEntry
	for i := 9; i >= 0; i-- { // newest first
		all = append(all, HistoryEntry{TransactionID: fmt.Sprint("t", i), CreatedAt: base.Add(time.Duration(i) * time.Minute).Format(time.RFC3339)})
	}
	all = append(all, HistoryEntry{TransactionID: "no-date", CreatedAt: "yesterday"})
	p := &pagedHistory{entries: all}
	got, err := History(t.Context(), p, base.Add(2*time.Minute), base.Add(5*time.Minute), 3, 0)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, e := range got {
		ids = append(ids, e.TransactionID)
	}
	if fmt.Sprint(ids) != "[t4 t3 t2 no-date]" {
		t.Fatalf("entries %v, want t4 t3 t2 and the undated one", ids)
	}
	if len(p.asked) != 4 {
		t.Fatalf("%d pages asked for 11 entries at 3 a page", len(p.asked))
	}
	// Whole days, widened for any time zone, never times of day.
	a := p.asked[0]
	if a.StartDate != "2026-11-23" || a.EndDate != "2026-11-26" || a.StartTime != "" || a.EndTime != "" {
		t.Fatalf("asked %+v", a)
	}
}

func TestHistoryOpenEndAndErrors(t *testing.T) {
	p := &pagedHistory{fail: &TransportError{Endpoint: "/transactions", Err: errors.New("refused")}}
	if _, err := History(t.Context(), p, time.Now(), time.Time{}, 0, time.Second); !IsTransport(err) {
		t.Fatalf("err = %v", err)
	}
	if p.asked[0].EndDate != "" || p.asked[0].Limit != MaxTransactionsLimit {
		t.Fatalf("asked %+v", p.asked[0])
	}
}
