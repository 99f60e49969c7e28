package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// --- the cloud channel ---

func (r *report) cloud() {
	r.p("## 8. The cloud channel\n\n")
	b, _ := os.ReadFile(filepath.Join(*results, "gobench.txt"))
	cloud, local := benchNs(string(b), "BenchmarkPayCloud"), benchNs(string(b), "BenchmarkPayInstantTerminal")
	if cloud == 0 || local == 0 {
		r.p("Not measured (the Go benchmarks did not run).\n\n")
		r.row("Cloud channel overhead per payment", "not run", "—", "—")
		return
	}
	over := cloud - local
	r.p("Method: `BenchmarkPayCloud` (backend/payment/bench_test.go) pays through the real cloud client over loopback HTTP against a cloud whose first poll answers the outcome, with a 1 ms poll interval; `BenchmarkPayInstantTerminal` pays the same way on the LAN channel against a terminal that answers at once. Both journal the same fsynced transactions. The difference is the cloud channel's own cost between the acknowledgement and the outcome reaching the screen, beyond the poll interval: the acknowledgement's provider id journaled, one more HTTP exchange (the poll) and its decoding.\n\n")
	r.p("| | |\n|---|---|\n| Cloud payment, mean | %s |\n| LAN payment, mean | %s |\n| **Cloud channel overhead** | **%s** per payment, plus on average half a poll interval (1 s at the default `cloud.poll_seconds` of 2) |\n", fms(cloud/1e6), fms(local/1e6), fms(over/1e6))
	r.p("| Polls while a payment is out | 60 / `cloud.poll_seconds` a minute: 30 at the default, each one GET of about 1 KB answered by the provider |\n| Polls of an idle kiosk | **none**: polls run only while an attempt is out, and the cloud terminal is not pinged in the background (staff's \"check the terminal\" reads one history entry when pressed); an unresolved attempt past its deadline adds one history read every 10 s until it is settled |\n\n")
	r.row("Cloud channel overhead per payment", fms(over/1e6)+" beyond the poll interval; idle kiosk: 0 requests/min", "measured", "—")
	r.cloudSoak()
}

// cloudSoak is §7's soak paid through the cloud channel.
func (r *report) cloudSoak() {
	r.p("### The soak on the cloud channel\n\n")
	s, ok := r.loadSoak("soak-cloud", "Cloud soak: journal and ledger agree")
	if !ok {
		return
	}
	r.p("`SOAK_CHANNEL=cloud go test -tags bench -run TestSoak ./backend/kiosk/`: the same %d scripted customers as §7, through the Cloud API channel: the simulated provider cloud (backend/cloudsim) in the soak's process, its virtual terminal the scripted simulated terminal, polled every millisecond. The ledger's terminal ids are mapped to the cloud's transaction ids before the comparison.\n\n", s.Payments)
	r.soakHead(s)
	r.p("| Journal attempts by state | %s (%d attempts); ledger %d debits, %d approved attempts |\n", kv(s.JournalStates), s.Attempts, s.LedgerDebits, s.Approved)
	verdict := "agree exactly"
	if !s.Agree {
		verdict = fmt.Sprintf("DISAGREE: %d problems, first: %s", len(s.Problems), strings.Join(first(s.Problems, 5), "; "))
	}
	r.p("| Journal vs ledger | **%s** |\n\n", verdict)
	r.row("Cloud soak: journal and ledger agree", verdict, "exact", "—")
}
