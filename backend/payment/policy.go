package payment

import (
	"fmt"
	"time"

	"github.com/comptoir-pos/comptoir/backend/journal"
)

// Policy is how an attempt talks to the terminal: kiosk, counter, refund or
// reversal.
type Policy struct {
	Name journal.Policy
	Kind journal.Kind
	// ClientTimeout bounds one /payment request. It never means failure: the
	// same body is sent again and attaches to the payment in progress.
	ClientTimeout time.Duration
	// GiftScreen is the tri-state enableGiftScreen: kiosk false (no optional
	// screens on a self-service kiosk), counter nil (the terminal's setting).
	GiftScreen *bool
}

// Limits are the durations of the money-safety rules. Every one is a setting.
type Limits struct {
	KioskTimeout   time.Duration // 62 s: kiosk use, optional screens disabled
	CounterTimeout time.Duration // 125 s: classic use, tip screen allowed
	RefundTimeout  time.Duration // 62 s
	// RequestOpen is how long after the first send the terminal may still be
	// holding the request: resends continue until then, after which an
	// attempt without an answer is unknown. 15 min by the specification
	// (some public documents say 5: make it a setting, not a guess).
	RequestOpen time.Duration
	// Idempotency is how long the terminal remembers an idempotentUuid (24 h).
	// Past it a resend would start a new payment, so it is never sent.
	Idempotency time.Duration
	// IdempotencyMargin is kept off the end of that window: the terminal
	// counts the 24 h on its own clock, which may be ahead of ours. No
	// resend leaves later than Idempotency - IdempotencyMargin after the
	// first send.
	IdempotencyMargin time.Duration
	// ResendPause separates resends after an error that came back at once
	// (connection reset, HTTP 500): resending in a tight loop helps nobody.
	ResendPause time.Duration
	// AbortGrace is how long the /payment answer is awaited once /abort said
	// ok, before the attempt is recorded as cancelled without it.
	AbortGrace time.Duration
	// AbortRetryPause and AbortRetryMax: an /abort without a definite
	// answer (an error, or "Nothing to abort" while the /payment is still
	// on its way) is asked again after AbortRetryPause, doubled at each try
	// up to AbortRetryMax, for as long as the customer's cancel is in force.
	AbortRetryPause time.Duration
	AbortRetryMax   time.Duration
	// HistorySkew widens a search of the terminal's history before the
	// attempt's first send: the terminal dates its transactions by its own
	// clock, which may be behind ours by more than minutes (one that lost
	// its time). A wider window costs nothing on the wire (the history is
	// asked by whole days) and adds only the order's own transactions,
	// since a match names the order; those other attempts hold are left out.
	HistorySkew time.Duration
	// SettleAfter is how long after an attempt's last send the terminal's
	// history is complete for it: a payment that request could have started
	// has ended by then (120 s payment window, and the handover). Only then
	// may an attempt missing from the history be taken as not charged.
	SettleAfter time.Duration
	// UnknownCheck is how often the attempts whose outcome is unknown are
	// looked up in the terminal's history. Zero: only at recovery.
	UnknownCheck time.Duration
}

// DefaultLimits are the specification's values.
var DefaultLimits = Limits{
	KioskTimeout:   62 * time.Second,
	CounterTimeout: 125 * time.Second,
	RefundTimeout:  62 * time.Second,
	RequestOpen:    15 * time.Minute,
	Idempotency:    24 * time.Hour,
	ResendPause:    time.Second,
	AbortGrace:     10 * time.Second,

	IdempotencyMargin: time.Hour,
	AbortRetryPause:   500 * time.Millisecond,
	AbortRetryMax:     5 * time.Second,
	HistorySkew:       time.Hour,
	SettleAfter:       5 * time.Minute,
	UnknownCheck:      5 * time.Minute,
}

// Validate refuses limits that would break a rule: a zero client timeout
// would resend forever, a request-open limit beyond the idempotency window
// would resend a uuid the terminal has forgotten.
func (l Limits) Validate() error {
	for name, d := range map[string]time.Duration{
		"kiosk timeout": l.KioskTimeout, "counter timeout": l.CounterTimeout, "refund timeout": l.RefundTimeout,
		"request-open limit": l.RequestOpen, "idempotency window": l.Idempotency,
	} {
		if d <= 0 {
			return fmt.Errorf("payment: %s must be positive", name)
		}
	}
	if l.ResendPause < 0 || l.AbortGrace < 0 || l.AbortRetryPause < 0 || l.AbortRetryMax < 0 || l.IdempotencyMargin < 0 ||
		l.HistorySkew < 0 || l.SettleAfter < 0 || l.UnknownCheck < 0 {
		return fmt.Errorf("payment: pauses, margins and intervals must not be negative")
	}
	longest := max(l.KioskTimeout, l.CounterTimeout, l.RefundTimeout)
	if l.RequestOpen+longest+l.IdempotencyMargin >= l.Idempotency {
		return fmt.Errorf("payment: the request-open limit (%s) plus a client timeout (%s) plus the margin (%s) must be shorter than the idempotency window (%s)",
			l.RequestOpen, longest, l.IdempotencyMargin, l.Idempotency)
	}
	return nil
}

// lastSend is the latest moment a request first sent at first may be sent
// again: after it the terminal may have forgotten the uuid.
func (l Limits) lastSend(first time.Time) time.Time {
	return first.Add(l.Idempotency - l.IdempotencyMargin)
}

// Policy returns the policy of the given name with these limits.
func (l Limits) Policy(name journal.Policy) (Policy, error) {
	off := false
	switch name {
	case journal.PolicyKiosk:
		return Policy{Name: name, Kind: journal.KindDebit, ClientTimeout: l.KioskTimeout, GiftScreen: &off}, nil
	case journal.PolicyCounter:
		return Policy{Name: name, Kind: journal.KindDebit, ClientTimeout: l.CounterTimeout}, nil
	case journal.PolicyRefund:
		return Policy{Name: name, Kind: journal.KindRefund, ClientTimeout: l.RefundTimeout}, nil
	case journal.PolicyReversal:
		return Policy{Name: name, Kind: journal.KindReversal, ClientTimeout: l.RefundTimeout}, nil
	}
	return Policy{}, fmt.Errorf("payment: unknown policy %q", name)
}
