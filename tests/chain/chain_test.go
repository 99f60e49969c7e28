// Package chain runs a chain of restaurants with the real comptoir binary:
// head office (`comptoir hub`), two restaurant sites (`comptoir site`) and
// three kiosks (`comptoir serve --site`), each its own process with its own
// data folder and, for the kiosks, its own simulated terminal (in this test
// process, so it outlives what is killed). Everything listens on loopback.
//
// Orders are paid on every kiosk through browser mode's API (the intents
// the screens call), then head office and one restaurant's site are ended
// with SIGKILL mid-day; the kiosks keep paying (each payment must reach
// "approved" with both down), the two come back on their data folders, a
// few more orders are paid, and then: every paid order is on its
// restaurant's kitchen screen (GET /api/kitchen/orders) once; head office
// counts each once (its stream holds one fact per order), and its totals
// are the sums of the kiosks' journals.
//
// Each payment's latency (Pay to approved) is logged with the links up and
// down, for the record: no assertion on time.
package chain

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/journal"
)

// bin is the comptoir binary, built once for the package.
var bin string

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		os.Exit(m.Run()) // the test skips itself
	}
	dir, err := os.MkdirTemp("", "comptoir-chain-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// The kiosks' fiscal signing keys stay in this run's folder, not the
	// system's (as root, Comptoir keeps them under /var/lib/comptoir).
	if err := os.Setenv("COMPTOIR_FISCAL_KEYS", filepath.Join(dir, "fiscal-keys")); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bin, err = buildBinary(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

var restaurantPasswords = map[string]string{"r1": "r1-password-0123456789", "r2": "r2-password-0123456789"}

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }

// hubRig is head office.
type hubRig struct {
	dir, leafAddr, webAddr, certFile string
	proc                             *proc
}

func startHub(t *testing.T) *hubRig {
	h := &hubRig{dir: t.TempDir(), leafAddr: freeAddr(t), webAddr: freeAddr(t)}
	certs := t.TempDir()
	cert, key := writeCert(t, certs)
	h.certFile = cert
	var rs []map[string]string
	for _, id := range []string{"r1", "r2"} {
		rs = append(rs, map[string]string{"id": id, "password": restaurantPasswords[id]})
	}
	raw, _ := json.Marshal(rs)
	writePrivate(t, filepath.Join(h.dir, "hub-restaurants.json"), raw)
	h.proc = start(t, "hub", "hub", "--data-dir", h.dir, "--tls-cert", cert, "--tls-key", key,
		"--leaf-addr", h.leafAddr, "--addr", h.webAddr)
	return h
}

// dashboard is what the test reads of GET /api/hub.
type dashboard struct {
	Kiosks []struct {
		Restaurant, Kiosk string
		Online            bool
	} `json:"kiosks"`
	Totals map[string]struct {
		Orders int   `json:"orders"`
		Paid   int64 `json:"paid"`
	} `json:"totals"`
	FactsByKind map[string]uint64 `json:"factsByKind"`
}

func (h *hubRig) dashboard() (dashboard, error) {
	var d dashboard
	err := getJSON("http://"+h.webAddr+"/api/hub", &d)
	return d, err
}

// siteRig is a restaurant's site, joined to head office.
type siteRig struct {
	id, dir, natsAddr, httpAddr string
	proc                        *proc
}

func startSite(t *testing.T, h *hubRig, id string) *siteRig {
	s := &siteRig{id: id, dir: t.TempDir(), natsAddr: freeAddr(t), httpAddr: freeAddr(t)}
	cred, _ := json.Marshal(map[string]string{"user": id, "password": restaurantPasswords[id]})
	writePrivate(t, filepath.Join(s.dir, "hub-credentials.json"), cred)
	setAll(t, s.dir, "site.restaurant", quote(id), "site.hub_url", quote("tls://"+h.leafAddr), "site.hub_ca", quote(h.certFile))
	s.proc = start(t, "site "+id, "site", "--data-dir", s.dir, "--listen", s.natsAddr, "--addr", s.httpAddr)
	return s
}

// ticket is what the test reads of a kitchen ticket.
type ticket struct {
	OrderID string `json:"orderId"`
	Number  string `json:"number"`
	Kiosk   string `json:"kiosk"`
}

func (s *siteRig) kitchen() ([]ticket, error) {
	var v struct {
		Orders []ticket `json:"orders"`
		Recent []ticket `json:"recent"`
	}
	err := getJSON("http://"+s.httpAddr+"/api/kitchen/orders", &v)
	return append(v.Orders, v.Recent...), err
}

// kioskRig is a kiosk in browser mode with its simulated terminal.
type kioskRig struct {
	name, restaurant, prefix, dir, addr string
	proc                                *proc
}

func startKiosk(t *testing.T, s *siteRig, prefix string, term string) *kioskRig {
	k := &kioskRig{name: s.id + "/" + prefix, restaurant: s.id, prefix: prefix, dir: t.TempDir(), addr: freeAddr(t)}
	setAll(t, k.dir, "site.restaurant", quote(s.id), "kiosk.number_prefix", quote(prefix))
	// A kiosk takes no order before its staff PIN is set, as installed.
	pin := exec.Command(bin, "pin", "--data-dir", k.dir)
	pin.Stdin = strings.NewReader("2468\n")
	if out, err := pin.CombinedOutput(); err != nil {
		t.Fatalf("comptoir pin: %v\n%s", err, out)
	}
	k.proc = start(t, "kiosk "+k.name, "serve", "--data-dir", k.dir, "--addr", k.addr, "--terminal", term,
		"--site", "nats://"+s.natsAddr)
	return k
}

// view is what the test reads of the kiosk's checkout view.
type view struct {
	Phase       string `json:"phase"`
	OrderID     string `json:"orderId"`
	OrderNumber string `json:"orderNumber"`
	Total       int64  `json:"total"`
	Error       string `json:"error"`
}

func (k *kioskRig) call(name string, args ...any) (view, error) {
	if args == nil {
		args = []any{}
	}
	var v view
	err := postJSON("http://"+k.addr+"/api/"+name, args, &v)
	return v, err
}

func (k *kioskRig) ready() error {
	var tv struct {
		State string `json:"state"`
		Ready bool   `json:"ready"`
	}
	if err := postJSON("http://"+k.addr+"/api/Terminal", []any{}, &tv); err != nil {
		return err
	}
	if tv.State != "connected" || !tv.Ready {
		return fmt.Errorf("terminal %s, ready %v", tv.State, tv.Ready)
	}
	v, err := k.call("Checkout")
	if err == nil && v.Phase != "welcome" {
		err = fmt.Errorf("phase %s", v.Phase)
	}
	return err
}

// paid is one order paid at a kiosk.
type paid struct {
	kiosk   *kioskRig
	order   string
	number  string
	total   int64
	latency time.Duration // Pay to approved
}

// baskets are the orders' contents: totals whose cents the simulated
// terminal approves plainly (none ends in 51-59, its test amounts).
var baskets = []struct {
	product string
	qty     int
}{{"croissant", 1}, {"espresso", 2}, {"pain-au-chocolat", 3}, {"croissant", 2}, {"tarte-citron", 1}}

// pay runs one order on the kiosk as its screens do, and waits for the
// approval: it fails when the payment ends otherwise.
func (k *kioskRig) pay(i int) (paid, error) {
	v, err := k.call("Start", "en")
	if err != nil || v.Error != "" {
		return paid{}, fmt.Errorf("start: %v, phase %s %s", err, v.Phase, v.Error)
	}
	if v.Phase == "dining" {
		if v, err = k.call("ChooseDining", "take_away"); err != nil || v.Error != "" {
			return paid{}, fmt.Errorf("dining: %v, phase %s %s", err, v.Phase, v.Error)
		}
	}
	b := baskets[i%len(baskets)]
	if v, err = k.call("AddItem", b.product, b.qty); err != nil || v.Error != "" {
		return paid{}, fmt.Errorf("add %s: %v %s", b.product, err, v.Error)
	}
	began := time.Now()
	if v, err = k.call("Pay", "card"); err != nil || v.Phase != "paying" {
		return paid{}, fmt.Errorf("pay: %v, phase %s %s", err, v.Phase, v.Error)
	}
	deadline := began.Add(60 * time.Second)
	for v.Phase == "paying" && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
		if v, err = k.call("Checkout"); err != nil {
			return paid{}, err
		}
	}
	p := paid{kiosk: k, order: v.OrderID, number: v.OrderNumber, total: v.Total, latency: time.Since(began)}
	if v.Phase != "approved" {
		return p, fmt.Errorf("order %s ended %s (%s)", v.OrderID, v.Phase, v.Error)
	}
	if _, err := k.call("Finish"); err != nil {
		return p, err
	}
	return p, nil
}

// payRound pays n orders on every kiosk at once (each kiosk one after the
// other, as its customers do) and returns them; every one must be
// approved.
func payRound(t *testing.T, kiosks []*kioskRig, n int, first int) []paid {
	t.Helper()
	var (
		mu   sync.Mutex
		wg   sync.WaitGroup
		out  []paid
		errs []error
	)
	for _, k := range kiosks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range n {
				p, err := k.pay(first + i)
				mu.Lock()
				if err != nil {
					errs = append(errs, fmt.Errorf("kiosk %s: %w", k.name, err))
				} else {
					out = append(out, p)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		t.Error(err)
	}
	if len(errs) > 0 {
		t.FailNow()
	}
	return out
}

func TestChainSurvivesKillNine(t *testing.T) {
	if testing.Short() {
		t.Skip("runs head office, two sites and three kiosks as processes")
	}
	began := time.Now()
	hub := startHub(t)
	sites := map[string]*siteRig{"r1": startSite(t, hub, "r1"), "r2": startSite(t, hub, "r2")}
	var kiosks []*kioskRig
	for _, at := range []struct{ site, prefix string }{{"r1", "A"}, {"r1", "B"}, {"r2", "A"}} {
		sim := startTerminal(t)
		kiosks = append(kiosks, startKiosk(t, sites[at.site], at.prefix, sim.URL()))
	}
	for _, k := range kiosks {
		eventually(t, "kiosk "+k.name+" ready", time.Minute, k.ready)
	}
	eventually(t, "every kiosk seen at head office", time.Minute, func() error {
		d, err := hub.dashboard()
		if err == nil && len(d.Kiosks) != len(kiosks) {
			err = fmt.Errorf("%d kiosks: %+v", len(d.Kiosks), d.Kiosks)
		}
		return err
	})
	t.Logf("chain up in %v", time.Since(began).Round(time.Millisecond))

	up := payRound(t, kiosks, 3, 0)
	// Mid-day, while the morning's facts are on their way (head office has
	// some, maybe not all): head office and r1's site die; no payment
	// notices.
	eventually(t, "the morning's orders reaching head office", time.Minute, func() error {
		d, err := hub.dashboard()
		if err == nil && d.Totals["r1"].Orders+d.Totals["r2"].Orders == 0 {
			err = fmt.Errorf("totals %+v", d.Totals)
		}
		return err
	})
	hub.proc.killNine(t)
	sites["r1"].proc.killNine(t)
	down := payRound(t, kiosks, 3, 3)
	// r2's kitchen, whose site stands, has its orders without head office.
	eventually(t, "r2's kitchen with head office down", time.Minute, func() error {
		return kitchenHolds(sites["r2"], ordersAt(append(slices.Clone(up), down...), "r2"))
	})

	hub.proc.restart(t)
	sites["r1"].proc.restart(t)
	after := payRound(t, kiosks, 2, 6)
	all := append(append(slices.Clone(up), down...), after...)

	for _, id := range []string{"r1", "r2"} {
		eventually(t, id+"'s kitchen holds every order once", 2*time.Minute, func() error {
			return kitchenHolds(sites[id], ordersAt(all, id))
		})
	}
	var d dashboard
	eventually(t, "head office holds every order", 2*time.Minute, func() error {
		var err error
		d, err = hub.dashboard()
		if err == nil && (d.Totals["r1"].Orders != len(ordersAt(all, "r1")) || d.Totals["r2"].Orders != len(ordersAt(all, "r2"))) {
			err = fmt.Errorf("totals %+v for %d and %d orders", d.Totals, len(ordersAt(all, "r1")), len(ordersAt(all, "r2")))
		}
		return err
	})
	// Its stream holds one fact per order paid: none came twice.
	if got := d.FactsByKind["order.paid"]; got != uint64(len(all)) {
		t.Errorf("head office folded %d payments for %d paid orders", got, len(all))
	}
	for _, k := range kiosks {
		k.proc.stop(t)
	}
	sums := journalSums(t, kiosks, all)
	for _, id := range []string{"r1", "r2"} {
		if d.Totals[id].Paid != sums[id] {
			t.Errorf("%s: head office says %d paid, the journals %d", id, d.Totals[id].Paid, sums[id])
		}
	}
	logLatencies(t, "links up", append(slices.Clone(up), after...))
	logLatencies(t, "head office and r1's site down", down)
	t.Logf("%d orders, whole run %v", len(all), time.Since(began).Round(time.Millisecond))
}

func ordersAt(ps []paid, restaurant string) []paid {
	var out []paid
	for _, p := range ps {
		if p.kiosk.restaurant == restaurant {
			out = append(out, p)
		}
	}
	return out
}

// kitchenHolds says whether the site's kitchen shows exactly these
// orders, each once, from the kiosk that took it.
func kitchenHolds(s *siteRig, want []paid) error {
	tickets, err := s.kitchen()
	if err != nil {
		return err
	}
	seen := map[string]int{}
	for _, tk := range tickets {
		seen[tk.Kiosk+"/"+tk.OrderID]++
	}
	for _, p := range want {
		key := p.kiosk.prefix + "/" + p.order
		if seen[key] != 1 {
			return fmt.Errorf("order %s of kiosk %s shown %d times", p.order, p.kiosk.name, seen[key])
		}
	}
	if len(tickets) != len(want) {
		return fmt.Errorf("%d tickets for %d orders", len(tickets), len(want))
	}
	return nil
}

// journalSums reads each kiosk's journal (the kiosk stopped): its approved
// payments are exactly the orders the test saw paid there, and their sums
// by restaurant are what head office must say.
func journalSums(t *testing.T, kiosks []*kioskRig, all []paid) map[string]int64 {
	t.Helper()
	ctx := context.Background()
	sums := map[string]int64{}
	for _, k := range kiosks {
		db, err := journal.Open(ctx, k.dir)
		if err != nil {
			t.Fatalf("kiosk %s's journal: %v", k.name, err)
		}
		atts, err := db.ListAttempts(ctx, journal.AttemptFilter{State: journal.StateApproved})
		if err != nil {
			t.Fatal(err)
		}
		orders := map[string]bool{}
		for _, a := range atts {
			orders[a.OrderID] = true
		}
		var want []string
		for _, p := range all {
			if p.kiosk == k {
				want = append(want, p.order)
			}
		}
		if len(orders) != len(want) {
			t.Errorf("kiosk %s: %d orders approved in its journal, %d paid by the test", k.name, len(orders), len(want))
		}
		for _, id := range want {
			if !orders[id] {
				t.Errorf("kiosk %s: order %s paid but not approved in its journal", k.name, id)
			}
		}
		for id := range orders {
			m, err := db.OrderMoney(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			sums[k.restaurant] += m.Paid
		}
		db.Close()
	}
	return sums
}

func logLatencies(t *testing.T, what string, ps []paid) {
	t.Helper()
	ls := make([]time.Duration, 0, len(ps))
	for _, p := range ps {
		ls = append(ls, p.latency)
	}
	slices.Sort(ls)
	if len(ls) == 0 {
		return
	}
	t.Logf("payment latency, %s: %d payments, p50 %v, max %v", what, len(ls),
		ls[len(ls)/2].Round(time.Millisecond), ls[len(ls)-1].Round(time.Millisecond))
}
