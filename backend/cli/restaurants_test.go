package cli

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/comptoir-pos/comptoir/backend/hub"
	"github.com/comptoir-pos/comptoir/backend/internal/testenv"
	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/kiosk"
	"github.com/comptoir-pos/comptoir/backend/kitchen"
	"github.com/comptoir-pos/comptoir/backend/payment"
)

// hubCert writes a certificate for 127.0.0.1 in dir and returns the
// server's TLS configuration and the certificate's file.
func hubCert(t testing.TB, dir string) (*tls.Config, string) {
	t.Helper()
	cert := testenv.SelfSigned(t, "head office")
	certFile := filepath.Join(dir, "hub.pem")
	if err := os.WriteFile(certFile, cert.PEM, 0o600); err != nil {
		t.Fatal(err)
	}
	return cert.Server(), certFile
}

// configure writes settings (JSON values) and files into a data folder.
func configure(t testing.TB, dir string, settings map[string]any, files map[string]string) {
	t.Helper()
	db, err := journal.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for k, v := range settings {
		raw, _ := json.Marshal(v)
		if err := db.SetSetting(context.Background(), k, raw); err != nil {
			t.Fatal(err)
		}
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

type testKiosk struct {
	dir   string
	stack *Stack
	paid  []string // order ids
}

func startTestKiosk(t *testing.T, dir, siteURL string) *testKiosk {
	t.Helper()
	sim := startSim(t)
	stack, err := startKiosk(context.Background(), commonFlags{terminal: sim.URL(), dataDir: dir, site: siteURL},
		payment.DefaultLimits, kiosk.NewRelay(nil), warnLogger(io.Discard))
	if err != nil {
		t.Fatal(err)
	}
	r, err := stack.Staff.Call(context.Background(), "SetPIN", []json.RawMessage{json.RawMessage(`"4829"`)})
	if err != nil || !r.OK {
		t.Fatalf("SetPIN: %v %+v", err, r.Error)
	}
	return &testKiosk{dir: dir, stack: stack}
}

func (k *testKiosk) pay(t *testing.T) {
	t.Helper()
	kioskPays(t, k.stack, kiosk.PhaseApproved)
	k.paid = append(k.paid, k.stack.Svc.Checkout().OrderID)
	k.stack.Svc.Finish()
}

// kitchenOrders reads a kitchen's API as a screen would.
func kitchenOrders(t *testing.T, h http.Handler) kitchen.OrdersView {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/api/kitchen/orders", nil))
	var v kitchen.OrdersView
	if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil {
		t.Fatalf("kitchen: %s", rec.Body)
	}
	return v
}

func keysOf(v kitchen.OrdersView) map[string]int {
	m := map[string]int{}
	for _, o := range v.Orders {
		m[o.Key]++
	}
	return m
}

// A chain: head office, restaurant r1 (its site on a PC of its own, kiosks
// A and B joining it) and restaurant r2 (kiosk C, its own site), each
// kiosk with its own data folder and simulated terminal. Orders are paid
// on every kiosk; head office and r1's site go down mid-day; the kiosks
// keep selling; both come back. Then every paid order is on its
// restaurant's kitchen screen once and at head office once, and head
// office's totals are the journals'.
func TestRestaurantsAndHeadOffice(t *testing.T) {
	ctx := context.Background()
	hubDir, leafAddr, siteAddr := t.TempDir(), testenv.FreeAddr(t), testenv.FreeAddr(t)
	serverTLS, caFile := hubCert(t, hubDir)
	rs := []hub.Restaurant{{ID: "r1", Password: "r1-password-0123456789"}, {ID: "r2", Password: "r2-password-0123456789"}}
	startHub := func() *hub.Hub {
		h, err := hub.Start(hub.Config{StoreDir: filepath.Join(hubDir, "hub"), LeafListen: leafAddr, TLS: serverTLS, Restaurants: rs})
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	h := startHub()
	defer func() { h.Close() }()
	hubLink := func(r hub.Restaurant) (map[string]any, map[string]string) {
		return map[string]any{"site.restaurant": r.ID, "site.hub_url": "tls://" + leafAddr, "site.hub_ca": caFile},
			map[string]string{"hub-credentials.json": `{"user":"` + r.ID + `","password":"` + r.Password + `"}`}
	}
	siteDir := t.TempDir()
	settings, files := hubLink(rs[0])
	configure(t, siteDir, settings, files)
	startR1 := func() *siteRole {
		role, err := startSiteRole(ctx, commonFlags{dataDir: siteDir}, siteAddr, warnLogger(io.Discard))
		if err != nil {
			t.Fatal(err)
		}
		return role
	}
	r1 := startR1()
	defer func() { r1.close() }()

	a, b, c := t.TempDir(), t.TempDir(), t.TempDir()
	configure(t, a, map[string]any{"kiosk.number_prefix": "A", "site.restaurant": "r1"}, nil)
	configure(t, b, map[string]any{"kiosk.number_prefix": "B", "site.restaurant": "r1"}, nil)
	settings, files = hubLink(rs[1])
	settings["kiosk.number_prefix"] = "C"
	configure(t, c, settings, files)
	kiosks := []*testKiosk{startTestKiosk(t, a, "nats://"+siteAddr), startTestKiosk(t, b, "nats://"+siteAddr), startTestKiosk(t, c, "")}
	defer func() {
		for _, k := range kiosks {
			k.stack.Close()
		}
	}()
	for range 2 {
		for _, k := range kiosks {
			k.pay(t)
		}
	}
	testenv.Eventually(t, "head office has the morning", func() bool {
		d := h.Ledger.Dashboard()
		return d.Totals["r1"] != nil && d.Totals["r1"].Orders == 4 && d.Totals["r2"] != nil && d.Totals["r2"].Orders == 2
	})
	// Head office's menu for r1 reaches the kiosks that join r1's site,
	// through the bucket only the site's owner writes.
	if _, err := h.Menus.Publish(ctx, "r1", []byte(`{"catalog":`+string(demoMenuPriced(t, 1234))+`}`)); err != nil {
		t.Fatal(err)
	}
	for _, k := range kiosks[:2] {
		testenv.Eventually(t, "r1's menu at a kiosk joining its site", func() bool { return firstPrice(k.stack) == 1234 })
	}
	// Mid-day: head office and r1's site go down; every kiosk sells on.
	h.Close()
	r1.close()
	for range 2 {
		for _, k := range kiosks {
			k.pay(t)
		}
	}
	h, r1 = startHub(), startR1()
	for range 1 {
		for _, k := range kiosks {
			k.pay(t)
		}
	}
	want := map[string]int{"r1": 10, "r2": 5}
	testenv.Eventually(t, "head office has the whole day", func() bool {
		d := h.Ledger.Dashboard()
		return d.Totals["r1"] != nil && d.Totals["r1"].Orders == want["r1"] && d.Totals["r2"] != nil && d.Totals["r2"].Orders == want["r2"]
	})
	screens := map[string]http.Handler{"r1 site": kitchen.Handler(r1.run.kitchen), "kiosk A": kiosks[0].stack.Kitchen, "kiosk C": kiosks[2].stack.Kitchen}
	for name, s := range screens {
		n := want["r1"]
		if name == "kiosk C" {
			n = want["r2"]
		}
		testenv.Eventually(t, name+"'s kitchen has every order", func() bool { return len(kitchenOrders(t, s).Orders) == n })
		for key, count := range keysOf(kitchenOrders(t, s)) {
			if count != 1 {
				t.Fatalf("%s shows %s %d times", name, key, count)
			}
		}
	}
	done := kiosks
	for _, k := range done {
		k.stack.Close()
	}
	kiosks = nil
	sums := map[string]int64{}
	for i, k := range done {
		r := "r1"
		if i == 2 {
			r = "r2"
		}
		sums[r] += journalPaid(t, k)
	}
	d := h.Ledger.Dashboard()
	if d.Totals["r1"].Paid != sums["r1"] || d.Totals["r2"].Paid != sums["r2"] || sums["r1"] == 0 {
		t.Fatalf("head office %+v %+v, journals %v", d.Totals["r1"], d.Totals["r2"], sums)
	}
}

// journalPaid sums what a kiosk's journal says its orders were paid, and
// checks its outbox is all published.
func journalPaid(t *testing.T, k *testKiosk) int64 {
	t.Helper()
	ctx := context.Background()
	db, err := journal.Open(ctx, k.dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var sum int64
	for _, id := range k.paid {
		m, err := db.OrderMoney(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		sum += m.Paid
	}
	if rows, err := db.Unpublished(ctx, 1); err != nil || len(rows) != 0 {
		t.Fatalf("outbox not drained: %v %+v", err, rows)
	}
	return sum
}

// demoMenuPriced is the demo catalog without pictures (head office sends
// no files yet), its first product at price.
func demoMenuPriced(t *testing.T, price int64) json.RawMessage {
	t.Helper()
	var cat map[string]any
	if err := json.Unmarshal(kiosk.DemoMenu(), &cat); err != nil {
		t.Fatal(err)
	}
	for _, c := range cat["categories"].([]any) {
		cm := c.(map[string]any)
		delete(cm, "image")
		for _, p := range cm["products"].([]any) {
			pm := p.(map[string]any)
			delete(pm, "image")
			if opts, ok := pm["options"].([]any); ok {
				for _, g := range opts {
					for _, ch := range g.(map[string]any)["choices"].([]any) {
						delete(ch.(map[string]any), "image")
					}
				}
			}
		}
	}
	cat["categories"].([]any)[0].(map[string]any)["products"].([]any)[0].(map[string]any)["price"] = price
	raw, _ := json.Marshal(cat)
	return raw
}

func firstPrice(s *Stack) int64 {
	c := s.Svc.Catalog()
	if len(c.Categories) == 0 || len(c.Categories[0].Products) == 0 {
		return -1
	}
	return c.Categories[0].Products[0].Price
}

// A menu published at head office reaches the kiosk and is applied; a
// broken one is refused, the kiosk keeps the menu in force and head
// office shows why; a rollback publishes the previous menu again and the
// kiosk applies it.
func TestMenuFromHeadOffice(t *testing.T) {
	hubDir, leafAddr := t.TempDir(), testenv.FreeAddr(t)
	serverTLS, caFile := hubCert(t, hubDir)
	r := hub.Restaurant{ID: "r2", Password: "r2-password-0123456789"}
	h, err := hub.Start(hub.Config{StoreDir: hubDir, LeafListen: leafAddr, TLS: serverTLS, Restaurants: []hub.Restaurant{r}})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	dir := t.TempDir()
	configure(t, dir, map[string]any{"site.restaurant": "r2", "site.hub_url": "tls://" + leafAddr, "site.hub_ca": caFile,
		"kiosk.number_prefix": "C"}, map[string]string{"hub-credentials.json": `{"user":"r2","password":"` + r.Password + `"}`})
	k := startTestKiosk(t, dir, "")
	defer k.stack.Close()
	publish := func(doc any) uint64 {
		t.Helper()
		raw, _ := json.Marshal(doc)
		v, err := h.Menus.Publish(t.Context(), "r2", raw)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	kioskAtHQ := func() hub.KioskView {
		for _, kv := range h.Ledger.Dashboard().Kiosks {
			if kv.Restaurant == "r2" && kv.Kiosk == "C" {
				return kv
			}
		}
		return hub.KioskView{}
	}
	v1 := publish(map[string]any{"catalog": demoMenuPriced(t, 1234), "settings": map[string]any{"kiosk.idle_seconds": 90}})
	testenv.Eventually(t, "menu 1 at the kiosk", func() bool { return firstPrice(k.stack) == 1234 })
	if k.stack.Svc.Settings().IdleSeconds != 90 {
		t.Fatalf("the menu's settings were not applied: %+v", k.stack.Svc.Settings())
	}
	testenv.Eventually(t, "head office sees menu 1 in force", func() bool { return kioskAtHQ().Menu == v1 })
	broken := demoMenuPriced(t, -5)
	v2 := publish(map[string]any{"catalog": broken})
	testenv.Eventually(t, "head office sees menu 2 refused", func() bool { return kioskAtHQ().MenuError != "" })
	if kv := kioskAtHQ(); kv.Menu != v1 || !containsAll(kv.MenuError, "refused", "price") || firstPrice(k.stack) != 1234 {
		t.Fatalf("after a broken menu %d: %+v, price %d", v2, kv, firstPrice(k.stack))
	}
	publish(map[string]any{"catalog": demoMenuPriced(t, 1500), "settings": map[string]any{"kiosk.mode": "cafeteria"}})
	testenv.Eventually(t, "a menu with a bad setting refused", func() bool { return containsAll(kioskAtHQ().MenuError, "kiosk.mode") })
	// A menu the kiosk cannot write (its data folder refuses the file):
	// not applied, and head office says so.
	blocker := filepath.Join(dir, kiosk.CatalogFile+".new")
	if err := os.Mkdir(blocker, 0o700); err != nil {
		t.Fatal(err)
	}
	vw := publish(map[string]any{"catalog": demoMenuPriced(t, 1550)})
	testenv.Eventually(t, "a menu not written said at head office", func() bool {
		return containsAll(kioskAtHQ().MenuError, fmt.Sprintf("menu %d not applied", vw))
	})
	if err := os.Remove(blocker); err != nil {
		t.Fatal(err)
	}
	v4 := publish(map[string]any{"catalog": demoMenuPriced(t, 1600)})
	testenv.Eventually(t, "menu 4 at the kiosk", func() bool { return firstPrice(k.stack) == 1600 && kioskAtHQ().Menu == v4 })
	v5 := publish(map[string]any{"catalog": demoMenuPriced(t, 1700)})
	testenv.Eventually(t, "menu 5 at the kiosk", func() bool { return firstPrice(k.stack) == 1700 && kioskAtHQ().Menu == v5 })
	v6, err := h.Menus.Rollback(t.Context(), "r2")
	if err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, "the rollback at the kiosk", func() bool { return kioskAtHQ().Menu == v6 })
	if p := firstPrice(k.stack); p != 1600 || kioskAtHQ().MenuError != "" {
		t.Fatalf("rolled back to price %d, %+v", p, kioskAtHQ())
	}
}

func containsAll(s string, subs ...string) bool {
	for _, x := range subs {
		if !strings.Contains(s, x) {
			return false
		}
	}
	return true
}
