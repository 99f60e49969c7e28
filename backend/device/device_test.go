package device

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/localapi"
)

// pagedHistory is a Historian over a fixed list, newest first, that
// records what it was asked.
type pagedHistory struct {
	entries []HistoryEntry
	asked   []HistoryQuery
	fail    error
	// total, when set, is what the page says in total instead of the
	// number of entries.
	total func(page []HistoryEntry) int
}

func (p *pagedHistory) History(ctx context.Context, q HistoryQuery) (HistoryPage, error) {
	p.asked = append(p.asked, q)
	if p.fail != nil {
		return HistoryPage{}, p.fail
	}
	end := min(q.Offset+q.Limit, len(p.entries))
	page := HistoryPage{Limit: q.Limit, Offset: q.Offset, Total: len(p.entries), Entries: p.entries[min(q.Offset, len(p.entries)):end]}
	if p.total != nil {
		page.Total = p.total(page.Entries)
	}
	return page, nil
}

// What the history's total counts is not shown: a total that counts the
// page, or none at all, still reads every entry; only an empty page, or a
// short one that the total says is the last, ends the read.
func TestReadHistoryDoesNotTrustTotalAlone(t *testing.T) {
	base := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	var all []HistoryEntry
	for i := 6; i >= 0; i-- {
		all = append(all, HistoryEntry{TransactionID: fmt.Sprint("t", i), CreatedAt: base.Add(time.Duration(i) * time.Minute).Format(time.RFC3339)})
	}
	for name, total := range map[string]func([]HistoryEntry) int{
		"the page's count": func(page []HistoryEntry) int { return len(page) },
		"none":             func([]HistoryEntry) int { return 0 },
	} {
		p := &pagedHistory{entries: all, total: total}
		got, err := ReadHistory(t.Context(), p, base, time.Time{}, 3, 0)
		if err != nil || len(got) != len(all) {
			t.Errorf("total %s: %d entries (%v), want %d", name, len(got), err, len(all))
		}
	}
	// A short page the total calls the last ends the read at once.
	p := &pagedHistory{entries: all[:5]}
	if _, err := ReadHistory(t.Context(), p, base, time.Time{}, 3, 0); err != nil || len(p.asked) != 2 {
		t.Errorf("%d pages asked for 5 entries at 3 a page (%v)", len(p.asked), err)
	}
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

// endlessHistory always has more: every page is full (or holds short of
// it) and the total is beyond it. It counts what it served.
type endlessHistory struct {
	perPage int    // entries a page; 0: the limit asked
	issuer  string // every entry's issuer: fat entries
	pages   int
	entries int
	bytes   int
}

func (p *endlessHistory) History(_ context.Context, q HistoryQuery) (HistoryPage, error) {
	n := p.perPage
	if n == 0 {
		n = q.Limit
	}
	page := HistoryPage{Limit: q.Limit, Offset: q.Offset, Total: q.Offset + n + q.Limit}
	now := time.Now().UTC().Format(time.RFC3339)
	for i := range n {
		e := HistoryEntry{Status: StatusOK, TransactionID: fmt.Sprint("e", q.Offset+i), Amount: 100, Type: HistoryDebit, Issuer: p.issuer, CreatedAt: now}
		page.Entries = append(page.Entries, e)
		p.bytes += e.size()
	}
	p.pages++
	p.entries += n
	return page, nil
}

// However a history never ends (full pages, short pages, fat entries),
// one read stops at its ceiling with ErrHistoryTooLong, having fetched no
// more than the ceiling and one page: what it holds stays flat.
func TestReadHistoryStopsAtItsCeiling(t *testing.T) {
	for _, tc := range []struct {
		name string
		h    *endlessHistory
		// what stopped it
		pages, entries, bytes int
	}{
		{"full pages", &endlessHistory{}, MaxHistoryEntries/MaxHistoryPage + 1, MaxHistoryEntries + MaxHistoryPage, 0},
		{"one entry a page", &endlessHistory{perPage: 1}, MaxHistoryPages, MaxHistoryPages, 0},
		{"fat entries", &endlessHistory{issuer: strings.Repeat("X", 4096)}, 0, 0, MaxHistoryBytes + MaxHistoryPage*(4096+200)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadHistory(t.Context(), tc.h, time.Now().Add(-time.Hour), time.Time{}, 0, 0)
			if !errors.Is(err, ErrHistoryTooLong) || !strings.Contains(err.Error(), "20000 entries") {
				t.Fatalf("err = %v", err)
			}
			if tc.pages > 0 && tc.h.pages > tc.pages {
				t.Errorf("%d pages asked, at most %d", tc.h.pages, tc.pages)
			}
			if tc.entries > 0 && tc.h.entries > tc.entries {
				t.Errorf("%d entries fetched, at most %d", tc.h.entries, tc.entries)
			}
			if tc.bytes > 0 && tc.h.bytes > tc.bytes {
				t.Errorf("%d bytes fetched, at most %d", tc.h.bytes, tc.bytes)
			}
		})
	}
}

// A page with more entries than asked, or a negative total, is refused;
// without a limit the APIs' default (20) is what was asked.
func TestCheckPage(t *testing.T) {
	page := func(n, total int) HistoryPage { return HistoryPage{Entries: make([]HistoryEntry, n), Total: total} }
	for _, tc := range []struct {
		limit, n, total int
		ok              bool
	}{
		{5, 5, 9, true}, {5, 6, 9, false}, {0, 20, 20, true}, {0, 21, 21, false}, {5, 0, -1, false},
	} {
		err := checkPage(HistoryQuery{Limit: tc.limit}, page(tc.n, tc.total))
		if (err == nil) != tc.ok || (err != nil && (!errors.Is(err, ErrHistoryPage) || KindOf(err) != Unsure)) {
			t.Errorf("limit %d, %d entries, total %d: %v", tc.limit, tc.n, tc.total, err)
		}
	}
}

// BenchmarkReadHistoryEndless reads an endless history to its ceiling:
// B/op is what one read costs at worst, whatever the terminal says.
func BenchmarkReadHistoryEndless(b *testing.B) {
	b.ReportAllocs()
	var h *endlessHistory
	for b.Loop() {
		h = &endlessHistory{}
		if _, err := ReadHistory(b.Context(), h, time.Now().Add(-time.Hour), time.Time{}, 0, 0); !errors.Is(err, ErrHistoryTooLong) {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(h.entries), "entries/op")
}

// A refusal is named by the Local API's own code, whichever channel
// carried the terminal's words; words no specification lists are
// CodeOther, never a code they do not mean.
func TestRefusalsAreNamedByTheLocalAPIsCodes(t *testing.T) {
	for msg, want := range map[string]Code{
		localapi.MsgReversalAmountMismatch:       CodeReversalAmount,
		localapi.ReversalNotFoundMessage("T-12"): CodeReversalNotFound,
		localapi.MsgShareMedium:                  CodeShareMedium,
		"Error : the printer is on fire":         CodeOther,
		"":                                       CodeOther,
	} {
		if got := RefusalCode(msg); got != want {
			t.Errorf("RefusalCode(%q) = %q, want %q", msg, got, want)
		}
	}
	err := localErr(&localapi.APIError{Endpoint: "/print", Message: localapi.MsgPrintWrongFormat, Code: localapi.CodePrintWrongFormat})
	if KindOf(err) != Refused || CodeOf(err) != CodePrintWrongFormat {
		t.Errorf("a print refusal: %v (%s %q)", err, KindOf(err), CodeOf(err))
	}
}
