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
	"github.com/comptoir-pos/comptoir/backend/kiosk"
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
	term := cloudTerminal{c: client, serial: c.serial}
	link := &terminalLink{id: "cloud:" + c.serial, url: client.BaseURL(), how: "cloud", printer: term, client: term,
		source: kiosk.FixedTerminal("Terminal "+c.serial+" (cloud)", client.BaseURL()), stop: func() {}}
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

// cloudTerminal is the terminal through the Cloud API, as the kiosk's
// printer and staff mode's terminal use it: the same requests as on the
// LAN, carried by the provider's cloud to the terminal with this serial.
type cloudTerminal struct {
	c      *cloudapi.Client
	serial string
}

func cloudStatus(s *cloudapi.Status, err error) (*localapi.StatusResponse, error) {
	if err != nil {
		return nil, err
	}
	return &localapi.StatusResponse{Status: s.Status, Message: s.Message, Raw: s.Raw}, nil
}

func (t cloudTerminal) Print(ctx context.Context, req *localapi.PrintRequest) (*localapi.StatusResponse, error) {
	return cloudStatus(t.c.Print(ctx, t.serial, req.Data, req.Format))
}

func (t cloudTerminal) ShareReceipt(ctx context.Context, req *localapi.ShareReceiptRequest) (*localapi.StatusResponse, error) {
	return cloudStatus(t.c.ShareReceipt(ctx, t.serial, req.ReceiptTicket, req.TransactionID, req.Medium))
}

func (t cloudTerminal) Reversal(ctx context.Context, req *localapi.ReversalRequest) (*localapi.ReversalResponse, error) {
	body, err := json.Marshal(cloudapi.ReversalRequest{Amount: req.Amount, InitialTransactionID: req.InitialTransactionID})
	if err != nil {
		return nil, err
	}
	r, err := t.c.Reversal(ctx, body)
	if err != nil {
		return nil, err
	}
	return &localapi.ReversalResponse{Status: r.Status, ReversalTransactionID: r.ReversalTransactionID,
		InitialTransactionID: r.InitialTransactionID, Message: r.Message, Raw: r.Raw}, nil
}

// Transactions reads the company's history for this terminal, in UTC as
// the terminal's own history counts.
func (t cloudTerminal) Transactions(ctx context.Context, req *localapi.TransactionsRequest) (*localapi.TransactionList, error) {
	p, err := t.c.Transactions(ctx, cloudapi.TransactionsRequest{SerialNumbers: []string{t.serial}, Timezone: "UTC",
		StartDate: req.StartDate, EndDate: req.EndDate, StartTime: req.StartTime, EndTime: req.EndTime, Limit: req.Limit, Offset: req.Offset})
	if err != nil {
		return nil, err
	}
	l := &localapi.TransactionList{Status: "ok", Count: p.Count, Limit: p.Limit, Offset: p.Offset, Total: p.Total,
		Transactions: []localapi.HistoryEntry{}, Raw: p.Raw}
	for _, e := range p.Transactions {
		l.Transactions = append(l.Transactions, localapi.HistoryEntry{Status: e.Status, TransactionID: e.TransactionID,
			Amount: e.Amount, GiftAmount: e.GiftAmount, CurrencyCode: e.CurrencyCode, Issuer: e.Issuer, Scheme: e.Scheme,
			Type: e.Kind(), CartID: e.CartID, CreatedAt: e.CreatedAt})
	}
	return l, nil
}

// Ping: the Cloud API has no ping. A one-transaction history read checks
// what the kiosk can check from here: the cloud answers and accepts the
// key for this terminal. Whether the terminal is online shows at the next
// payment (an offline terminal's action expires).
func (t cloudTerminal) Ping(ctx context.Context, _ bool) (*localapi.PingResponse, error) {
	p, err := t.c.Transactions(ctx, cloudapi.TransactionsRequest{SerialNumbers: []string{t.serial}, Limit: 1})
	if err != nil {
		return nil, err
	}
	return &localapi.PingResponse{Status: "ok", Message: "the provider's cloud answers for terminal " + t.serial, Raw: p.Raw}, nil
}
