//go:build bench

package discovery

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/internal/testenv"
)

// TestBenchResolveSamples times N discoveries one by one for
// docs/benchmarks.md (make bench): start of an mDNS browse to a terminal
// confirmed by /ping, a simulator advertised on loopback, a fresh resolver
// each time (as the Tracker does). Built only with -tags bench; writes only
// when BENCH_OUT names a directory.
func TestBenchResolveSamples(t *testing.T) {
	testenv.BenchOut(t)
	const n = 300
	name := "Yavin Bench " + tag()
	sim := newSim(t, name)
	advertiseSim(t, sim)
	opts := Options{Interfaces: []net.Interface{testenv.Loopback(t)}, NameFilter: name, Port: -1, Window: 5 * time.Second, AcceptSimulated: true}
	samples := make([]float64, 0, n)
	for i := 0; i < n; i++ {
		start := time.Now()
		term, err := Resolve(context.Background(), name, opts)
		d := time.Since(start)
		if err != nil || term.BaseURL != sim.URL() {
			t.Fatalf("%+v %v", term, err)
		}
		samples = append(samples, float64(d)/float64(time.Millisecond))
	}
	testenv.WriteSamples(t, "discovery.json", map[string]any{"samples": samples})
}
