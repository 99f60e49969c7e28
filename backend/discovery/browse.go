package discovery

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/comptoir-pos/comptoir/backend/localapi"
	"github.com/grandcat/zeroconf"
)

// Defaults of Options.
const (
	DefaultServiceType = "_http._tcp"
	DefaultDomain      = "local."
	DefaultNameFilter  = "yavin"
	DefaultPort        = localapi.DefaultPort // 16125
	DefaultWindow      = 3 * time.Second
	DefaultPingTimeout = 3 * time.Second
)

// ErrNotFound is returned by Resolve when the instance did not answer, or
// did not answer a ping, within the window.
var ErrNotFound = errors.New("discovery: terminal not found")

// ErrSameName is returned by Resolve when several devices answer under
// the name.
var ErrSameName = errors.New("discovery: several devices answer under the terminal's name")

// ErrNoInterface is returned when there is no interface to browse on.
var ErrNoInterface = errors.New("discovery: no multicast IPv4 interface to browse on")

// Pinger checks that baseURL is a terminal's Local API. For an https://
// address pin is the fingerprint of the certificate the device presented
// when it was peeked at: the ping trusts that certificate alone, so what
// answers is what was peeked at. The default sends GET /ping with a
// *localapi.Client.
type Pinger func(ctx context.Context, baseURL, pin string) error

// Peeker reads the certificate a device presents on hostport, by a TLS
// handshake alone, and returns its fingerprint (normalised hex). The
// default is localapi.PeekCertificate.
type Peeker func(ctx context.Context, hostport, path string) (fingerprint string, err error)

// Options configure a browse window. The zero value browses _http._tcp in
// local. for 3 s on every multicast IPv4 interface and keeps the instances
// named "...yavin..." or on port 16125.
type Options struct {
	ServiceType string // default "_http._tcp"
	Domain      string // default "local."
	// NameFilter keeps instances whose unescaped name contains it, ignoring
	// case. Default "yavin".
	NameFilter string
	// Port keeps instances on this port whatever their name. Default 16125;
	// negative: no port rule (the name filter alone decides).
	Port int
	// Interfaces to browse on; nil is every interface that is up,
	// multicast-capable, not loopback and has an IPv4 address. Tests pass
	// the loopback interface, which has no MULTICAST flag but works.
	Interfaces []net.Interface
	// Window is how long one browse listens. Default 3 s.
	Window time.Duration
	// PingTimeout bounds the ping that confirms each candidate. Default 3 s.
	PingTimeout time.Duration
	// Pinger confirms a candidate; nil pings it with the Local API client.
	Pinger Pinger
	// Peek reads a candidate's certificate; nil is a TLS handshake.
	Peek Peeker
	// HTTPS: the terminal is bound to HTTPS: a candidate is only tried
	// over HTTPS, never over plain HTTP. Without it a candidate is pinged
	// over HTTP first, then over HTTPS: a terminal that offers HTTPS on its
	// port does not answer plain HTTP there.
	HTTPS bool
	// ClientOptions go to the Local API client of the default Pinger
	// (the user agent); the certificate check is the Pinger's.
	ClientOptions []localapi.Option
	// AcceptSimulated keeps simulated terminals (TXT "sim=1", as
	// `comptoir simulator --mdns` advertises). Off by default: a demo
	// simulator on the shop's network must never be taken for the real
	// terminal by another kiosk.
	AcceptSimulated bool

	// stopWhen ends the window early once a confirmed candidate satisfies
	// it (the Tracker: a device its identity accepts).
	stopWhen func(Terminal) bool
}

func (o Options) withDefaults() Options {
	if o.ServiceType == "" {
		o.ServiceType = DefaultServiceType
	}
	if o.Domain == "" {
		o.Domain = DefaultDomain
	}
	if o.NameFilter == "" {
		o.NameFilter = DefaultNameFilter
	}
	if o.Port == 0 {
		o.Port = DefaultPort
	}
	if o.Window <= 0 {
		o.Window = DefaultWindow
	}
	if o.PingTimeout <= 0 {
		o.PingTimeout = DefaultPingTimeout
	}
	if o.Pinger == nil {
		o.Pinger = pingWith(o.ClientOptions)
	}
	if o.Peek == nil {
		o.Peek = peekTLS
	}
	return o
}

// matches is the candidate rule: the name filter or the terminal port.
func (o Options) matches(instance string, port int) bool {
	return strings.Contains(strings.ToLower(instance), strings.ToLower(o.NameFilter)) ||
		(o.Port > 0 && port == o.Port)
}

// pingWith pings with the Local API client, made with opts and, on
// HTTPS, trusting the peeked certificate alone.
func pingWith(opts []localapi.Option) Pinger {
	return func(ctx context.Context, baseURL, pin string) error {
		// Pings run side by side: each makes its own list of options.
		own := opts
		if strings.HasPrefix(baseURL, "https://") {
			if pin == "" {
				return errors.New("discovery: no certificate to check this https:// address against")
			}
			own = append(slices.Clip(opts), localapi.WithTLS(localapi.TLS{Pin: pin}))
		}
		c, err := localapi.NewClient(baseURL, own...)
		if err != nil {
			return err
		}
		_, err = c.Ping(ctx, false)
		return err
	}
}

// peekTLS reads the certificate presented on hostport.
func peekTLS(ctx context.Context, hostport, path string) (string, error) {
	c, err := localapi.PeekCertificate(ctx, "https://"+hostport+path)
	if err != nil {
		return "", err
	}
	return localapi.NormalizePin(c.Fingerprint)
}

// simulated reports the TXT record of a simulated terminal.
func simulated(txt []string) bool { return slices.Contains(txt, SimulatedTXT) }

// SimulatedTXT marks a simulated terminal's advertisement.
const SimulatedTXT = "sim=1"

// Terminal is an instance found by mDNS.
type Terminal struct {
	Instance string   // unescaped: "Yavin SIM-7E57"
	Host     string   // "sim-7e57.local"
	Addrs    []string // IPv4 addresses, as advertised
	Port     int
	TXT      []string
	// BaseURL is the Local API on the address that answered the ping (the
	// first address when none did): http(s)://ip:port plus the TXT path=,
	// or /localapi/v4.
	BaseURL string
	// Fingerprint is the SHA-256 fingerprint (normalised hex) of the
	// certificate the device presented at BaseURL; "" on plain HTTP.
	Fingerprint string
	// Confirmed is true when the ping succeeded: only confirmed terminals
	// are candidates.
	Confirmed bool
	Ping      PingResult
	// FoundAfter is the time from the start of the browse to the answer.
	FoundAfter time.Duration
	// Standing is what the device is to the adopted terminal's identity,
	// when a caller judged it (Identity.Judge); "" otherwise.
	Standing Standing
}

// PingResult is the outcome of the confirming ping.
type PingResult struct {
	OK      bool
	Error   string
	Elapsed time.Duration
}

// MarshalJSON writes durations in milliseconds, for `comptoir discover`.
func (p PingResult) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		OK        bool    `json:"ok"`
		Error     string  `json:"error,omitempty"`
		ElapsedMS float64 `json:"elapsedMs"`
	}{p.OK, p.Error, ms(p.Elapsed)})
}

// MarshalJSON writes the terminal as `comptoir discover` prints it.
func (t Terminal) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Instance     string     `json:"instance"`
		Host         string     `json:"host"`
		Addrs        []string   `json:"addresses"`
		Port         int        `json:"port"`
		TXT          []string   `json:"txt"`
		BaseURL      string     `json:"baseUrl"`
		Certificate  string     `json:"certificate,omitempty"`
		Confirmed    bool       `json:"confirmed"`
		Ping         PingResult `json:"ping"`
		FoundAfterMS float64    `json:"foundAfterMs"`
		Standing     Standing   `json:"standing,omitempty"`
	}{t.Instance, t.Host, nonNil(t.Addrs), t.Port, nonNil(t.TXT), t.BaseURL, FingerprintText(t.Fingerprint), t.Confirmed, t.Ping, ms(t.FoundAfter), t.Standing})
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// Confirmed returns the terminals that answered the ping.
func Confirmed(ts []Terminal) []Terminal {
	var out []Terminal
	for _, t := range ts {
		if t.Confirmed {
			out = append(out, t)
		}
	}
	return out
}

// Browse listens for one window and returns every matching instance, each
// pinged: confirmed ones first, then by name. It returns when the window has
// ended and the pings have answered or timed out, or when ctx ends (with
// what was found so far). The result is never nil, so it prints as [].
func Browse(ctx context.Context, opts Options) ([]Terminal, error) {
	return browse(ctx, opts, "")
}

// Resolve finds an instance again by its name (unescaped, compared without
// case) and returns it once a ping confirms it, without waiting for the end
// of the window. ErrNotFound: not heard, or heard but not answering, within
// the window. Two devices answering under the name are an error: which one
// is the terminal is not for a name to say.
func Resolve(ctx context.Context, instance string, opts Options) (Terminal, error) {
	ts, err := browse(ctx, opts, instance)
	var named []Terminal
	for _, t := range ts {
		if t.Confirmed && strings.EqualFold(t.Instance, instance) {
			named = append(named, t)
		}
	}
	switch {
	case len(named) == 1:
		return named[0], nil
	case len(named) > 1:
		addrs := make([]string, len(named))
		for i, t := range named {
			addrs[i] = t.BaseURL
		}
		return Terminal{}, fmt.Errorf("%w: %q (%s)", ErrSameName, instance, strings.Join(addrs, ", "))
	}
	if err != nil {
		return Terminal{}, err
	}
	for _, t := range ts {
		if strings.EqualFold(t.Instance, instance) {
			return Terminal{}, fmt.Errorf("%w: %q at %s: %s", ErrNotFound, instance, t.BaseURL, t.Ping.Error)
		}
	}
	return Terminal{}, fmt.Errorf("%w: %q", ErrNotFound, instance)
}

// browse runs one window. With want set, it ends as soon as that instance is
// confirmed (and accepted by opts.stopWhen, when set); other instances are
// still reported (a Tracker lists them when its own terminal is gone).
// Devices are told apart by name and address: two devices announcing the
// same name (in whatever case) are both reported.
func browse(ctx context.Context, opts Options, want string) ([]Terminal, error) {
	opts = opts.withDefaults()
	ifaces := opts.Interfaces
	if ifaces == nil {
		ifaces = DefaultInterfaces()
	}
	if len(ifaces) == 0 {
		return []Terminal{}, ErrNoInterface
	}
	start := time.Now()
	resolver, err := zeroconf.NewResolver(zeroconf.SelectIfaces(ifaces), zeroconf.SelectIPTraffic(zeroconf.IPv4))
	if err != nil {
		return []Terminal{}, fmt.Errorf("discovery: mDNS resolver: %w", err)
	}
	window, endWindow := context.WithTimeout(ctx, opts.Window)
	defer endWindow()

	entries := make(chan *zeroconf.ServiceEntry, 8)
	if err := resolver.Browse(window, opts.ServiceType, opts.Domain, entries); err != nil {
		// The library's loop started before the query failed; it closes
		// entries once the window is cancelled.
		endWindow()
		for range entries {
		}
		return []Terminal{}, fmt.Errorf("discovery: mDNS browse: %w", err)
	}

	var (
		mu    sync.Mutex
		found []*Terminal
		pings sync.WaitGroup
	)
	seen := map[string]bool{}
	// The channel is drained until the library closes it (at the end of the
	// window): leaving it would block the library's goroutine for good.
	for e := range entries {
		name := unescape(e.Instance)
		key := fmt.Sprintf("%s|%d|%v", strings.ToLower(name), e.Port, e.AddrIPv4)
		if !opts.matches(name, e.Port) || seen[key] || (simulated(e.Text) && !opts.AcceptSimulated) {
			continue
		}
		seen[key] = true
		t := &Terminal{
			Instance:   name,
			Host:       strings.TrimSuffix(e.HostName, "."),
			Port:       e.Port,
			TXT:        slices.Clone(e.Text),
			FoundAfter: time.Since(start),
		}
		for _, ip := range e.AddrIPv4 {
			t.Addrs = append(t.Addrs, ip.String())
		}
		mu.Lock()
		found = append(found, t)
		mu.Unlock()
		pings.Add(1)
		go func() {
			defer pings.Done()
			confirm(ctx, opts, t)
			if want != "" && t.Confirmed && strings.EqualFold(t.Instance, want) && (opts.stopWhen == nil || opts.stopWhen(*t)) {
				endWindow()
			}
		}()
	}
	pings.Wait()

	return sorted(found), ctx.Err()
}

// sorted lists the terminals found: confirmed ones first, then by name.
func sorted(found []*Terminal) []Terminal {
	out := make([]Terminal, 0, len(found))
	for _, t := range found {
		out = append(out, *t)
	}
	slices.SortStableFunc(out, func(a, b Terminal) int {
		if a.Confirmed != b.Confirmed {
			if a.Confirmed {
				return -1
			}
			return 1
		}
		return strings.Compare(strings.ToLower(a.Instance), strings.ToLower(b.Instance))
	})
	return out
}

// confirm pings each address of t in turn and keeps the first that answers,
// over plain HTTP or over HTTPS with the certificate it presents (which is
// recorded: judging it is the Tracker's business).
func confirm(ctx context.Context, opts Options, t *Terminal) {
	path := localapi.BasePath
	for _, kv := range t.TXT {
		if v, ok := strings.CutPrefix(kv, "path="); ok && v != "" {
			path = "/" + strings.TrimLeft(v, "/")
		}
	}
	if len(t.Addrs) == 0 {
		t.Ping.Error = "no IPv4 address advertised"
		return
	}
	start := time.Now()
	var errs []string
	for _, ip := range t.Addrs {
		hostport := net.JoinHostPort(ip, strconv.Itoa(t.Port))
		if t.BaseURL == "" {
			scheme := "http"
			if opts.HTTPS {
				scheme = "https"
			}
			t.BaseURL = (&url.URL{Scheme: scheme, Host: hostport, Path: path}).String()
		}
		base, fp, err := confirmAt(ctx, opts, hostport, path)
		if err == nil {
			t.BaseURL, t.Fingerprint, t.Confirmed = base, fp, true
			t.Ping = PingResult{OK: true, Elapsed: time.Since(start)}
			return
		}
		errs = append(errs, err.Error())
	}
	t.Ping = PingResult{Error: strings.Join(errs, "; "), Elapsed: time.Since(start)}
}

// confirmAt pings one address: over plain HTTP first unless HTTPS is
// required, then over HTTPS when something listens there.
func confirmAt(ctx context.Context, opts Options, hostport, path string) (baseURL, fingerprint string, err error) {
	if !opts.HTTPS {
		u := (&url.URL{Scheme: "http", Host: hostport, Path: path}).String()
		pctx, cancel := context.WithTimeout(ctx, opts.PingTimeout)
		err = opts.Pinger(pctx, u, "")
		cancel()
		var te *localapi.TransportError
		if err == nil || (errors.As(err, &te) && !te.Sent) || ctx.Err() != nil {
			return u, "", err // answered, or nothing listens there
		}
	}
	pctx, cancel := context.WithTimeout(ctx, opts.PingTimeout)
	defer cancel()
	fp, perr := opts.Peek(pctx, hostport, path)
	if perr != nil {
		if err != nil {
			return "", "", fmt.Errorf("%v; no HTTPS either: %v", err, perr)
		}
		return "", "", fmt.Errorf("no HTTPS: %w", perr)
	}
	u := (&url.URL{Scheme: "https", Host: hostport, Path: path}).String()
	if err := opts.Pinger(pctx, u, fp); err != nil {
		return "", "", err
	}
	return u, fp, nil
}

// unescape undoes the DNS presentation escapes of an instance name: "\ "
// and "\." stand for the character, "\DDD" for a byte in decimal.
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			b = append(b, c)
			continue
		}
		if i+3 < len(s) && isDigit(s[i+1]) && isDigit(s[i+2]) && isDigit(s[i+3]) {
			if n := int(s[i+1]-'0')*100 + int(s[i+2]-'0')*10 + int(s[i+3]-'0'); n < 256 {
				b = append(b, byte(n))
				i += 3
				continue
			}
		}
		b = append(b, s[i+1])
		i++
	}
	return string(b)
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// DefaultInterfaces lists the interfaces Browse uses by default: up,
// multicast-capable, not loopback, with an IPv4 address.
func DefaultInterfaces() []net.Interface {
	all, err := net.Interfaces()
	if err != nil {
		return nil
	}
	var out []net.Interface
	for _, ifi := range all {
		if ifi.Flags&net.FlagUp == 0 || ifi.Flags&net.FlagMulticast == 0 || ifi.Flags&net.FlagLoopback != 0 {
			continue
		}
		if hasIPv4(ifi) {
			out = append(out, ifi)
		}
	}
	return out
}

func hasIPv4(ifi net.Interface) bool {
	addrs, err := ifi.Addrs()
	if err != nil {
		return false
	}
	for _, a := range addrs {
		if ipn, ok := a.(*net.IPNet); ok && ipn.IP.To4() != nil {
			return true
		}
	}
	return false
}

// InterfacesByName returns the named interfaces (for `--iface lo,eth0`);
// an unknown or down interface is an error. No names: nil, the default.
func InterfacesByName(names []string) ([]net.Interface, error) {
	var out []net.Interface
	for _, n := range names {
		n = strings.TrimSpace(n)
		if n == "" {
			continue
		}
		ifi, err := net.InterfaceByName(n)
		if err != nil {
			return nil, fmt.Errorf("discovery: interface %q: %w", n, err)
		}
		if ifi.Flags&net.FlagUp == 0 {
			return nil, fmt.Errorf("discovery: interface %q is down", n)
		}
		out = append(out, *ifi)
	}
	return out, nil
}
