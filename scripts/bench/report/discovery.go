package main

// --- 5. discovery ---

func (r *report) discovery() {
	r.p("## 5. Discovery\n\n")
	var d struct{ Samples []float64 }
	if !load("discovery.json", &d) {
		r.p("Not measured in this run.\n\n")
		r.row("Discovery on loopback", "not measured", "—", "—")
		return
	}
	r.p("`go test -tags bench -run TestBenchResolveSamples ./backend/discovery/`: a simulated terminal advertised by mDNS on the loopback interface (grandcat's `RegisterProxy` on 127.0.0.1), a fresh resolver each time (as the Tracker does), from the start of the browse to the terminal confirmed by `/ping`. Loopback only: on a shop's LAN the answer's round trip and the terminal's own mDNS responder add to this.\n\n")
	r.p("| samples | p50 | p90 | p99 | max |\n|---|---|---|---|---|\n| %d | %s | %s | %s | %s |\n\n", len(d.Samples), fms(pct(d.Samples, 50)), fms(pct(d.Samples, 90)), fms(pct(d.Samples, 99)), fms(pct(d.Samples, 100)))
	r.row("Discovery: browse → terminal confirmed (loopback)", "p50 "+fms(pct(d.Samples, 50))+", p99 "+fms(pct(d.Samples, 99)), "— (report)", "—")
}
