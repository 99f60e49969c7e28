package discovery

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"
)

// A terminal that offers HTTPS is found by name and confirmed over HTTPS
// with the certificate it presents, which is reported for the Tracker to
// judge: browsing trusts no certificate by itself.
func TestBrowseHTTPSTerminal(t *testing.T) {
	needMulticast(t)
	u := tag()
	sim := newTLSSim(t, "Yavin TLS "+u, nil)
	advertiseSim(t, sim)

	opts := loOptions(t, "Yavin TLS "+u)
	opts.Window = 2 * time.Second
	term, err := Resolve(ctxFor(t, 15*time.Second), "Yavin TLS "+u, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !term.Confirmed || term.BaseURL != sim.URL() || !strings.HasPrefix(term.BaseURL, "https://") || term.Fingerprint != pinOf(t, sim) {
		t.Fatalf("terminal %+v, want confirmed at %s presenting %s", term, sim.URL(), sim.CertificateFingerprint())
	}
}

// With HTTPS required, a terminal is never asked anything over plain HTTP.
func TestBrowseHTTPSRequiredNeverTriesPlainHTTP(t *testing.T) {
	needMulticast(t)
	u := tag()
	sim := newSim(t, "Yavin Plain "+u)
	advertiseSim(t, sim)

	var mu sync.Mutex
	var pinged []string
	opts := loOptions(t, "Yavin Plain "+u)
	opts.Window = 2 * time.Second
	opts.HTTPS = true
	opts.Pinger = func(ctx context.Context, baseURL, pin string) error {
		mu.Lock()
		pinged = append(pinged, baseURL)
		mu.Unlock()
		return pingWith(nil)(ctx, baseURL, pin)
	}
	ts, _ := Browse(ctxFor(t, 15*time.Second), opts)
	var found bool
	for _, term := range ts {
		if term.Instance != "Yavin Plain "+u {
			continue
		}
		found = true
		if term.Confirmed || !strings.HasPrefix(term.BaseURL, "https://") {
			t.Errorf("a plain HTTP terminal confirmed under HTTPS required: %+v", term)
		}
	}
	if !found {
		t.Fatal("the terminal was not heard")
	}
	mu.Lock()
	defer mu.Unlock()
	for _, p := range pinged {
		if !strings.HasPrefix(p, "https://") {
			t.Errorf("pinged %s over plain HTTP", p)
		}
	}
}
