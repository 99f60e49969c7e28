package cli

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/comptoir-pos/comptoir/backend/fault"
	"github.com/comptoir-pos/comptoir/backend/internal/testenv"
	"github.com/comptoir-pos/comptoir/backend/staff"
	"github.com/comptoir-pos/comptoir/backend/terminalsim"
)

// httpsTerminal is a simulated terminal serving the Local API on HTTPS
// with a self-signed certificate.
func httpsTerminal(t *testing.T) *terminalsim.Terminal {
	t.Helper()
	sim, _ := testenv.Terminal(t, terminalsim.Config{TLS: true, TimeScale: 1})
	if !strings.HasPrefix(sim.URL(), "https://") {
		t.Fatalf("the simulator does not serve HTTPS: %s", sim.URL())
	}
	return sim
}

func TestAnHTTPSTerminalIsTrustedOnlyWhenPinnedOrVouchedFor(t *testing.T) {
	ctx := context.Background()
	sim := httpsTerminal(t)
	other := httpsTerminal(t) // another certificate

	cases := []struct {
		name string
		pin  string
		ok   bool
	}{
		{"pinned", sim.CertificateFingerprint(), true},
		{"pinned, written in lowercase without colons", strings.ToLower(strings.ReplaceAll(sim.CertificateFingerprint(), ":", "")), true},
		{"another certificate pinned", other.CertificateFingerprint(), false},
		{"nothing pinned: the system's roots do not know a self-signed certificate", "", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			trust, err := loadTrust(ctx, commonFlags{terminalPin: tc.pin}, nil)
			if err != nil {
				t.Fatal(err)
			}
			link, err := fixedTerminal(sim.URL(), "flag", trust)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(link.stop)
			_, err = link.device.Ping(ctx, false)
			if (err == nil) != tc.ok {
				t.Fatalf("ping: %v, want success %v", err, tc.ok)
			}
		})
	}
}

func TestHTTPSOnceSetUpIsNeverDowngraded(t *testing.T) {
	ctx := context.Background()
	sim := httpsTerminal(t)
	c := newControl(t, &terminalLink{how: "address", url: "http://10.0.0.5:16125/localapi/v4"})
	c.ping = func(context.Context, string) error { return nil }

	// Before HTTPS is set up, plain HTTP is allowed.
	if err := c.SetAddress(ctx, "10.0.0.9"); err != nil {
		t.Fatal(err)
	}
	if info := c.Info(ctx); info.HTTPS {
		t.Fatalf("HTTPS required before any https address: %+v", info)
	}
	// Saving an https:// address makes HTTPS required.
	if err := c.SetAddress(ctx, sim.URL()); err != nil {
		t.Fatal(err)
	}
	if info := c.Info(ctx); !info.HTTPS || info.Saved.Address != sim.URL() {
		t.Fatalf("after an https address: %+v", info)
	}
	// From then on an http:// address is refused by staff mode and by the
	// wiring alike, whatever answers there.
	if err := c.SetAddress(ctx, "http://10.0.0.9"); fault.CodeOf(err) != staff.EINVALID {
		t.Fatalf("http address after HTTPS: %v", err)
	}
	if c.saved(ctx).Address != sim.URL() {
		t.Fatalf("the refused address replaced the saved one: %+v", c.saved(ctx))
	}
	trust, err := loadTrust(ctx, commonFlags{}, c.db)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fixedTerminal("10.0.0.9", "flag", trust); !errors.Is(err, ErrInsecureTerminal) {
		t.Fatalf("an http terminal with HTTPS required: %v", err)
	}
}

func TestStaffPinsTheCertificateTheTerminalPresents(t *testing.T) {
	ctx := context.Background()
	sim := httpsTerminal(t)
	c := newControl(t, &terminalLink{how: "address", url: sim.URL()})

	cert, err := c.Certificate(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if cert.Fingerprint != sim.CertificateFingerprint() || cert.Trusted {
		t.Fatalf("certificate %+v, the terminal shows %s (self-signed: not trusted by the system)", cert, sim.CertificateFingerprint())
	}
	if err := c.Pin(ctx, "not a fingerprint"); fault.CodeOf(err) != staff.EINVALID {
		t.Fatalf("a bad fingerprint: %v", err)
	}
	if err := c.Pin(ctx, cert.Fingerprint); err != nil {
		t.Fatal(err)
	}
	info := c.Info(ctx)
	if info.Pin != sim.CertificateFingerprint() || !info.HTTPS || !info.RestartRequired {
		t.Fatalf("after pinning: %+v", info)
	}
	// The next start trusts that certificate.
	trust, err := loadTrust(ctx, commonFlags{}, c.db)
	if err != nil {
		t.Fatal(err)
	}
	link, err := fixedTerminal(sim.URL(), "address", trust)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(link.stop)
	if _, err := link.device.Ping(ctx, false); err != nil {
		t.Fatalf("ping with the pinned certificate: %v", err)
	}
	// Removing the pin keeps HTTPS required.
	if err := c.Pin(ctx, ""); err != nil {
		t.Fatal(err)
	}
	if info := c.Info(ctx); info.Pin != "" || !info.HTTPS {
		t.Fatalf("after removing the pin: %+v", info)
	}
}

func TestABadPinIsAClearError(t *testing.T) {
	_, err := loadTrust(context.Background(), commonFlags{terminalPin: "12:34"}, nil)
	if err == nil || !strings.Contains(err.Error(), "--terminal-pin") {
		t.Fatalf("a short pin: %v", err)
	}
}
