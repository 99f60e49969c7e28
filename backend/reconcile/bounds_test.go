package reconcile

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/cloudapi"
	"github.com/comptoir-pos/comptoir/backend/cloudsim"
	"github.com/comptoir-pos/comptoir/backend/device"
	"github.com/comptoir-pos/comptoir/backend/internal/testenv"
	"github.com/comptoir-pos/comptoir/backend/journal"
)

// endlessTerminal is a terminal whose history always has another full
// page; it counts the pages it served.
type endlessTerminal struct{ pages int }

func (h *endlessTerminal) History(_ context.Context, q device.HistoryQuery) (device.HistoryPage, error) {
	h.pages++
	p := device.HistoryPage{Limit: q.Limit, Offset: q.Offset, Total: q.Offset + 2*q.Limit}
	for i := range q.Limit {
		p.Entries = append(p.Entries, device.HistoryEntry{Status: "ok", TransactionID: fmt.Sprint("E", q.Offset+i), Amount: 100,
			Type: device.HistoryDebit, CreatedAt: iso(noon)})
	}
	return p, nil
}

// A terminal and a provider that never stop listing do not hold the
// reconciliation: each column stops at its ceiling, says why, and the
// report asks staff to look instead of believing a partial list.
func TestEndlessListsStopAtTheirCeiling(t *testing.T) {
	e := newEnv(t)
	e.attempt(noon, journal.ChannelLocal, 1250, journal.StateApproved, "TX-1", &journal.Charge{Amount: 1250})
	cloud, _ := testenv.Cloud(t, cloudsim.Config{Key: "sk_reconcile"})
	if err := cloud.SetListFault(cloudsim.ListFault{Endless: true}); err != nil {
		t.Fatal(err)
	}
	ws, err := cloudapi.NewWebservices(cloudapi.DefaultWebservicesURL(cloud.URL()), cloud.Key())
	if err != nil {
		t.Fatal(err)
	}
	term := &endlessTerminal{}
	src := Sources{
		Terminal: func(ctx context.Context, from, to time.Time) ([]device.HistoryEntry, error) {
			return device.ReadHistory(ctx, term, from, to, 0, 0)
		},
		Provider: FromWebservices(ws, e.clock.Now),
	}
	e.clock.Set(noon.Add(time.Hour))
	rep, err := Day(e.ctx, e.db, src, "2026-11-24", Config{Location: paris, Now: e.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	if rep.TerminalRead || !strings.Contains(rep.TerminalError, "too long") || rep.ProviderRead || !strings.Contains(rep.ProviderError, "too many") || !rep.NeedsStaff {
		t.Fatalf("report: terminal read %v (%s), provider read %v (%s), needs staff %v", rep.TerminalRead, rep.TerminalError, rep.ProviderRead, rep.ProviderError, rep.NeedsStaff)
	}
	if max := device.MaxHistoryEntries/device.MaxHistoryPage + 1; term.pages > max {
		t.Fatalf("%d pages of the terminal's history read, at most %d", term.pages, max)
	}
	if s, max := cloud.ListServed(), cloudapi.MaxPeriodEntries/200+1; s.Pages > max {
		t.Fatalf("%d pages of the provider's list read, at most %d", s.Pages, max)
	}
	// The journal's own column is still there for staff.
	if len(rep.Lines) != 1 || rep.Lines[0].Journal == nil {
		t.Fatalf("lines %+v", rep.Lines)
	}
}
