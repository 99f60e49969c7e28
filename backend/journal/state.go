package journal

// State is where a payment attempt stands. The journal enforces the
// transition table below; the orchestrator decides which transition to ask for.
type State string

const (
	// StatePrepared: committed, request not yet sent. Certainly never reached
	// the terminal, because MarkSent commits before the request leaves.
	StatePrepared State = "prepared"
	// StateSent: the request may have reached the terminal.
	StateSent State = "sent"
	// StateAbortRequested: the customer pressed Cancel and /abort was sent;
	// the /payment answer is still awaited and is authoritative.
	StateAbortRequested State = "abort_requested"

	StateApproved  State = "approved"
	StateDeclined  State = "declined"
	StateFailed    State = "failed"
	StateCancelled State = "cancelled"
	// StateUnknown: the request-open limit passed without an answer. Only
	// Resolve moves it, to approved or declined: staff's decision, or the
	// provider's history when it tells without doubt.
	StateUnknown State = "unknown"
)

// States lists every state, unresolved ones first.
var States = []State{
	StatePrepared, StateSent, StateAbortRequested,
	StateApproved, StateDeclined, StateFailed, StateCancelled, StateUnknown,
}

// openStatesSQL is the SQL form of Open(). It must be written exactly like this
// in every query that should use the partial indexes: SQLite uses a partial
// index only when the query's WHERE contains the index's WHERE term.
const openStatesSQL = `state IN ('prepared', 'sent', 'abort_requested')`

// Valid reports whether s is one of the states above.
func (s State) Valid() bool {
	for _, v := range States {
		if s == v {
			return true
		}
	}
	return false
}

// Open reports whether the attempt is unresolved: it blocks a new attempt on
// its order and its terminal, and recovery must resume it.
func (s State) Open() bool {
	return s == StatePrepared || s == StateSent || s == StateAbortRequested
}

// Final reports whether the attempt has an outcome. Nothing leaves a final
// state, except Resolve on unknown.
func (s State) Final() bool { return s.Valid() && !s.Open() }

// transitions is the table the journal enforces. prepared cannot become
// approved, declined or unknown: a prepared request never left the process.
// sent→sent is a deliberate resend. An attempt in abort_requested is resent
// through MarkSent without leaving abort_requested (see MarkSent).
var transitions = map[State][]State{
	StatePrepared: {StateSent, StateFailed, StateCancelled},
	StateSent: {StateSent, StateAbortRequested,
		StateApproved, StateDeclined, StateFailed, StateCancelled, StateUnknown},
	StateAbortRequested: {StateApproved, StateDeclined, StateFailed, StateCancelled, StateUnknown},
}

// CanTransition reports whether Transition(from, to) is in the table.
func CanTransition(from, to State) bool {
	for _, s := range transitions[from] {
		if s == to {
			return true
		}
	}
	return false
}

// Kind is what an attempt asks of the terminal.
type Kind string

const (
	KindDebit  Kind = "debit"
	KindRefund Kind = "refund"
	// KindReversal gives back a whole approved debit (amount + gift) on the
	// terminal that took it; its InitialTransactionID names the debit's
	// transaction.
	KindReversal Kind = "reversal"
)

// GivesBack reports whether the attempt's money goes back to the customer.
func (k Kind) GivesBack() bool { return k == KindRefund || k == KindReversal }

// Channel is how an attempt reaches the provider. It never changes.
type Channel string

const (
	ChannelLocal Channel = "local" // the terminal's Local API, on the LAN
	ChannelCloud Channel = "cloud" // the terminal through the provider's Cloud API
	ChannelLink  Channel = "link"  // a payment link the customer pays on a phone
	// ChannelWebservices: the provider's server-to-server API (refunds
	// without the card).
	ChannelWebservices Channel = "webservices"
)

// Valid reports whether c is a channel this build knows.
func (c Channel) Valid() bool {
	switch c {
	case ChannelLocal, ChannelCloud, ChannelLink, ChannelWebservices:
		return true
	}
	return false
}

// Policy is the timeout and screen policy the attempt was sent under.
type Policy string

const (
	PolicyKiosk   Policy = "kiosk"
	PolicyCounter Policy = "counter"
	PolicyRefund  Policy = "refund"
	// PolicyReversal: a /reversal request, answered at once.
	PolicyReversal Policy = "reversal"
)

// OrderStatus is the journal's conclusion about an order (StatusOf).
type OrderStatus string

const (
	OrderOpen           OrderStatus = "open"
	OrderPaid           OrderStatus = "paid"
	OrderCancelled      OrderStatus = "cancelled"
	OrderNeedsAttention OrderStatus = "needs_attention"
)

// Valid reports whether s is a known order status.
func (s OrderStatus) Valid() bool {
	switch s {
	case OrderOpen, OrderPaid, OrderCancelled, OrderNeedsAttention:
		return true
	}
	return false
}

// EventKind says what an attempt event records.
type EventKind string

const (
	EventPrepared   EventKind = "prepared"   // the attempt was created
	EventSent       EventKind = "sent"       // first send
	EventResent     EventKind = "resent"     // a deliberate resend of the same body
	EventResponse   EventKind = "response"   // an answer that did not change the state
	EventTransition EventKind = "transition" // a state change
	EventResolution EventKind = "resolution" // staff resolved an unknown attempt
	EventNote       EventKind = "note"       // free text for the audit trail
	// EventAdopted: a charge found in the provider's history, recorded as
	// an approved debit of an order of its own (AdoptCharge).
	EventAdopted EventKind = "adopted"
	// EventCaptured: an approved link whose cart was only authorised moved
	// on at the provider (captured, or released): RecordCapture.
	EventCaptured EventKind = "captured"
	// EventAccepted: staff accepted an approval that disagreed with its
	// request (AcceptOrder): its flag was lifted.
	EventAccepted EventKind = "accepted"
)
