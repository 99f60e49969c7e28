package device

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

// pagedHistory is a Historian over a fixed list, newest first, that
// records what it was asked.
type pagedHistory struct {
	entries []HistoryEntry
	asked   []HistoryQuery
	fail    error
}

func (p *pagedHistory) History(ctx context.Context, q HistoryQuery) (HistoryPage, error) {
	p.asked = append(p.asked, q)
	if p.fail != nil {
		return HistoryPage{}, p.fail
	}
	end := min(q.Offset+q.Limit, len(p.entries))
	return HistoryPage{Limit: q.Limit, Offset: q.Offset, Total: len(p.entries), Entries: p.entries[min(q.Offset, len(p.entries)):end]}, nil
}

func TestReadHistoryReadsEveryPageOfThePeriod(t *testing.T) {
	base := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	var all []HistoryEntry
	for i := 9; i >= 0; i-- { // newest first
		all = append(all, HistoryEntry{TransactionID: fmt.Sprint("t", i), CreatedAt: base.Add(time.Duration(i) * time.Minute).Format(time.RFC3339)})
	}
	all = append(all, HistoryEntry{TransactionID: "no-date", CreatedAt: "yesterday"})
	p := &pagedHistory{entries: all}
	got, err := ReadHistory(t.Context(), p, base.Add(2*time.Minute), base.Add(5*time.Minute), 3, 0)
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

func TestReadHistoryOpenEndAndErrors(t *testing.T) {
	refused := &Error{Kind: NotSent, Err: errors.New("refused")}
	p := &pagedHistory{fail: refused}
	if _, err := ReadHistory(t.Context(), p, time.Now(), time.Time{}, 0, time.Second); !errors.Is(err, refused) {
		t.Fatalf("err = %v", err)
	}
	if p.asked[0].EndDate != "" || p.asked[0].Limit != MaxHistoryPage {
		t.Fatalf("asked %+v", p.asked[0])
	}
}
