// Package cli is Comptoir's command line and composition root: it parses
// the arguments, and for each process (the desktop window, browser mode,
// each subcommand) puts together the journal, the terminal, the payment
// core, the kiosk and staff mode. The program's main package only hands it
// the arguments and, for the desktop window, the Wails binding (app.go),
// the one place that imports the Wails runtime.
package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"
)

const usage = `Usage:
  comptoir [--demo] [--terminal URL] [--data-dir DIR] [--windowed]
                                 the desktop kiosk (full screen and frameless in
                                 kiosk mode; --windowed: an ordinary window)
  comptoir serve [--addr A] [--allow-lan [--host NAMES] [--unpair-all]]
                                 the same UI served to a browser (browser mode),
                                 on loopback (127.0.0.1:8080); --allow-lan opens
                                 it to browsers on other machines, each paired
                                 once with a one-time code it shows on stderr
  comptoir simulator [--addr A] [--timescale F] [--mdns] [--currency C] [--tip-screen]
                                 the simulated terminal alone
  comptoir cloudsim [--addr A] [--key K] [--serial SN,...] [--timescale F] [--webhook URL] [--lan]
                                 the simulated provider cloud alone, with its
                                 virtual terminals (the Cloud API); --lan: each
                                 also on its own Local API on loopback
  comptoir ping [--terminal URL] [--show-message]
                                 is the terminal reachable (without --terminal:
                                 the one adopted or saved), checked by the
                                 stored trust
  comptoir pay --amount CENTS [--order ID] [--mode kiosk|counter] [--gift CENTS]
               [--accepted lunch_vouchers_only|bank_cards_only] [--client-timeout D]
                                 one payment through the journal; Ctrl-C cancels
                                 (abort, then the true outcome); exit 0 approved,
                                 1 not approved, 3 outcome unknown
  comptoir link --amount CENTS [--order ID] [--mode kiosk|counter]
               [--email ADDR | --sms PHONE --first NAME --last NAME] [--authorise]
               [--meal-vouchers=false]
                                 a payment link the customer pays on a phone:
                                 prints its URL, waits for the outcome; Ctrl-C
                                 cancels it (then the true outcome); exit codes
                                 as pay; needs the cloud (--cloud or cloud.url,
                                 and the key) or --demo; run again for an order
                                 whose link is open, it follows that link
  comptoir refund --order ID --amount CENTS
                                 give part or all of a paid order back on the
                                 terminal (card present); Ctrl-C cancels
  comptoir refund --by-api (--order ID | --attempt UUID) --amount CENTS
                                 the same without the card, through the
                                 provider's Webservices (ws.user_email asks
                                 it); pending or waiting for a manager, it
                                 is followed until it ends
  comptoir reverse --order ID | --attempt UUID
                                 reverse an approved payment, tip included, on
                                 the terminal that took it
  comptoir discover [--timeout D] [--iface NAMES] [--simulators] [--choose NAME]
                                 terminals found by mDNS, each pinged and judged
                                 against the adopted one; --choose adopts one
                                 (its address, and its certificate if HTTPS)
  comptoir recover [--wait D]    settle every unfinished attempt of every channel
                                 (the terminal's, links, refunds by API); follow
                                 links and refunds by API up to D (default 30s);
                                 one JSON row per attempt (channel, kind, state
                                 before and after, why still open); exit 3 when
                                 some stay open
  comptoir attempts [--open] [--limit N]
                                 the journal, newest first
  comptoir reconcile [--date YYYY-MM-DD] [--ws URL] [--serials S1,S2] [--tz ZONE] [--no-terminal]
                                 a day (default yesterday) of the journal beside
                                 the terminal's history and the provider's
                                 Webservices, as JSON; exit 3 when something
                                 needs staff
  comptoir receipt --order ID [--preview | --print [--terminal URL]]
                                 a paid order's receipt, rebuilt from the journal
  comptoir fiscal key            the fiscal records' public key and its fingerprint
                                 (made the first time): export it at installation
  comptoir verify [--key PUB] [--expect T42-9f3a1c7b22d0]... [ARCHIVE]
                                 check the fiscal records (the journal's, or an
                                 archive's): every signature and chain link, with
                                 the key given (a file, or the base64 printed on a
                                 Z) and the fingerprints read from paper;
                                 exit 1 names the first broken record
  comptoir verify --hub URL --restaurant R --kiosk K --period YYYY-MM --key PUB
                                 check a kiosk's monthly archive kept at head
                                 office (its page's address) with the key the
                                 restaurant exported at installation
  comptoir close [--day YYYY-MM-DD]
                                 record the tickets, then the closings due (Z of
                                 each day over, months, fiscal years; each month
                                 closed is archived), as JSON
  comptoir archive --period YYYY-MM [--out DIR]
                                 a month's fiscal records in one signed file
  comptoir site [--listen A] [--addr A] [--allow-lan]
                                 the restaurant's site: the stream its kiosks join
                                 (--site), the link to head office (site.hub_url),
                                 the kitchen screens (/kitchen) and board (/board)
  comptoir hub --tls-cert F --tls-key F [--leaf-addr A] [--addr A]
                                 head office: restaurants join it (their ids and
                                 passwords in hub-restaurants.json in the data
                                 folder); its page and API on this PC
  comptoir settings [list | get KEY | set KEY JSON]
                                 the settings kept in the journal
  echo "$KEY" | comptoir settings set-secret cloud.key
                                 a secret setting, read from standard input (never
                                 from the command line); a new cloud.url or ws.url
                                 clears the saved key
  echo NEWPIN | comptoir pin     set the staff PIN from this machine (before opening
                                 the kiosk to the public, when it is forgotten or
                                 cannot be checked); lifts every lockout
  comptoir pin --clear-lockout   lift every PIN pad lockout, the PIN unchanged
  comptoir pin --recovery-code   print a new one-time code that lifts every lockout
                                 from the locked PIN pad itself
  comptoir audit [--limit N] [--action A]
                                 staff actions that concern no payment, newest first
  comptoir purge [--keep-days N]  remove card details (card tokens, card tickets)
                                 older than the retention period (setting
                                 privacy.card_retention_days, default 395);
                                 money and fiscal records are untouched
  comptoir version               the version of this build

Shared flags:
  --data-dir DIR   where Comptoir keeps its data (env COMPTOIR_DATA_DIR;
                   default: the OS config dir + comptoir; with --demo or
                   --demo-cloud, + comptoir-demo, never the real one)
  --terminal URL   the terminal's address: a base URL ending in /localapi/v4,
                   or host[:port] (env COMPTOIR_TERMINAL); without it the
                   terminal is found by mDNS and remembered by name;
                   https://... once the terminal has its certificate
  --terminal-pin FP  trust only the terminal certificate with this SHA-256
                   fingerprint (env COMPTOIR_TERMINAL_PIN; staff mode can
                   pin it too); without it, HTTPS uses the system's roots
  --discover-wait D  how long to look for it (default 10s)
  --site URL       join the restaurant's site (env COMPTOIR_SITE; or the
                   setting site.url): tls://host:4222 on the LAN, with the
                   site-secret file in the data folder; without it each
                   kiosk keeps its own site, for this PC only
  --demo           use the built-in simulated terminal: no real payments
  --demo-cloud     use the built-in simulated provider cloud and its virtual
                   terminal (the cloud channel): no real payments
  --cloud URL --serial SN
                   the terminal through the provider's Cloud API (env
                   COMPTOIR_CLOUD_URL and COMPTOIR_CLOUD_SERIAL; the API key
                   from COMPTOIR_CLOUD_KEY or the cloud.key setting (set-secret),
                   never a flag or an argument); with --terminal too, the
                   same terminal both ways: the LAN first, the cloud when it
                   does not answer there (or the saved channel "both")
`

// Program is what the main package gives the command line.
type Program struct {
	// UI is the built frontend (frontend/dist), embedded in the binary.
	UI fs.FS
	// Desktop opens the window and blocks until it is closed; nil in a
	// build without one. This package never imports the window's toolkit.
	Desktop func(*Desktop) error
}

// Run runs the command line args (without the program's name) and returns
// the exit code. Without a subcommand it opens the desktop window.
func Run(args []string, stdout, stderr io.Writer, p Program) int {
	if len(args) == 0 || len(args[0]) > 0 && args[0][0] == '-' {
		return runDesktop(args, stdout, stderr, p)
	}
	cmd, rest := args[0], args[1:]
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	switch cmd {
	case "simulator":
		return cmdSimulator(ctx, rest, stdout, stderr)
	case "cloudsim":
		return cmdCloudSim(ctx, rest, stdout, stderr)
	case "ping":
		return cmdPing(ctx, rest, stdout, stderr)
	case "link":
		return cmdLink(ctx, rest, stdout, stderr)
	case "pay":
		return cmdPay(ctx, rest, stdout, stderr)
	case "refund":
		return cmdRefund(ctx, rest, stdout, stderr)
	case "reverse":
		return cmdReverse(ctx, rest, stdout, stderr)
	case "recover":
		return cmdRecover(ctx, rest, stdout, stderr)
	case "attempts":
		return cmdAttempts(ctx, rest, stdout, stderr)
	case "reconcile":
		return cmdReconcile(ctx, rest, stdout, stderr)
	case "discover":
		return cmdDiscover(ctx, rest, stdout, stderr)
	case "serve":
		return cmdServe(ctx, p.UI, rest, stdout, stderr)
	case "hub":
		return cmdHub(ctx, rest, stdout, stderr)
	case "site":
		return cmdSite(ctx, p.UI, rest, stdout, stderr)
	case "settings":
		return cmdSettings(ctx, rest, stdout, stderr)
	case "pin":
		return cmdPin(ctx, rest, stdout, stderr)
	case "audit":
		return cmdAudit(ctx, rest, stdout, stderr)
	case "purge":
		return cmdPurge(ctx, rest, stdout, stderr)
	case "receipt":
		return cmdReceipt(ctx, rest, stdout, stderr)
	case "verify":
		return cmdVerify(ctx, rest, stdout, stderr)
	case "close":
		return cmdClose(ctx, rest, stdout, stderr)
	case "fiscal":
		return cmdFiscal(ctx, rest, stdout, stderr)
	case "archive":
		return cmdArchive(ctx, rest, stdout, stderr)
	case "version":
		fmt.Fprintln(stdout, versionString())
		return 0
	case "help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "comptoir: unknown command %q\n\n%s", cmd, usage)
	return 2
}

// runDesktop is the command line without a subcommand: the help, the
// version, or the desktop window with the shared flags.
func runDesktop(args []string, stdout, stderr io.Writer, p Program) int {
	switch {
	case len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "-help"):
		fmt.Fprint(stdout, usage)
		return 0
	case len(args) > 0 && (args[0] == "--version" || args[0] == "-version"):
		fmt.Fprintln(stdout, versionString())
		return 0
	}
	var common commonFlags
	fs := newFlagSet("comptoir", stderr, &common)
	fs.BoolVar(&common.windowed, "windowed", false, "stay an ordinary window in kiosk mode (kiosk mode is full screen, frameless, closed by staff)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if p.Desktop == nil {
		fmt.Fprintln(stderr, "comptoir: this build has no desktop window; run a subcommand (comptoir help)")
		return 2
	}
	if err := p.Desktop(&Desktop{flags: common}); err != nil {
		fmt.Fprintln(stderr, "comptoir:", err)
		return 1
	}
	return 0
}

// commonFlags are the flags every mode shares.
type commonFlags struct {
	dataDir      string
	terminal     string
	terminalPin  string // the terminal's certificate fingerprint, for HTTPS
	cloudURL     string // the provider's Cloud API: the terminal by serial number
	serial       string
	demo         bool
	demoCloud    bool // the built-in simulated cloud: the cloud channel's demo
	discoverWait time.Duration
	windowed     bool   // desktop: stay a window even in kiosk mode
	site         string // the restaurant's site to join (--site; else the setting site.url)

	// bothWays: the terminal on the LAN first, through the cloud behind it
	// (--terminal with --cloud and --serial, or the saved channel "both").
	bothWays bool
}

func newFlagSet(name string, stderr io.Writer, c *commonFlags) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, usage) }
	fs.StringVar(&c.dataDir, "data-dir", os.Getenv("COMPTOIR_DATA_DIR"), "data directory")
	fs.StringVar(&c.terminal, "terminal", os.Getenv("COMPTOIR_TERMINAL"), "terminal address")
	fs.StringVar(&c.terminalPin, "terminal-pin", os.Getenv("COMPTOIR_TERMINAL_PIN"), "SHA-256 fingerprint of the terminal's HTTPS certificate")
	fs.StringVar(&c.site, "site", os.Getenv("COMPTOIR_SITE"), "the restaurant's site to join: nats://host:port on this PC, tls://host:port on the LAN")
	fs.StringVar(&c.cloudURL, "cloud", os.Getenv("COMPTOIR_CLOUD_URL"), "the provider's Cloud API base URL (the terminal by serial number)")
	fs.StringVar(&c.serial, "serial", os.Getenv("COMPTOIR_CLOUD_SERIAL"), "the cloud terminal's serial number")
	fs.BoolVar(&c.demo, "demo", false, "use the built-in simulated terminal")
	fs.BoolVar(&c.demoCloud, "demo-cloud", false, "use the built-in simulated provider cloud and its virtual terminal")
	fs.DurationVar(&c.discoverWait, "discover-wait", 10*time.Second, "without --terminal, how long to look for the terminal by mDNS")
	return fs
}

// isDemo: no real payment, the built-in simulated terminal or cloud.
func (c commonFlags) isDemo() bool { return c.demo || c.demoCloud }

// resolveDataDir returns the data directory without creating it. A demo
// (--demo, --demo-cloud) keeps its own, beside the real one: its journal,
// fiscal key and signed records never mix with a real installation's.
func (c commonFlags) resolveDataDir() (string, error) {
	if c.dataDir != "" {
		return filepath.Abs(c.dataDir)
	}
	base, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("no data directory: pass --data-dir or set COMPTOIR_DATA_DIR (%w)", err)
	}
	if c.isDemo() {
		return filepath.Join(base, demoDataDir), nil
	}
	return filepath.Join(base, "comptoir"), nil
}

// demoDataDir is the demo's data directory under the OS config dir.
const demoDataDir = "comptoir-demo"

func printJSON(w io.Writer, v any) {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(v)
}

var ErrNoTerminal = errors.New("no terminal configured: pass --terminal URL, set COMPTOIR_TERMINAL, or use --demo")
