package main

import (
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"
)

// --- 7. soak ---

type soakResult struct {
	Payments      int            `json:"payments"`
	Seconds       float64        `json:"seconds"`
	PerSecond     float64        `json:"perSecond"`
	Scripted      map[string]int `json:"scripted"`
	Phases        map[string]int `json:"phases"`
	JournalStates map[string]int `json:"journalStates"`
	Attempts      int            `json:"attempts"`
	LedgerDebits  int            `json:"ledgerDebits"`
	Approved      int            `json:"approvedAttempts"`
	PaidOrders    int            `json:"paidOrders"`
	Agree         bool           `json:"agree"`
	Problems      []string       `json:"problems"`
	PaymentMs     []float64      `json:"paymentMs"`
	JournalBytes  int64          `json:"journalBytes"`
	Remote        bool           `json:"terminalProcess"`
	Memory        []struct {
		Payments int     `json:"payments"`
		Seconds  float64 `json:"seconds"`
		RSSKB    int64   `json:"rssKB"`
		HeapKB   int64   `json:"heapKB"`
	} `json:"memory"`
}

func (r *report) soak() {
	r.p("## 7. Soak\n\n")
	s, ok := r.loadSoak("soak", "Soak: journal and ledger agree")
	if !ok {
		return
	}
	where, whose := "in a process of its own, scripts/bench/simserver, scripted through its control API", "the kiosk's alone: the Service, the orchestrator, the journal and the HTTP client, plus the Go test runtime"
	if !s.Remote {
		where, whose = "in the same process", "the kiosk and the simulated terminal together"
	}
	r.p("`go test -tags bench -run TestSoak ./backend/kiosk/` (backend/kiosk/soak_test.go): %d consecutive payments through the kiosk Service (Start, AddItem, Pay, then Finish or CancelOrder, as the UI calls them), on a real journal (a file: WAL, `synchronous=FULL`) and the real orchestrator, against the simulated terminal over real HTTP on loopback answering at once (its waits scaled by 1e-9; %s), with each customer scripted before the payment from a fixed pseudo-random sequence: approve 70 %%, decline 10 %%, cancel on the terminal 10 %%, approved with the HTTP answer lost 10 %% (the kiosk must resend the same uuid and learn that the customer was charged). All customers are scripted in the terminal's queue before the first payment.\n\n", s.Payments, where)
	r.soakHead(s)
	r.p("| Scripted customers | %s |\n| Kiosk outcomes | %s |\n| Journal attempts by state | %s (%d attempts) |\n", kv(s.Scripted), kv(s.Phases), kv(s.JournalStates), s.Attempts)
	r.p("| Terminal ledger | %d debits |\n| Journal | %d approved attempts, %d orders paid; %.1f MB on disk |\n", s.LedgerDebits, s.Approved, s.PaidOrders, float64(s.JournalBytes)/1e6)
	if s.Agree {
		r.p("| Journal vs ledger | **agree exactly**: every debit in the ledger is an approved attempt in the journal with the same uuid, transaction id, amount and order, and the reverse; no uuid charged twice; no attempt left unfinished; every approved order paid; every payment ended in the phase its script implies |\n\n")
	} else {
		r.p("| Journal vs ledger | **DISAGREE**: %d problems, first: %s |\n\n", len(s.Problems), strings.Join(first(s.Problems, 5), "; "))
	}
	if len(s.Memory) > 1 {
		m0, m1 := s.Memory[0], s.Memory[len(s.Memory)-1]
		var peak int64
		for _, m := range s.Memory {
			peak = max(peak, m.RSSKB)
		}
		plot := filepath.Join(*root, "docs", "bench-soak-memory.png")
		if err := drawPlot(plot, s); err != nil {
			log.Printf("plot: %v", err)
		} else {
			r.p("![RSS and Go heap of the soak process over time](bench-soak-memory.png)\n\n")
		}
		r.p("Memory of the soak process (%s), sampled every second: RSS %s at the start, peak %s, %s at the end; Go heap objects (live and not yet swept) %s at the start, %s at the end (after a GC).\n\n", whose, fmb(m0.RSSKB), fmb(peak), fmb(m1.RSSKB), fmb(m0.HeapKB), fmb(m1.HeapKB))
	}
	if b, err := os.ReadFile(filepath.Join(*results, "soak-heap-nosim.txt")); err == nil && !s.Remote {
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "Showing nodes accounting for") {
				r.p("Where the live heap is: the simulated terminal keeps, by design, what a terminal keeps (every transaction's answer for the 24 h idempotency window, the ledger, every printed ticket decoded): most of the heap at the end and the reason the process's memory rises in the plot. Leaving out everything allocated under `terminalsim` (`go tool pprof -ignore terminalsim`, heap sampled every 512 KB): %s, i.e. the kiosk, the orchestrator, the journal and the HTTP client hold about that after 10,000 payments: they do not grow with payments.\n\n", strings.TrimPrefix(l, "Showing nodes accounting for "))
			}
		}
	}
	if top, err := os.ReadFile(filepath.Join(*results, "soak-heap.txt")); err == nil {
		r.p("What is still live on the Go heap at the end (after a GC), by allocation site (`go tool pprof -top`, inuse_space):\n\n```\n%s```\n\n", top)
	}
	r.row(fmt.Sprintf("Soak: %d payments, mixed outcomes", s.Payments), fmt.Sprintf("%.0f payments/s; journal and ledger %s", s.PerSecond, map[bool]string{true: "agree exactly", false: "DISAGREE"}[s.Agree]), "exact agreement", verdict(s.Agree, fmt.Sprint(len(s.Problems), " problems")))
}

// loadSoak reads a soak's results (name.json), or says it did not run.
func (r *report) loadSoak(name, row string) (soakResult, bool) {
	var s soakResult
	if !load(name+".json", &s) {
		r.p("Not run, or it failed (see %s.log in the results directory).\n\n", name)
		r.row(row, "not run", "exact", "—")
		return s, false
	}
	return s, true
}

// soakHead opens a soak's table with its pace.
func (r *report) soakHead(s soakResult) {
	r.p("| | |\n|---|---|\n| Payments | %d in %.1f s: **%.0f payments/s** |\n", s.Payments, s.Seconds, s.PerSecond)
	r.p("| One payment, Pay → final phase | p50 %s, p99 %s, max %s |\n", fms(pct(s.PaymentMs, 50)), fms(pct(s.PaymentMs, 99)), fms(pct(s.PaymentMs, 100)))
}
