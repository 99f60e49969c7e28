package hub

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// Head office's page publishes menus to every restaurant and shows their
// figures and fiscal archives: it answers to the loopback names and the
// names it was given only, so that a page whose name was rebound to
// 127.0.0.1 (its own origin, then) reaches none of it; and a page of
// another site does not either.
func TestHeadOfficeAnswersItsOwnNamesOnly(t *testing.T) {
	h := newHub(t)
	plain, named := Handler(h.hub), Handler(h.hub, "hq.example")
	menu := `{"catalog":{"categories":[]},"settings":{"receipt.merchant":{"name":"x"}}}`
	ask := func(hd http.Handler, method, target, host, body string, header ...string) int {
		t.Helper()
		r := httptest.NewRequest(method, target, strings.NewReader(body))
		r.Host = host
		for i := 0; i+1 < len(header); i += 2 {
			r.Header.Set(header[i], header[i+1])
		}
		w := httptest.NewRecorder()
		hd.ServeHTTP(w, r)
		return w.Code
	}
	for _, c := range []struct {
		host        string
		plain, name bool
	}{
		{"127.0.0.1:8090", true, true},
		{"localhost:8090", true, true},
		{"[::1]:8090", true, true},
		{"hq.example:8090", false, true},
		{"attacker.example:8090", false, false},
		{"127.1:8090", false, false},
		{"", false, false},
	} {
		for _, hd := range []struct {
			h    http.Handler
			want bool
		}{{plain, c.plain}, {named, c.name}} {
			for _, path := range []string{"/", "/api/hub", "/api/menu?restaurant=r1", "/api/fiscal",
				"/api/fiscal/archive?restaurant=r1&kiosk=A&period=2026-10&sha256=00"} {
				code := ask(hd.h, http.MethodGet, path, c.host, "")
				if allowed := code != http.StatusForbidden; allowed != hd.want {
					t.Errorf("GET %s with Host %q: %d, want allowed=%v", path, c.host, code, hd.want)
				}
			}
		}
	}
	// A rebound page, its Origin its own: nothing published.
	if code := ask(plain, http.MethodPost, "/api/menu?restaurant=all", "attacker.example:8090", menu,
		"Origin", "http://attacker.example:8090", "Content-Type", "application/json"); code != http.StatusForbidden {
		t.Fatalf("a menu from a rebound page: %d", code)
	}
	if code := ask(plain, http.MethodPost, "/api/menu/rollback?restaurant=all", "attacker.example:8090", ""); code != http.StatusForbidden {
		t.Fatalf("a rollback from a rebound page: %d", code)
	}
	// Another site's page, sent to head office's real name.
	for _, hdr := range [][]string{{"Origin", "http://attacker.example"}, {"Sec-Fetch-Site", "cross-site"}} {
		if code := ask(plain, http.MethodPost, "/api/menu/rollback?restaurant=all", "127.0.0.1:8090", "", hdr...); code != http.StatusForbidden {
			t.Fatalf("a rollback with %v: %d", hdr, code)
		}
	}
	for _, r := range []string{"r1", "r2"} {
		if m, err := h.hub.Menus.Current(t.Context(), r); err != nil || m.Version != 0 {
			t.Fatalf("%s's menu after the refused requests: %+v, %v", r, m, err)
		}
	}
	// Head office's own page, as its browser sends it.
	if code := ask(plain, http.MethodPost, "/api/menu?restaurant=r1", "127.0.0.1:8090", menu,
		"Origin", "http://127.0.0.1:8090", "Content-Type", "application/json", "Sec-Fetch-Site", "same-origin"); code == http.StatusForbidden {
		t.Fatalf("head office's own page refused: %d", code)
	}
}
