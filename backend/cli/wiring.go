package cli

import (
	"context"
	"github.com/comptoir-pos/comptoir/backend/device"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/comptoir-pos/comptoir/backend/cloudapi"
	"github.com/comptoir-pos/comptoir/backend/discovery"
	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/kiosk"
	"github.com/comptoir-pos/comptoir/backend/localapi"
	"github.com/comptoir-pos/comptoir/backend/payment"
	"github.com/comptoir-pos/comptoir/backend/staffapi"
	"github.com/comptoir-pos/comptoir/backend/terminalsim"
)

// terminalLink is the terminal a process talks to, however it was found.
type terminalLink struct {
	term   payment.Terminal
	id     string // the journal's name for it: "demo", its URL, or "mdns:<instance>"
	url    string
	source kiosk.TerminalSource
	// device prints, shares receipts and reads the history for the kiosk
	// and staff mode, on the same terminal as term.
	device device.Terminal
	// how is how it was found: demo, flag (--terminal), discovery, or
	// address (the manual address saved by staff).
	how      string
	instance string             // discovery's instance name, when found by discovery
	tracker  *discovery.Tracker // nil for a fixed address
	trust    terminalTrust      // how its HTTPS is checked
	stop     func()
}

// openTerminal picks the terminal: the built-in simulator with --demo, the
// address given with --terminal, else the one discovery finds or remembers
// (its identity kept in the journal). For the kiosk (forKiosk), the demo
// simulator ignores the test amounts (a customer-facing demo must not
// decline a basket whose total happens to end in .51), and a device waiting
// for staff's confirmation does not stop the start: staff confirm it in
// staff mode.
func openTerminal(ctx context.Context, c commonFlags, db *journal.DB, forKiosk bool) (*terminalLink, error) {
	switch {
	case c.demo:
		sim, err := terminalsim.New(terminalsim.Config{NoTestAmounts: forKiosk})
		if err != nil {
			return nil, err
		}
		if err := sim.Start("127.0.0.1:0"); err != nil {
			return nil, err
		}
		if forKiosk {
			// The demo finds its terminal the way a kiosk finds a real one:
			// advertised by mDNS (on the loopback interface only) and
			// followed by a Tracker. Where multicast on loopback does not
			// work, it talks to the simulator directly.
			if link := demoByDiscovery(ctx, sim); link != nil {
				return link, nil
			}
		}
		client, err := localapi.NewClient(sim.URL(), localapi.WithUserAgent(userAgent()))
		if err != nil {
			sim.Close()
			return nil, err
		}
		return &terminalLink{term: client, id: "demo", url: client.BaseURL(), device: device.LocalClient(client), how: "demo",
			source: kiosk.FixedTerminal("Simulated terminal", client.BaseURL()), stop: func() { sim.Close() }}, nil
	}
	trust, err := loadTrust(ctx, c, db)
	if err != nil {
		return nil, err
	}
	if c.terminal != "" {
		return fixedTerminal(c.terminal, "flag", trust)
	}
	if addr, ok, err := (settingsStore{db}).Get(ctx, settingTerminalAddress); err != nil {
		return nil, err
	} else if ok && addr != "" {
		return fixedTerminal(addr, "address", trust)
	}
	tr, instance, err := discoverTerminal(ctx, db, c.discoverWait, trust, c.terminalPin, forKiosk)
	if err != nil {
		return nil, err
	}
	// The instance name, not the address: DHCP may move the terminal, and
	// recovery must still know it is the same one.
	// The terminal's other services go through the Tracker too: the same
	// device, checked the same way (its pinned certificate).
	return &terminalLink{term: tr, id: discovery.TerminalID(instance), url: tr.BaseURL(), device: device.LocalClient(tr),
		how: "discovery", instance: instance, tracker: tr, trust: trust, source: kiosk.TrackerStatus(tr), stop: func() { tr.Close() }}, nil
}

// settingTerminalAddress is the manual address staff saved: when set, the
// next start uses it instead of discovery (--terminal still wins).
const settingTerminalAddress = "terminal.address"

// terminalPingEvery is how often a terminal at a fixed address is pinged.
const terminalPingEvery = 5 * time.Second

// fixedTerminal is the terminal at a fixed address, checked by trust.
func fixedTerminal(address, how string, trust terminalTrust) (*terminalLink, error) {
	client, err := newTerminalClient(address, trust)
	if err != nil {
		return nil, err
	}
	// Pinged in the background so the kiosk says the terminal is silent
	// before a customer pays, not after.
	watch := kiosk.WatchTerminal(client.BaseURL(), client.BaseURL(), func(ctx context.Context) error {
		_, err := client.Ping(ctx, false)
		return err
	}, terminalPingEvery)
	return &terminalLink{term: client, id: client.BaseURL(), url: client.BaseURL(), device: device.LocalClient(client), how: how, trust: trust,
		source: watch, stop: watch.Close}, nil
}

// demoByDiscovery advertises the demo simulator on loopback and finds it
// with a Tracker, or returns nil (and stops nothing) when that fails.
func demoByDiscovery(ctx context.Context, sim *terminalsim.Terminal) *terminalLink {
	opts := advertiseOptions(sim)
	if len(opts.Interfaces) != 1 {
		return nil
	}
	advCtx, stopAdv := context.WithCancel(context.WithoutCancel(ctx))
	stop, err := sim.Advertise(advCtx, opts)
	if err != nil {
		stopAdv()
		return nil
	}
	tr, err := discovery.NewTracker(discovery.Config{Browse: discovery.Options{
		Interfaces: opts.Interfaces, NameFilter: sim.Config().InstanceName, Port: -1,
		AcceptSimulated: true, Window: 2 * time.Second,
	}})
	if err == nil {
		err = tr.Start(advCtx)
	}
	if err != nil {
		stop()
		stopAdv()
		return nil
	}
	for deadline := time.Now().Add(5 * time.Second); tr.Status().State != discovery.StateConnected; {
		if time.Now().After(deadline) || ctx.Err() != nil {
			tr.Close()
			stop()
			stopAdv()
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return &terminalLink{term: tr, id: "demo", url: tr.BaseURL(), device: device.LocalClient(tr), how: "demo",
		instance: sim.Config().InstanceName, tracker: tr,
		source: kiosk.TrackerStatus(tr), stop: func() { tr.Close(); stop(); stopAdv(); sim.Close() }}
}

// payments is the journal and an orchestrator on the terminal.
type payments struct {
	dir  string
	db   *journal.DB
	link *terminalLink
	o    *payment.Orchestrator
	// cloud is the terminal's Cloud API client, on the cloud channel.
	cloud *cloudapi.Client
	// links drives the payment links, through linkCloud, when the
	// provider's cloud is set up (nil otherwise).
	links     *payment.Orchestrator
	linkCloud *cloudapi.Client
	// linksOff says why links are not offered although the cloud is set
	// up (nil otherwise).
	linksOff error
	// cloudKey is the company's key of cloud, for its Webservices.
	cloudKey string
	// refunds drives the refunds by API (the Webservices), when they are
	// set up (nil otherwise).
	refunds     *payment.Orchestrator
	webservices *cloudapi.Webservices
	// serial is the terminal's serial number, when the cloud reaches it.
	serial string
	close  func()
}

// openPayments opens the journal (locking the data directory) and an
// orchestrator on the terminal (see openTerminal), and one on the payment
// links when the provider's cloud is set up. It does not recover.
func openPayments(ctx context.Context, c commonFlags, lim payment.Limits, em payment.Emitter, logger *slog.Logger, kioskDemo bool) (*payments, error) {
	p, err := openTerminalPayments(ctx, c, lim, em, logger, kioskDemo)
	if err != nil {
		return nil, err
	}
	if err := openLinks(ctx, c, p, lim, em, logger); err != nil {
		p.close()
		return nil, err
	}
	if err := openAPIRefunds(ctx, c, p, lim, em, logger); err != nil {
		p.close()
		return nil, err
	}
	return p, nil
}

// terminalOthers are the channels the terminal's orchestrator leaves to
// another: the refunds by API always (a terminal cannot tell of them: one
// left while the Webservices are not set up stays open, as it is at the
// provider), and the payment links', when they are set up.
func terminalOthers(ctx context.Context, c commonFlags, db *journal.DB) []journal.Channel {
	if linksConfigured(ctx, c, db) == nil {
		return []journal.Channel{journal.ChannelWebservices}
	}
	return []journal.Channel{journal.ChannelLink, journal.ChannelWebservices}
}

// openJournal opens the journal in the data directory, and says which.
func (c commonFlags) openJournal(ctx context.Context) (*journal.DB, string, error) {
	dir, err := c.resolveDataDir()
	if err != nil {
		return nil, "", err
	}
	db, err := journal.Open(ctx, dir)
	if err != nil {
		return nil, "", err
	}
	return db, dir, nil
}

func openTerminalPayments(ctx context.Context, c commonFlags, lim payment.Limits, em payment.Emitter, logger *slog.Logger, kioskDemo bool) (*payments, error) {
	db, dir, err := c.openJournal(ctx)
	if err != nil {
		return nil, err
	}
	if err := cloudFromSettings(ctx, &c, db); err != nil {
		db.Close()
		return nil, err
	}
	if c.demoCloud {
		return openDemoCloudPayments(ctx, c, db, dir, lim, em, logger, kioskDemo)
	}
	if c.bothWays {
		return openBothWays(ctx, c, db, dir, lim, em, logger, kioskDemo)
	}
	if c.cloudURL != "" || c.serial != "" {
		return openCloudPayments(ctx, c, db, dir, lim, em, logger, "")
	}
	link, err := openTerminal(ctx, c, db, kioskDemo)
	if err != nil {
		db.Close()
		return nil, err
	}
	o, err := payment.New(payment.Config{
		Journal: db, Terminal: link.term, TerminalID: link.id, Limits: lim, Emitter: em,
		Vendor: &localapi.Vendor{SoftwareName: "Comptoir", SoftwareVersion: version},
		Logger: logger, OtherChannels: terminalOthers(ctx, c, db),
	})
	if err != nil {
		link.stop()
		db.Close()
		return nil, err
	}
	return &payments{dir: dir, db: db, link: link, o: o, close: func() { o.Close(); link.stop(); db.Close() }}, nil
}

// Stack is what a kiosk process runs: the payments and the kiosk
// service (which recovers before taking orders), and staff mode.
type Stack struct {
	Svc   *kiosk.Service // nil when only staff mode runs (no terminal)
	Staff *staffapi.API
	URL   string // the terminal's address
	// Kitchen serves the kitchen screens and the board (backend/kitchen);
	// nil without a site.
	Kitchen http.Handler
	Close   func()
}

func startKiosk(ctx context.Context, c commonFlags, lim payment.Limits, em kiosk.Emitter, logger *slog.Logger) (*Stack, error) {
	relay := kiosk.NewRelay(nil)
	p, err := openPayments(ctx, c, lim, relay, logger, true)
	if err != nil {
		return nil, err
	}
	warn := &fiscalWarning{}
	ledger, keyNote, err := openLedger(ctx, p)
	if err != nil {
		// Payments go on; staff are told, and the records wait for the key.
		logger.Error("fiscal: no signing key: sales are not recorded until it is restored", "err", err)
		_ = p.db.AppendAudit(ctx, journal.AuditRecord{Who: "system:fiscal", Action: "fiscal_key", Detail: err.Error()})
		warn.set("Sales are not recorded in the fiscal journal: its signing key cannot be read (" + err.Error() + "). Restore fiscal-key.pem from a backup.")
	} else if keyNote != "" {
		logger.Warn("fiscal: the signing key is beside the data (fallback)", "why", keyNote)
		warn.set("Fiscal signing key: " + keyNote + ".")
	}
	kcfg := kiosk.Config{
		Journal: p.db, Payments: p.o, Links: p.links, Printer: p.link.device, Terminal: p.link.source, Emitter: em, Relay: relay,
		DataDir: p.dir, Demo: c.isDemo(), Version: version, Logger: logger,
	}
	if ledger != nil {
		// A customer's second print is a copy, counted with staff's reprints.
		kcfg.Sales, kcfg.Duplicate = ledger.RecordSale, ledger.Duplicate
	}
	svc, err := kiosk.New(kcfg)
	if err != nil {
		p.close()
		return nil, err
	}
	api, st, err := startStaff(c, p, lim, svc, ledger, warn.get, logger)
	if err != nil {
		svc.Close()
		p.close()
		return nil, err
	}
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() { defer close(done); svc.Run(runCtx) }()
	fiscalDone := make(chan struct{})
	go func() {
		defer close(fiscalDone)
		if ledger != nil {
			runLedger(runCtx, ledger, p.db, p.dir, warn, logger)
		}
	}()
	purged := make(chan struct{})
	go func() { defer close(purged); runCardPurge(runCtx, p.db, logger) }()
	beside := make(chan struct{})
	go func() {
		defer close(beside)
		// Refunds by API left open go on beside the kiosk's payments.
		views, err := p.recoverAPIRefunds(runCtx)
		for _, v := range views {
			logger.Warn("recovered a refund by API", "uuid", v.UUID, "order", v.OrderID, "state", v.State, "message", v.Message)
		}
		if err != nil {
			logger.Warn("refunds by API not recovered", "err", err)
		}
		// Then the previous day is reconciled, and each day once ended.
		st.RunReconciliation(runCtx)
	}()
	// The restaurant's site copies the journal's outbox; nothing here
	// waits for it.
	siteR := openSite(ctx, c, p.db, p.dir, logger)
	if siteR != nil {
		siteR.run(p.db, svc, p.dir, logger)
	}
	return &Stack{Svc: svc, Staff: api, URL: p.link.url, Kitchen: siteR.Kitchen(), Close: func() {
		siteR.close()
		cancel()
		<-done
		<-beside
		<-purged
		<-fiscalDone
		svc.Close()
		p.close()
	}}, nil
}

func warnLogger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelWarn}))
}
