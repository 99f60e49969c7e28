// Package paytest is the tests' payment core at test speed, on top of
// testenv: the money-safety limits scaled down, and payment links through
// the simulated provider cloud. It is testenv's upper floor, apart because
// it imports payment, whose own tests use testenv and could not import
// both. Only tests import it (backend/cli/deps_test.go holds that).
package paytest

import (
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/cloudapi"
	"github.com/comptoir-pos/comptoir/backend/cloudsim"
	"github.com/comptoir-pos/comptoir/backend/internal/testenv"
	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/payment"
)

// Limits are the money-safety rules at test speed: a customer's 62 s is
// 2 s, the terminal's 15 min request window 10 s.
var Limits = payment.Limits{
	KioskTimeout:      2 * time.Second,
	CounterTimeout:    2 * time.Second,
	RefundTimeout:     2 * time.Second,
	RequestOpen:       10 * time.Second,
	Idempotency:       time.Hour,
	IdempotencyMargin: time.Minute,
	ResendPause:       5 * time.Millisecond,
	AbortGrace:        time.Second,
	AbortRetryPause:   20 * time.Millisecond,
	AbortRetryMax:     200 * time.Millisecond,
}

// LinkConfig is how Links pays by phone.
type LinkConfig struct {
	Cloud  cloudsim.Config // the simulated cloud's (Key required)
	Limits payment.Limits  // zero: Limits
	// Emitter receives the links' orchestrator's events (nil: none).
	Emitter payment.Emitter
	// PollEvery is how often a link's cart is read (zero: 5 ms).
	PollEvery time.Duration
	// API wraps the cloud's client (nil: the client itself).
	API func(*cloudapi.Client) payment.LinkAPI
	// Beside are the channels of the other orchestrators on the journal
	// (payment.Config.OtherChannels).
	Beside []journal.Channel
}

// Links starts a simulated provider cloud and an orchestrator of payment
// links through it on db, both closed at the end of the test (Close may be called
// before). It does not recover: the caller's service does, or the test.
func Links(t testing.TB, db *journal.DB, cfg LinkConfig) (*cloudsim.Cloud, *payment.Orchestrator) {
	t.Helper()
	cloud, client := testenv.Cloud(t, cfg.Cloud)
	var api payment.LinkAPI = client
	if cfg.API != nil {
		api = cfg.API(client)
	}
	if cfg.Limits == (payment.Limits{}) {
		cfg.Limits = Limits
	}
	if cfg.PollEvery == 0 {
		cfg.PollEvery = 5 * time.Millisecond
	}
	links, err := payment.New(payment.Config{Journal: db, TerminalID: "links", Limits: cfg.Limits, Emitter: cfg.Emitter,
		Channel:       payment.Link(api, payment.LinkOptions{ReturnURL: "https://shop.example/", Currency: "EUR", PollEvery: cfg.PollEvery}),
		OtherChannels: cfg.Beside})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(links.Close)
	return cloud, links
}
