package payment

import (
	"time"

	"github.com/comptoir-pos/comptoir/backend/journal"
)

// Emitter receives a snapshot of an attempt at every change. The Wails
// binding and the browser-mode server forward them to the UI; nothing here
// knows about either.
type Emitter interface {
	Emit(event string, data any)
}

// EventAttempt is the name of the event carrying a View.
const EventAttempt = "payment:attempt"

// AbortAnswer is what /abort said about a cancel request.
type AbortAnswer string

const (
	AbortNone        AbortAnswer = ""             // no cancel requested
	AbortPending     AbortAnswer = "pending"      // sent, no answer yet: show "Cancelling..."
	AbortOK          AbortAnswer = "ok"           // aborted before the handover
	AbortNotPossible AbortAnswer = "not_possible" // too late: the /payment answer decides
	AbortNothing     AbortAnswer = "nothing"      // nothing in progress on the terminal
	AbortBusy        AbortAnswer = "busy"         // another payment holds the terminal: this one is not running
	AbortDelivered   AbortAnswer = "delivered"    // the cancel reached the provider: the payment's own outcome decides
	AbortFailed      AbortAnswer = "failed"       // no usable answer yet: asked again while the cancel is in force
)

// View is a snapshot of one attempt for the UI and the command line.
type View struct {
	UUID    string         `json:"idempotentUuid"`
	OrderID string         `json:"order"`
	Kind    journal.Kind   `json:"kind"`
	Policy  journal.Policy `json:"policy"`
	State   journal.State  `json:"state"`
	// Amount is what was asked; ChargedAmount what the terminal says it
	// charged (or gave back), once it said so. GiftAmount is the terminal's
	// once it answered (a tip chosen on the terminal), else what was asked.
	Amount        int64  `json:"amount"`
	ChargedAmount int64  `json:"chargedAmount,omitempty"`
	GiftAmount    int64  `json:"giftAmount"`
	TransactionID string `json:"transactionId,omitempty"`
	// Message is the terminal's application error, or why the attempt
	// failed or is unknown, in words for staff.
	Message   string      `json:"message,omitempty"`
	SendCount int         `json:"sendCount"`
	Abort     AbortAnswer `json:"abort,omitempty"`
	// ChargedDespiteCancel: the customer pressed Cancel too late and was
	// charged; the order is paid and the kiosk must say so.
	ChargedDespiteCancel bool `json:"chargedDespiteCancel,omitempty"`
	// Channel is how the attempt reaches the provider.
	Channel journal.Channel `json:"channel,omitempty"`
	// Link is a payment link's address, once the provider gave it; Paid
	// what its customer has paid so far; Expires when the provider drops
	// it unpaid.
	Link    string    `json:"link,omitempty"`
	Paid    int64     `json:"paid,omitempty"`
	Expires time.Time `json:"expires,omitzero"`
	// ProviderStatus is the provider's last word while it runs, and after
	// (a link's cart "authorised": paid, to capture).
	ProviderStatus string `json:"providerStatus,omitempty"`
	// OrderPaid is true once the journal says the order is paid.
	OrderPaid bool `json:"orderPaid,omitempty"`
	// Flag says how an approval disagrees with what was asked (another
	// amount, currency or type): the journal does not count it as paid,
	// and staff must look at it.
	Flag string `json:"flag,omitempty"`
	// Charge is the provider's transaction the outcome was decided on (card
	// details and tickets for receipts).
	Charge *Charge `json:"-"`
	// Raw is the provider's answer the outcome was decided on.
	Raw []byte `json:"-"`
}

// Final reports whether the attempt has an outcome.
func (v View) Final() bool { return v.State.Final() }

// setProvider shows the provider's id and word of the attempt.
func (v *View) setProvider(att journal.Attempt) {
	v.ProviderStatus = att.ProviderStatus
	if att.Channel == journal.ChannelLink {
		v.Link = att.ProviderID
	}
}
