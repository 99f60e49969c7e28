package localapi

import (
	"crypto/x509"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// tlsTerminal is a terminal on HTTPS that answers /ping and counts the
// requests that reached it.
func tlsTerminal(t *testing.T) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var hits atomic.Int32
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"status":"ok"}`))
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}

// An HTTPS terminal is trusted by a pinned fingerprint or by roots, never
// by default; a terminal that cannot be checked receives nothing.
func TestTLSTerminalTrust(t *testing.T) {
	srv, hits := tlsTerminal(t)
	der := srv.Certificate().Raw
	pin := Fingerprint(der)
	roots := x509.NewCertPool()
	roots.AddCert(srv.Certificate())
	other := strings.Repeat("ab", 32)

	for _, tt := range []struct {
		name string
		tls  *TLS
		ok   bool
	}{
		{"system roots only: an unknown authority", nil, false},
		{"pinned, colon form", &TLS{Pin: pin}, true},
		{"pinned, bare lowercase", &TLS{Pin: strings.ToLower(strings.ReplaceAll(pin, ":", ""))}, true},
		{"another pin", &TLS{Pin: other}, false},
		{"its authority among the roots", &TLS{Roots: roots}, true},
		{"an invalid pin", &TLS{Pin: "1234"}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			before := hits.Load()
			var opts []Option
			if tt.tls != nil {
				opts = append(opts, WithTLS(*tt.tls))
			}
			c, err := NewClient(srv.URL, opts...)
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.Ping(t.Context(), false)
			if tt.ok {
				if err != nil {
					t.Fatalf("ping: %v", err)
				}
				return
			}
			var te *TransportError
			if !errors.As(err, &te) || te.Sent {
				t.Fatalf("err = %v: want a refusal before anything is sent", err)
			}
			if hits.Load() != before {
				t.Fatal("the request reached a terminal that was not trusted")
			}
		})
	}
}

// Staff read the certificate a terminal presents before pinning it; only
// the handshake happens.
func TestPeekCertificate(t *testing.T) {
	srv, hits := tlsTerminal(t)
	c, err := PeekCertificate(t.Context(), srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	if c.Fingerprint != Fingerprint(srv.Certificate().Raw) || c.Trusted || c.NotAfter.IsZero() {
		t.Fatalf("certificate %+v", c)
	}
	if hits.Load() != 0 {
		t.Fatal("peeking sent a request")
	}
	if _, err := PeekCertificate(t.Context(), strings.Replace(srv.URL, "https", "http", 1)); err == nil {
		t.Fatal("peeked at an http:// address")
	}
	if p, err := NormalizePin(c.Fingerprint); err != nil || len(p) != 64 {
		t.Fatalf("normalized %q, %v", p, err)
	}
}
