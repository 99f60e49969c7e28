package hub

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/comptoir-pos/comptoir/backend/internal/testenv"
	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/site"
)

// BenchmarkHubEvents: facts head office takes per second from one
// restaurant's site over the leaf connection (TLS, loopback), each one
// acknowledged by head office's stream before the site lets it go, and
// folded into the figures.
func BenchmarkHubEvents(b *testing.B) {
	h := newHub(b)
	r := h.join("r1", passwords["r1"])
	r.stop() // the forwarder below is timed alone
	r.stop = nil
	srv, err := site.StartServer(site.ServerConfig{Name: "r1b", Domain: "r1", StoreDir: b.TempDir(),
		Leaf: &site.LeafRemote{URL: "tls://" + h.addr, User: "r1", Password: passwords["r1"], TLS: h.clientTLS}})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	nc, err := srv.Conn("site", nats.CustomInboxPrefix(site.HQ{Restaurant: "r1"}.Inbox()))
	if err != nil {
		b.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	subj, _ := site.NewSubjects("r1")
	if err := site.EnsureStreams(b.Context(), js, subj); err != nil {
		b.Fatal(err)
	}
	for i := range b.N {
		m := factMsg(subj.Fact("A", journal.OutboxPaid), "A",
			journal.OrderFact{OrderID: fmt.Sprintf("o%d", i), To: journal.OrderPaid, Paid: 100, At: time.Now().UnixMilli()})
		if _, err := js.PublishMsgAsync(m, jetstream.WithMsgID(orderID("r1", fmt.Sprintf("o%d", i), journal.OutboxPaid))); err != nil {
			b.Fatal(err)
		}
	}
	<-js.PublishAsyncComplete()
	testenv.Eventually(b, "joined", func() bool { return h.hub.Leaves() >= 1 })
	fw, err := site.NewForwarder(nc, subj, nil)
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	b.ResetTimer()
	for sent := 0; sent < b.N; {
		n, err := fw.Step(context.Background(), 256)
		if err != nil {
			time.Sleep(10 * time.Millisecond)
		}
		sent += n
	}
	testenv.Eventually(b, "folded", func() bool {
		t := h.hub.Ledger.Dashboard().Totals["r1"]
		return t != nil && t.Orders == b.N
	})
	b.StopTimer()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "events/s")
}
