package discovery

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/internal/testenv"
	"github.com/comptoir-pos/comptoir/backend/localapi"
	"github.com/comptoir-pos/comptoir/backend/terminalsim"
	"github.com/grandcat/zeroconf"
)

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
		Interfaces:  []net.Interface{testenv.Loopback(t)},
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
	lo := testenv.Loopback(t)
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
	sim, _ := testenv.Terminal(t, terminalsim.Config{InstanceName: instance, Serial: "SIM-" + tag()})
	return sim
}

// newTLSSim starts a simulated terminal serving HTTPS, with cert (nil: a
// certificate of its own).
func newTLSSim(t testing.TB, instance string, cert *tls.Certificate) *terminalsim.Terminal {
	sim, _ := testenv.Terminal(t, terminalsim.Config{InstanceName: instance, Serial: "SIM-" + tag(), TLS: true, Certificate: cert})
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
	return &testenv.SelfSigned(t, "terminal "+tag()).TLS
}

// advertiseSim advertises sim on the loopback interface at 127.0.0.1.
func advertiseSim(t testing.TB, sim *terminalsim.Terminal) {
	t.Helper()
	stop, err := sim.Advertise(t.Context(), terminalsim.AdvertiseOptions{Interfaces: []net.Interface{testenv.Loopback(t)}, Loopback: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
}

// advertise registers a service of our own on the loopback interface.
func advertise(t *testing.T, instance string, port int, txt ...string) {
	t.Helper()
	srv, err := zeroconf.RegisterProxy(instance, DefaultServiceType, DefaultDomain, port, "other-"+strings.ToLower(tag()), []string{"127.0.0.1"}, txt, []net.Interface{testenv.Loopback(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
}

func ctxFor(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), d)
	t.Cleanup(cancel)
	return ctx
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
