package cli

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"strings"

	"github.com/comptoir-pos/comptoir/backend/cloudapi"
	"github.com/comptoir-pos/comptoir/backend/cloudsim"
	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/kiosk"
	"github.com/comptoir-pos/comptoir/backend/localapi"
	"github.com/comptoir-pos/comptoir/backend/payment"
)

// Payment links are offered when the provider's cloud is set up: its base
// URL (--cloud, else the cloud.url setting) and the company's key (the
// environment's or the journal's). A demo runs them on a simulated cloud.
const (
	// settingLinkReturnURL is where a customer's phone goes after paying
	// or cancelling a link; default: the cloud's base URL.
	settingLinkReturnURL = "cloud.link_return_url"
	// linksTerminalID names the payment links in the journal (each link
	// below it: "links/<order>").
	linksTerminalID = "links"
)

// linkSetup is where payment links go, when they are set up.
type linkSetup struct {
	url, key string
	demo     bool // a simulated cloud, started for the links
}

// linksConfigured reads the links' set-up: nil when there is none.
func linksConfigured(ctx context.Context, c commonFlags, db *journal.DB) *linkSetup {
	if c.isDemo() {
		return &linkSetup{demo: true}
	}
	url := c.cloudURL
	if url == "" {
		url, _, _ = (settingsStore{db}).Get(ctx, settingCloudURL)
	}
	if strings.TrimSpace(url) == "" {
		return nil
	}
	key, err := cloudKey(ctx, db)
	if err != nil {
		return nil
	}
	return &linkSetup{url: url, key: key}
}

// openLinks starts the payment links' orchestrator beside the terminal's
// (p.o): nil when links are not set up. Recovery is the caller's (the
// kiosk's Run recovers both).
func openLinks(ctx context.Context, c commonFlags, p *payments, lim payment.Limits, em payment.Emitter, logger *slog.Logger) error {
	// The terminal's attempts (on either of its channels) and the refunds
	// by API are never the links' to decide.
	return openLinksBeside(ctx, c, p, []journal.Channel{journal.ChannelLocal, journal.ChannelCloud, journal.ChannelWebservices}, lim, em, logger)
}

// openLinksBeside starts the payment links' orchestrator, leaving the
// attempts of the others channels to their own.
func openLinksBeside(ctx context.Context, c commonFlags, p *payments, others []journal.Channel, lim payment.Limits, em payment.Emitter, logger *slog.Logger) error {
	setup := linksConfigured(ctx, c, p.db)
	if setup == nil {
		return nil
	}
	client := p.cloud
	stop := func() {}
	if client == nil && setup.demo {
		key := make([]byte, 16)
		_, _ = rand.Read(key)
		sim, err := cloudsim.New(cloudsim.Config{Key: "demo-" + hex.EncodeToString(key), Logger: logger.With("component", "cloudsim")})
		if err == nil {
			err = sim.Start("127.0.0.1:0")
		}
		if err != nil {
			return fmt.Errorf("the simulated cloud of the payment links: %w", err)
		}
		setup.url, setup.key, stop = sim.URL(), sim.Key(), func() { sim.Close() }
	}
	if client == nil {
		var err error
		client, err = cloudapi.New(setup.url, setup.key, cloudapi.WithUserAgent(userAgent()), cloudapi.WithLinkEndpoints(linkEndpoints(ctx, p.db, logger)))
		if err != nil {
			stop()
			return fmt.Errorf("payment links: %w", err)
		}
	}
	settings, err := kiosk.LoadSettings(ctx, p.db, logger)
	if err != nil {
		stop()
		return err
	}
	ret, _, _ := (settingsStore{p.db}).Get(ctx, settingLinkReturnURL)
	if strings.TrimSpace(ret) == "" {
		ret = client.BaseURL() + "/"
	}
	ch := payment.Link(client, payment.LinkOptions{
		ReturnURL: ret, BrandName: settings.Merchant.Name, Currency: settings.Currency,
		Vendor: &localapi.Vendor{SoftwareName: "Comptoir", SoftwareVersion: version},
	})
	o, err := payment.New(payment.Config{Journal: p.db, Channel: ch, TerminalID: linksTerminalID, Limits: lim, Emitter: em,
		Logger: logger, OtherChannels: others})
	if err != nil {
		stop()
		return err
	}
	p.links, p.linkCloud = o, client
	closeAll := p.close
	p.close = func() { o.Close(); stop(); closeAll() }
	return nil
}
