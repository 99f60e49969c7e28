package localapi

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// TLS is how a client checks a terminal that answers HTTPS. The Local API
// offers HTTPS once the terminal has retrieved its certificate; how it gets
// one is not shown, so both ways a kiosk can trust it are here: the system's
// roots (a certificate from a public or company authority), or a pinned
// certificate fingerprint that staff read off the terminal. There is no way
// to trust any certificate: a payment never goes to a terminal nobody
// vouched for.
type TLS struct {
	// Pin is the SHA-256 fingerprint of the terminal's certificate (hex,
	// with or without colons, any case). When set, that certificate alone
	// is trusted, whoever signed it.
	Pin string
	// Roots replaces the system's roots when Pin is empty (tests, or a
	// company authority). Nil: the system's.
	Roots *x509.CertPool
}

// NormalizePin returns a fingerprint as 64 lowercase hex digits, or an
// error naming what is wrong with it.
func NormalizePin(pin string) (string, error) {
	p := strings.ToLower(strings.NewReplacer(":", "", " ", "").Replace(strings.TrimSpace(pin)))
	if len(p) != sha256.Size*2 {
		return "", fmt.Errorf("localapi: a certificate fingerprint is 64 hexadecimal digits (SHA-256), not %d", len(p))
	}
	if _, err := hex.DecodeString(p); err != nil {
		return "", errors.New("localapi: a certificate fingerprint is written in hexadecimal digits")
	}
	return p, nil
}

// Fingerprint is the SHA-256 fingerprint of a DER certificate, in the
// colon-separated form terminals and browsers show.
func Fingerprint(der []byte) string {
	sum := sha256.Sum256(der)
	parts := make([]string, len(sum))
	for i, b := range sum {
		parts[i] = fmt.Sprintf("%02X", b)
	}
	return strings.Join(parts, ":")
}

// config is the crypto/tls configuration for t.
func (t TLS) config() (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: t.Roots}
	if t.Pin == "" {
		return cfg, nil
	}
	pin, err := NormalizePin(t.Pin)
	if err != nil {
		return nil, err
	}
	// The pinned certificate is the trust: the usual chain check is
	// replaced by comparing the leaf with the pin, never skipped alone.
	cfg.InsecureSkipVerify = true
	cfg.VerifyConnection = func(cs tls.ConnectionState) error {
		if len(cs.PeerCertificates) == 0 {
			return errors.New("localapi: the terminal presented no certificate")
		}
		got := sha256.Sum256(cs.PeerCertificates[0].Raw)
		if hex.EncodeToString(got[:]) != pin {
			return fmt.Errorf("localapi: the terminal's certificate %s is not the one pinned", Fingerprint(cs.PeerCertificates[0].Raw))
		}
		return nil
	}
	return cfg, nil
}

// WithTLS makes the client check an HTTPS terminal as t says. It keeps the
// guarantees of NewHTTPClient (a fresh connection per request, no
// redirects). An invalid pin makes every call fail with a ValidationError:
// nothing is sent to a terminal that cannot be checked.
func WithTLS(t TLS) Option {
	return func(c *Client) {
		cfg, err := t.config()
		if err != nil {
			c.hc = &http.Client{Transport: refuse{err}}
			return
		}
		hc := NewHTTPClient()
		hc.Transport.(*http.Transport).TLSClientConfig = cfg
		c.hc = hc
	}
}

// refuse is a transport that sends nothing.
type refuse struct{ err error }

func (r refuse) RoundTrip(*http.Request) (*http.Response, error) {
	return nil, &ValidationError{Field: "tls.pin", Reason: r.err.Error()}
}

// Certificate is what a terminal presents on HTTPS, for staff to compare
// with what the terminal itself shows before pinning it.
type Certificate struct {
	Fingerprint string    `json:"fingerprint"` // SHA-256, colon-separated
	Subject     string    `json:"subject"`
	Issuer      string    `json:"issuer"`
	NotAfter    time.Time `json:"notAfter"`
	// Trusted: the system's roots vouch for it already.
	Trusted bool `json:"trusted"`
}

// PeekCertificate connects to an https:// terminal address and returns the
// certificate it presents, without sending any request: only the TLS
// handshake happens, so that staff can read the fingerprint and compare it
// with the terminal's before pinning it.
func PeekCertificate(ctx context.Context, address string) (Certificate, error) {
	u, err := ParseBaseURL(address)
	if err != nil {
		return Certificate{}, err
	}
	if u.Scheme != "https" {
		return Certificate{}, fmt.Errorf("localapi: %s is not an https:// address", redact(u))
	}
	d := tls.Dialer{NetDialer: &net.Dialer{Timeout: 5 * time.Second}, Config: &tls.Config{
		// Reading the certificate is the point: it is checked by a person,
		// and nothing but the handshake goes to this connection.
		InsecureSkipVerify: true, //nolint:gosec
		ServerName:         u.Hostname(),
		MinVersion:         tls.VersionTLS12,
	}}
	conn, err := d.DialContext(ctx, "tcp", u.Host)
	if err != nil {
		return Certificate{}, fmt.Errorf("localapi: TLS to %s: %w", u.Host, err)
	}
	defer conn.Close()
	cs := conn.(*tls.Conn).ConnectionState()
	if len(cs.PeerCertificates) == 0 {
		return Certificate{}, errors.New("localapi: the terminal presented no certificate")
	}
	leaf := cs.PeerCertificates[0]
	c := Certificate{Fingerprint: Fingerprint(leaf.Raw), Subject: leaf.Subject.String(), Issuer: leaf.Issuer.String(), NotAfter: leaf.NotAfter}
	inter := x509.NewCertPool()
	for _, ic := range cs.PeerCertificates[1:] {
		inter.AddCert(ic)
	}
	_, verr := leaf.Verify(x509.VerifyOptions{DNSName: u.Hostname(), Intermediates: inter})
	c.Trusted = verr == nil
	return c, nil
}

func redact(u *url.URL) string { return u.Scheme + "://" + u.Host }
