package payment

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/comptoir-pos/comptoir/backend/cloudapi"
	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/localapi"
)

// WebservicesAPI is the part of the provider's Webservices a refund by API
// uses; *cloudapi.Webservices satisfies it.
type WebservicesAPI interface {
	Refund(ctx context.Context, originalID string, body []byte) (*cloudapi.Refund, error)
	Details(ctx context.Context, id string) (*cloudapi.TransactionDetails, error)
	BatchAll(ctx context.Context, r cloudapi.BatchRequest, now time.Time) ([]cloudapi.HistoryEntry, error)
}

// WebservicesOptions are the merchant's words on every refund by API.
type WebservicesOptions struct {
	// UserEmail is the back-office user who asks for the refunds. An
	// address the provider does not know, or without back-office access,
	// makes every refund wait for a manager's approval.
	UserEmail string
	Vendor    *localapi.Vendor
	// PollEvery is how often a refund not final yet is fetched; 0: 30 s.
	PollEvery time.Duration
	Now       func() time.Time // nil: time.Now
}

// Webservices is the channel of refunds by API: the provider refunds a
// transaction of the company without the card. A refund is asked once
// with its journaled body; pending (more checks) and waiting (a manager
// approves it in the back office) are followed by fetching the refund's
// own transaction until it ends; a lost answer is settled from the
// company's list of transactions, never by asking again blindly. Refunds
// run side by side, each journaled under a name of its own (the
// orchestrator's TerminalID, "/", the transaction refunded).
func Webservices(api WebservicesAPI, opts WebservicesOptions) Channel {
	if opts.PollEvery <= 0 {
		opts.PollEvery = 30 * time.Second
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &wsChannel{api: api, opts: opts}
}

type wsChannel struct {
	api  WebservicesAPI
	opts WebservicesOptions
}

func (c *wsChannel) Name() journal.Channel { return journal.ChannelWebservices }

func (c *wsChannel) Rules() ChannelRules {
	return ChannelRules{PollEvery: c.opts.PollEvery, Concurrent: true}
}

// wsRefundBody is the refund's request, in the Webservices' snake_case.
type wsRefundBody struct {
	Amount        int64                 `json:"amount"`
	UserEmail     string                `json:"user_email"`
	Vendor        cloudapi.RefundVendor `json:"vendor"`
	PrioritiseTip bool                  `json:"prioritise_tip"`
}

// Body is the refund of Request.Amount: the amount first, the tip after
// (prioritise_tip false), as the terminal's refunds do.
func (c *wsChannel) Body(a NewAttempt) ([]byte, error) {
	switch {
	case a.Policy.Kind != journal.KindRefund:
		return nil, &localapi.ValidationError{Field: "kind", Reason: "the Webservices only give money back"}
	case a.Request.GiftAmount != 0:
		return nil, &localapi.ValidationError{Field: "amount", Reason: "a refund by API asks for one amount, tip included"}
	case strings.TrimSpace(c.opts.UserEmail) == "":
		return nil, &localapi.ValidationError{Field: "user_email", Reason: "the back-office user of refunds by API is not set"}
	case c.opts.Vendor == nil || c.opts.Vendor.SoftwareName == "" || c.opts.Vendor.SoftwareVersion == "":
		return nil, &localapi.ValidationError{Field: "vendor", Reason: "the software's name and version are required"}
	}
	return json.Marshal(wsRefundBody{
		Amount: a.Request.Amount, UserEmail: strings.TrimSpace(c.opts.UserEmail),
		Vendor: cloudapi.RefundVendor{SoftwareName: c.opts.Vendor.SoftwareName, SoftwareVersion: c.opts.Vendor.SoftwareVersion},
	})
}

// Send asks for the refund of the attempt's transaction once. Each of the
// provider's answers is an outcome: refunded, pending or waiting (known,
// followed), not possible (the issuer declined), refused (the request's
// fields, or a refund the provider will not make: nothing was refunded by
// this request).
func (c *wsChannel) Send(ctx context.Context, a journal.Attempt) Answer {
	r, err := c.api.Refund(ctx, a.InitialTransactionID, a.RequestBody)
	var fe *cloudapi.FieldError
	var re *cloudapi.RefundError
	switch {
	case errors.As(err, &re):
		return Answer{Outcome: OutcomeRefused, Raw: re.Body, Message: re.Message}
	case errors.As(err, &fe):
		return Answer{Outcome: OutcomeRefused, Raw: fe.Body, Message: fe.Error()}
	case err != nil:
		return cloudError(err)
	}
	switch r.Status {
	case cloudapi.RefundRefunded:
		return Answer{Outcome: OutcomeCharged, Known: true, Raw: r.Raw, ProviderID: r.TransactionID, ProviderStatus: r.Status,
			Charge: &Charge{TransactionID: r.TransactionID, Amount: a.Amount, Approved: true}}
	case cloudapi.RefundNotPossible:
		return Answer{Outcome: OutcomeNotCharged, Known: true, Raw: r.Raw, Message: orDefault(r.Message, "refused by the issuer")}
	}
	// pending or waiting: the refund is the provider's, under its id.
	return Answer{Outcome: OutcomePending, Known: true, Raw: r.Raw, ProviderID: r.TransactionID, ProviderStatus: r.Status, Message: r.Message}
}

// Statuses of a fetched refund transaction that end it. The specification
// lists ok and ko for transactions, success and rejected for a refund's
// webhook; the others are words a provider may reasonably use. Any other
// status, and a refund not found yet, is still open.
var (
	wsOK = []string{"ok", "success", "succeeded", "refunded", "approved", "accepted", "completed", "done"}
	wsKO = []string{"ko", "rejected", "refused", "declined", "failed", "cancelled", "canceled", "not_possible", "expired", "aborted"}
)

func wsStatus(status string, in []string) bool {
	s := strings.ToLower(strings.TrimSpace(status))
	for _, v := range in {
		if s == v {
			return true
		}
	}
	return false
}

// Follow fetches the refund's own transaction (the provider's id of the
// attempt).
func (c *wsChannel) Follow(ctx context.Context, a journal.Attempt) Answer {
	if a.ProviderID == "" {
		return Answer{Outcome: OutcomeIndefinite, Message: "the refund's transaction is not known: the list decides"}
	}
	d, err := c.api.Details(ctx, a.ProviderID)
	var he *cloudapi.HTTPError
	switch {
	case errors.As(err, &he) && he.Status == 404:
		// Not a transaction yet (a refund waiting for its checks).
		return Answer{Outcome: OutcomePending, Known: true, Raw: he.Body, ProviderID: a.ProviderID, ProviderStatus: a.ProviderStatus}
	case err != nil:
		return pollError(err)
	case wsStatus(d.Status, wsOK):
		return Answer{Outcome: OutcomeCharged, Known: true, Raw: d.Raw, ProviderID: a.ProviderID, ProviderStatus: a.ProviderStatus,
			Charge: &Charge{TransactionID: a.ProviderID, Amount: a.Amount, Currency: "", Scheme: d.Scheme, Issuer: d.Issuer, Approved: true}}
	case wsStatus(d.Status, wsKO):
		return Answer{Outcome: OutcomeNotCharged, Known: true, Raw: d.Raw, Message: "the provider ended the refund: " + d.Status}
	}
	// Still open: the refund's own word (pending, waiting) stands.
	return Answer{Outcome: OutcomePending, Known: true, Raw: d.Raw, ProviderID: a.ProviderID, ProviderStatus: a.ProviderStatus}
}

// Cancel: a refund by API cannot be stopped once asked.
func (c *wsChannel) Cancel(context.Context, journal.Attempt) CancelAnswer {
	return CancelAnswer{Outcome: CancelNotSent, Message: "a refund by API cannot be stopped"}
}

// Lookup searches the company's transactions since the given time for the
// refund: a refund (its type says refund or credit) of the attempt's
// amount, on the terminal of the transaction refunded when both name one,
// of the same cart or reference when both name one, that no other attempt
// holds. The list names no original transaction, so two such refunds are
// ambiguous.
func (c *wsChannel) Lookup(ctx context.Context, a journal.Attempt, since time.Time, held Holder) (Match, error) {
	entries, err := CompanyList(ctx, c.api.BatchAll, cloudapi.BatchRequest{}, since, time.Time{}, c.opts.Now())
	if err != nil {
		return Match{}, lookupError(err)
	}
	var orig *cloudapi.HistoryEntry
	for i := range entries {
		if entries[i].TransactionID == a.InitialTransactionID {
			orig = &entries[i]
		}
	}
	if orig == nil {
		// Older than the window: its terminal and reference, as fetched,
		// tell another till's refund of the same amount from this one.
		if d, err := c.api.Details(ctx, a.InitialTransactionID); err == nil {
			orig = &cloudapi.HistoryEntry{TransactionID: d.TransactionID, SerialNumber: d.SerialNumber, Reference: d.Reference}
		}
	}
	isHeld, err := heldAmong(ctx, held, entries, func(e cloudapi.HistoryEntry) string { return e.TransactionID })
	if err != nil {
		return Match{}, err
	}
	var found []cloudapi.HistoryEntry
	for _, e := range entries {
		k := strings.ToLower(e.Kind())
		switch {
		case e.TransactionID == "" || isHeld[e.TransactionID] || e.TransactionID == a.InitialTransactionID:
		case !strings.Contains(k, "refund") && !strings.Contains(k, "credit"):
		case e.Amount != a.Amount && e.Amount+e.GiftAmount != a.Amount:
		case orig != nil && orig.SerialNumber != "" && e.SerialNumber != "" && orig.SerialNumber != e.SerialNumber:
		case orig != nil && orig.CartID != "" && e.CartID != "" && orig.CartID != e.CartID:
		case orig != nil && orig.Reference != "" && e.Reference != "" && orig.Reference != e.Reference:
		default:
			found = append(found, e)
		}
	}
	switch len(found) {
	case 0:
		return Match{Verdict: NotInHistory}, nil
	case 1:
		e := found[0]
		m := Match{Verdict: InHistory, Candidates: 1, Pending: !wsStatus(e.Status, wsOK) && !wsStatus(e.Status, wsKO)}
		m.Raw, _ = json.Marshal(e)
		m.Charge = Charge{TransactionID: e.TransactionID, Amount: a.Amount, Currency: e.CurrencyCode, Scheme: e.Scheme,
			Issuer: e.Issuer, Approved: wsStatus(e.Status, wsOK)}
		return m, nil
	}
	return Match{Verdict: AmbiguousHistory, Candidates: len(found)}, nil
}

// ReversalBody and Reverse: the Webservices do not reverse.
func (c *wsChannel) ReversalBody(journal.Attempt) ([]byte, error) {
	return nil, &localapi.ValidationError{Field: "initialTransactionId", Reason: "the Webservices refund; a reversal is made on the terminal"}
}

func (c *wsChannel) Reverse(context.Context, journal.Attempt) Answer {
	return Answer{Outcome: OutcomeInvalid, Message: "the Webservices do not reverse"}
}
