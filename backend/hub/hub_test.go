package hub

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/comptoir-pos/comptoir/backend/internal/testenv"
	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/site"
)

var passwords = map[string]string{"r1": "r1-secret-0123456789", "r2": "r2-secret-0123456789"}

type hubRig struct {
	t         testing.TB
	dir, addr string
	serverTLS *tls.Config
	clientTLS *tls.Config
	hub       *Hub
}

func newHub(t testing.TB) *hubRig {
	cert := testenv.SelfSigned(t, "hub")
	h := &hubRig{t: t, dir: t.TempDir(), addr: testenv.FreeAddr(t), serverTLS: cert.Server(), clientTLS: cert.Client()}
	h.start()
	t.Cleanup(func() { h.hub.Close() })
	return h
}

func (h *hubRig) start() {
	var rs []Restaurant
	for id, pw := range passwords {
		rs = append(rs, Restaurant{ID: id, Password: pw})
	}
	hub, err := Start(Config{StoreDir: h.dir, LeafListen: h.addr, TLS: h.serverTLS, Restaurants: rs})
	if err != nil {
		h.t.Fatal(err)
	}
	h.hub = hub
}

// restaurant is a site joined to the hub, with its forwarder and menu
// relay running.
type restaurant struct {
	srv  *site.Server
	nc   *nats.Conn
	js   jetstream.JetStream
	subj site.Subjects
	stop func()
}

func (h *hubRig) join(id, password string) *restaurant {
	t := h.t
	srv, err := site.StartServer(site.ServerConfig{Name: id, Domain: id, StoreDir: t.TempDir(),
		Leaf: &site.LeafRemote{URL: "tls://" + h.addr, User: id, Password: password, TLS: h.clientTLS}})
	if err != nil {
		t.Fatal(err)
	}
	r := &restaurant{srv: srv}
	r.subj, _ = site.NewSubjects(id)
	if r.nc, err = srv.Conn("site "+id, nats.CustomInboxPrefix(site.HQ{Restaurant: id}.Inbox())); err != nil {
		t.Fatal(err)
	}
	r.js, _ = jetstream.New(r.nc)
	if err := site.EnsureStreams(t.Context(), r.js, r.subj); err != nil {
		t.Fatal(err)
	}
	fw, err := site.NewForwarder(r.nc, r.subj, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); fw.Run(ctx) }()
	go func() { defer wg.Done(); site.RelayMenu(ctx, r.nc, r.js, site.HQ{Restaurant: id}, testLog(t)) }()
	r.stop = func() { cancel(); wg.Wait(); r.nc.Close(); srv.Close() }
	t.Cleanup(func() {
		if r.stop != nil {
			r.stop()
		}
	})
	return r
}

// paid puts an order's payment fact into the site's stream, as a kiosk's
// publisher would.
func (r *restaurant) paid(t testing.TB, kiosk, order string, paid int64) {
	t.Helper()
	r.fact(t, kiosk, journal.OutboxPaid, orderID(r.subj.Restaurant, order, journal.OutboxPaid), journal.OrderFact{OrderID: order,
		To: journal.OrderPaid, Paid: paid, Total: paid, At: time.Now().UnixMilli(),
		Data: json.RawMessage(fmt.Sprintf(`{"dining":"eat_in","lines":[{"qty":1,"total":%d,"vatRate":1000}]}`, paid))})
}

// fact puts a kiosk's fact into the site's stream as its publisher
// would: its kiosk in a header, id as its Nats-Msg-Id.
func (r *restaurant) fact(t testing.TB, kiosk, kind, id string, body any) {
	t.Helper()
	m := factMsg(r.subj.Fact(kiosk, kind), kiosk, body)
	if _, err := r.js.PublishMsg(t.Context(), m, jetstream.WithMsgID(id)); err != nil {
		t.Fatal(err)
	}
}

// factMsg is a fact's message as a kiosk's publisher makes it, its id
// aside.
func factMsg(subject, kiosk string, body any) *nats.Msg {
	m := nats.NewMsg(subject)
	m.Data, _ = json.Marshal(body)
	m.Header.Set(site.HeaderKiosk, kiosk)
	return m
}

// orderID is a fact's id as an outbox gives it (a UUID), the same for the
// same restaurant, order and kind.
func orderID(restaurant, order, kind string) string {
	return uuid.NewSHA1(uuid.NameSpaceOID, []byte(restaurant+"/"+order+"/"+kind)).String()
}

// Two restaurants join head office; their sales arrive once, by restaurant,
// dining mode and VAT rate; with head office down they keep their facts
// and send them once it is back; a restaurant cannot write as another.
func TestRestaurantsReachHeadOffice(t *testing.T) {
	h := newHub(t)
	r1, r2 := h.join("r1", passwords["r1"]), h.join("r2", passwords["r2"])
	testenv.Eventually(t, "both restaurants joined", func() bool { return h.hub.Leaves() == 2 })
	r1.paid(t, "A", "o1", 1000)
	r2.paid(t, "A", "o1", 700)
	testenv.Eventually(t, "the sales at head office", func() bool {
		d := h.hub.Ledger.Dashboard()
		return d.Totals["r1"] != nil && d.Totals["r2"] != nil && d.Totals["r1"].Paid == 1000 && d.Totals["r2"].Paid == 700
	})
	h.hub.Close()
	for i := 2; i <= 6; i++ {
		r1.paid(t, "B", fmt.Sprintf("o%d", i), 100)
	}
	h.start()
	testenv.Eventually(t, "the day offline caught up", func() bool {
		d := h.hub.Ledger.Dashboard()
		return d.Totals["r1"] != nil && d.Totals["r1"].Orders == 6
	})
	d := h.hub.Ledger.Dashboard()
	if d.Totals["r1"].Paid != 1500 || d.Totals["r2"].Paid != 700 {
		t.Fatalf("totals %+v %+v", d.Totals["r1"], d.Totals["r2"])
	}
	var found bool
	for _, row := range d.Sales {
		if row.Restaurant == "r1" && row.Dining == "eat_in" && row.VATRate == 1000 && row.Amount == 1500 {
			found = true
		}
	}
	if !found {
		t.Fatalf("sales %+v", d.Sales)
	}
	// r1 publishing into r2's subjects: head office never stores it.
	m := nats.NewMsg(site.HQ{Restaurant: "r2"}.Fact("A", journal.OutboxPaid))
	m.Data, _ = json.Marshal(journal.OrderFact{OrderID: "forged", Paid: 99999})
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	ack, err := r1.js.PublishMsg(ctx, m)
	cancel()
	if err == nil {
		t.Fatalf("head office acknowledged r1 writing as r2: %+v", ack)
	}
	r2.paid(t, "A", "o-after", 1)
	testenv.Eventually(t, "r2's next sale", func() bool { return h.hub.Ledger.Dashboard().Totals["r2"].Orders == 2 })
	if got := h.hub.Ledger.Dashboard().Totals["r2"].Paid; got != 701 {
		t.Fatalf("r2 paid %d: a forged fact counted", got)
	}
}

// A restaurant with a wrong password is not let in: its sales never
// reach head office, while another restaurant's do.
func TestWrongCredentialsRefused(t *testing.T) {
	h := newHub(t)
	bad := h.join("r1", "not-the-password-at-all")
	good := h.join("r2", passwords["r2"])
	bad.paid(t, "A", "o1", 100)
	good.paid(t, "A", "o1", 200)
	testenv.Eventually(t, "the good restaurant's sale", func() bool {
		tot := h.hub.Ledger.Dashboard().Totals["r2"]
		return tot != nil && tot.Paid == 200
	})
	if h.hub.Leaves() != 1 || h.hub.Ledger.Dashboard().Totals["r1"] != nil {
		t.Fatalf("a restaurant with a wrong password joined: %d leaves, %+v", h.hub.Leaves(), h.hub.Ledger.Dashboard().Totals)
	}
}

// A menu published at head office reaches the restaurant's site bucket
// and every kiosk following it; a rollback publishes the previous one
// again, as a new version.
func TestMenuReachesKiosks(t *testing.T) {
	h := newHub(t)
	r1 := h.join("r1", passwords["r1"])
	testenv.Eventually(t, "joined", func() bool { return h.hub.Leaves() == 1 })
	var mu sync.Mutex
	var got []site.Menu
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		site.FollowMenu(ctx, r1.js, func(m site.Menu) error { mu.Lock(); got = append(got, m); mu.Unlock(); return nil }, testLog(t))
	}()
	defer func() { cancel(); <-done }()
	last := func() site.Menu {
		mu.Lock()
		defer mu.Unlock()
		if len(got) == 0 {
			return site.Menu{}
		}
		return got[len(got)-1]
	}
	v1, err := h.hub.Menus.Publish(t.Context(), "r1", []byte(`{"catalog":{"name":"one"}}`))
	if err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, "menu 1 at the kiosk", func() bool { return last().Version == v1 })
	if _, err := h.hub.Menus.Publish(t.Context(), "r1", []byte(`{"settings":{}}`)); err == nil {
		t.Fatal("a menu without a catalog was published")
	}
	v2, _ := h.hub.Menus.Publish(t.Context(), "r1", []byte(`{"catalog":{"name":"two"}}`))
	testenv.Eventually(t, "menu 2 at the kiosk", func() bool { return last().Version == v2 })
	v3, err := h.hub.Menus.Rollback(t.Context(), "r1")
	if err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, "the rollback at the kiosk", func() bool { return last().Version == v3 })
	if string(last().Catalog) != `{"name":"one"}` {
		t.Fatalf("rolled back to %s", last().Catalog)
	}
}

func testLog(testing.TB) *slog.Logger { return slog.New(slog.DiscardHandler) }

// A restaurant's fiscal closing reaches head office's object store, as
// signed.
func TestFiscalRecordsKeptAtHeadOffice(t *testing.T) {
	h := newHub(t)
	r1 := h.join("r1", passwords["r1"])
	fact := journal.FiscalFact{Kind: journal.FiscalClosing, Seq: 3, Payload: json.RawMessage(`{"day":"2026-11-26","total":1500}`), Sig: "sig-3"}
	data, _ := json.Marshal(fact)
	r1.fact(t, "A", journal.OutboxClosing, uuid.NewString(), fact)
	testenv.Eventually(t, "the closing at head office", func() bool {
		got, err := h.hub.Ledger.FiscalRecord(t.Context(), "r1", "A", journal.FiscalClosing, 3)
		return err == nil && string(got) == string(data)
	})
}
