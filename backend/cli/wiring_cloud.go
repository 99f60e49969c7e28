package cli

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/comptoir-pos/comptoir/backend/device"
	"github.com/comptoir-pos/comptoir/backend/fault"
	"log/slog"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/comptoir-pos/comptoir/backend/cloudapi"
	"github.com/comptoir-pos/comptoir/backend/cloudsim"
	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/kiosk"
	"github.com/comptoir-pos/comptoir/backend/localapi"
	"github.com/comptoir-pos/comptoir/backend/payment"
	"github.com/comptoir-pos/comptoir/backend/staff"
	"github.com/comptoir-pos/comptoir/backend/staffapi"
	"github.com/comptoir-pos/comptoir/backend/terminalsim"
)

// The cloud channel's settings. The key is a secret: it comes from the
// environment or the journal (`comptoir settings set-secret`, standard
// input), never from a flag or an argument (they show in ps), and
// `comptoir settings list` never prints it.
const (
	settingChannel        = "terminal.channel" // "local" (default), "cloud" or "both" (the LAN first)
	settingCloudURL       = "cloud.url"
	settingCloudSerial    = "cloud.serial"
	settingCloudKey       = "cloud.key"
	settingCloudPollEvery = "cloud.poll_seconds"
	// The cart operations of payment links whose path or method the
	// specification does not show: "METHOD /path", cloudapi's defaults.
	settingLinkCart       = "cloud.link_cart"
	settingLinkCancel     = "cloud.link_cancel"
	settingLinkCapture    = "cloud.link_capture"
	envCloudKey           = "COMPTOIR_CLOUD_KEY"
	defaultCloudPollEvery = 2 * time.Second
)

// secretSettings are shown redacted, and set from standard input only.
var secretSettings = []string{settingCloudKey}

// keyAddressSettings are the addresses the saved key is sent to: a new
// value clears the key, which is then entered again for the new host.
var keyAddressSettings = []string{settingCloudURL, settingWSURL}

// cloudKey is the API key: the environment's, else the journal's.
func cloudKey(ctx context.Context, db *journal.DB) (string, error) {
	if k := strings.TrimSpace(os.Getenv(envCloudKey)); k != "" {
		return k, nil
	}
	k, ok, err := (settingsStore{db}).Get(ctx, settingCloudKey)
	if err != nil {
		return "", err
	}
	if !ok || strings.TrimSpace(k) == "" {
		return "", errors.New("no cloud API key: set " + envCloudKey + ", or `comptoir settings set-secret " + settingCloudKey + "` (the key on standard input)")
	}
	return k, nil
}

// openCloudPayments is an orchestrator on the terminal with this serial
// number, through the provider's Cloud API. The key is the environment's
// or the journal's unless one is given.
func openCloudPayments(ctx context.Context, c commonFlags, db *journal.DB, dir string, lim payment.Limits, em payment.Emitter, logger *slog.Logger, key string) (*payments, error) {
	fail := func(err error) (*payments, error) { db.Close(); return nil, err }
	if c.cloudURL == "" || strings.TrimSpace(c.serial) == "" {
		return fail(errors.New("the cloud channel needs both --cloud URL and --serial SN"))
	}
	if key == "" {
		var err error
		if key, err = cloudKey(ctx, db); err != nil {
			return fail(err)
		}
	}
	client, err := cloudapi.New(c.cloudURL, key, cloudapi.WithUserAgent(userAgent()), cloudapi.WithLinkEndpoints(linkEndpoints(ctx, db, logger)))
	if err != nil {
		return fail(err)
	}
	poll := defaultCloudPollEvery
	if raw, ok, err := db.Setting(ctx, settingCloudPollEvery); err == nil && ok {
		var secs float64
		if jsonNumber(raw, &secs) && secs >= 0.5 && secs <= 60 {
			poll = time.Duration(secs * float64(time.Second))
		} else {
			logger.Warn("setting ignored: the default applies", "key", settingCloudPollEvery, "value", string(raw))
		}
	}
	vendor := &localapi.Vendor{SoftwareName: "Comptoir", SoftwareVersion: version}
	o, err := payment.New(payment.Config{
		Journal: db, Channel: payment.Cloud(client, c.serial, vendor, poll), TerminalID: payment.CloudTerminal(c.serial),
		Limits: lim, Emitter: em, Logger: logger, OtherChannels: terminalOthers(ctx, c, db),
	})
	if err != nil {
		return fail(err)
	}
	link := &terminalLink{id: payment.CloudTerminal(c.serial), url: client.BaseURL(), how: "cloud", device: device.Cloud(client, c.serial),
		source: kiosk.FixedTerminal("Terminal "+c.serial+" (cloud)", client.BaseURL()), stop: func() {}}
	return &payments{dir: dir, db: db, link: link, o: o, cloud: client, cloudKey: key, serial: c.serial, close: func() { o.Close(); db.Close() }}, nil
}

// demoCloudSerial is the virtual terminal of --demo-cloud.
const demoCloudSerial = "SIM-CLOUD-1"

// openDemoCloudPayments runs the simulated provider cloud in this process,
// with one virtual terminal whose customer presents an accepted card, and
// pays through it on the cloud channel: the cloud's acknowledgement, poll
// and history, with no real payment. Like --demo, a kiosk's demo ignores
// the test amounts.
func openDemoCloudPayments(ctx context.Context, c commonFlags, db *journal.DB, dir string, lim payment.Limits, em payment.Emitter, logger *slog.Logger, kioskDemo bool) (*payments, error) {
	key := make([]byte, 16)
	_, _ = rand.Read(key)
	sim, err := cloudsim.New(cloudsim.Config{
		Key: "demo-" + hex.EncodeToString(key), Serials: []string{demoCloudSerial},
		Terminal: terminalsim.Config{NoTestAmounts: kioskDemo},
		Logger:   logger.With("component", "cloudsim"),
	})
	if err == nil {
		err = sim.Start("127.0.0.1:0")
	}
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("the simulated cloud: %w", err)
	}
	c.cloudURL, c.serial = sim.URL(), demoCloudSerial
	p, err := openCloudPayments(ctx, c, db, dir, lim, em, logger, sim.Key())
	if err != nil {
		sim.Close()
		return nil, err
	}
	closePayments := p.close
	p.close = func() { closePayments(); sim.Close() }
	p.link.how = "demo"
	return p, nil
}

// linkEndpoints are the cart operations' endpoints: each setting that
// reads as "METHOD /path", else cloudapi's default (with a warning).
func linkEndpoints(ctx context.Context, db *journal.DB, logger *slog.Logger) cloudapi.LinkEndpoints {
	e := cloudapi.DefaultLinkEndpoints
	store := settingsStore{db}
	for _, s := range []struct {
		key string
		to  *cloudapi.Endpoint
	}{{settingLinkCart, &e.Cart}, {settingLinkCancel, &e.Cancel}, {settingLinkCapture, &e.Capture}} {
		v, ok, err := store.Get(ctx, s.key)
		if err != nil || !ok || strings.TrimSpace(v) == "" {
			continue
		}
		if ep, err := cloudapi.ParseEndpoint(v); err == nil {
			*s.to = ep
		} else {
			logger.Warn("setting ignored: the default applies", "key", s.key, "value", v, "default", s.to.String(), "err", err)
		}
	}
	return e
}

// jsonNumber reads a JSON number.
func jsonNumber(raw []byte, into *float64) bool {
	return json.Unmarshal(raw, into) == nil
}

// redactSetting hides a secret setting's value, keeping whether it is set.
func redactSetting(key string, raw []byte) []byte {
	if !slices.Contains(secretSettings, key) {
		return raw
	}
	var s string
	if json.Unmarshal(raw, &s) == nil && s == "" {
		return raw
	}
	return []byte(`"(set, hidden)"`)
}

// cloudFromSettings fills the cloud terminal from the journal when the
// flags name none and the saved channel is the cloud, or both ways (the
// LAN first). The flags win: --demo keeps the LAN; --terminal keeps it
// too, with the cloud behind it when both ways are saved; --cloud and
// --serial name the cloud, behind --terminal when both are given.
func cloudFromSettings(ctx context.Context, c *commonFlags, db *journal.DB) error {
	if c.isDemo() {
		return nil
	}
	if c.cloudURL != "" || c.serial != "" {
		c.bothWays = c.terminal != ""
		return nil
	}
	store := settingsStore{db}
	ch, _, err := store.Get(ctx, settingChannel)
	if err != nil || (ch != "cloud" && ch != channelBoth) || (ch == "cloud" && c.terminal != "") {
		return err
	}
	c.bothWays = ch == channelBoth
	if c.cloudURL, _, err = store.Get(ctx, settingCloudURL); err != nil {
		return err
	}
	c.serial, _, err = store.Get(ctx, settingCloudSerial)
	return err
}

// cloudInfo is the saved channel and cloud terminal, for staff.
func cloudInfo(ctx context.Context, db *journal.DB) (string, staffapi.CloudSetting) {
	store := settingsStore{db}
	ch, _, _ := store.Get(ctx, settingChannel)
	if ch != "cloud" && ch != channelBoth {
		ch = "local"
	}
	u, _, _ := store.Get(ctx, settingCloudURL)
	sn, _, _ := store.Get(ctx, settingCloudSerial)
	k, _, _ := store.Get(ctx, settingCloudKey)
	return ch, staffapi.CloudSetting{URL: u, Serial: sn, KeySet: strings.TrimSpace(k) != "", On: ch != "local", LANFirst: ch == channelBoth}
}

// SetCloud saves the channel for the next start. The cloud needs a base
// URL the client accepts, a serial number and a key: the saved one only
// for the address it was saved with (a staff session must not send the
// saved key to another host); nothing is saved when one is missing.
func (t *terminalControl) SetCloud(ctx context.Context, c staffapi.CloudChoice) error {
	store := settingsStore{t.db}
	save := func(kv ...[2]string) error {
		for _, p := range kv {
			if err := store.Set(ctx, p[0], p[1]); err != nil {
				return &staff.Error{Code: staff.EINTERNAL, Message: "The choice could not be saved: " + fault.MessageOf(err) + ".", Err: err}
			}
		}
		return nil
	}
	if !c.On {
		return save([2]string{settingChannel, "local"})
	}
	c.URL, c.Serial, c.Key = strings.TrimSpace(c.URL), strings.TrimSpace(c.Serial), strings.TrimSpace(c.Key)
	key := c.Key
	savedURL, _, _ := store.Get(ctx, settingCloudURL)
	if key == "" {
		key, _, _ = store.Get(ctx, settingCloudKey)
	}
	switch {
	case c.Key == "" && strings.TrimSpace(key) != "" && strings.TrimSpace(savedURL) != c.URL:
		return &staff.Error{Code: staff.EINVALID, Message: "A new cloud address needs the company's API key entered again: the saved key is sent only to the address it was saved with. Nothing was saved."}
	case c.Serial == "":
		return &staff.Error{Code: staff.EINVALID, Message: "The terminal's serial number is needed (on its back, or in its settings). Nothing was saved."}
	case strings.TrimSpace(key) == "":
		return &staff.Error{Code: staff.EINVALID, Message: "The company's API key is needed (the provider's back office, API settings). Nothing was saved."}
	}
	if _, err := cloudapi.New(c.URL, key); err != nil {
		return &staff.Error{Code: staff.EINVALID, Message: "This is not the cloud's address: " + err.Error() + ". Nothing was saved.", Err: err}
	}
	channel := "cloud"
	if c.LANFirst {
		channel = channelBoth
	}
	kv := [][2]string{{settingCloudURL, c.URL}, {settingCloudSerial, c.Serial}, {settingChannel, channel}}
	if c.Key != "" {
		kv = append([][2]string{{settingCloudKey, c.Key}}, kv...)
	}
	return save(kv...)
}
