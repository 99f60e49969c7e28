package site

import (
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/comptoir-pos/comptoir/backend/internal/testenv"
)

// A kiosk joins the site over TLS with the site's secret; without the
// secret, or trusting another certificate, it does not get in.
func TestJoinOverTLSWithTheSecret(t *testing.T) {
	cert := testenv.SelfSigned(t, "site")
	srvTLS, cliTLS := cert.Server(), cert.Client()
	addr := testenv.FreeAddr(t)
	srv, err := StartServer(ServerConfig{Name: "site", Domain: "r1", StoreDir: t.TempDir(), Listen: addr, TLS: srvTLS, Secret: "s3cret-token"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	nc, err := Dial(DialConfig{URL: "tls://" + addr, Secret: "s3cret-token", TLS: cliTLS, Name: "kiosk"})
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	testenv.Eventually(t, "connected", nc.IsConnected)
	if _, err := nc.Request("$JS.API.INFO", nil, 5*time.Second); err != nil {
		t.Fatalf("a kiosk with the secret: %v", err)
	}
	for name, c := range map[string]DialConfig{
		"no secret":         {URL: "tls://" + addr, TLS: cliTLS},
		"wrong secret":      {URL: "tls://" + addr, Secret: "guess", TLS: cliTLS},
		"other certificate": {URL: "tls://" + addr, Secret: "s3cret-token", TLS: testenv.SelfSigned(t, "site").Client()},
	} {
		nc, err := nats.Connect(c.URL, nats.Secure(c.TLS), nats.Token(c.Secret), nats.Timeout(3*time.Second))
		if err == nil {
			nc.Close()
			t.Errorf("%s: connected", name)
		}
	}
}
