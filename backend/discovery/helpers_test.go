package discovery

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"fmt"
	"math/big"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/localapi"
	"github.com/comptoir-pos/comptoir/backend/terminalsim"
	"github.com/grandcat/zeroconf"
)

// loopback returns the loopback interface ("lo" on Linux, "lo0" on macOS).
// It has no MULTICAST flag, so it is never browsed by default, but
// multicast on it works and nothing leaves the machine.
func loopback(t testing.TB) net.Interface {
	t.Helper()
	ifaces, err := net.Interfaces()
	if err != nil {
		t.Skip(err)
	}
	for _, ifi := range ifaces {
		if ifi.Flags&net.FlagLoopback != 0 && ifi.Flags&net.FlagUp != 0 {
			return ifi
		}
	}
	t.Skip("no loopback interface: mDNS tests need one")
	panic("unreachable")
}

// tag makes names unique to a test, so that advertisements of other tests
// (zeroconf's announcer outlives Shutdown by a few seconds) never match.
func tag() string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return strings.ToUpper(hex.EncodeToString(b[:]))
}

// loOptions browses the loopback interface only, for instances whose name
// contains filter; the port rule is off so other tests' services never
// match.
func loOptions(t *testing.T, filter string) Options {
	return Options{
		Interfaces:  []net.Interface{loopback(t)},
		NameFilter:  filter,
		Port:        -1,
		Window:      1500 * time.Millisecond,
		PingTimeout: time.Second,
		// The tests' terminals are simulators.
		AcceptSimulated: true,
	}
}

var (
	multicastOnce sync.Once
	multicastErr  error
)

// needMulticast skips the test when multicast on the loopback interface does
// not work here (some containers): an advertisement must be resolvable.
func needMulticast(t *testing.T) {
	t.Helper()
	lo := loopback(t)
	multicastOnce.Do(func() {
		name := "Yavin Probe " + tag()
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			multicastErr = err
			return
		}
		defer ln.Close()
		port := ln.Addr().(*net.TCPAddr).Port
		srv, err := zeroconf.RegisterProxy(name, DefaultServiceType, DefaultDomain, port, "probe", []string{"127.0.0.1"}, nil, []net.Interface{lo})
		if err != nil {
			multicastErr = err
			return
		}
		defer srv.Shutdown()
		opts := Options{Interfaces: []net.Interface{lo}, NameFilter: name, Port: -1, Window: 3 * time.Second,
			Pinger: func(context.Context, string, string) error { return nil }, AcceptSimulated: true}
		_, multicastErr = Resolve(context.Background(), name, opts)
	})
	if multicastErr != nil {
		t.Skipf("mDNS on the loopback interface does not work in this environment: %v", multicastErr)
	}
}

// newSim starts a simulated terminal on 127.0.0.1 at test speed.
func newSim(t testing.TB, instance string) *terminalsim.Terminal {
	t.Helper()
	return startSim(t, terminalsim.Config{TimeScale: 0.001, InstanceName: instance, Serial: "SIM-" + tag()})
}

// newTLSSim starts a simulated terminal serving HTTPS, with cert (nil: a
// certificate of its own).
func newTLSSim(t testing.TB, instance string, cert *tls.Certificate) *terminalsim.Terminal {
	t.Helper()
	return startSim(t, terminalsim.Config{TimeScale: 0.001, InstanceName: instance, Serial: "SIM-" + tag(), TLS: true, Certificate: cert})
}

// startSim starts a simulated terminal of cfg on 127.0.0.1, closed when
// the test ends.
func startSim(t testing.TB, cfg terminalsim.Config) *terminalsim.Terminal {
	t.Helper()
	sim, err := terminalsim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := sim.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sim.Close() })
	return sim
}

// certOf is the certificate sim serves HTTPS with.
func certOf(t testing.TB, sim *terminalsim.Terminal) *tls.Certificate {
	t.Helper()
	c, ok := sim.TLSCertificate()
	if !ok {
		t.Fatal("the simulator serves no HTTPS")
	}
	return &c
}

// pinOf is the normalised fingerprint of sim's certificate.
func pinOf(t testing.TB, sim *terminalsim.Terminal) string {
	t.Helper()
	p, err := localapi.NormalizePin(sim.CertificateFingerprint())
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// selfSignedCert is a certificate a terminal could serve HTTPS with.
func selfSignedCert(t testing.TB) *tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: "terminal " + tag()},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return &tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// advertiseSim advertises sim on the loopback interface at 127.0.0.1.
func advertiseSim(t testing.TB, sim *terminalsim.Terminal) {
	t.Helper()
	stop, err := sim.Advertise(t.Context(), terminalsim.AdvertiseOptions{Interfaces: []net.Interface{loopback(t)}, Loopback: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
}

// advertise registers a service of our own on the loopback interface.
func advertise(t *testing.T, instance string, port int, txt ...string) {
	t.Helper()
	srv, err := zeroconf.RegisterProxy(instance, DefaultServiceType, DefaultDomain, port, "other-"+strings.ToLower(tag()), []string{"127.0.0.1"}, txt, []net.Interface{loopback(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
}

// deadPort returns a port on 127.0.0.1 where nothing listens.
func deadPort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	return port
}

func ctxFor(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), d)
	t.Cleanup(cancel)
	return ctx
}

// eventually polls cond until it holds or the deadline passes.
func eventually(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after %v: %s", d, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// recorder is an Emitter that keeps every status.
type recorder struct {
	mu     sync.Mutex
	events []Status
}

func (r *recorder) Emit(event string, data any) {
	if event != EventStatus {
		panic("unexpected event " + event)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, data.(Status))
}

func (r *recorder) all() []Status {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Status(nil), r.events...)
}

// states lists the states in order, consecutive repeats folded.
func (r *recorder) states() []string {
	var out []string
	for _, s := range r.all() {
		v := string(s.State)
		if s.State == StateConnected {
			v += " " + s.Address
		}
		if len(out) == 0 || out[len(out)-1] != v {
			out = append(out, v)
		}
	}
	return out
}

func body(uuid string) []byte {
	return fmt.Appendf(nil, `{"amount":1250,"idempotentUuid":%q,"enableGiftScreen":false}`, uuid)
}
