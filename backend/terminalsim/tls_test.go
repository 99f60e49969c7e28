package terminalsim

import (
	"strings"
	"testing"

	"github.com/comptoir-pos/comptoir/backend/localapi"
	"github.com/google/uuid"
)

// A simulated terminal on HTTPS takes payments from a client that pinned
// its certificate, and from no other.
func TestTLSTerminal(t *testing.T) {
	sim, _ := newSim(t, Config{TLS: true})
	if !strings.HasPrefix(sim.URL(), "https://") || sim.CertificateFingerprint() == "" {
		t.Fatalf("url %s, fingerprint %q", sim.URL(), sim.CertificateFingerprint())
	}
	ctx := testCtx(t)
	plain, err := localapi.NewClient(sim.URL())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := plain.Ping(ctx, false); err == nil {
		t.Fatal("a client that trusts nothing pinged a self-signed terminal")
	}
	pinned, err := localapi.NewClient(sim.URL(), localapi.WithTLS(localapi.TLS{Pin: sim.CertificateFingerprint()}))
	if err != nil {
		t.Fatal(err)
	}
	tx, err := pinned.Payment(ctx, &localapi.PaymentRequest{Amount: 700, IdempotentUUID: uuid.NewString()})
	if err != nil || !tx.Approved() {
		t.Fatalf("payment over HTTPS: %+v, %v", tx, err)
	}
	c, err := localapi.PeekCertificate(ctx, sim.URL())
	if err != nil || c.Fingerprint != sim.CertificateFingerprint() {
		t.Fatalf("peeked %+v, %v", c, err)
	}
}
