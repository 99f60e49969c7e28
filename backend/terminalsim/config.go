package terminalsim

import (
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"fmt"
	"log/slog"
	"strings"
	"time"
)

// Config configures a simulated terminal. The zero value is a EUR terminal in
// real time with its tip setting off.
type Config struct {
	// CurrencyCode is the merchant profile's currency: EUR (default), CHF or
	// GBP.
	CurrencyCode string
	// TimeScale multiplies every duration the terminal waits: handover, the
	// 60 s windows, the 15 min request hold, behaviours' delays. 1 (or 0) is
	// real time; tests use 0.001 to 0.01. The terminal's clock (16 h, 24 h,
	// 30 days) is not scaled: tests move it with Advance.
	TimeScale float64
	// TipsEnabled is the terminal's own tip setting, which applies when a
	// payment's enableGiftScreen is null.
	TipsEnabled bool
	// Serial names the terminal on tickets and in its mDNS instance name.
	// Default "SIM-" and 4 random hex digits.
	Serial string
	// InstanceName is the mDNS instance name. Default "Yavin " + Serial.
	InstanceName string
	// AppVersion is the payment app version the transactions report.
	AppVersion string
	// MerchantName heads the card tickets.
	MerchantName string
	// Logger receives what the terminal does and prints; nil discards.
	Logger *slog.Logger
	// Now is the base of the terminal's clock (which Advance moves forward);
	// nil is time.Now.
	Now func() time.Time
	// Default is the behaviour of a payment when no scripted behaviour is
	// queued and the amount selects none. Nil is Approve().
	Default *Behaviour
	// NoTestAmounts turns off the test amounts table.
	NoTestAmounts bool
	// TLS serves the Local API on HTTPS, with a self-signed certificate made
	// at Start (CertificateFingerprint tells staff what to pin), as a
	// terminal that has retrieved its certificate does.
	TLS bool
	// Certificate, with TLS, is served instead of a new self-signed one:
	// the same terminal at another address (see TLSCertificate).
	Certificate *tls.Certificate
	// Timings overrides the real-time durations of the specification; zero
	// fields keep their defaults. TimeScale applies to them.
	Timings Timings
}

// Timings are the terminal's waits at real-time scale.
type Timings struct {
	Handover    time.Duration // request (or end of optional screens) to banking screen: 1.5 s
	Screens     time.Duration // optional screens window: 60 s
	CardRead    time.Duration // card-read window: 60 s
	RequestHold time.Duration // a request is held open at most this long: 15 min
	// Reversal is how long a reversal's answer takes (the acquirer's round
	// trip): the reversal is made when the request arrives, answered then.
	// Not in the specification: 1 s.
	Reversal time.Duration
}

// DefaultTimings are the specification's values.
var DefaultTimings = Timings{
	Handover:    1500 * time.Millisecond,
	Screens:     60 * time.Second,
	CardRead:    60 * time.Second,
	RequestHold: 15 * time.Minute,
	Reversal:    time.Second,
}

// Windows on the terminal's clock, from the specification.
const (
	IdempotencyWindow = 24 * time.Hour
	ReversalWindow    = 16 * time.Hour
	HistoryWindow     = 30 * 24 * time.Hour
)

// Default and maximum page sizes of /transactions.
const (
	DefaultTransactionsLimit = 20
	MaxTransactionsLimit     = 200
)

// Messages the specification does not give. They are the simulator's
// choice, worded like the specification's own.
const (
	// MsgInvalidAmount answers a /payment whose amount is missing, zero,
	// negative or not a number of cents.
	MsgInvalidAmount = "Parameter 'amount' is missing or invalid"
	// MsgInvalidGiftAmount answers a /payment with a negative giftAmount.
	MsgInvalidGiftAmount = "Parameter 'giftAmount' is invalid"
	// MsgCheckoutExternalIDRequired answers a /payment carrying
	// externalTableNumber, externalOrderNumber or externalOrderId without a
	// checkoutExternalId.
	MsgCheckoutExternalIDRequired = "Parameter 'checkoutExternalId' is missing"
	// MsgCheckoutExternalIDUsed answers a /payment whose checkoutExternalId a
	// completed ok transaction already uses.
	MsgCheckoutExternalIDUsed = "Parameter 'checkoutExternalId' is already used by a completed transaction"
)

// MsgTransactionsParam is the message of a /transactions filter that is
// badly formatted, for example a startDate that is not yyyy-MM-dd.
func MsgTransactionsParam(name string) string { return "Parameter '" + name + "' is invalid" }

func (c Config) withDefaults() (Config, error) {
	switch c.CurrencyCode = strings.ToUpper(c.CurrencyCode); c.CurrencyCode {
	case "":
		c.CurrencyCode = "EUR"
	case "EUR", "CHF", "GBP":
	default:
		return c, fmt.Errorf("terminalsim: currency %q not supported (EUR, CHF, GBP)", c.CurrencyCode)
	}
	switch {
	case c.TimeScale < 0:
		return c, fmt.Errorf("terminalsim: negative time scale %v", c.TimeScale)
	case c.TimeScale == 0:
		c.TimeScale = 1
	}
	if c.Serial == "" {
		var b [2]byte
		_, _ = rand.Read(b[:])
		c.Serial = "SIM-" + strings.ToUpper(hex.EncodeToString(b[:]))
	}
	if c.InstanceName == "" {
		c.InstanceName = "Yavin " + c.Serial
	}
	if c.AppVersion == "" {
		c.AppVersion = "4.0.0-sim"
	}
	if c.MerchantName == "" {
		c.MerchantName = "COMPTOIR DEMO"
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	d := DefaultTimings
	for _, p := range []struct{ v, def *time.Duration }{
		{&c.Timings.Handover, &d.Handover}, {&c.Timings.Screens, &d.Screens},
		{&c.Timings.CardRead, &d.CardRead}, {&c.Timings.RequestHold, &d.RequestHold},
		{&c.Timings.Reversal, &d.Reversal},
	} {
		if *p.v <= 0 {
			*p.v = *p.def
		}
	}
	return c, nil
}
