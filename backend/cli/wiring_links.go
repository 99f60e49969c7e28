package cli

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/comptoir-pos/comptoir/backend/cloudapi"
	"github.com/comptoir-pos/comptoir/backend/cloudsim"
	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/localapi"
	"github.com/comptoir-pos/comptoir/backend/payment"
	"github.com/comptoir-pos/comptoir/backend/settings"
)

// Payment links are offered when the provider's cloud is set up: its base
// URL (--cloud, else the cloud.url setting) and the company's key (the
// environment's or the journal's). A demo runs them on a simulated cloud.
const (
	// settingLinkReturnURL is where a customer's phone goes after paying
	// or cancelling a link (the provider adds cartId and status); default:
	// see linkReturnURL.
	settingLinkReturnURL = "cloud.link_return_url"
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
	settings, err := settings.LoadSettings(ctx, p.db, logger)
	if err != nil {
		stop()
		return err
	}
	ret, err := linkReturnURL(ctx, p.db, settings.Merchant.QRURL, client.BaseURL(), logger)
	if err != nil {
		// No page is known to exist for the customer's phone: no link is
		// offered rather than one that lands on nothing.
		stop()
		p.linksOff = err
		logger.Warn("payment links are off", "err", err)
		return nil
	}
	ch := payment.Link(client, payment.LinkOptions{
		ReturnURL: ret, BrandName: settings.Merchant.Name, Currency: settings.Currency,
		Vendor: &localapi.Vendor{SoftwareName: "Comptoir", SoftwareVersion: version},
	})
	o, err := payment.New(payment.Config{Journal: p.db, Channel: ch, TerminalID: payment.LinksTerminal, Limits: lim, Emitter: em,
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

// linkReturnURL is the page a customer's phone goes to after paying or
// cancelling a link: a page that exists. The setting when it is one
// (absolute, http or https); else the merchant's digital receipt site (the
// root of receipt.merchant's qrUrl), a page of the merchant's own; else,
// on a cloud simulated on this machine, its return page when it serves
// one. Otherwise there is none to name, and links need the setting.
func linkReturnURL(ctx context.Context, db *journal.DB, receiptURL, cloudBase string, logger *slog.Logger) (string, error) {
	if set, _, _ := (settingsStore{db}).Get(ctx, settingLinkReturnURL); strings.TrimSpace(set) != "" {
		if u, err := url.Parse(strings.TrimSpace(set)); err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != "" {
			return u.String(), nil
		}
		logger.Warn("setting ignored: not an absolute http(s) address", "key", settingLinkReturnURL, "value", set)
	}
	if u, err := url.Parse(strings.TrimSpace(receiptURL)); receiptURL != "" && err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != "" {
		return u.Scheme + "://" + u.Host + "/", nil
	}
	if base, err := url.Parse(cloudBase); err == nil && base.Scheme == "http" && isLoopbackHost(base.Hostname()) {
		page := strings.TrimRight(cloudBase, "/") + cloudsim.PathReturnPage
		if pageExists(ctx, page) {
			return page, nil
		}
	}
	return "", fmt.Errorf("no page is known for the customer's phone after paying a link: set %s (a page of the merchant's site), or the merchant's receipt address (receipt.merchant qrUrl)", settingLinkReturnURL)
}

// pageExists reports whether a GET of the page answers 200.
func pageExists(ctx context.Context, page string) bool {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, page, nil)
	if err != nil {
		return false
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

func isLoopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
