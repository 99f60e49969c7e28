package discovery

import (
	"strings"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/localapi"
	"github.com/comptoir-pos/comptoir/backend/terminalsim"
)

// A terminal that speaks HTTPS is found by name and confirmed over HTTPS,
// with its pinned certificate, and never tried over plain HTTP.
func TestBrowseHTTPSTerminal(t *testing.T) {
	needMulticast(t)
	u := tag()
	sim, err := terminalsim.New(terminalsim.Config{TimeScale: 0.001, InstanceName: "Yavin TLS " + u, Serial: "SIM-" + u, TLS: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := sim.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sim.Close() })
	advertiseSim(t, sim)

	opts := loOptions(t, "Yavin TLS "+u)
	opts.Window = 2 * time.Second
	opts.HTTPS = true
	opts.ClientOptions = []localapi.Option{localapi.WithTLS(localapi.TLS{Pin: sim.CertificateFingerprint()})}
	term, err := Resolve(ctxFor(t, 15*time.Second), "Yavin TLS "+u, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !term.Confirmed || term.BaseURL != sim.URL() || !strings.HasPrefix(term.BaseURL, "https://") {
		t.Fatalf("terminal %+v, want confirmed at %s", term, sim.URL())
	}
	// Without the pin it is not confirmed: nothing vouches for it.
	opts.ClientOptions = nil
	term, err = Resolve(ctxFor(t, 15*time.Second), "Yavin TLS "+u, opts)
	if err == nil && term.Confirmed {
		t.Fatalf("confirmed without trusting its certificate: %+v", term)
	}
}
