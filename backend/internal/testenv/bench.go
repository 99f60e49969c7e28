package testenv

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// BenchOut is the folder make bench collects its samples in (BENCH_OUT):
// a test that only measures for docs/benchmarks.md is skipped outside it.
func BenchOut(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("BENCH_OUT")
	if dir == "" {
		t.Skip("BENCH_OUT not set: run through make bench")
	}
	return dir
}

// WriteSamples writes v as indented JSON to name in BenchOut's folder.
func WriteSamples(t testing.TB, name string, v any) {
	t.Helper()
	b, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(BenchOut(t), name), b, 0o644); err != nil {
		t.Fatal(err)
	}
}
