package payment

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/comptoir-pos/comptoir/backend/device"
	"time"

	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/localapi"
)

// Terminal is the part of the Local API the local channel uses;
// *localapi.Client and *discovery.Tracker satisfy it. A terminal found
// again at a new address (discovery) keeps its identity, so attempts in
// flight keep their uuid.
type Terminal interface {
	PaymentBody(ctx context.Context, body []byte) (*localapi.Transaction, error)
	Abort(ctx context.Context, req *localapi.AbortRequest) (*localapi.AbortResponse, error)
	ReversalBody(ctx context.Context, body []byte) (*localapi.ReversalResponse, error)
	localapi.Transactor
}

// Local is the channel of a terminal on the LAN, through its Local API:
// the outcome comes in the answer to /payment, a resend of the same body
// with the same idempotentUuid attaches to the payment in progress or
// replays its outcome, /abort says whether it stopped the payment, and
// /transactions is the terminal's history. vendor (may be nil) goes with
// every payment, for the provider's support; pageTimeout bounds each page
// of history read.
func Local(t Terminal, vendor *localapi.Vendor, pageTimeout time.Duration) Channel {
	return &localChannel{t: t, vendor: vendor, pageTimeout: pageTimeout}
}

type localChannel struct {
	t           Terminal
	vendor      *localapi.Vendor
	pageTimeout time.Duration
}

func (c *localChannel) Name() journal.Channel { return journal.ChannelLocal }

func (c *localChannel) Rules() ChannelRules {
	return ChannelRules{FollowSends: true, CancelDecides: true}
}

// Body is the exact /payment JSON the terminal receives, every time.
func (c *localChannel) Body(a NewAttempt) ([]byte, error) {
	req, policy := a.Request, a.Policy
	p := &localapi.PaymentRequest{
		Amount: req.Amount, TransactionType: string(policy.Kind), IdempotentUUID: a.UUID, CartID: req.OrderID,
		Customer: device.LocalCustomer(req.Customer), EnableGiftScreen: policy.GiftScreen, GiftAmount: req.GiftAmount,
		ReceiptTicket: device.LocalTicket(req.ReceiptTicket), Reference: req.Reference, Vendor: c.vendor,
	}
	if req.AcceptedMedium != "" && policy.Kind == journal.KindDebit {
		p.AcceptedPayment = &localapi.AcceptedPayment{AcceptedMediumType: req.AcceptedMedium}
	}
	if req.UseExternalIDs || req.CheckoutExternalID != "" {
		p.CheckoutExternalID = req.CheckoutExternalID
		if p.CheckoutExternalID == "" {
			p.CheckoutExternalID = a.UUID
		}
		p.ExternalTableNumber, p.ExternalOrderNumber, p.ExternalOrderID = req.ExternalTableNumber, req.ExternalOrderNumber, req.ExternalOrderID
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return json.Marshal(p)
}

func (c *localChannel) Send(ctx context.Context, a journal.Attempt) Answer {
	tx, err := c.t.PaymentBody(ctx, a.RequestBody)
	return localAnswer(a.UUID, tx, err)
}

// Follow on the Local API is the same request again: it attaches to the
// payment in progress, or replays its outcome.
func (c *localChannel) Follow(ctx context.Context, a journal.Attempt) Answer { return c.Send(ctx, a) }

func (c *localChannel) Cancel(ctx context.Context, a journal.Attempt) CancelAnswer {
	resp, err := c.t.Abort(ctx, &localapi.AbortRequest{IdempotentUUID: a.UUID})
	return localCancel(resp, err)
}

func (c *localChannel) ReversalBody(debit journal.Attempt) ([]byte, error) {
	req := localapi.ReversalRequest{Amount: debit.Total(), InitialTransactionID: debit.TransactionID}
	if err := req.Validate(); err != nil {
		return nil, err
	}
	return json.Marshal(req)
}

func (c *localChannel) Reverse(ctx context.Context, a journal.Attempt) Answer {
	resp, err := c.t.ReversalBody(ctx, a.RequestBody)
	if err == nil {
		return reversed(a, resp.ReversalTransactionID, resp.Raw, "")
	}
	var ae *localapi.APIError
	if errors.As(err, &ae) && ae.Code == localapi.CodeReversalAlready {
		// Reversed already, by this attempt's earlier request or on the
		// terminal itself: either way the debit is given back, once.
		return reversed(a, "", ae.Raw, ae.Message)
	}
	return localError(a.UUID, err)
}

// localAnswer reads one /payment exchange for the attempt with this uuid.
func localAnswer(id string, tx *localapi.Transaction, err error) Answer {
	if tx != nil {
		switch {
		case tx.IdempotentUUID != "" && tx.IdempotentUUID != id:
			// About another attempt: never applied to this one. An answer
			// without the echo is the answer to this request (keys whose
			// value is null are left out: the specification's rule 7).
			return Answer{Outcome: OutcomeForeign, Raw: tx.Raw, Message: tx.IdempotentUUID}
		case tx.Approved():
			return Answer{Outcome: OutcomeCharged, Charge: localCharge(tx), Raw: tx.Raw, Known: true}
		default:
			return Answer{Outcome: OutcomeNotCharged, Charge: localCharge(tx), Raw: tx.Raw, Known: true}
		}
	}
	return localError(id, err)
}

// localError reads a Local API error for the attempt with this uuid.
func localError(id string, err error) Answer {
	var ae *localapi.APIError
	switch {
	case errors.As(err, &ae) && ae.Code == localapi.CodeBusy:
		// Another payment holds the terminal, whichever uuid the message
		// names: the specification does not say whether it is the one asked
		// for or the one running, and a resend of a uuid the terminal runs
		// attaches to it instead. So it never shows that the terminal knows
		// this attempt.
		return Answer{Outcome: OutcomeBusy, Raw: ae.Raw, Message: ae.Message}
	case errors.As(err, &ae):
		a := Answer{Outcome: OutcomeRefused, Raw: ae.Raw, Message: ae.Message}
		if tx := ownTransaction(id, ae.Raw); tx != nil {
			// A ko with its reason, on the terminal's own record of this
			// attempt (its transaction, naming this uuid): the terminal
			// replays it as is to every resend.
			a.Known, a.Charge = true, localCharge(tx)
		}
		return a
	}
	return exchangeError(err)
}

// ownTransaction is the transaction raw describes when it is the
// terminal's record of the attempt with this uuid: it names the uuid and a
// transaction id. Nil otherwise.
func ownTransaction(id string, raw []byte) *localapi.Transaction {
	var tx localapi.Transaction
	if json.Unmarshal(raw, &tx) != nil || tx.IdempotentUUID != id || tx.TransactionID == "" {
		return nil
	}
	tx.Raw = raw
	return &tx
}

func localCharge(tx *localapi.Transaction) *Charge {
	return &Charge{
		TransactionID: tx.TransactionID, Amount: tx.Amount, GiftAmount: tx.GiftAmount, Currency: tx.CurrencyCode,
		Type: tx.TransactionType, Scheme: tx.Scheme, Issuer: tx.Issuer, PaymentApplication: tx.PaymentApplication,
		ClientTicket: tx.ClientCardTicket, MerchantTicket: tx.MerchantCardTicket, Approved: tx.Approved(),
	}
}

// localCancel reads one /abort exchange.
func localCancel(resp *localapi.AbortResponse, err error) CancelAnswer {
	if err == nil {
		return CancelAnswer{Outcome: CancelStopped, Raw: resp.Raw}
	}
	var ae *localapi.APIError
	if errors.As(err, &ae) {
		a := CancelAnswer{Raw: ae.Raw, Message: ae.Message}
		switch {
		case ae.Code == localapi.CodeAbortNotPossible:
			a.Outcome = CancelTooLate
		case ae.Code == localapi.CodeNothingToAbort:
			a.Outcome = CancelNothingRuns
		case ae.Code == localapi.CodeBusy, ae.Code == localapi.CodeAbortNotAllowed:
			// "already in progress" answers an /abort that targets another
			// transaction than the running one (the specification), whichever
			// uuid its message names.
			a.Outcome = CancelOtherRuns
		default:
			// "Error while responding to local API", a ko without message,
			// a message the specification does not list: no answer.
			a.Outcome = CancelIndefinite
		}
		return a
	}
	return cancelError(err)
}

// Lookup searches the terminal's history since the given time by the rule
// of findInHistory; the Local API's history names no attempt by its ids. A
// transaction whose time cannot be read is kept among the candidates: it
// may be the attempt.
func (c *localChannel) Lookup(ctx context.Context, a journal.Attempt, since time.Time, held Holder) (Match, error) {
	entries, err := device.ReadHistory(ctx, device.LocalHistory(c.t), since, time.Time{}, 0, c.pageTimeout)
	if err != nil {
		return Match{}, lookupError(err)
	}
	m, i, err := findInHistory(ctx, a, entries, held, func(e device.HistoryEntry) seen {
		return seen{transactionID: e.TransactionID, kind: e.Type, cartID: e.CartID, amount: e.Amount, giftAmount: e.GiftAmount}
	})
	if i >= 0 {
		e := entries[i]
		m.Raw, _ = json.Marshal(e)
		approved, pending := HistoryStatus(e.Status)
		m.Pending = pending
		m.Charge = Charge{TransactionID: e.TransactionID, Amount: e.Amount, GiftAmount: e.GiftAmount, Currency: e.CurrencyCode,
			Scheme: e.Scheme, Issuer: e.Issuer, Approved: approved}
	}
	return m, err
}
