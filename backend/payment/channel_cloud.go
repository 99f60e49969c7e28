package payment

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/comptoir-pos/comptoir/backend/cloudapi"
	"github.com/comptoir-pos/comptoir/backend/device"
	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/localapi"
)

// CloudAPI is the part of the provider's Cloud API the cloud channel uses;
// *cloudapi.Client satisfies it.
type CloudAPI interface {
	Payment(ctx context.Context, body []byte) (*cloudapi.Ack, error)
	Transaction(ctx context.Context, id string) (*cloudapi.Transaction, error)
	Abort(ctx context.Context, serial, uuid string) (*cloudapi.Status, error)
	Reversal(ctx context.Context, body []byte) (*cloudapi.ReversalResponse, error)
	Transactions(ctx context.Context, r cloudapi.TransactionsRequest) (*cloudapi.TransactionsPage, error)
}

// Cloud is the channel of a terminal reached by its serial number through
// the provider's Cloud API: a payment is acknowledged with the server's id
// of its transaction, its outcome is polled every pollEvery, a cancel only
// reaches the terminal (the payment's own outcome decides), and the
// history is the company's transactions filtered by serial number. Every
// attempt carries its idempotentUuid and, as a second safety net, a
// checkoutExternalId of its own (the provider refuses a second completed
// ok with the same one).
func Cloud(api CloudAPI, serial string, vendor *localapi.Vendor, pollEvery time.Duration) Channel {
	if pollEvery <= 0 {
		pollEvery = 2 * time.Second
	}
	return &cloudChannel{api: api, serial: serial, vendor: vendor, pollEvery: pollEvery}
}

type cloudChannel struct {
	api       CloudAPI
	serial    string
	vendor    *localapi.Vendor
	pollEvery time.Duration
}

func (c *cloudChannel) Name() journal.Channel { return journal.ChannelCloud }

func (c *cloudChannel) Rules() ChannelRules {
	poll, history := CloudCadences(c.pollEvery)
	return ChannelRules{PollEvery: c.pollEvery, Cadence: poll, HistoryCadence: history}
}

// cloudPayment is the v5 payment: the Local API's request and the
// terminal's serial number.
type cloudPayment struct {
	SerialNumber string `json:"serialNumber"`
	localapi.PaymentRequest
}

func (c *cloudChannel) Body(a NewAttempt) ([]byte, error) {
	req, policy := a.Request, a.Policy
	p := localapi.PaymentRequest{
		Amount: req.Amount, TransactionType: string(policy.Kind), IdempotentUUID: a.UUID, CartID: req.OrderID,
		Customer: device.LocalCustomer(req.Customer), EnableGiftScreen: policy.GiftScreen, GiftAmount: req.GiftAmount,
		ReceiptTicket: device.LocalTicket(req.ReceiptTicket), Reference: req.Reference, Vendor: c.vendor,
		CheckoutExternalID:  req.CheckoutExternalID,
		ExternalTableNumber: req.ExternalTableNumber, ExternalOrderNumber: req.ExternalOrderNumber, ExternalOrderID: req.ExternalOrderID,
	}
	if p.CheckoutExternalID == "" {
		p.CheckoutExternalID = a.UUID
	}
	if req.AcceptedMedium != "" && policy.Kind == journal.KindDebit {
		p.AcceptedPayment = &localapi.AcceptedPayment{AcceptedMediumType: req.AcceptedMedium}
	}
	if policy.Kind == journal.KindRefund {
		p.EnableGiftScreen = nil // no optional screens on a refund
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if strings.TrimSpace(c.serial) == "" {
		return nil, &localapi.ValidationError{Field: "serialNumber", Reason: "the cloud terminal's serial number is not set"}
	}
	return json.Marshal(cloudPayment{SerialNumber: c.serial, PaymentRequest: p})
}

// Send posts the payment once: its answer is an acknowledgement, the
// outcome comes by polling.
func (c *cloudChannel) Send(ctx context.Context, a journal.Attempt) Answer {
	ack, err := c.api.Payment(ctx, a.RequestBody)
	if err != nil {
		return cloudError(err)
	}
	switch {
	case ack.Status == cloudapi.StatusOK && ack.TransactionID != "":
		return Answer{Outcome: OutcomePending, Known: true, ProviderID: ack.TransactionID, ProviderStatus: "accepted", Raw: ack.Raw}
	case ack.Status == cloudapi.StatusKO:
		return Answer{Outcome: OutcomeRefused, Raw: ack.Raw, Message: ack.Message}
	}
	// Accepted without an id to follow, or a status the specification
	// does not list: it may run; the history will say.
	return Answer{Outcome: OutcomeIndefinite, Raw: ack.Raw, Message: "acknowledgement without a transaction id: " + string(ack.Raw)}
}

// Follow polls the transaction the acknowledgement named.
func (c *cloudChannel) Follow(ctx context.Context, a journal.Attempt) Answer {
	if a.ProviderID == "" {
		return Answer{Outcome: OutcomeIndefinite, Message: "no acknowledged transaction to poll"}
	}
	tx, err := c.api.Transaction(ctx, a.ProviderID)
	if err != nil {
		return pollError(err)
	}
	// An answer naming another attempt, or another transaction than the
	// one polled, is not this attempt's: never applied.
	switch {
	case tx.IdempotentUUID != "" && tx.IdempotentUUID != a.UUID:
		return Answer{Outcome: OutcomeForeign, Raw: tx.Raw, Message: tx.IdempotentUUID}
	case tx.TransactionID != "" && tx.TransactionID != a.ProviderID:
		return Answer{Outcome: OutcomeForeign, Raw: tx.Raw, Message: tx.TransactionID}
	}
	ours := tx.TransactionID == a.ProviderID || tx.IdempotentUUID == a.UUID
	switch strings.ToLower(tx.Status) {
	case cloudapi.StatusOK:
		return Answer{Outcome: OutcomeCharged, Charge: cloudCharge(a, tx, true), Known: true, ProviderID: a.ProviderID, ProviderStatus: tx.Status, Raw: tx.Raw}
	case cloudapi.StatusKO:
		if tx.Message != "" && !ours {
			// ko with a message is an application error ("Transaction not
			// available yet"), not a decline, unless it names this very
			// transaction: asked again.
			return Answer{Outcome: OutcomeIndefinite, Raw: tx.Raw, Message: "the poll answered ko (" + tx.Message + ") naming no transaction: asking again"}
		}
		return Answer{Outcome: OutcomeNotCharged, Charge: cloudCharge(a, tx, false), Known: true, ProviderID: a.ProviderID, ProviderStatus: tx.Status, Raw: tx.Raw}
	case "expired":
		return Answer{Outcome: OutcomeExpired, Known: true, ProviderID: a.ProviderID, ProviderStatus: tx.Status, Raw: tx.Raw,
			Message: "the terminal did not receive the payment within 5 s (offline): nothing was charged"}
	}
	// pending, or a status the specification does not list: keep polling;
	// past the deadline the history decides.
	return Answer{Outcome: OutcomePending, Known: true, ProviderID: a.ProviderID, ProviderStatus: tx.Status, Raw: tx.Raw}
}

// cloudCharge is the polled transaction of a: the id polled when the
// answer does not repeat it (the poll names the transaction it answers).
func cloudCharge(a journal.Attempt, tx *cloudapi.Transaction, approved bool) *Charge {
	id := tx.TransactionID
	if id == "" {
		id = a.ProviderID
	}
	return &Charge{
		TransactionID: id, Amount: tx.Amount, GiftAmount: tx.GiftAmount, Currency: tx.CurrencyCode,
		Type: tx.TransactionType, Scheme: tx.Scheme, Issuer: tx.Issuer, PaymentApplication: tx.PaymentApplication,
		ClientTicket: tx.ClientTicket, MerchantTicket: tx.CompanyTicket, Approved: approved,
	}
}

// cloudError reads a failed exchange with the cloud.
func cloudError(err error) Answer {
	var (
		ae *cloudapi.APIError
		au *cloudapi.AuthError
	)
	switch {
	case errors.As(err, &ae):
		// HTTP 400 ko: the request was not accepted; nothing started.
		return Answer{Outcome: OutcomeRefused, Raw: ae.Body, Message: ae.Error()}
	case errors.As(err, &au):
		// The key or the terminal was refused: the payment was not accepted.
		return Answer{Outcome: OutcomeRefused, Message: au.Error() + ": staff must check the cloud settings"}
	}
	return exchangeError(err)
}

// pollError reads a failed read of an attempt's state (a poll, a cart, a
// refund's transaction): whatever failed, the read, not the payment, so
// it says nothing of the money. A refusal of the read (400, a key or a
// terminal refused with 401) is no refusal of the payment: it is asked
// again, and past the deadline the history, or staff, decide.
func pollError(err error) Answer {
	var (
		ae *cloudapi.APIError
		au *cloudapi.AuthError
	)
	switch {
	case errors.As(err, &ae):
		return Answer{Outcome: OutcomeIndefinite, Raw: ae.Body, Message: "the read was refused: " + ae.Error()}
	case errors.As(err, &au):
		// Its body is not journaled: a 401 may echo the key.
		return Answer{Outcome: OutcomeIndefinite, Message: "the read was refused: " + au.Error() + ": staff must check the cloud settings"}
	}
	return exchangeError(err)
}

// Cancel sends the abort with the attempt's uuid. Its ok only says the
// request reached the terminal: the payment's outcome decides.
func (c *cloudChannel) Cancel(ctx context.Context, a journal.Attempt) CancelAnswer {
	st, err := c.api.Abort(ctx, c.serial, a.UUID)
	if err == nil {
		return CancelAnswer{Outcome: CancelDelivered, Raw: st.Raw}
	}
	return cancelError(err)
}

func (c *cloudChannel) ReversalBody(debit journal.Attempt) ([]byte, error) {
	if debit.TransactionID == "" || debit.Total() <= 0 {
		return nil, &localapi.ValidationError{Field: "initialTransactionId", Reason: "a reversal needs the debit's transaction and amount"}
	}
	return json.Marshal(cloudapi.ReversalRequest{Amount: debit.Total(), InitialTransactionID: debit.TransactionID})
}

func (c *cloudChannel) Reverse(ctx context.Context, a journal.Attempt) Answer {
	r, err := c.api.Reversal(ctx, a.RequestBody)
	if err == nil {
		return reversed(a, r.ReversalTransactionID, r.Raw, "")
	}
	var (
		ae *cloudapi.APIError
		au *cloudapi.AuthError
	)
	switch {
	case errors.As(err, &ae) && strings.Contains(strings.ToLower(ae.Message), "already been reversed"):
		return reversed(a, "", ae.Body, ae.Message)
	case errors.As(err, &au):
		// A 401 names no reversal made or refused: the key, or the
		// terminal of the debit, was not accepted. The history decides,
		// never "failed": a reversal wrongly failed would let the money
		// be given back a second time.
		return Answer{Outcome: OutcomeIndefinite, Message: au.Error() + ": staff must check the cloud settings"}
	}
	return cloudError(err)
}

// cloudHistoryPage is how many transactions one history request asks for.
const cloudHistoryPage = 200

// Lookup searches the company's history for this terminal since the given
// time. The attempt's own checkoutExternalId or idempotentUuid names it;
// without them, a single transaction of its kind and amount for its order
// that no other attempt holds. The history is read as the terminal's is
// (device.ReadHistory): by whole days, every page within its ceiling,
// each transaction once, kept by its createdAt.
func (c *cloudChannel) Lookup(ctx context.Context, a journal.Attempt, since time.Time, held Holder) (Match, error) {
	h := &cloudHistory{api: c.api, serial: c.serial, listed: map[string]cloudapi.HistoryEntry{}}
	read, err := device.ReadHistory(ctx, h, since, time.Time{}, cloudHistoryPage, 0)
	if err != nil {
		return Match{}, lookupError(err)
	}
	entries := make([]cloudapi.HistoryEntry, len(read))
	for i, e := range read {
		entries[i] = h.listed[e.TransactionID]
	}
	extID := cloudExternalID(a)
	m, i, err := findInHistory(ctx, a, entries, held, func(e cloudapi.HistoryEntry) seen {
		mine := (e.IdempotentUUID != "" && e.IdempotentUUID == a.UUID) || (extID != "" && e.CheckoutExternalID == extID)
		return seen{transactionID: e.TransactionID, kind: e.Kind(), cartID: e.CartID, amount: e.Amount, giftAmount: e.GiftAmount,
			mine: mine, other: !mine && (e.IdempotentUUID != "" || e.CheckoutExternalID != "")}
	})
	if i >= 0 {
		return c.match(entries[i], m.Candidates), err
	}
	return m, err
}

func (c *cloudChannel) match(e cloudapi.HistoryEntry, candidates int) Match {
	m := Match{Verdict: InHistory, Candidates: candidates}
	m.Raw, _ = json.Marshal(e)
	approved, pending := HistoryStatus(e.Status)
	m.Pending = pending
	m.Charge = Charge{TransactionID: e.TransactionID, Amount: e.Amount, GiftAmount: e.GiftAmount, Currency: e.CurrencyCode,
		Scheme: e.Scheme, Issuer: e.Issuer, Approved: approved}
	return m
}

// cloudHistory is the company's history of the cloud terminal as a
// device.Historian, for device.ReadHistory. It keeps each transaction as
// the cloud listed it (its ids name attempts), by the id it gives the
// reader: the transaction's, or for one listed without an id a key no id
// takes, so that it stays apart.
type cloudHistory struct {
	api    CloudAPI
	serial string
	listed map[string]cloudapi.HistoryEntry
}

func (h *cloudHistory) History(ctx context.Context, q device.HistoryQuery) (device.HistoryPage, error) {
	p, err := h.api.Transactions(ctx, cloudapi.TransactionsRequest{SerialNumbers: []string{h.serial}, Timezone: "UTC",
		StartDate: q.StartDate, EndDate: q.EndDate, StartTime: q.StartTime, EndTime: q.EndTime, Limit: q.Limit, Offset: q.Offset})
	if err != nil {
		return device.HistoryPage{}, err
	}
	out := device.HistoryPage{Entries: make([]device.HistoryEntry, 0, len(p.Transactions)), Total: p.Total, Limit: p.Limit,
		Offset: p.Offset, Raw: p.Raw}
	for _, e := range p.Transactions {
		key := e.TransactionID
		if key == "" {
			key = "\x00" + strconv.Itoa(len(h.listed))
		}
		h.listed[key] = e
		out.Entries = append(out.Entries, device.HistoryEntry{Status: e.Status, TransactionID: key, Amount: e.Amount,
			GiftAmount: e.GiftAmount, CurrencyCode: e.CurrencyCode, Issuer: e.Issuer, Scheme: e.Scheme, Type: e.Kind(),
			CartID: e.CartID, Reference: e.Reference, CreatedAt: e.CreatedAt})
	}
	return out, nil
}

// cloudExternalID is the checkoutExternalId the attempt was sent with.
func cloudExternalID(a journal.Attempt) string {
	var b struct {
		CheckoutExternalID string `json:"checkoutExternalId"`
	}
	if json.Unmarshal(a.RequestBody, &b) != nil {
		return ""
	}
	return b.CheckoutExternalID
}
