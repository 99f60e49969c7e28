package main

import (
	"fmt"
	"sort"
	"strings"
)

// --- 4. memory ---

func (r *report) memory() {
	r.p("## 4. Memory\n\n")
	r.serveMemory()
	r.desktopMemory()
}

// serveMemory is the memory of §1's `comptoir serve`, and of the same serve
// run from the desktop binary.
func (r *report) serveMemory() {
	var w wireResult
	if !load("wire.json", &w) {
		r.row("`comptoir serve` RSS", "not measured", "< 40 MB, growth < 5 MB", "—")
		return
	}
	r.p("### `comptoir serve` (pure Go)\n\n")
	r.p("The process of §1 (the pure-Go build: `CGO_ENABLED=0`, so no C library is mapped), read from `/proc/<pid>/status` (VmRSS) and `/proc/<pid>/smaps_rollup` (Pss): idle (ready, 3 s after start, no payment yet), after the %d warm-up payments, and after all %d payments plus 2 s.\n\n", w.Warmup, w.Payments)
	r.p("| | RSS | PSS |\n|---|---|---|\n| idle | %s | %s |\n| after %d payments (warm-up) | %s | |\n| after %d payments | %s | %s |\n\n", fmb(w.IdleRSSKB), fmb(w.IdlePSSKB), w.Warmup, fmb(w.WarmRSSKB), w.Payments, fmb(w.AfterRSSKB), fmb(w.AfterPSSKB))
	r.p("Idle RSS by mapping (`/proc/<pid>/smaps`): %s.\n\n", kv64(w.ByMapping))
	r.p("Over the run (RSS, every 250 payments): ")
	var parts []string
	for _, s := range w.Memory {
		parts = append(parts, fmt.Sprintf("%d: %s", s.Payments, fmb(s.RSSKB)))
	}
	r.p("%s.\n\n", strings.Join(parts, ", "))
	idleOK := w.IdleRSSKB < 40*1024
	if !idleOK {
		r.p("The idle RSS misses the 40 MB target by %s; see the mapping breakdown above for where it is.\n\n", fmb(w.IdleRSSKB-40*1024))
	}
	var dw wireResult
	if load("wire_desktop_binary.json", &dw) {
		r.p("**The same `comptoir serve` run from the desktop binary** (`build/bin/comptoir`, built by `wails build` with cgo: it links GTK 3 and WebKitGTK, whose libraries the dynamic loader maps and relocates at start even when no window is opened), %d payments: idle RSS %s (PSS %s), %s after; idle RSS by mapping: %s. ", dw.Payments, fmb(dw.IdleRSSKB), fmb(dw.IdlePSSKB), fmb(dw.AfterRSSKB), kv64(dw.ByMapping))
		r.p("So a kiosk that runs browser mode should run the pure-Go build (what the 40 MB target is about); the desktop binary's serve pays for the libraries of a window it never opens. Were that binary to be used for browser mode too, the fix would be to load WebKit lazily (a separate desktop executable, or `dlopen` at window creation), not anything in Comptoir's Go code.\n\n")
	}
	growth := w.AfterRSSKB - w.IdleRSSKB
	// Steady state: from the first sample at 250 payments or more (the
	// caches and the heap have reached their working size) to the end.
	steadyFrom, steadyKB := 0, int64(0)
	for _, s := range w.Memory {
		if s.Payments >= 250 {
			steadyFrom, steadyKB = s.Payments, s.RSSKB
			break
		}
	}
	growthSteady := w.AfterRSSKB - steadyKB
	r.row("`comptoir serve` (pure Go) RSS idle", fmb(w.IdleRSSKB)+" (PSS "+fmb(w.IdlePSSKB)+")", "< 40 MB", verdict(idleOK, "by "+fmb(w.IdleRSSKB-40*1024)))
	if growth >= 5*1024 {
		r.p("From idle to the end the RSS grows by %s, over the 5 MB target by %s; but it is a one-time step during the first payments, then flat: %s from payment %d to payment %d. The step is the working set being reached once: SQLite's page caches (one per connection, about 2 MB each by default) filling as the journal grows past them, the Go heap growing to its collection target, and code paths faulted in on first use. It does not grow with the number of payments (the soak in §7 shows the same on the Go heap over 10,000). Most of the step is the restaurant's site (below, the same run without it). Levers measured once by hand with scripts/bench/wire (2,050 payments each, not by this run): SQLite's `cache_size` cut to 512 KiB per connection (five connections) ends about 4 MB lower, latency unchanged; a soft memory limit (`GOMEMLIMIT`) of 24 MiB ends about 4 MB lower but puts Pay → wire's p99 at 6.6 ms, one of 16 MiB triples its p50 (the collector runs all the time): most of what grows is not the Go heap. Neither is taken.\n\n", fmb(growth), fmb(growth-5*1024), fmb(growthSteady), steadyFrom, w.Payments)
	}
	r.row(fmt.Sprintf("`comptoir serve` (pure Go) RSS growth, idle → after %d payments", w.Payments), fmb(growth), "< 5 MB", verdict(growth < 5*1024, "by "+fmb(growth-5*1024)+": a one-time warm-up step"))
	r.row(fmt.Sprintf("`comptoir serve` (pure Go) RSS growth, steady state (payment %d → %d)", steadyFrom, w.Payments), fmb(growthSteady), "< 5 MB", verdict(growthSteady < 5*1024, "by "+fmb(growthSteady-5*1024)))
	r.siteOffMemory(w)
}

// siteOffMemory compares §1's serve with the same run without the
// restaurant's site (site.off: no embedded NATS server, no kitchen
// consumer, the outbox waiting).
func (r *report) siteOffMemory(w wireResult) {
	var o wireResult
	if !load("wire_site_off.json", &o) {
		return
	}
	steady := func(x wireResult) (int, int64) {
		for _, s := range x.Memory {
			if s.Payments >= 250 {
				return s.Payments, x.AfterRSSKB - s.RSSKB
			}
		}
		return 0, 0
	}
	from, g := steady(o)
	var parts []string
	for _, s := range o.Memory {
		parts = append(parts, fmt.Sprintf("%d: %s", s.Payments, fmb(s.RSSKB)))
	}
	r.p("**Without the restaurant's site** (`site.off` true: no embedded NATS server, no kitchen consumer), the same %d payments: idle RSS %s (%s with the site), %s after (%s with it); over the run: %s. The difference is the site's: the NATS server's code and its JetStream store, whose block cache fills with the stream's recent messages and is bounded (with the site, the RSS levels off once the cache is full). The orders stream's active block is held in memory while it is written, and nats-server sizes blocks from the stream's byte limit: with none (the stream keeps 30 days whatever their size) they are 8 MB; any limit between 128 KB and 32 MB gives 4 MB, and a limit of 31 MiB measured about 4 MB less at the end, but it would drop a busy site's facts before their 30 days (head office may be cut off for days), so none is set.\n\n",
		o.Payments, fmb(o.IdleRSSKB), fmb(w.IdleRSSKB), fmb(o.AfterRSSKB), fmb(w.AfterRSSKB), strings.Join(parts, ", "))
	r.row(fmt.Sprintf("`comptoir serve` (pure Go, site off) RSS growth, steady state (payment %d → %d)", from, o.Payments), fmb(g), "< 5 MB", verdict(g < 5*1024, "by "+fmb(g-5*1024)))
}

// desktopMemory is the desktop app's process tree beside an empty Wails app's.
func (r *report) desktopMemory() {
	var d desktopResult
	r.p("### Desktop app, with its WebKit processes\n\n")
	if !load("desktop.json", &d) {
		r.p("Not measured in this run.\n\n")
		r.row("Desktop PSS vs empty Wails app", "not measured", "within 10 %", "—")
		return
	}
	r.p("The runs of §3: 5 s after DOM ready, PSS (`/proc/<pid>/smaps_rollup`) summed over the app's process tree (the app and its WebKitWebProcess and WebKitNetworkProcess children), Comptoir and the empty Wails app alternately in the same Xvfb session.\n\n")
	r.p("| App | runs | processes | PSS p50 | PSS max | RSS sum p50 |\n|---|---|---|---|---|---|\n")
	for _, n := range []string{"empty", "comptoir"} {
		a, ok := d.Apps[n]
		if !ok || len(a.PSSKB) == 0 {
			continue
		}
		pss := toF(a.PSSKB)
		procs := 0
		if len(a.Procs) > 0 {
			procs = a.Procs[0]
		}
		r.p("| %s | %d | %d | %s | %s | %s |\n", n, len(a.PSSKB), procs, fmb(int64(pct(pss, 50))), fmb(int64(pct(pss, 100))), fmb(int64(pct(toF(a.RSSKB), 50))))
	}
	r.p("\n")
	for _, n := range []string{"empty", "comptoir"} {
		if a := d.Apps[n]; len(a.Breakdown) > 0 {
			var parts []string
			for k, v := range a.Breakdown {
				parts = append(parts, fmt.Sprintf("%s %s", k, fmb(v)))
			}
			sort.Strings(parts)
			r.p("- %s, PSS by process (last run): %s\n", n, strings.Join(parts, ", "))
		}
	}
	r.p("\n")
	c, e := d.Apps["comptoir"], d.Apps["empty"]
	if len(c.PSSKB) > 0 && len(e.PSSKB) > 0 {
		pc, pe := pct(toF(c.PSSKB), 50), pct(toF(e.PSSKB), 50)
		over := (pc/pe - 1) * 100
		if over > 10 {
			r.p("Comptoir's tree uses %.0f %% more than the empty app's (%s more), over the 10 %% target by %.0f points. The per-process lines above show where: the web process (Comptoir's welcome screen with its Svelte bundle, styles and the three languages' strings, against the template's one line of text) and the Go process (the same GTK and WebKit libraries as the empty app's, plus a larger binary, the kiosk's heap and SQLite's caches). This run does not break the web process down further; WebKit's inspector (memory timeline) would be the next step. Most of the Go process's excess is its binary: nearly all of it is resident once started (the kernel maps a cached file's pages around each fault, and start-up runs code spread across every package), and the NATS server and SQLite make most of its size; the heap is a few MB (§7). So the levers left are a smaller binary and a lighter first screen (fewer fonts and images decoded before the first touch); `GOMEMLIMIT` and a smaller SQLite `cache_size` move the serve process by about 4 MB each (§4 above).\n\n", over, fmb(int64(pc-pe)), over-10)
		}
		r.row("Desktop total PSS vs empty Wails app", fmt.Sprintf("%s vs %s (%+.0f %%)", fmb(int64(pc)), fmb(int64(pe)), over), "within 10 %", verdict(over <= 10, fmt.Sprintf("by %.0f points", over-10)))
	} else {
		r.row("Desktop total PSS vs empty Wails app", "not measured reliably", "within 10 %", "—")
	}
}
