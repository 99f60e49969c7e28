package terminalsim_test

import (
	"context"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/grandcat/zeroconf"

	"github.com/comptoir-pos/comptoir/backend/internal/testenv"
	"github.com/comptoir-pos/comptoir/backend/terminalsim"
)

// browse looks for instances of _http._tcp on iface until want returns true
// or ctx ends. A grandcat resolver is single-use and blocks unless its
// entries are drained, so the channel is drained until the library closes
// it.
func browse(ctx context.Context, t *testing.T, iface net.Interface, want func(*zeroconf.ServiceEntry) bool) *zeroconf.ServiceEntry {
	t.Helper()
	r, err := zeroconf.NewResolver(zeroconf.SelectIfaces([]net.Interface{iface}), zeroconf.SelectIPTraffic(zeroconf.IPv4))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	entries := make(chan *zeroconf.ServiceEntry)
	found := make(chan *zeroconf.ServiceEntry, 1)
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		for e := range entries {
			if want(e) {
				select {
				case found <- e:
				default:
				}
			}
		}
	}()
	if err := r.Browse(ctx, terminalsim.ServiceType, terminalsim.Domain, entries); err != nil {
		t.Fatal(err)
	}
	var e *zeroconf.ServiceEntry
	select {
	case e = <-found:
	case <-ctx.Done():
	}
	cancel()
	<-drained
	return e
}

func TestAdvertise(t *testing.T) {
	lo := testenv.Loopback(t)
	sim, _ := testenv.Terminal(t, terminalsim.Config{Serial: "SIM-7E57"})
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	stop, err := sim.Advertise(ctx, terminalsim.AdvertiseOptions{Interfaces: []net.Interface{lo}, Loopback: true})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	port := sim.Addr().(*net.TCPAddr).Port

	e := browse(ctx, t, lo, func(e *zeroconf.ServiceEntry) bool { return e.Port == port })
	if e == nil {
		t.Fatal("instance not found by mDNS within 10 s")
	}
	// grandcat returns the instance name with its DNS escapes ("Yavin\ SIM-7E57").
	name := strings.ReplaceAll(e.Instance, `\ `, " ")
	if name != "Yavin SIM-7E57" || !strings.Contains(strings.ToLower(name), "yavin") {
		t.Errorf("instance %q", e.Instance)
	}
	if len(e.AddrIPv4) != 1 || !e.AddrIPv4[0].Equal(net.IPv4(127, 0, 0, 1)) {
		t.Errorf("addresses %v", e.AddrIPv4)
	}
	if !slices.Contains(e.Text, "path=/localapi/v4") || !slices.Contains(e.Text, "sim=1") {
		t.Errorf("TXT %v", e.Text)
	}
	if e.HostName != "sim-7e57.local." {
		t.Errorf("host %q", e.HostName)
	}
}

func TestAdvertiseNeedsPort(t *testing.T) {
	sim, err := terminalsim.New(terminalsim.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Close()
	if _, err := sim.Advertise(t.Context(), terminalsim.AdvertiseOptions{Loopback: true}); err == nil {
		t.Error("advertised without a port")
	}
}

func TestHostIPs(t *testing.T) {
	lo := testenv.Loopback(t)
	if ips := terminalsim.HostIPs([]net.Interface{lo}); !slices.Equal(ips, []string{"127.0.0.1"}) {
		t.Errorf("loopback only: %v", ips)
	}
	for _, ip := range terminalsim.HostIPs(nil) {
		if p := net.ParseIP(ip); p == nil || (p.IsLoopback() && ip != "127.0.0.1") || p.IsLinkLocalUnicast() {
			t.Errorf("host address %q", ip)
		}
	}
}
