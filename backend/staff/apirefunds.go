package staff

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/comptoir-pos/comptoir/backend/fault"
	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/payment"
)

// OffersAPIRefunds reports whether refunds by API (without the card, the
// provider's Webservices) are set up.
func (s *Staff) OffersAPIRefunds() bool { return s.cfg.Refunds != nil }

// RefundByAPI refunds amount (cents) of an approved debit (its uuid)
// without the card, through the provider's Webservices: an attempt of its
// own, journaled before it leaves, checked against the provider's rules
// first (one refund per transaction, not above it, not a means of payment
// it never refunds by API) and against what the order can still give
// back. It returns once the provider has said something: refunded,
// declined, or pending or waiting for a manager's approval (its link is
// in the view), which goes on by itself.
func (s *Staff) RefundByAPI(ctx context.Context, sessionID, uuid string, amount int64) (AttemptView, error) {
	sess, err := s.session(sessionID)
	if err != nil {
		return AttemptView{}, err
	}
	if s.cfg.Refunds == nil {
		return AttemptView{}, errorf(ETERMINAL, "Refunds without the card are not available: the provider's Webservices are not set up.")
	}
	if amount <= 0 {
		return AttemptView{}, errorf(EINVALID, "The amount to refund must be more than zero.")
	}
	s.actMu.Lock()
	defer s.actMu.Unlock()
	if debit, err := s.cfg.Journal.Attempt(ctx, uuid); err == nil {
		if err := s.beforeGivingBack(ctx, sess.Who, debit.OrderID); err != nil {
			return AttemptView{}, err
		}
	}
	v, err := s.cfg.Refunds.APIRefund(ctx, uuid, amount)
	if err != nil {
		s.audit(ctx, sess.Who, "refund_refused", uuid, fmt.Sprintf("refund by API of %d: %v", amount, err), nil)
		msg := "The refund could not be started: " + strings.TrimPrefix(err.Error(), "payment: ") + ". Nothing was sent."
		switch {
		case errors.Is(err, payment.ErrNotReady):
			msg = "The kiosk is still checking unfinished refunds with the provider: try again in a moment. Nothing was sent."
		case fault.CodeOf(err) == fault.ECONFLICT:
			msg = "This payment cannot be refunded by API again: " + fault.MessageOf(err) + ". Nothing was sent."
		}
		return AttemptView{}, &Error{Code: EINVALID, Message: msg, Err: err}
	}
	s.note(ctx, v.UUID, sess.Who, fmt.Sprintf("refund by API of %d asked by staff: %s %s %s", amount, v.State, v.ProviderStatus, v.Message))
	att, err := s.cfg.Journal.Attempt(ctx, v.UUID)
	if err != nil {
		return AttemptView{}, journalErr(err, "Reading the refund")
	}
	view := s.view(ctx, att, nil)
	switch att.State {
	case journal.StateFailed:
		return view, errorf(ETERMINAL, "The provider did not make the refund: %s. Nothing was refunded.", att.Error)
	case journal.StateDeclined:
		return view, errorf(ETERMINAL, "The card's issuer refused the refund: nothing was refunded. Give it back another way.")
	case journal.StateUnknown:
		return view, errorf(EUNKNOWN, "The refund was asked, and whether the provider made it is not clear: it is listed under \"needs attention\". Do not give this money back another way before it is settled.")
	}
	return view, nil
}

// RefundTransactionByAPI refunds in full, without the card, a charge of the
// provider's that the journal does not know (found by the day's check,
// too old to reverse): the charge is first recorded in the journal as what
// it is (an approved debit of an order of its own, from the transaction
// the Webservices fetch, never typed), then refunded like any other. A
// charge the journal holds is refunded for what its order can still give
// back.
func (s *Staff) RefundTransactionByAPI(ctx context.Context, sessionID, transactionID string) (AttemptView, error) {
	sess, err := s.session(sessionID)
	if err != nil {
		return AttemptView{}, err
	}
	if s.cfg.Refunds == nil {
		return AttemptView{}, errorf(ETERMINAL, "Refunds without the card are not available: the provider's Webservices are not set up.")
	}
	if transactionID == "" {
		return AttemptView{}, errorf(EINVALID, "Choose the transaction to refund.")
	}
	att, err := s.cfg.Journal.AttemptByTransaction(ctx, transactionID)
	switch {
	case err == nil && att.Kind == journal.KindDebit && att.State == journal.StateApproved:
	case err == nil:
		return AttemptView{}, errorf(EINVALID, "The journal holds transaction %s as a %s %s: only an approved card payment can be refunded.", transactionID, att.State, att.Kind)
	case fault.CodeOf(err) != fault.ENOTFOUND:
		return AttemptView{}, journalErr(err, "Finding the transaction")
	default:
		if att, err = s.adoptFromProvider(ctx, sess, transactionID); err != nil {
			return AttemptView{}, err
		}
	}
	m, err := s.cfg.Journal.OrderMoney(ctx, att.OrderID)
	if err != nil {
		return AttemptView{}, journalErr(err, "Reading the order's money")
	}
	amount := min(m.Givable(), att.Total())
	if amount <= 0 {
		return AttemptView{}, errorf(EINVALID, "Nothing is left to give back on this payment.")
	}
	return s.RefundByAPI(ctx, sessionID, att.UUID, amount)
}

// adoptFromProvider records a charge of the provider's that no attempt
// holds, as an approved debit of an order of its own.
func (s *Staff) adoptFromProvider(ctx context.Context, sess Session, transactionID string) (journal.Attempt, error) {
	pc, err := s.cfg.Refunds.ProviderCharge(ctx, transactionID)
	if err != nil {
		return journal.Attempt{}, errorf(ETERMINAL, "The provider's record of transaction %s could not be read: %v. Nothing was sent.", transactionID, err)
	}
	if !strings.EqualFold(pc.Type, "debit") || !pc.Approved() || pc.Amount <= 0 {
		return journal.Attempt{}, errorf(EINVALID, "Only an approved card payment can be refunded; the provider lists this one as a %s (%s).", pc.Type, pc.Status)
	}
	currency := s.currency(ctx)
	channel, terminal := pc.Origin()
	at := pc.At
	if at.IsZero() {
		at = s.now()
	}
	att, err := s.cfg.Journal.AdoptCharge(ctx, journal.AdoptedCharge{
		TransactionID: transactionID, Amount: pc.Amount, GiftAmount: pc.GiftAmount, Currency: currency, Terminal: terminal,
		Channel: channel, At: at, Raw: pc.Raw, Who: sess.Who,
	})
	if err != nil {
		return journal.Attempt{}, journalErr(err, "Recording the provider's charge")
	}
	s.audit(ctx, sess.Who, "charge_adopted", transactionID, fmt.Sprintf("a charge of %d (gift %d) the journal did not know, recorded as attempt %s of order %s before its refund by API",
		pc.Amount, pc.GiftAmount, att.UUID, att.OrderID), pc.Raw)
	return att, nil
}
