package cli

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/comptoir-pos/comptoir/backend/cloudapi"
	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/localapi"
	"github.com/comptoir-pos/comptoir/backend/payment"
)

// The cloud channel's settings. The key is a secret: it comes from the
// environment or the journal, never from a flag (flags show in ps), and
// `comptoir settings list` never prints it.
const (
	settingCloudKey       = "cloud.key"
	settingCloudPollEvery = "cloud.poll_seconds"
	envCloudKey           = "COMPTOIR_CLOUD_KEY"
	defaultCloudPollEvery = 2 * time.Second
)

// secretSettings are shown redacted.
var secretSettings = []string{settingCloudKey}

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
		return "", errors.New("no cloud API key: set " + envCloudKey + ", or `comptoir settings set " + settingCloudKey + " '\"...\"'`")
	}
	return k, nil
}

// openCloudPayments is an orchestrator on the terminal with this serial
// number, through the provider's Cloud API.
func openCloudPayments(ctx context.Context, c commonFlags, db *journal.DB, dir string, lim payment.Limits, em payment.Emitter, logger *slog.Logger) (*payments, error) {
	fail := func(err error) (*payments, error) { db.Close(); return nil, err }
	if c.cloudURL == "" || strings.TrimSpace(c.serial) == "" {
		return fail(errors.New("the cloud channel needs both --cloud URL and --serial SN"))
	}
	key, err := cloudKey(ctx, db)
	if err != nil {
		return fail(err)
	}
	client, err := cloudapi.New(c.cloudURL, key, cloudapi.WithUserAgent(userAgent()))
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
		Journal: db, Channel: payment.Cloud(client, c.serial, vendor, poll), TerminalID: "cloud:" + c.serial,
		Limits: lim, Emitter: em, Logger: logger,
	})
	if err != nil {
		return fail(err)
	}
	link := &terminalLink{id: "cloud:" + c.serial, url: client.BaseURL(), how: "cloud", stop: func() {}}
	return &payments{dir: dir, db: db, link: link, o: o, close: func() { o.Close(); db.Close() }}, nil
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
