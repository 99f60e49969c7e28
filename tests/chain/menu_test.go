package chain

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// pricedMenu is the demo catalog without its pictures, its first product
// at price (a negative one is a catalog the kiosk refuses).
func pricedMenu(t *testing.T, price int) []byte {
	t.Helper()
	demo, err := os.ReadFile(filepath.Join("..", "..", "backend", "kiosk", "menu", "demo.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cat map[string]any
	if err := json.Unmarshal(demo, &cat); err != nil {
		t.Fatal(err)
	}
	var strip func(v any)
	strip = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			delete(x, "image")
			for _, y := range x {
				strip(y)
			}
		case []any:
			for _, y := range x {
				strip(y)
			}
		}
	}
	strip(cat)
	cat["categories"].([]any)[0].(map[string]any)["products"].([]any)[0].(map[string]any)["price"] = price
	raw, _ := json.Marshal(map[string]any{"catalog": cat})
	return raw
}

// A menu published at head office's page goes through the restaurant's
// site (`comptoir site`) to its kiosk, which applies it; a rollback
// publishes the previous one again; a catalog the kiosk refuses leaves
// the menu in force, and head office's page says why.
func TestMenuThroughTheSite(t *testing.T) {
	if testing.Short() {
		t.Skip("runs head office, a site and a kiosk as processes")
	}
	hub := startHub(t)
	r1 := startSite(t, hub, "r1")
	sim := startTerminal(t)
	k := startKiosk(t, r1, "A", sim.URL())
	eventually(t, "the kiosk ready", time.Minute, k.ready)

	publish := func(path string, body []byte) uint64 {
		t.Helper()
		resp, err := client.Post("http://"+hub.webAddr+path, "application/json", strings.NewReader(string(body)))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var v struct{ Version uint64 }
		raw, _ := io.ReadAll(resp.Body)
		if err := json.Unmarshal(raw, &v); resp.StatusCode != http.StatusOK || err != nil {
			t.Fatalf("POST %s: %s %s", path, resp.Status, raw)
		}
		return v.Version
	}
	// state is the kiosk's first price and what head office says of it.
	state := func(price int64, menu uint64, refused string) func() error {
		return func() error {
			var cat struct {
				Categories []struct{ Products []struct{ Price int64 } }
			}
			if err := postJSON("http://"+k.addr+"/api/Catalog", []any{}, &cat); err != nil {
				return err
			}
			if got := cat.Categories[0].Products[0].Price; got != price {
				return fmt.Errorf("the kiosk's price %d", got)
			}
			var d struct {
				Kiosks []struct {
					Kiosk     string
					Menu      uint64
					MenuError string
				}
			}
			if err := getJSON("http://"+hub.webAddr+"/api/hub", &d); err != nil {
				return err
			}
			for _, kv := range d.Kiosks {
				if kv.Kiosk == "A" && kv.Menu == menu && strings.Contains(kv.MenuError, refused) && (refused != "") == (kv.MenuError != "") {
					return nil
				}
			}
			return fmt.Errorf("head office says %+v", d.Kiosks)
		}
	}
	v1 := publish("/api/menu?restaurant=r1", pricedMenu(t, 1234))
	eventually(t, "menu 1 applied", time.Minute, state(1234, v1, ""))
	v2 := publish("/api/menu?restaurant=r1", pricedMenu(t, 1500))
	eventually(t, "menu 2 applied", time.Minute, state(1500, v2, ""))
	v3 := publish("/api/menu/rollback?restaurant=r1", nil)
	eventually(t, "the rollback applied", time.Minute, state(1234, v3, ""))
	v4 := publish("/api/menu?restaurant=r1", pricedMenu(t, -5))
	eventually(t, "the broken menu refused", time.Minute, state(1234, v3, fmt.Sprintf("menu %d refused", v4)))
	resp, err := client.Get("http://" + hub.webAddr + "/")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(page), fmt.Sprintf("menu %d refused", v4)) {
		t.Fatalf("head office's page does not say why:\n%s", page)
	}
}
