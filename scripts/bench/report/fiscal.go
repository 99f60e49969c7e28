package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// --- 9. fiscal closings ---

// fiscal reports BenchmarkCloseDay: closing one more day on a journal a
// month old and on one five years old.
func (r *report) fiscal() {
	r.p("## 9. Fiscal closings\n\n")
	b, err := os.ReadFile(filepath.Join(*results, "fiscalbench.txt"))
	young, old := benchNs(string(b), "BenchmarkCloseDay/age=1month"), benchNs(string(b), "BenchmarkCloseDay/age=5years")
	if err != nil || young == 0 || old == 0 {
		r.p("Not measured (the fiscal benchmark did not run).\n\n")
		r.row("Fiscal: close a day, journal 5 years old vs 1 month old", "not run", "same order", "—")
		return
	}
	r.p("Method: `BenchmarkCloseDay` (backend/fiscal/age_test.go) builds a journal of synthetic tickets (10 a day, every day, month and fiscal year closed as the kiosk does), a month old and five years old, then records 40 tickets of one more day and times `CloseDue`: the day's Z and, at a month's end, the month's. What it reads is counted too (records-read/op): the day's tickets and the last closings, found by name, never the journal from its start. What is left of the journal's age is the journal's range read (`journal.FiscalRecords`), which SQLite serves from the chain's (kind, seq) index and a sort by row: each call visits every index entry of the chain (a few milliseconds at five years of tickets); a read by number through that index would remove it.\n\n")
	r.p("| Journal's age | Mean time to close a day | Records read |\n|---|---|---|\n")
	r.p("| 1 month | %s | %s |\n| 5 years | %s | %s |\n\n", fms(young/1e6), benchMetric(string(b), "BenchmarkCloseDay/age=1month", "records-read/op"),
		fms(old/1e6), benchMetric(string(b), "BenchmarkCloseDay/age=5years", "records-read/op"))
	r.row("Fiscal: close a day, journal 5 years old vs 1 month old", fms(old/1e6)+" vs "+fms(young/1e6)+"; records read "+
		benchMetric(string(b), "BenchmarkCloseDay/age=5years", "records-read/op")+" vs "+benchMetric(string(b), "BenchmarkCloseDay/age=1month", "records-read/op"),
		"records read by the period, not the age", "measured")
}

// benchMetric is a benchmark's custom metric (unit) in go test output, or
// "n/a".
func benchMetric(out, name, unit string) string {
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) < 2 || !strings.HasPrefix(f[0], name+"-") {
			continue
		}
		for i := 1; i < len(f); i++ {
			if f[i] == unit {
				if v, err := strconv.ParseFloat(f[i-1], 64); err == nil {
					return strconv.FormatFloat(v, 'f', 0, 64)
				}
			}
		}
	}
	return "n/a"
}
