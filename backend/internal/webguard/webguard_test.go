package webguard

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// The Host rule itself is held through its servers' tests (httpui's
// TestHostMustBeLoopbackOrConfigured and TestHostOnTheLANIsTheAddressReached,
// hub's TestHeadOfficeAnswersItsOwnNamesOnly); these are the small rules
// around it.
func TestTheSmallRules(t *testing.T) {
	for addr, want := range map[string]string{
		"127.0.0.1:8090": "127.0.0.1", "localhost:8090": "localhost", "kiosk.lan:80": "kiosk.lan",
		"0.0.0.0:8090": "", "[::]:8090": "", ":8090": "", "nonsense": "",
	} {
		if got, ok := ServedName(addr); got != want || ok != (want != "") {
			t.Errorf("ServedName(%q) = %q, %v; want %q", addr, got, ok, want)
		}
	}
	for ct, want := range map[string]bool{
		"application/json": true, "application/json; charset=utf-8": true, "Application/JSON": true,
		"": false, "text/plain": false, "application/x-www-form-urlencoded": false, "application/jsonp": false, "application/json;;": false,
	} {
		r := httptest.NewRequest(http.MethodPost, "/", nil)
		r.Header.Set("Content-Type", ct)
		if got := IsJSON(r); got != want {
			t.Errorf("IsJSON(%q) = %v", ct, got)
		}
	}
	for _, c := range []struct {
		origin, fetchSite string
		cross             bool
	}{
		{"", "", false},
		{"http://127.0.0.1:8090", "same-origin", false},
		{"http://127.0.0.1:8091", "", true},
		{"https://127.0.0.1:8090", "", true},
		{"null", "", true},
		{"", "cross-site", true},
	} {
		r := httptest.NewRequest(http.MethodPost, "/", nil)
		r.Host = "127.0.0.1:8090"
		if c.origin != "" {
			r.Header.Set("Origin", c.origin)
		}
		if c.fetchSite != "" {
			r.Header.Set("Sec-Fetch-Site", c.fetchSite)
		}
		if got := CrossSite(r); got != c.cross {
			t.Errorf("Origin %q, Sec-Fetch-Site %q: cross-site %v", c.origin, c.fetchSite, got)
		}
	}
}
