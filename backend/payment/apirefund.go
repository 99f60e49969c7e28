package payment

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/google/uuid"
)

// Refunds by API give back part or all of an approved debit without the
// card, through the provider's Webservices: the day after, when a reversal
// is no longer possible, or for a payment taken by a link or on another
// terminal. They are attempts of the journal like the others: kind refund,
// channel webservices, the transaction refunded in InitialTransactionID,
// the exact request committed before it leaves, and counted with the other
// refunds and reversals in what an order can still give back.

// Errors of StartAPIRefund, before anything is journaled or sent.
var (
	ErrNotWebservices = errors.New("payment: refunds by API go through the Webservices' orchestrator")
	// ErrNotRefundable: the provider's rules say no (a scheme it never
	// refunds by API, an amount above the original, a transaction not
	// approved).
	ErrNotRefundable = errors.New("payment: not refundable by API")
)

// nonRefundableByAPI are the means of payment the Webservices never refund
// (AMEX, China UnionPay, cash, the ANCV's and CONECS' vouchers), as the
// provider names them in a transaction's scheme or issuer.
var nonRefundableByAPI = []string{"AMEX", "AMERICAN EXPRESS", "CUP", "UNIONPAY", "UNION PAY", "CASH", "ANCV", "CONECS"}

// refundableByAPI reports why a scheme or issuer is not refundable by API,
// "" when it is.
func refundableByAPI(names ...string) string {
	for _, n := range names {
		up := " " + strings.Join(strings.FieldsFunc(strings.ToUpper(n), func(r rune) bool {
			return (r < 'A' || r > 'Z') && (r < '0' || r > '9')
		}), " ") + " "
		for _, no := range nonRefundableByAPI {
			if strings.Contains(up, " "+no+" ") {
				return n
			}
		}
	}
	return ""
}

// StartAPIRefund journals a refund by API of amount (cents) of an approved
// debit (its uuid) and starts driving it. Before anything is journaled the
// provider's rules are checked on the transaction as the Webservices fetch
// it (approved, a means of payment they refund, amount not above it); the
// journal then refuses a second refund of the transaction, or more than
// the order can still give back, in the same transaction as the new row.
func (o *Orchestrator) StartAPIRefund(ctx context.Context, debitUUID string, amount int64) (*Handle, error) {
	if err := o.accepting(); err != nil {
		return nil, err
	}
	ws, ok := o.ch.(*wsChannel)
	if !ok {
		return nil, ErrNotWebservices
	}
	debit, err := o.givingBackFrom(ctx, debitUUID, "refunded", "of the provider to refund")
	if err != nil {
		return nil, err
	}
	if err := o.givenBackFirst(ctx, debit.OrderID); err != nil {
		return nil, err
	}
	switch {
	case amount <= 0 || amount > debit.Total():
		return nil, fmt.Errorf("%w: the refund is more than zero and at most the %d taken, not %d", ErrNotRefundable, debit.Total(), amount)
	}
	if err := ws.refundable(ctx, debit.TransactionID, amount); err != nil {
		return nil, err
	}
	policy, err := o.cfg.Limits.Policy(journal.PolicyRefund)
	if err != nil {
		return nil, err
	}
	id, err := uuid.NewV7()
	if err != nil {
		return nil, fmt.Errorf("payment: new uuid: %w", err)
	}
	body, err := ws.Body(NewAttempt{UUID: id.String(), Policy: policy, Terminal: o.cfg.TerminalID,
		Request: Request{OrderID: debit.OrderID, Amount: amount, Policy: journal.PolicyRefund}})
	if err != nil {
		return nil, fmt.Errorf("payment: %w", err)
	}
	return o.prepareAndLaunch(ctx, policy, journal.Attempt{
		UUID: id.String(), OrderID: debit.OrderID, Kind: journal.KindRefund, Channel: journal.ChannelWebservices,
		Amount: amount, Policy: journal.PolicyRefund, Terminal: o.cfg.TerminalID + "/" + debit.TransactionID,
		InitialTransactionID: debit.TransactionID, RequestBody: body,
	}, nil)
}

// refundable checks the provider's rules on the transaction as fetched.
func (c *wsChannel) refundable(ctx context.Context, transactionID string, amount int64) error {
	d, err := c.api.Details(ctx, transactionID)
	if err != nil {
		return fmt.Errorf("payment: the transaction %s could not be fetched from the Webservices, so its refund rules could not be checked; nothing was sent: %w", transactionID, err)
	}
	status := strings.ToLower(strings.TrimSpace(d.Status))
	switch {
	case wsStatus(status, wsKO) || status == "pending" || status == "waiting":
		return fmt.Errorf("%w: the provider lists transaction %s as %q, not approved", ErrNotRefundable, transactionID, d.Status)
	case strings.Contains(status, "refund") || strings.Contains(status, "revers"):
		return fmt.Errorf("%w: the provider lists transaction %s as %q: it was given back already", ErrNotRefundable, transactionID, d.Status)
	case refundableByAPI(d.Scheme, d.Issuer) != "":
		return fmt.Errorf("%w: %s payments are not refunded by API; give it back on the terminal with the card", ErrNotRefundable, refundableByAPI(d.Scheme, d.Issuer))
	case d.TotalAmount > 0 && amount > d.TotalAmount:
		return fmt.Errorf("%w: the provider took %d in transaction %s, less than %d", ErrNotRefundable, d.TotalAmount, transactionID, amount)
	}
	return nil
}

// APIRefund runs a refund by API until its provider's first word is known
// (refunded, declined, pending, waiting) or ctx ends: a refund pending or
// waiting for a manager goes on by itself, followed by fetching.
func (o *Orchestrator) APIRefund(ctx context.Context, debitUUID string, amount int64) (View, error) {
	h, err := o.StartAPIRefund(context.WithoutCancel(ctx), debitUUID, amount)
	if err != nil {
		return View{}, err
	}
	select {
	case <-h.Done():
	case <-h.Said():
	case <-ctx.Done():
	}
	return h.View(), nil
}

// apiRefund drives one refund by API. The provider refunds a transaction
// once, so a request whose answer was lost is never sent again while the
// company's list may hold its refund: the list is searched first, and the
// request goes out again only when it shows none (a second refund would
// then be refused, and that refusal says nothing of the first: staff
// decide). Pending and waiting refunds are fetched until they end, for as
// long as they take (a manager may approve days later), every PollEvery
// at first and slower while nothing changes (RefundCadence); recovery
// resumes them.
type apiRefund struct {
	reversal // the journal and view helpers
	searches int
	// changedAt is when the refund last changed (its send, the provider's
	// new word): the fetches slow down from it.
	changedAt time.Time
}

type wsStep int

const (
	wsSend   wsStep = iota // send the journaled request
	wsFollow               // fetch the refund's transaction
	wsSearch               // search the company's list for it
	wsDone
)

// wsSearches is how many times the list is read, PollEvery apart, before
// a refund it does not show is asked for again.
const wsSearches = 3

func (v *apiRefund) run() {
	v.changedAt = v.now()
	next := wsSend
	switch {
	case v.att.SendCount > 0 && v.att.ProviderID != "":
		v.r.saidOnce.Do(func() { close(v.r.said) }) // resumed: the provider's word is journaled
		next = wsFollow
	case v.att.SendCount > 0:
		next = wsSearch
	}
	// Every step that ends the refund (finish) returns wsDone.
	for next != wsDone {
		if v.o.ctx.Err() != nil {
			return
		}
		switch next {
		case wsSend:
			next = v.send()
		case wsFollow:
			next = v.follow()
		case wsSearch:
			next = v.search()
		}
	}
}

// pause waits the refund's cadence, then goes to step; wsDone if the
// orchestrator closes meanwhile.
func (v *apiRefund) pause(step wsStep) wsStep {
	rules := v.ch.Rules()
	c := rules.Cadence
	if c.Every <= 0 {
		c = RefundCadence(rules.PollEvery)
	}
	c.Fast = max(c.Fast, v.r.policy.ClientTimeout)
	t := time.NewTimer(c.Pause(v.now().Sub(v.changedAt)))
	defer t.Stop()
	select {
	case <-t.C:
		return step
	case <-v.o.ctx.Done():
		return wsDone
	}
}

func (v *apiRefund) call(f func(context.Context, journal.Attempt) Answer) Answer {
	ctx, cancel := context.WithTimeout(v.o.ctx, v.r.policy.ClientTimeout)
	defer cancel()
	return f(ctx, v.att)
}

func (v *apiRefund) send() wsStep {
	if !v.markSent() {
		return wsDone
	}
	att := v.att
	a := v.call(v.ch.Send)
	if v.o.ctx.Err() != nil {
		return wsDone
	}
	switch a.Outcome {
	case OutcomeCharged:
		v.finish(journal.StateApproved, a.Raw, a.Charge, "refunded by API: refund transaction "+a.Charge.TransactionID)
		return wsDone
	case OutcomeNotCharged:
		v.finish(journal.StateDeclined, a.Raw, nil, "refused by the issuer: "+a.Message)
		return wsDone
	case OutcomePending:
		v.provider(a, "the provider has the refund ("+a.ProviderStatus+"): following it")
		return v.pause(wsFollow)
	case OutcomeRefused, OutcomeInvalid:
		if att.SendCount > 1 {
			v.finish(journal.StateUnknown, a.Raw, nil, "refused when asked again ("+a.Message+
				"): the first request may have made the refund, which the provider's list does not show; check the back office")
			return wsDone
		}
		v.finish(journal.StateFailed, a.Raw, nil, "not refunded: "+a.Message)
		return wsDone
	case OutcomeNotSent:
		if att.SendCount == 1 && !v.r.recovery {
			v.finish(journal.StateFailed, nil, nil, "the Webservices are unreachable: nothing was sent: "+a.Message)
			return wsDone
		}
	}
	v.record(a.Raw, "no clear answer ("+a.Outcome.String()+": "+a.Message+"): the company's list decides")
	return v.pause(wsSearch)
}

// provider journals the provider's id and word of the refund.
func (v *apiRefund) provider(a Answer, note string) {
	if newWord(v.att, a) {
		v.changedAt = v.now()
	}
	att, err := v.o.cfg.Journal.SetProvider(v.o.ctx, v.r.uuid, a.ProviderID, a.ProviderStatus, a.Raw, note)
	if err != nil {
		v.o.log.Error("journal the provider's word", "uuid", v.r.uuid, "err", err)
		return
	}
	v.att = att
	v.update(func(view *View) { view.setProvider(att) })
	v.r.saidOnce.Do(func() { close(v.r.said) })
}

func (v *apiRefund) follow() wsStep {
	a := v.call(v.ch.Follow)
	if v.o.ctx.Err() != nil {
		return wsDone
	}
	switch a.Outcome {
	case OutcomeCharged:
		v.finish(journal.StateApproved, a.Raw, a.Charge, "refunded by API: refund transaction "+a.Charge.TransactionID+" is done")
		return wsDone
	case OutcomeNotCharged:
		v.finish(journal.StateDeclined, a.Raw, nil, a.Message)
		return wsDone
	case OutcomePending:
	default:
		v.o.log.Warn("refund by API: fetching it failed", "uuid", v.r.uuid, "outcome", a.Outcome, "err", a.Message)
	}
	return v.pause(wsFollow)
}

func (v *apiRefund) search() wsStep {
	m, err := v.o.lookup(v.o.ctx, v.ch, v.att)
	if err != nil {
		if v.o.ctx.Err() != nil {
			return wsDone
		}
		v.record(nil, "the company's list could not be read: "+err.Error())
		return v.pause(wsSearch)
	}
	if m.Verdict == InHistory && m.Pending {
		v.provider(Answer{ProviderID: m.Charge.TransactionID, ProviderStatus: "pending", Raw: m.Raw}, "found in the company's list: "+m.String())
		return v.pause(wsFollow)
	}
	if v.settled(m, journal.StateDeclined, "refunded by API") {
		return wsDone
	}
	v.searches++
	if v.searches < wsSearches {
		return v.pause(wsSearch)
	}
	if v.att.SendCount > 1 {
		v.finish(journal.StateUnknown, nil, nil, "asked twice, and the company's list shows no refund: check the back office")
		return wsDone
	}
	// Not made: the provider refunds a transaction once, so the same
	// request makes it now, or is refused.
	v.record(nil, m.String()+": asking again")
	return wsSend
}

// ProviderCharge is one transaction of the company as the Webservices
// fetch it.
type ProviderCharge struct {
	TransactionID string
	Type, Status  string
	Amount        int64 // cents, the tip excluded
	GiftAmount    int64
	Serial        string // the terminal's; "" for an online payment
	Scheme        string
	At            time.Time
	Raw           []byte
}

// ProviderCharge fetches a transaction of the company (the Webservices'
// orchestrator only).
func (o *Orchestrator) ProviderCharge(ctx context.Context, transactionID string) (ProviderCharge, error) {
	ws, ok := o.ch.(*wsChannel)
	if !ok {
		return ProviderCharge{}, ErrNotWebservices
	}
	d, err := ws.api.Details(ctx, transactionID)
	if err != nil {
		return ProviderCharge{}, fmt.Errorf("payment: transaction %s: %w", transactionID, err)
	}
	at, _ := time.Parse(time.RFC3339, d.ServerDatetime)
	return ProviderCharge{TransactionID: d.TransactionID, Type: d.Type, Status: d.Status, Amount: d.AskedAmount, GiftAmount: d.GiftAmount,
		Serial: d.SerialNumber, Scheme: d.Scheme, At: at, Raw: d.Raw}, nil
}

// Approved reports whether the provider says the charge moved money.
func (c ProviderCharge) Approved() bool { return wsStatus(c.Status, wsOK) }
