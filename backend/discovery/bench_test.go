package discovery

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/internal/testenv"
)

// BenchmarkResolveLoopback is the time from the start of a browse to a
// terminal confirmed by its ping: a simulator advertised on the loopback
// interface, a fresh resolver per iteration (as the Tracker does), Resolve
// returning as soon as the ping answers. Method: go test -run '^$' -bench
// ResolveLoopback ./backend/discovery/; ns/op is one discovery.
func BenchmarkResolveLoopback(b *testing.B) {
	name := "Yavin Bench " + tag()
	sim := newSim(b, name)
	advertiseSim(b, sim)
	opts := Options{Interfaces: []net.Interface{testenv.Loopback(b)}, NameFilter: name, Port: -1, Window: 5 * time.Second, AcceptSimulated: true}
	for b.Loop() {
		term, err := Resolve(context.Background(), name, opts)
		if err != nil || term.BaseURL != sim.URL() {
			b.Fatalf("%+v %v", term, err)
		}
	}
}
