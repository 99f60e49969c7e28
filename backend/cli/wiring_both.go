package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/comptoir-pos/comptoir/backend/cloudapi"
	"github.com/comptoir-pos/comptoir/backend/device"
	"github.com/comptoir-pos/comptoir/backend/discovery"
	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/kiosk"
	"github.com/comptoir-pos/comptoir/backend/localapi"
	"github.com/comptoir-pos/comptoir/backend/payment"
)

// The LAN first, the cloud behind it: a terminal on the LAN whose serial
// number and the company's key are known too is reached both ways
// (payment/route.go). It is chosen by --terminal with --cloud and
// --serial, or by the saved channel "both" (staff mode, or `comptoir
// settings set terminal.channel '"both"'), the LAN terminal being then the
// flag's, the saved address, or the one discovery finds.
const channelBoth = "both"

// settingLANProbe is how long, in seconds, a new payment waits for the
// terminal to answer on the LAN before it goes through the cloud.
const settingLANProbe = "terminal.lan_probe_seconds"

// Settings of the provider's record as second witness of approvals taken
// over the LAN, when the Webservices are set up.
const (
	// settingWitnessWait: how long, in seconds, an approval waits for the
	// provider's record before the customer is told (default 20).
	settingWitnessWait = "ws.witness_wait_seconds"
	// settingWitnessStrict: true sends an order to staff when the record
	// cannot be read in time, instead of counting it paid on the
	// terminal's word (default false).
	settingWitnessStrict = "ws.witness_strict"
)

// openBothWays is one orchestrator on the terminal reached both ways,
// journaled under the terminal's LAN identity: the first way is the LAN,
// the fallback its serial through the cloud.
func openBothWays(ctx context.Context, c commonFlags, db *journal.DB, dir string, lim payment.Limits, em payment.Emitter, logger *slog.Logger, kioskDemo bool) (*payments, error) {
	fail := func(err error) (*payments, error) { db.Close(); return nil, err }
	if c.cloudURL == "" || strings.TrimSpace(c.serial) == "" {
		return fail(errors.New("the LAN with the cloud behind it needs the cloud's URL and the terminal's serial number (--cloud URL --serial SN, or the cloud.url and cloud.serial settings)"))
	}
	key, err := cloudKey(ctx, db)
	if err != nil {
		return fail(err)
	}
	client, poll, err := cloudClient(ctx, c, db, logger, key)
	if err != nil {
		return fail(err)
	}
	link, err := openTerminal(ctx, c, db, kioskDemo)
	if err != nil {
		// Not found on the LAN now: the terminal discovery remembers is
		// still looked for, and payments go through the cloud meanwhile.
		if link, err = searchingTerminal(ctx, c, db, err); err != nil {
			return fail(err)
		}
		logger.Warn("the terminal does not answer on the LAN: payments go through the cloud until it does", "terminal", link.id)
	}
	vendor := &localapi.Vendor{SoftwareName: "Comptoir", SoftwareVersion: version}
	lanDevice := link.device
	o, err := payment.New(payment.Config{
		Journal: db, Terminal: link.term, TerminalID: link.id, Fallback: payment.Cloud(client, c.serial, vendor, poll),
		Reachable: func(ctx context.Context) error {
			_, err := lanDevice.Ping(ctx, false)
			return err
		},
		ProbeTimeout: settingSeconds(ctx, db, logger, settingLANProbe, payment.DefaultProbeTimeout, 0.2, 30),
		Limits:       lim, Emitter: em, Logger: logger, Vendor: vendor, OtherChannels: terminalOthers(ctx, c, db),
	})
	if err != nil {
		link.stop()
		return fail(err)
	}
	both := *link
	both.how = link.how + "+cloud"
	both.device = eitherDevice{first: link.device, then: device.Cloud(client, c.serial)}
	both.source = lanThenCloud(link.source, c.serial, client.BaseURL())
	return &payments{dir: dir, db: db, link: &both, o: o, cloud: client, cloudKey: key, serial: c.serial,
		close: func() { o.Close(); link.stop(); db.Close() }}, nil
}

// cloudClient is the Cloud API client of the cloud terminal, and how
// often its payments are polled.
func cloudClient(ctx context.Context, c commonFlags, db *journal.DB, logger *slog.Logger, key string) (*cloudapi.Client, time.Duration, error) {
	client, err := cloudapi.New(c.cloudURL, key, cloudapi.WithUserAgent(userAgent()), cloudapi.WithLinkEndpoints(linkEndpoints(ctx, db, logger)))
	if err != nil {
		return nil, 0, err
	}
	return client, settingSeconds(ctx, db, logger, settingCloudPollEvery, defaultCloudPollEvery, 0.5, 60), nil
}

// settingSeconds reads a setting in seconds within [lo, hi], else def
// (with a warning when it is set but out of range).
func settingSeconds(ctx context.Context, db *journal.DB, logger *slog.Logger, key string, def time.Duration, lo, hi float64) time.Duration {
	raw, ok, err := db.Setting(ctx, key)
	if err != nil || !ok {
		return def
	}
	var secs float64
	if jsonNumber(raw, &secs) && secs >= lo && secs <= hi {
		return time.Duration(secs * float64(time.Second))
	}
	logger.Warn("setting ignored: the default applies", "key", key, "value", string(raw), "default", def)
	return def
}

// searchingTerminal is the terminal discovery remembers, looked for in the
// background when it did not answer at start: attempts made over the LAN
// before keep their terminal, and are asked about once it answers. Without
// one remembered, cause is returned.
func searchingTerminal(ctx context.Context, c commonFlags, db *journal.DB, cause error) (*terminalLink, error) {
	instance, ok, err := (settingsStore{db}).Get(ctx, discovery.DefaultStoreKey)
	if c.terminal != "" || c.demo || err != nil || !ok || instance == "" {
		return nil, fmt.Errorf("the terminal on the LAN: %w", cause)
	}
	trust, err := loadTrust(ctx, c, db)
	if err != nil {
		return nil, err
	}
	tr, err := discovery.NewTracker(discovery.Config{Store: settingsStore{db}, ClientOptions: trust.options(),
		Browse: announced(ctx, db, discovery.Options{HTTPS: trust.https, ClientOptions: trust.options()})})
	if err == nil {
		err = tr.Start(context.WithoutCancel(ctx))
	}
	if err != nil {
		return nil, fmt.Errorf("the terminal on the LAN: %w", err)
	}
	return &terminalLink{term: tr, id: discovery.TerminalID(instance), url: tr.BaseURL(), device: device.LocalAt(tr.BaseURL),
		how: "discovery", instance: instance, tracker: tr, trust: trust, source: kiosk.TrackerStatus(tr), stop: func() { tr.Close() }}, nil
}

// lanThenCloud is the terminal's status for the kiosk: the LAN's while it
// answers there, else reachable through the cloud.
func lanThenCloud(lan kiosk.TerminalSource, serial, cloudURL string) kiosk.TerminalSource {
	return kiosk.TerminalFunc(func() kiosk.TerminalStatus {
		st := lan.TerminalStatus()
		if st.State == kiosk.TerminalConnected {
			return st
		}
		return kiosk.TerminalStatus{State: kiosk.TerminalConnected, Name: "Terminal " + serial + " (through the cloud: the LAN does not answer)",
			Address: cloudURL, Error: st.Error}
	})
}

// eitherDevice prints, shares and reads the history over the LAN, and
// through the cloud when the LAN request never left: never both for one
// request (a print sent twice prints twice).
type eitherDevice struct{ first, then device.Terminal }

func (d eitherDevice) Print(ctx context.Context, p device.Print) (device.Answer, error) {
	a, err := d.first.Print(ctx, p)
	if device.KindOf(err) == device.NotSent {
		return d.then.Print(ctx, p)
	}
	return a, err
}

func (d eitherDevice) ShareReceipt(ctx context.Context, s device.Share) (device.Answer, error) {
	a, err := d.first.ShareReceipt(ctx, s)
	if device.KindOf(err) == device.NotSent {
		return d.then.ShareReceipt(ctx, s)
	}
	return a, err
}

func (d eitherDevice) History(ctx context.Context, q device.HistoryQuery) (device.HistoryPage, error) {
	p, err := d.first.History(ctx, q)
	if device.KindOf(err) == device.NotSent {
		return d.then.History(ctx, q)
	}
	return p, err
}

func (d eitherDevice) Ping(ctx context.Context, greet bool) (device.Answer, error) {
	a, err := d.first.Ping(ctx, greet)
	if err != nil {
		return d.then.Ping(ctx, greet)
	}
	return a, err
}

// useWitness makes the provider's record the second witness of the
// terminal's approvals over the LAN, once the Webservices are set up.
func (p *payments) useWitness(ctx context.Context, ws *cloudapi.Webservices, logger *slog.Logger) {
	if p.o == nil || ws == nil || !containsChannel(p.o.Channels(), journal.ChannelLocal) {
		return
	}
	strict := false
	if raw, ok, err := p.db.Setting(ctx, settingWitnessStrict); err == nil && ok && string(raw) == "true" {
		strict = true
	}
	w := payment.NewWitness(ws, payment.WitnessOptions{Serial: p.serial, Strict: strict,
		Wait: settingSeconds(ctx, p.db, logger, settingWitnessWait, 20*time.Second, 1, 300)})
	if err := p.o.UseWitness(w); err != nil {
		logger.Warn("the provider's record is not the witness of approvals over the LAN", "err", err)
	}
}

func containsChannel(chs []journal.Channel, ch journal.Channel) bool {
	for _, c := range chs {
		if c == ch {
			return true
		}
	}
	return false
}
