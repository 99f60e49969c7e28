package payment

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/comptoir-pos/comptoir/backend/journal"
)

// Channel is one way an attempt reaches the provider: the terminal's Local
// API on the LAN, the terminal through the provider's cloud, a payment
// link. A channel only speaks its protocol and says what each answer means
// in the words of this package (Answer, CancelAnswer, Match); every rule
// about money is the driver's, the same for every channel: the attempt
// journaled before anything leaves, one open attempt per order and per
// terminal, a resend or a poll after a timeout, the customer's cancel kept
// in force, an outcome never guessed, recovery at start-up.
//
// An attempt never changes channel: the journal records its channel, and
// recovery resumes it through the same one.
type Channel interface {
	// Name is the journal's name of the channel.
	Name() journal.Channel
	// Rules are the channel's protocol facts the driver relies on.
	Rules() ChannelRules
	// Body is the exact request of a new attempt. It is journaled before it
	// leaves and sent byte for byte ever after.
	Body(a NewAttempt) ([]byte, error)
	// Send sends a debit's or a refund's journaled body once.
	Send(ctx context.Context, a journal.Attempt) Answer
	// Follow asks how an attempt already sent stands, without sending it
	// again (a poll). A channel without one (Rules.FollowSends) is followed
	// by Send.
	Follow(ctx context.Context, a journal.Attempt) Answer
	// Cancel asks the provider to stop the attempt.
	Cancel(ctx context.Context, a journal.Attempt) CancelAnswer
	// Lookup looks the attempt up in the provider's history since the
	// given time: transactions another attempt holds (held) are never it.
	Lookup(ctx context.Context, a journal.Attempt, since time.Time, held Holder) (Match, error)
	// ReversalBody is the exact request reversing a debit, and Reverse
	// sends it once. A channel that cannot reverse answers an error.
	ReversalBody(debit journal.Attempt) ([]byte, error)
	Reverse(ctx context.Context, a journal.Attempt) Answer
}

// NotSentError wraps the error of a request that never left this machine
// (a refused connection, no route): the provider knows nothing of it.
type NotSentError struct{ Err error }

func (e *NotSentError) Error() string { return e.Err.Error() }
func (e *NotSentError) Unwrap() error { return e.Err }

// isSent reports whether a failed request may have reached the provider.
func isSent(err error) bool {
	var ns *NotSentError
	return !errors.As(err, &ns)
}

// Holder says which of these transactions an attempt of the journal holds.
type Holder func(ctx context.Context, ids []string) (map[string]bool, error)

// ChannelRules are what a channel's protocol guarantees, or does not.
type ChannelRules struct {
	// FollowSends: the channel has no way to ask about an attempt but to
	// send its request again (the Local API: the same idempotentUuid
	// attaches to the payment in progress or replays its outcome). Each
	// such resend is journaled, and after the customer's cancel none goes
	// out until the provider has shown it knows the attempt: a resend it
	// did not know would start the payment.
	FollowSends bool
	// PollEvery is the pause between two Follows while the provider says
	// the attempt is pending. Zero: the request itself waits for the
	// outcome (the Local API holds it open).
	PollEvery time.Duration
	// Cadence is how the pause between two Follows grows while nothing
	// changes (its Every is PollEvery); zero: PollEvery throughout.
	// HistoryCadence paces the searches of the history of an attempt
	// whose answer is missing; zero: CloudCadences' of PollEvery.
	Cadence, HistoryCadence Cadence
	// CancelDecides: an answer to Cancel can say the attempt was stopped,
	// or that nothing runs for it (the Local API's /abort). Otherwise a
	// cancel only reaches the provider, and the attempt's own outcome
	// decides.
	CancelDecides bool
	// ResendUntilKnown: asking again with the same request is safe (a
	// payment link's cart_id answers with the same link), and the only way
	// to learn the provider's id of an attempt whose answer was lost. Like
	// FollowSends, no resend leaves after the customer's cancel until the
	// provider has shown it knows the attempt.
	ResendUntilKnown bool
	// Concurrent: attempts do not hold a device, so several run side by
	// side; each is journaled under a terminal name of its own (the
	// orchestrator's TerminalID, "/", the order), and recovery resumes them
	// without waiting for their outcome.
	Concurrent bool
	// Lifetime is how long an attempt may wait for its outcome after its
	// first send, when the provider keeps it longer than a terminal holds
	// a request (a payment link: 72 h). Past it the driver cancels the
	// attempt itself, and the provider's answer decides. Zero: the
	// request-open limit and the policy's client timeout apply.
	Lifetime time.Duration
	// LifetimeMargin is waited past Lifetime for the provider to end the
	// attempt itself, before the driver cancels it.
	LifetimeMargin time.Duration
}

// NewAttempt is what a channel's Body is built from.
type NewAttempt struct {
	UUID     string
	Request  Request
	Policy   Policy
	Terminal string // the journal's name of the terminal
}

// Outcome is what one exchange with the provider said about an attempt.
type Outcome int

const (
	// OutcomeCharged: final, the money moved (Answer.Charge says how much).
	OutcomeCharged Outcome = iota + 1
	// OutcomeNotCharged: final, decided, nothing moved (a decline, a
	// payment stopped before a card was read, a reversal refused).
	OutcomeNotCharged
	// OutcomePending: the provider knows the attempt and it runs, or its
	// outcome is not known yet: follow it.
	OutcomePending
	// OutcomeRefused: the provider refused this request (ko with a
	// message, invalid): nothing was started by it.
	OutcomeRefused
	// OutcomeBusy: the provider is busy with another attempt: this one is
	// not running.
	OutcomeBusy
	// OutcomeInvalid: refused before it left this machine.
	OutcomeInvalid
	// OutcomeNotSent: the request never left this machine.
	OutcomeNotSent
	// OutcomeTimeout: no answer within the client timeout: it may be in
	// progress.
	OutcomeTimeout
	// OutcomeIndefinite: an answer that says nothing (HTTP 500, a reset,
	// an unreadable body): it may or may not have been processed.
	OutcomeIndefinite
	// OutcomeForeign: an answer about another attempt: never applied.
	OutcomeForeign
	// OutcomeExpired: the provider says it dropped the request without
	// delivering it (a terminal offline beyond the cloud's 5 s).
	OutcomeExpired
	// OutcomeEnded: final, nothing moved, and nobody declined it: the
	// provider ended the attempt (a payment link cancelled or expired).
	OutcomeEnded
	// OutcomeUnclear: final at the provider, but what it moved is not
	// clear from its answer (a link cancelled with payments in it): a
	// person decides.
	OutcomeUnclear
)

func (o Outcome) String() string {
	return [...]string{"?", "charged", "not charged", "pending", "refused", "busy with another attempt", "invalid",
		"not sent", "timeout", "no usable answer", "about another attempt", "expired", "ended", "unclear"}[o]
}

// Charge is a provider's transaction, in the words of this package: what
// the kiosk needs for receipts and the journal for its account.
type Charge struct {
	TransactionID string `json:"transactionId,omitempty"`
	Amount        int64  `json:"amount"`     // cents, gift excluded
	GiftAmount    int64  `json:"giftAmount"` // cents
	Currency      string `json:"currencyCode,omitempty"`
	// Type is the provider's transaction type ("debit", "refund", or a
	// word it does not list), when it named one.
	Type string `json:"transactionType,omitempty"`
	// Card details as the provider returned them for receipts (no card
	// number beyond what its tickets show).
	Scheme             string `json:"scheme,omitempty"`
	Issuer             string `json:"issuer,omitempty"`
	PaymentApplication string `json:"paymentApplication,omitempty"`
	ClientTicket       string `json:"clientTicket,omitempty"`
	MerchantTicket     string `json:"merchantTicket,omitempty"`
	// Approved: the transaction moved money (a transaction read from a
	// history may be a refused one).
	Approved bool `json:"approved"`
}

// Total is Amount + GiftAmount.
func (c Charge) Total() int64 { return c.Amount + c.GiftAmount }

// Answer is one exchange with the provider about an attempt.
type Answer struct {
	Outcome Outcome
	// Charge: the transaction of a final outcome, when the provider named
	// one.
	Charge *Charge
	// Known: the answer shows that the provider knows this attempt.
	Known bool
	// ProviderID and ProviderStatus: the provider's id of the attempt (an
	// acknowledgement's transactionId, a payment link) and its last word
	// while it runs.
	ProviderID     string
	ProviderStatus string
	// Paid is what the provider says is paid so far while the attempt
	// runs (a payment link paid in parts), in cents.
	Paid    int64
	Raw     []byte // the answer as received, for the journal
	Message string // the provider's message or the error, in words
}

// CancelOutcome is what one cancel exchange said.
type CancelOutcome int

const (
	CancelStopped     CancelOutcome = iota + 1 // stopped before it could charge
	CancelTooLate                              // it ran to its end: its own outcome decides
	CancelNothingRuns                          // nothing runs on the terminal
	CancelOtherRuns                            // another payment holds the terminal: not this one
	CancelDelivered                            // the request reached the provider: the attempt's outcome decides
	CancelNotSent                              // never left this machine
	CancelIndefinite                           // no usable answer
)

// CancelAnswer is one cancel exchange.
type CancelAnswer struct {
	Outcome CancelOutcome
	Raw     []byte
	Message string
}

func (k CancelOutcome) String() string {
	return [...]string{"?", "stopped", "not possible", "nothing to abort", "another payment runs", "this attempt runs",
		"delivered", "not sent", "no usable answer"}[k]
}

// view is what the UI is told of a cancel answer.
func (k CancelOutcome) view() AbortAnswer {
	switch k {
	case CancelStopped:
		return AbortOK
	case CancelTooLate:
		return AbortNotPossible
	case CancelNothingRuns:
		return AbortNothing
	case CancelOtherRuns:
		return AbortBusy
	case CancelDelivered:
		return AbortDelivered
	}
	return AbortFailed
}

// Verdict is what a provider's history says of an attempt.
type Verdict int

const (
	// NotInHistory: no transaction of the history can be the attempt.
	NotInHistory Verdict = iota
	// InHistory: exactly one is, and it names the attempt's order.
	InHistory
	// AmbiguousHistory: several could be, or one could be without naming
	// the order: a person decides.
	AmbiguousHistory
)

// Match is the outcome of a search of a provider's history.
type Match struct {
	Verdict    Verdict
	Charge     Charge // InHistory: the transaction
	Raw        []byte // InHistory: the history entry as read
	Candidates int    // how many entries could be the attempt
	// ProviderStatus: the transaction found is still running (a pending
	// cloud transaction): follow it.
	Pending bool
}

func (m Match) String() string {
	switch m.Verdict {
	case InHistory:
		status := "refused"
		switch {
		case m.Pending:
			status = "pending"
		case m.Charge.Approved:
			status = "approved"
		}
		return "transaction " + m.Charge.TransactionID + " (" + status + ") of the provider's history"
	case AmbiguousHistory:
		return strconv.Itoa(m.Candidates) + " transactions of the provider's history could be it"
	}
	return "no transaction of the provider's history is it"
}
