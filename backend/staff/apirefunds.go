package staff

import (
	"context"
	"errors"
	"fmt"
	"strings"

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
	v, err := s.cfg.Refunds.APIRefund(ctx, uuid, amount)
	if err != nil {
		s.audit(ctx, sess.Who, "refund_refused", uuid, fmt.Sprintf("refund by API of %d: %v", amount, err), nil)
		msg := "The refund could not be started: " + strings.TrimPrefix(err.Error(), "payment: ") + ". Nothing was sent."
		switch {
		case errors.Is(err, payment.ErrNotReady):
			msg = "The kiosk is still checking unfinished refunds with the provider: try again in a moment. Nothing was sent."
		case journal.ErrorCode(err) == journal.ECONFLICT:
			msg = "This payment cannot be refunded by API again: " + journal.ErrorMessage(err) + ". Nothing was sent."
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
