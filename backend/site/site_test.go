package site

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/comptoir-pos/comptoir/backend/internal/testenv"
	"github.com/comptoir-pos/comptoir/backend/journal"
)

func startSite(t testing.TB, dir, listen string) *Server {
	t.Helper()
	s, err := StartServer(ServerConfig{Name: "site", Domain: "r1", StoreDir: dir, Listen: listen})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

func jsOf(t testing.TB, nc *nats.Conn) jetstream.JetStream {
	t.Helper()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return js
}

// pay journals an order paid in full, as the payment core would.
func pay(t testing.TB, db *journal.DB, id string, total int64) {
	testenv.PaidOrder(t, db, journal.Order{ID: id, Total: total, Data: []byte(`{"number":"` + id + `","lines":[]}`)})
}

func streamMsgs(t testing.TB, js jetstream.JetStream) uint64 {
	t.Helper()
	st, err := js.Stream(context.Background(), StreamOrders)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return info.State.Msgs
}

// forgetful is an outbox whose first marks are lost, as when the process
// dies between the stream's acknowledgement and the journal's mark.
type forgetful struct {
	*journal.DB
	lose atomic.Int32
}

func (f *forgetful) MarkPublished(ctx context.Context, seqs ...int64) error {
	if f.lose.Add(-1) >= 0 {
		return errors.New("process died before the mark")
	}
	return f.DB.MarkPublished(ctx, seqs...)
}

// Each fact reaches the stream once, under its row's id, with its kiosk
// and order; a row published again (its mark was lost) is dropped by the
// stream as a duplicate.
func TestPublisherOnceEvenWhenReplayed(t *testing.T) {
	ctx := t.Context()
	srv := startSite(t, t.TempDir(), "")
	nc, err := srv.Conn("test")
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, subj := kioskStreams(t, nc)
	db, err := journal.OpenMemory(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	out := &forgetful{DB: db}
	out.lose.Store(2)
	p, err := NewPublisher(PublisherConfig{Outbox: out, JS: js, Subjects: subj, Kiosk: "A"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		pay(t, db, fmt.Sprintf("A%d", i+1), 500)
	}
	rows, _ := db.Unpublished(ctx, 10)
	for range 2 { // published, mark lost: twice
		if _, err := p.Flush(ctx); err == nil {
			t.Fatal("a lost mark went unnoticed")
		}
	}
	if _, err := p.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if n := streamMsgs(t, js); n != 3 {
		t.Fatalf("%d messages in the stream for 3 facts published three times", n)
	}
	if left, _ := db.Unpublished(ctx, 10); len(left) != 0 {
		t.Fatalf("still unpublished: %+v", left)
	}
	st, _ := js.Stream(ctx, StreamOrders)
	for i, r := range rows {
		m, err := st.GetMsg(ctx, uint64(i+1))
		if err != nil {
			t.Fatal(err)
		}
		if m.Header.Get(jetstream.MsgIDHeader) != r.MsgID || m.Subject != "comptoir.r1.k.A.order.paid" ||
			m.Header.Get(HeaderKiosk) != "A" || string(m.Data) != string(r.Payload) {
			t.Fatalf("message %d: %s %v, want row %+v", i+1, m.Subject, m.Header, r)
		}
	}
}

// dialKiosk connects as kiosk A to the site at addr, closed when the test
// ends.
func dialKiosk(t testing.TB, addr string) *nats.Conn {
	t.Helper()
	nc, err := Dial(DialConfig{URL: "nats://" + addr, Name: "kiosk A"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// kioskStreams is restaurant r1's JetStream through nc, its streams made.
func kioskStreams(t testing.TB, nc *nats.Conn) (jetstream.JetStream, Subjects) {
	t.Helper()
	js := jsOf(t, nc)
	subj, _ := NewSubjects("r1")
	if err := EnsureStreams(t.Context(), js, subj); err != nil {
		t.Fatal(err)
	}
	return js, subj
}

// memberStreams makes restaurant r1's streams as the site's owner and
// returns a kiosk's JetStream on the site at addr, over the network.
func memberStreams(t testing.TB, srv *Server, addr string) (jetstream.JetStream, Subjects) {
	t.Helper()
	own, err := srv.Conn("owner")
	if err != nil {
		t.Fatal(err)
	}
	defer own.Close()
	kioskStreams(t, own)
	subj, _ := NewSubjects("r1")
	return jsOf(t, dialKiosk(t, addr)), subj
}

// A site that is down holds nothing up: the journal commits, the facts
// wait in the outbox, and once the site is back they all arrive, once, in
// the journal's order.
func TestPublisherWaitsForTheSite(t *testing.T) {
	ctx := t.Context()
	dir, addr := t.TempDir(), testenv.FreeAddr(t)
	srv := startSite(t, dir, addr)
	js, subj := memberStreams(t, srv, addr)
	db, err := journal.OpenMemory(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	p, err := NewPublisher(PublisherConfig{Outbox: db, JS: js, Subjects: subj, Kiosk: "A", AckWait: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); p.Run(runCtx) }()
	defer func() { cancel(); <-done }()
	pay(t, db, "A1", 100)
	testenv.Eventually(t, "the first order published", func() bool { return p.Published() == 1 })
	srv.Close()
	for i := 2; i <= 20; i++ {
		pay(t, db, fmt.Sprintf("A%d", i), 100)
	}
	if left, _ := db.Unpublished(ctx, 100); len(left) != 19 {
		t.Fatalf("%d unpublished while the site is down", len(left))
	}
	startSite(t, dir, addr)
	testenv.Eventually(t, "the outbox drained", func() bool { left, _ := db.Unpublished(ctx, 100); return len(left) == 0 })
	if n := streamMsgs(t, js); n != 20 {
		t.Fatalf("%d messages for 20 orders", n)
	}
	st, _ := js.Stream(ctx, StreamOrders)
	for i := 1; i <= 20; i++ {
		m, err := st.GetMsg(ctx, uint64(i))
		if err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprintf(`"orderId":"A%d"`, i); !strings.Contains(string(m.Data), want) {
			t.Fatalf("message %d out of order: %s", i, m.Data)
		}
	}
}

// Other machines reach a site only over TLS and with its secret: a
// server on a LAN address without them is refused, and an address that
// carries credentials (which would show in a process list) too.
func TestSiteRefusesAnOpenLAN(t *testing.T) {
	_, err := StartServer(ServerConfig{Name: "s", Domain: "r1", StoreDir: t.TempDir(), Listen: "0.0.0.0:0"})
	if err == nil || !strings.Contains(err.Error(), "TLS") {
		t.Fatalf("a LAN listener without TLS: %v", err)
	}
	if _, err := Dial(DialConfig{URL: "nats://u:p@127.0.0.1:4222"}); err == nil {
		t.Fatal("credentials in the address were taken")
	}
	if _, err := Dial(DialConfig{URL: "nats://192.0.2.1:4222"}); err == nil || !strings.Contains(err.Error(), "TLS") {
		t.Fatalf("a LAN site without TLS: %v", err)
	}
}
