package site

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

func selfSigned(t *testing.T) (server, client *tls.Config) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tpl := &x509.Certificate{SerialNumber: big.NewInt(3), Subject: pkix.Name{CommonName: "site"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tpl, tpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}},
		&tls.Config{RootCAs: pool}
}

// A kiosk joins the site over TLS with the site's secret; without the
// secret, or trusting another certificate, it does not get in.
func TestJoinOverTLSWithTheSecret(t *testing.T) {
	srvTLS, cliTLS := selfSigned(t)
	addr := freeAddr(t)
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
	eventually(t, "connected", nc.IsConnected)
	if _, err := nc.Request("$JS.API.INFO", nil, 5*time.Second); err != nil {
		t.Fatalf("a kiosk with the secret: %v", err)
	}
	for name, c := range map[string]DialConfig{
		"no secret":         {URL: "tls://" + addr, TLS: cliTLS},
		"wrong secret":      {URL: "tls://" + addr, Secret: "guess", TLS: cliTLS},
		"other certificate": {URL: "tls://" + addr, Secret: "s3cret-token", TLS: func() *tls.Config { _, c := selfSigned(t); return c }()},
	} {
		nc, err := nats.Connect(c.URL, nats.Secure(c.TLS), nats.Token(c.Secret), nats.Timeout(3*time.Second))
		if err == nil {
			nc.Close()
			t.Errorf("%s: connected", name)
		}
	}
}
