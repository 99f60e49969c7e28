package terminalsim

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"

	"github.com/grandcat/zeroconf"
)

// The DNS-SD registration of a terminal's payment app.
const (
	ServiceType = "_http._tcp"
	Domain      = "local."
)

// AdvertiseOptions configures an mDNS advertisement. The zero value
// advertises Config.InstanceName on the listening port with the host's
// addresses, on every multicast interface.
type AdvertiseOptions struct {
	Instance string // default Config.InstanceName ("Yavin SIM-XXXX")
	Port     int    // default the port Start listens on
	// Host is the advertised host name (".local." is appended); default the
	// serial, lower case ("sim-4f2a").
	Host string
	// IPs are the advertised addresses; default the addresses of Interfaces
	// (or of every interface that is up), loopback excluded, or 127.0.0.1
	// when there are none.
	IPs []string
	// Loopback advertises 127.0.0.1 only.
	Loopback bool
	// Interfaces the announcements and answers go out on; nil is every
	// multicast interface. Tests pass the loopback interface: it has no
	// MULTICAST flag, so it is never chosen by default, but multicast on it
	// works and nothing leaves the machine.
	Interfaces []net.Interface
	// Text is the TXT record; default path=/localapi/v4, api=v4, sim=1.
	Text []string
}

// Advertise registers the terminal by mDNS like a real one: service
// _http._tcp in local., an instance name containing "Yavin". It uses
// zeroconf.RegisterProxy because zeroconf.Register never advertises
// loopback addresses. The advertisement ends with stop, ctx or Close.
func (t *Terminal) Advertise(ctx context.Context, opts AdvertiseOptions) (stop func(), err error) {
	if opts.Instance == "" {
		opts.Instance = t.cfg.InstanceName
	}
	if opts.Port == 0 {
		if a, ok := t.Addr().(*net.TCPAddr); ok {
			opts.Port = a.Port
		}
	}
	if opts.Port == 0 {
		return nil, errors.New("terminalsim: advertise: not listening and no port given")
	}
	if opts.Host == "" {
		opts.Host = strings.ToLower(strings.NewReplacer(" ", "-", ".", "-").Replace(t.cfg.Serial))
	}
	switch {
	case opts.Loopback:
		opts.IPs = []string{"127.0.0.1"}
	case len(opts.IPs) == 0:
		opts.IPs = hostIPs(opts.Interfaces)
	}
	if len(opts.Text) == 0 {
		opts.Text = []string{"path=/localapi/v4", "api=v4", "sim=1"}
	}
	srv, err := zeroconf.RegisterProxy(opts.Instance, ServiceType, Domain, opts.Port, opts.Host, opts.IPs, opts.Text, opts.Interfaces)
	if err != nil {
		return nil, err
	}
	var once sync.Once
	shutdown := func() {
		once.Do(func() {
			srv.Shutdown()
			t.log.Info("mDNS advertisement stopped", "instance", opts.Instance)
		})
	}
	unhook := context.AfterFunc(ctx, shutdown)
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		unhook()
		shutdown()
		return nil, ErrClosed
	}
	t.adverts = append(t.adverts, shutdown)
	t.mu.Unlock()
	t.log.Info("mDNS advertisement", "instance", opts.Instance, "service", ServiceType, "port", opts.Port, "ips", opts.IPs)
	return func() { unhook(); shutdown() }, nil
}

// hostIPs lists the addresses of the given interfaces (or of all that are
// up), loopback and link-local excluded; 127.0.0.1 when there are none.
func hostIPs(ifaces []net.Interface) []string {
	if ifaces == nil {
		all, err := net.Interfaces()
		if err == nil {
			ifaces = all
		}
	}
	var ips []string
	for _, ifi := range ifaces {
		if ifi.Flags&net.FlagUp == 0 || ifi.Flags&net.FlagLoopback != 0 {
			continue
		}
		addrs, err := ifi.Addrs()
		if err != nil {
			continue
		}
		for _, a := range addrs {
			ipn, ok := a.(*net.IPNet)
			if !ok || ipn.IP.IsLoopback() || ipn.IP.IsLinkLocalUnicast() {
				continue
			}
			ips = append(ips, ipn.IP.String())
		}
	}
	if len(ips) == 0 {
		ips = []string{"127.0.0.1"}
	}
	return ips
}
