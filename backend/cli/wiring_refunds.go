package cli

import (
	"context"
	"log/slog"
	"strings"
	"time"

	"github.com/comptoir-pos/comptoir/backend/cloudapi"
	"github.com/comptoir-pos/comptoir/backend/device"
	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/localapi"
	"github.com/comptoir-pos/comptoir/backend/payment"
	"github.com/comptoir-pos/comptoir/backend/reconcile"
)

// Refunds by API go through the provider's Webservices when the cloud is
// set up (its URL and the company's key), or on the simulated cloud of
// --demo-cloud, whose transactions they refund.
const (
	// settingWSUserEmail is the back-office user who asks for refunds by
	// API; one the provider does not know makes each refund wait for a
	// manager's approval.
	settingWSUserEmail = "ws.user_email"
	// refundsTerminalID names the refunds by API in the journal (each
	// below it: "webservices/<transaction refunded>").
	refundsTerminalID = "webservices"
	// demoUserEmail asks the demo cloud's refunds.
	demoUserEmail = "demo@comptoir.invalid"
	// settingWSPollEvery is how often, in seconds, a refund not final is
	// fetched (and a lost answer's refund searched for).
	settingWSPollEvery = "ws.poll_every"
	defaultWSPollEvery = 30 * time.Second
)

// openAPIRefunds starts the refunds' orchestrator beside the others (nil
// when the Webservices are not set up). Recovery is the caller's
// (recoverAPIRefunds).
func openAPIRefunds(ctx context.Context, c commonFlags, p *payments, lim payment.Limits, em payment.Emitter, logger *slog.Logger) error {
	var ws *cloudapi.Webservices
	var err error
	user, _, _ := (settingsStore{p.db}).Get(ctx, settingWSUserEmail)
	switch {
	case p.cloud != nil && p.cloudKey != "":
		url, _, _ := (settingsStore{p.db}).Get(ctx, settingWSURL)
		if strings.TrimSpace(url) == "" {
			url = cloudapi.DefaultWebservicesURL(p.cloud.BaseURL())
		}
		ws, err = cloudapi.NewWebservices(url, p.cloudKey, cloudapi.WithUserAgent(userAgent()))
		if p.link.how == "demo" && strings.TrimSpace(user) == "" {
			user = demoUserEmail
		}
	case c.isDemo() || linksConfigured(ctx, c, p.db) == nil:
		return nil // no Webservices, or a demo terminal they do not know
	default:
		ws, err = openWebservices(ctx, c, p.db, "")
	}
	if err != nil {
		logger.Warn("refunds by API are off: the Webservices are not reachable as set up", "err", err)
		return nil
	}
	poll := defaultWSPollEvery
	if raw, ok, err := p.db.Setting(ctx, settingWSPollEvery); err == nil && ok {
		var secs float64
		if jsonNumber(raw, &secs) && secs >= 0.2 && secs <= 3600 {
			poll = time.Duration(secs * float64(time.Second))
		} else {
			logger.Warn("setting ignored: the default applies", "key", settingWSPollEvery, "value", string(raw))
		}
	}
	ch := payment.Webservices(ws, payment.WebservicesOptions{
		UserEmail: user, Vendor: &localapi.Vendor{SoftwareName: "Comptoir", SoftwareVersion: version}, PollEvery: poll,
	})
	// The terminal's and the links' attempts are never this orchestrator's
	// to decide, whether or not this process has their orchestrators.
	others := []journal.Channel{journal.ChannelLocal, journal.ChannelCloud, journal.ChannelLink}
	o, err := payment.New(payment.Config{Journal: p.db, Channel: ch, TerminalID: refundsTerminalID, Limits: lim, Emitter: em,
		Logger: logger, OtherChannels: others})
	if err != nil {
		return err
	}
	p.refunds, p.webservices = o, ws
	p.useWitness(ctx, ws, logger)
	// Before any give-back, whichever process asks for it: what the
	// provider gave back outside Comptoir is recorded first.
	check := func(ctx context.Context, orderID string) error {
		_, err := o.AdoptGivenBack(ctx, payment.GivenBackBy, orderID)
		return err
	}
	for _, x := range []*payment.Orchestrator{p.o, o} {
		if x == nil {
			continue // a process without the terminal (recover, link)
		}
		if err := x.UseGivenBackCheck(check); err != nil {
			logger.Warn("money given back outside Comptoir is not read before a give-back", "err", err)
		}
	}
	closeAll := p.close
	p.close = func() { o.Close(); closeAll() }
	return nil
}

// recoverAPIRefunds resumes the refunds by API left open and lets new
// ones start. It returns once each is final or has the provider's word
// (pending or waiting: it goes on by itself, beside everything else), or
// ctx ends.
func (p *payments) recoverAPIRefunds(ctx context.Context) ([]payment.View, error) {
	if p.refunds == nil {
		return nil, nil
	}
	views, err := p.refunds.Recover(ctx)
	for i, v := range views {
		if h, ok := p.refunds.Active(v.UUID); ok {
			select {
			case <-h.Done():
			case <-h.Said():
			case <-ctx.Done():
			}
			views[i] = h.View()
		}
	}
	return views, err
}

// reconciler reconciles a day of this kiosk: the journal beside the
// terminal's history and, when they are set up, the provider's
// Webservices (this kiosk's terminal only, when it is a cloud one).
func (p *payments) reconciler() func(ctx context.Context, day string) (reconcile.Report, error) {
	var src reconcile.Sources
	cfg := reconcile.Config{Location: time.Local}
	if p.webservices != nil {
		src.Provider = reconcile.FromWebservices(p.webservices, time.Now)
	}
	if p.link != nil && p.link.device != nil {
		hist := p.link.device
		src.Terminal = func(ctx context.Context, from, to time.Time) ([]device.HistoryEntry, error) {
			return device.ReadHistory(ctx, hist, from, to, 0, 30*time.Second)
		}
	}
	if serial, ok := payment.CloudSerial(p.o.TerminalID()); ok {
		cfg.Serials = []string{serial}
	}
	if p.serial != "" {
		cfg.Serials = []string{p.serial}
	}
	return func(ctx context.Context, day string) (reconcile.Report, error) {
		return reconcile.Day(ctx, p.db, src, day, cfg)
	}
}
