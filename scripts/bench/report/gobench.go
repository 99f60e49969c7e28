package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// --- go test -bench means ---

// benchNs is a benchmark's mean ns/op in gobench.txt, or 0.
func benchNs(out, name string) float64 {
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) >= 4 && strings.HasPrefix(f[0], name+"-") && f[3] == "ns/op" {
			v, _ := strconv.ParseFloat(f[2], 64)
			return v
		}
	}
	return 0
}

func (r *report) goBench() {
	b, err := os.ReadFile(filepath.Join(*results, "gobench.txt"))
	if err != nil {
		return
	}
	r.p("## Go benchmarks (means)\n\n`go test -run '^$' -bench . -benchtime 2s ./backend/journal/ ./backend/payment/ ./backend/discovery/` in the same run, for comparison with earlier runs (ns/op is a mean):\n\n```\n")
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "Benchmark") || strings.HasPrefix(l, "goos") || strings.HasPrefix(l, "cpu") {
			r.p("%s\n", l)
		}
	}
	r.p("```\n\n")
}
