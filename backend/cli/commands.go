package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"time"

	"github.com/comptoir-pos/comptoir/backend/cloudsim"
	"github.com/comptoir-pos/comptoir/backend/localapi"
	"github.com/comptoir-pos/comptoir/backend/terminalsim"
)

// pingResult is what `comptoir ping` prints.
type pingResult struct {
	Terminal  string  `json:"terminal"`
	OK        bool    `json:"ok"`
	ElapsedMs float64 `json:"elapsedMs"`
	Error     string  `json:"error,omitempty"`
	// Kind tells staff where to look: "transport" (network, terminal off),
	// "http" or "decode" (something answers, but not a terminal's Local
	// API), "application" (the terminal refused).
	Kind string `json:"kind,omitempty"`
}

func cmdPing(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var common commonFlags
	fs := newFlagSet("ping", stderr, &common)
	show := fs.Bool("show-message", false, "ask the terminal to show its greeting")
	timeout := fs.Duration("timeout", 5*time.Second, "give up after this long")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	addr, trust, stopSim, err := terminalAddress(ctx, common)
	if err != nil {
		fmt.Fprintln(stderr, "comptoir ping:", err)
		return 2
	}
	defer stopSim()
	client, err := newTerminalClient(addr, trust)
	if err != nil {
		fmt.Fprintln(stderr, "comptoir ping:", err)
		return 2
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	start := time.Now()
	_, err = client.Ping(ctx, *show)
	res := pingResult{Terminal: client.BaseURL(), OK: err == nil, ElapsedMs: float64(time.Since(start).Microseconds()) / 1000}
	if err != nil {
		res.Error, res.Kind = err.Error(), errorKind(err)
	}
	printJSON(stdout, res)
	if err != nil {
		return 1
	}
	return 0
}

func errorKind(err error) string {
	var (
		te *localapi.TransportError
		he *localapi.HTTPError
		de *localapi.DecodeError
		ae *localapi.APIError
	)
	switch {
	case errors.As(err, &te):
		return "transport"
	case errors.As(err, &he):
		return "http"
	case errors.As(err, &de):
		return "decode"
	case errors.As(err, &ae):
		return "application"
	}
	return "other"
}

func userAgent() string { return "Comptoir/" + version }

func cmdSimulator(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("simulator", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, usage) }
	addr := fs.String("addr", "127.0.0.1:16125", "listen address (0.0.0.0:16125 to be reachable from the LAN)")
	scale := fs.Float64("timescale", 1, "multiply every wait of the terminal by this factor (0.01: 100 times faster)")
	mdns := fs.Bool("mdns", false, "advertise the terminal by mDNS, like a real one")
	currency := fs.String("currency", "EUR", "the merchant profile's currency: EUR, CHF or GBP")
	tips := fs.Bool("tip-screen", false, "the terminal's own tip setting (applies when enableGiftScreen is null)")
	verbose := fs.Bool("v", false, "log every step of every payment")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *scale <= 0 {
		fmt.Fprintln(stderr, "comptoir simulator: --timescale must be greater than 0")
		return 2
	}
	sim, err := terminalsim.New(terminalsim.Config{
		CurrencyCode: *currency, TimeScale: *scale, TipsEnabled: *tips, Logger: simLogger(stderr, *verbose),
	})
	if err != nil {
		fmt.Fprintln(stderr, "comptoir simulator:", err)
		return 2
	}
	if err := sim.Start(*addr); err != nil {
		return failed(stderr, "simulator", err)
	}
	defer sim.Close()
	if *mdns {
		stop, err := sim.Advertise(ctx, advertiseOptions(sim))
		if err != nil {
			fmt.Fprintln(stderr, "comptoir simulator: mDNS:", err)
			return 1
		}
		defer stop()
	}
	fmt.Fprintf(stdout, "Simulated terminal at %s (control API: %s)\nTest amounts: see `curl %s`. Ctrl-C stops it.\n",
		sim.URL(), strings.TrimSuffix(sim.URL(), localapi.BasePath)+"/sim/", strings.TrimSuffix(sim.URL(), localapi.BasePath)+"/sim/")
	<-ctx.Done()
	return 0
}

// simLogger is a simulator's text log on stderr, every step with -v.
func simLogger(stderr io.Writer, verbose bool) *slog.Logger {
	level := slog.LevelInfo
	if verbose {
		level = slog.LevelDebug
	}
	return slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
}

// cmdCloudSim runs the simulated provider cloud alone, with its virtual
// terminals, until Ctrl-C.
func cmdCloudSim(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("cloudsim", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, usage) }
	addr := fs.String("addr", "127.0.0.1:16126", "listen address")
	key := fs.String("key", "sim-key", "the company's API key the simulated cloud accepts")
	serials := fs.String("serial", "SIM-CLOUD-1", "the virtual terminals' serial numbers, comma-separated")
	scale := fs.Float64("timescale", 1, "multiply every wait (terminals, the 5 s expiry, webhook retries) by this factor")
	webhook := fs.String("webhook", "", "the company's webhook URL (each finished transaction is posted there)")
	lan := fs.Bool("lan", false, "each virtual terminal also serves its own Local API on loopback (the LAN), which the control API can cut")
	verbose := fs.Bool("v", false, "log every step")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *scale <= 0 {
		fmt.Fprintln(stderr, "comptoir cloudsim: --timescale must be greater than 0")
		return 2
	}
	var sns []string
	for _, s := range strings.Split(*serials, ",") {
		if s = strings.TrimSpace(s); s != "" {
			sns = append(sns, s)
		}
	}
	if len(sns) == 0 {
		fmt.Fprintln(stderr, "comptoir cloudsim: --serial names no terminal")
		return 2
	}
	cloud, err := cloudsim.New(cloudsim.Config{
		Key: *key, Serials: sns, TimeScale: *scale, WebhookURL: *webhook, Logger: simLogger(stderr, *verbose), LAN: *lan,
	})
	if err == nil {
		err = cloud.Start(*addr)
	}
	if err != nil {
		return failed(stderr, "cloudsim", err)
	}
	defer cloud.Close()
	fmt.Fprintf(stdout, "Simulated cloud at %s (control API: %s/sim/), terminals %s.\n"+
		"Pay through it: COMPTOIR_CLOUD_KEY=%s comptoir pay --cloud %s --serial %s --amount 1250\nCtrl-C stops it.\n",
		cloud.URL(), cloud.URL(), strings.Join(sns, ", "), *key, cloud.URL(), sns[0])
	if *lan {
		for _, sn := range sns {
			fmt.Fprintf(stdout, "Terminal %s on the LAN: %s (the LAN first, the cloud behind it: comptoir pay --terminal %s --cloud %s --serial %s)\n",
				sn, cloud.LANURL(sn), cloud.LANURL(sn), cloud.URL(), sn)
		}
	}
	<-ctx.Done()
	return 0
}

// advertiseOptions advertises a simulator listening on loopback on the
// loopback interface only, with 127.0.0.1: what is only reachable from this
// machine is only announced to it.
func advertiseOptions(sim *terminalsim.Terminal) terminalsim.AdvertiseOptions {
	addr, ok := sim.Addr().(*net.TCPAddr)
	if !ok || !addr.IP.IsLoopback() {
		return terminalsim.AdvertiseOptions{}
	}
	ifaces, _ := net.Interfaces()
	for _, ifi := range ifaces {
		if ifi.Flags&net.FlagLoopback != 0 {
			return terminalsim.AdvertiseOptions{Loopback: true, Interfaces: []net.Interface{ifi}}
		}
	}
	return terminalsim.AdvertiseOptions{Loopback: true}
}

// terminalAddress returns the terminal to talk to and how to check it:
// the built-in simulator with --demo (started here, stopped by the returned
// func; it speaks HTTP), else the address given (--terminal) or stored (the
// manual address staff saved, or where the adopted terminal was last seen),
// checked by the stored trust. The journal is only peeked at: the kiosk may
// hold it.
func terminalAddress(ctx context.Context, c commonFlags) (string, terminalTrust, func(), error) {
	if c.demo {
		sim, err := terminalsim.New(terminalsim.Config{})
		if err != nil {
			return "", terminalTrust{}, nil, err
		}
		if err := sim.Start("127.0.0.1:0"); err != nil {
			return "", terminalTrust{}, nil, err
		}
		return sim.URL(), terminalTrust{}, func() { sim.Close() }, nil
	}
	var r settingsReader
	if dir, err := c.resolveDataDir(); err == nil {
		r = peekSettings{dir}
	}
	addr, trust, err := storedTrust(ctx, c, r)
	return addr, trust, func() {}, err
}

// storedTrust is the terminal's address (--terminal, else the stored one)
// and the trust that checks it, read from r (nil: flags only).
func storedTrust(ctx context.Context, c commonFlags, r settingsReader) (string, terminalTrust, error) {
	trust, err := loadTrust(ctx, c, r)
	if err != nil {
		return "", terminalTrust{}, err
	}
	addr := c.terminal
	if addr == "" && r != nil {
		if addr, err = storedTerminal(ctx, r); err != nil {
			return "", terminalTrust{}, err
		}
	}
	if addr == "" {
		return "", terminalTrust{}, ErrNoTerminal
	}
	return addr, trust, nil
}
