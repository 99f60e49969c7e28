package kitchen

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/internal/testenv"
	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/site"
)

// fileRig is newRig with the kiosk's journal on disk (fsynced commits, as
// in production).
func fileRig(b *testing.B) *rig {
	r, _ := siteRig(b)
	r.db = testenv.Journal(b, "")
	return r
}

func (r *rig) publish(b *testing.B) func() {
	p, err := site.NewPublisher(site.PublisherConfig{Outbox: r.db, JS: r.js(), Subjects: r.subj, Kiosk: "A"})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); p.Run(ctx) }()
	return func() { cancel(); <-done }
}

func percentiles(ds []time.Duration) (p50, p99 time.Duration) {
	slices.Sort(ds)
	return ds[len(ds)/2], ds[min(len(ds)-1, len(ds)*99/100)]
}

// BenchmarkApprovedToKitchen: an approval committed in the kiosk's journal
// (on disk) → the ticket in the kitchen's view, through the outbox, the
// publisher, the site's stream and the kitchen's consumer, on loopback.
func BenchmarkApprovedToKitchen(b *testing.B) {
	r := fileRig(b)
	defer r.publish(b)()
	k := r.kitchen()
	var lat []time.Duration
	b.ResetTimer()
	for i := range b.N {
		id := fmt.Sprintf("o%d", i)
		pay(b, r.db, id, "A"+strconv.Itoa(i))
		approved := time.Now()
		for {
			k.mu.Lock()
			_, ok := k.st.tickets["A/"+id]
			ch := k.changed
			k.mu.Unlock()
			if ok {
				break
			}
			select {
			case <-ch:
			case <-time.After(time.Second):
			}
		}
		lat = append(lat, time.Since(approved))
	}
	b.StopTimer()
	p50, p99 := percentiles(lat)
	b.ReportMetric(float64(p50.Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(p99.Microseconds())/1000, "p99-ms")
}

// offRig is a rig whose site is not up yet, the kiosk's journal in
// memory.
func offRig(b *testing.B) *rig {
	r := &rig{t: b, dir: b.TempDir(), addr: testenv.FreeAddr(b)}
	r.subj, _ = site.NewSubjects("r1")
	db, err := journal.OpenMemory(b.Context())
	if err != nil {
		b.Fatal(err)
	}
	r.db = db
	return r
}

// waitTickets waits until k shows n tickets.
func waitTickets(k *Kitchen, n int) {
	for {
		k.mu.Lock()
		got := len(k.st.tickets)
		k.mu.Unlock()
		if got == n {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// fill journals n paid orders in a journal in memory.
func fill(b *testing.B, db *journal.DB, n int) {
	for i := range n {
		pay(b, db, fmt.Sprintf("o%d", i), "A"+strconv.Itoa(i))
	}
}

// BenchmarkCatchUp10000: a day offline, 10,000 orders waiting in the
// kiosk's outbox; the site comes back: time until the kitchen has them
// all (published, stored, folded).
func BenchmarkCatchUp10000(b *testing.B) {
	const n = 10000
	for range b.N {
		b.StopTimer()
		r := offRig(b)
		fill(b, r.db, n)
		r.up()
		k := r.kitchen()
		b.StartTimer()
		stop := r.publish(b)
		waitTickets(k, n)
		b.StopTimer()
		stop()
		k.Close()
		r.srv.Close()
		r.db.Close()
	}
	b.ReportMetric(float64(n), "orders/op")
}

// BenchmarkSiteEvents: facts a site takes per second from one kiosk's
// publisher (each one acknowledged by the stream, each marked in the
// journal).
func BenchmarkSiteEvents(b *testing.B) {
	r := offRig(b)
	defer r.db.Close()
	fill(b, r.db, b.N)
	r.up()
	defer r.srv.Close()
	p, err := site.NewPublisher(site.PublisherConfig{Outbox: r.db, JS: r.js(), Subjects: r.subj, Kiosk: "A", Batch: 256})
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	b.ResetTimer()
	for p.Published() < int64(b.N) {
		if _, err := p.Flush(b.Context()); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "events/s")
}

// BenchmarkEmbeddedSite: what a kiosk's own site costs: resident memory
// added by the server, its streams, a kitchen and 1,000 orders, and the
// stream's files on disk.
func BenchmarkEmbeddedSite(b *testing.B) {
	for range b.N {
		runtime.GC()
		before := rss(b)
		r := offRig(b)
		r.up()
		stop := r.publish(b)
		k := r.kitchen()
		fill(b, r.db, 1000)
		waitTickets(k, 1000)
		runtime.GC()
		after := rss(b)
		b.ReportMetric(float64(after-before)/(1<<20), "MB-RSS-added")
		b.ReportMetric(float64(dirSize(r.dir))/(1<<20), "MB-disk-1000-orders")
		stop()
		k.Close()
		r.srv.Close()
		r.db.Close()
	}
}

func rss(b *testing.B) int64 {
	raw, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Skip("no /proc: resident memory not measured")
	}
	for _, l := range strings.Split(string(raw), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}

func dirSize(dir string) int64 {
	var n int64
	_ = filepath.Walk(dir, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			n += fi.Size()
		}
		return nil
	})
	return n
}
