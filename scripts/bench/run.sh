#!/usr/bin/env bash
# make bench: measure Comptoir's own cost and write docs/benchmarks.md and
# docs/bench-soak-memory.png. Steps (each writes JSON into the results
# directory; one that fails is reported as not measured, and the run goes on):
#
#   build      the desktop binary, frontend embedded (wails build, as make build),
#              and a pure-Go build of the same (CGO_ENABLED=0) for browser mode
#   journal    fsynced commit and recovery scan samples (backend/journal, -tags bench)
#   discovery  mDNS browse to confirmed terminal on loopback (backend/discovery, -tags bench)
#   soak       10,000 payments through the kiosk Service against the simulated
#              terminal in its own process (scripts/bench/simserver); journal
#              vs ledger (backend/kiosk, -tags bench)
#   wire       per-payment overhead and memory of `comptoir serve` (scripts/bench/wire),
#              with the restaurant's site (the default) and without it (site.off),
#              pure Go; then memory of serve from the desktop binary
#   browser    start-up in Chromium (scripts/bench/startup-browser.mjs)
#   desktop    start-up and PSS under Xvfb beside an empty Wails app
#              (scripts/bench/empty-wails.sh, scripts/bench/desktop.sh)
#   fiscal     closing a day on a journal a month and five years old (backend/fiscal)
#   gobench    the go test -bench means
#   report     scripts/bench/report renders the Markdown and the plot
#
# Each step starts after `sync`: what an earlier step left dirty is not
# written back during a step that times fsyncs.
#
# BENCH_RESULTS=DIR keeps the raw results (default: a temp dir, removed).
# SOAK_N, WIRE_N, STARTUP_RUNS, DESKTOP_RUNS shorten or lengthen steps.
# BENCH_SKIP="desktop gobench" skips steps.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=../lib.sh
source "$root/scripts/lib.sh"
cd "$root"

# What the steps need on a fresh machine: the desktop build, Xvfb and
# Chromium (as scripts/test), and a font for the plot's labels (ImageMagick
# has none of its own without Ghostscript's).
require_toolchains
ensure_apt_packages "${DESKTOP_PACKAGES[@]}" "${TEST_PACKAGES[@]}" fonts-dejavu-core
ensure_wails
ensure_npm_packages
ensure_npm_packages e2e

start=$(date +%s)
if [[ -n ${BENCH_RESULTS:-} ]]; then
	results=$(mkdir -p "$BENCH_RESULTS" && cd "$BENCH_RESULTS" && pwd)
else
	results=$(mktemp -d)
	trap 'rm -rf "$results"' EXIT
fi
export BENCH_OUT=$results

step() { # name command...
	local name=$1 t0=$(date +%s)
	shift
	if [[ " ${BENCH_SKIP:-} " == *" $name "* ]]; then
		say "bench: $name skipped (BENCH_SKIP)"
		return 0
	fi
	say "bench: $name"
	# Pages the previous step left dirty (a build, a journal) are written
	# now, not by the kernel's writeback during this step's fsyncs.
	sync
	if "$@" >"$results/$name.log" 2>&1; then
		say "bench: $name done in $(($(date +%s) - t0)) s"
	else
		say "bench: $name FAILED after $(($(date +%s) - t0)) s (its numbers will be missing); last lines:"
		tail -n 15 "$results/$name.log" >&2
	fi
}

machine() {
	local cpu fs webkit chromium
	cpu=$(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo)
	fs=$(df -T "${TMPDIR:-/tmp}" | awk 'NR == 2 { print $2 }')
	webkit=$(dpkg-query -W -f='${Version}' libwebkit2gtk-4.1-0 2>/dev/null || echo unknown)
	chromium=$(/usr/bin/chromium --version 2>/dev/null | awk '{ print $2 }' || echo unknown)
	python3 - "$results/machine.json" <<PY
import json, sys
json.dump({
  "date": "$(date -u +%Y-%m-%d)",
  "cpu": """$cpu""", "cores": $(nproc), "memMB": $(awk '/MemTotal/ { print int($2 / 1024) }' /proc/meminfo),
  "os": """$(. /etc/os-release && echo "$PRETTY_NAME")""", "kernel": "$(uname -r)",
  "go": "$(go env GOVERSION)", "node": "$(node --version 2>/dev/null)", "chromium": "$chromium",
  "webkit": "$webkit", "wails": "$WAILS_VERSION", "fs": "$fs",
  "loadStart": "$(cut -d' ' -f1-3 /proc/loadavg)",
  "commit": "$(git rev-parse --short HEAD 2>/dev/null)$(git diff --quiet 2>/dev/null || echo ' (with uncommitted changes)')",
}, open(sys.argv[1], "w"), indent=1)
PY
}

build() {
	ensure_wails && ensure_npm_packages && build_desktop || return 1
	# Browser mode's binary: pure Go (no cgo, so no GTK or WebKit libraries
	# mapped), the same frontend embedded.
	CGO_ENABLED=0 go build -ldflags "$(stamp_ldflags)" -o "$results/comptoir-purego" . || return 1
	# The wire harness, built here so that no compiler runs (nor its cache
	# is written back) in the steps that measure.
	go build -o "$results/wire" ./scripts/bench/wire
}

desktop() {
	local empty
	empty=$(scripts/bench/empty-wails.sh) || return 1
	scripts/bench/desktop.sh build/bin/comptoir "$empty" "$results/desktop.json" "${DESKTOP_RUNS:-5}"
}

browser() {
	ensure_npm_packages e2e && node scripts/bench/startup-browser.mjs "$results/comptoir-purego" "$results/startup_browser.json" "${STARTUP_RUNS:-10}"
}

step machine machine
step build build
step journal go test -tags bench -count=1 -timeout 10m -run '^TestBench' -v ./backend/journal/
step discovery go test -tags bench -count=1 -timeout 5m -run '^TestBench' -v ./backend/discovery/
soak() {
	# The simulated terminal in a process of its own, so that the soak
	# process's memory is the kiosk's alone.
	go build -o "$results/simserver" ./scripts/bench/simserver || return 1
	"$results/simserver" >"$results/simserver.out" 2>&1 &
	local sim=$! url= i
	for ((i = 0; i < 100; i++)); do
		url=$(sed -n 's/^Simulated terminal at //p' "$results/simserver.out")
		[[ -n $url ]] && break
		sleep 0.1
	done
	if [[ -z $url ]]; then
		kill "$sim" 2>/dev/null
		echo "simserver did not start" >&2
		return 1
	fi
	SOAK_SIM_URL=$url go test -tags bench -count=1 -timeout 10m -run '^TestSoak$' -v ./backend/kiosk/
	local rc=$?
	kill "$sim" 2>/dev/null
	wait "$sim" 2>/dev/null
	((rc == 0)) || return 1
	# What is still live at the end, by allocation site.
	go tool pprof -sample_index=inuse_space -top -nodecount=12 "$results/soak-heap.pprof" >"$results/soak-heap.txt" 2>/dev/null || true
	go tool pprof -sample_index=inuse_space -top -nodecount=5 -ignore terminalsim "$results/soak-heap.pprof" >"$results/soak-heap-nosim.txt" 2>/dev/null || true
}

step soak soak
# The same soak through the Cloud API channel (the simulated cloud in the
# soak's process, polled every millisecond).
step soak-cloud env SOAK_CHANNEL=cloud go test -tags bench -count=1 -timeout 10m -run '^TestSoak$' -v ./backend/kiosk/
step wire "$results/wire" -bin "$results/comptoir-purego" -n "${WIRE_N:-2000}" -out "$results/wire.json"
# The same without the restaurant's site (no embedded NATS server, no
# kitchen consumer): what the site costs in memory and time.
step wire-site-off "$results/wire" -bin "$results/comptoir-purego" -n "${WIRE_N:-2000}" -set site.off=true -out "$results/wire_site_off.json"
# The same serve from the desktop binary (cgo, GTK and WebKit linked): memory.
step wire-desktop-binary "$results/wire" -bin build/bin/comptoir -n 500 -out "$results/wire_desktop_binary.json"
step browser browser
step desktop desktop
step fiscal sh -c "go test -run '^\$' -bench BenchmarkCloseDay -benchtime 20x -timeout 30m ./backend/fiscal/ | tee '$results/fiscalbench.txt'"
step gobench sh -c "go test -run '^\$' -bench . -benchtime 2s ./backend/journal/ ./backend/payment/ ./backend/discovery/ | tee '$results/gobench.txt'"
cut -d' ' -f1-3 /proc/loadavg >"$results/loadavg-end"
step report go run ./scripts/bench/report -results "$results" -root "$root" -wall $(($(date +%s) - start))
[[ -f $results/report.log ]] && cat "$results/report.log" >&2
say "bench: done in $(($(date +%s) - start)) s: docs/benchmarks.md"
