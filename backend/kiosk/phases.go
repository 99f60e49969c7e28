package kiosk

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"time"
)

// checkout is the state behind CheckoutView.
type checkout struct {
	gen      int // a new checkout (Start, back to welcome) ends the old one's work
	phase    Phase
	language string
	dining   Dining // "" until the customer says, when the shop asks
	lines    []cartLine
	order    *order
	payment  *PaymentView
	receipt  *ReceiptView
	err      string
	att      *attempt // the attempt out, or about to be
	last     *attempt // the last attempt that ended
}

// moves is the phase machine: the phases the checkout may go to from each
// one. Every change of phase goes through enterLocked, which holds it to
// this table (phases_test.go walks it, and fails the package's tests when
// the code makes a change it does not have). A phase to itself is no
// change.
var moves = map[Phase][]Phase{
	PhaseWelcome:  {PhaseDining, PhaseOrdering, PhaseUnavailable},
	PhaseDining:   {PhaseOrdering, PhaseWelcome, PhaseUnavailable},
	PhaseOrdering: {PhasePaying, PhaseWelcome, PhaseUnavailable},
	// An attempt out ends in its outcome; the order that could not be
	// recorded goes back to the cart; a payment link whose QR code was
	// printed runs on without the screen, which goes back to welcome.
	PhasePaying: {PhaseCanceling, PhaseApproved, PhaseDeclined, PhaseFailed, PhaseUnknown, PhaseOrdering, PhaseWelcome},
	// Cancel pressed: the terminal's answer decides, charged included.
	PhaseCanceling: {PhaseApproved, PhaseDeclined, PhaseFailed, PhaseUnknown, PhaseOrdering, PhaseWelcome},
	PhaseApproved:  {PhaseWelcome},
	// Not charged: another attempt, or the order given up.
	PhaseDeclined: {PhasePaying, PhaseWelcome},
	PhaseFailed:   {PhasePaying, PhaseWelcome},
	// Only staff leave unknown (Release).
	PhaseUnknown:     {PhaseWelcome},
	PhaseUnavailable: {PhaseWelcome},
}

// canMove reports whether the table has the change from → to.
func canMove(from, to Phase) bool {
	return from == to || slices.Contains(moves[from], to)
}

// strayMoves counts the changes of phase the table does not have, each
// also logged: a bug, which the package's tests fail on.
var strayMoves atomic.Int64

// enterLocked moves the checkout to phase to.
func (s *Service) enterLocked(to Phase) {
	if from := s.co.phase; !canMove(from, to) {
		strayMoves.Add(1)
		s.log.Error("a phase change outside the table", "from", from, "to", to)
	}
	s.co.phase = to
}

// resetLocked ends the checkout: a new generation, no cart, no order.
func (s *Service) resetLocked(phase Phase) {
	s.co = checkout{gen: s.co.gen + 1, phase: s.co.phase, language: s.settings.DefaultLanguage}
	s.enterLocked(phase)
}

// Finish returns to the welcome screen once the order is paid (approved).
// An unknown outcome is not the customer's to close: staff Release it.
func (s *Service) Finish() (CheckoutView, error) {
	return s.intent(func() string {
		if s.co.phase != PhaseApproved {
			return ErrWrongPhase
		}
		s.resetLocked(PhaseWelcome)
		s.availabilityLocked()
		return ""
	}), nil
}

// Release is staff closing the customer screen: from unknown (the order
// stays needs_attention, staff settle it from the journal), from declined
// or failed (the order is cancelled, or needs_attention when a part was
// charged), or from ordering and approved. Refused while a payment is
// out: the terminal may still charge.
func (s *Service) Release() (CheckoutView, error) { return s.leave(PhaseUnknown) }

// CancelOrder gives up an order that was not charged: declined/failed →
// welcome. Refused once a part was charged (ErrPartlyPaid).
func (s *Service) CancelOrder() (CheckoutView, error) {
	var ord *order
	v := s.intent(func() string {
		if s.co.phase != PhaseDeclined && s.co.phase != PhaseFailed {
			return ErrWrongPhase
		}
		if s.co.payment != nil && s.co.payment.Paid > 0 {
			return ErrPartlyPaid
		}
		ord = s.co.order
		s.resetLocked(PhaseWelcome)
		s.availabilityLocked()
		return ""
	})
	s.closeOrder(ord, 0)
	return v, nil
}

// Abandon is the idle timeout: back to welcome from ordering, declined,
// failed or approved (no receipt). Never while a payment is out, nor from
// unknown (staff must see the order number).
func (s *Service) Abandon() (CheckoutView, error) { return s.leave() }

// leave goes back to welcome from ordering, approved, declined, failed or
// one of also; an order left declined or failed is closed (closeOrder).
// Never while a payment is out.
func (s *Service) leave(also ...Phase) (CheckoutView, error) {
	var (
		ord, unknown *order
		paid         int64
	)
	v := s.intent(func() string {
		switch p := s.co.phase; {
		case p == PhaseWelcome || p == PhaseUnavailable:
			return ""
		case p == PhaseUnknown && slices.Contains(also, p):
			unknown = s.co.order
		case p == PhaseDining || p == PhaseOrdering || p == PhaseApproved || slices.Contains(also, p):
		case p == PhaseDeclined || p == PhaseFailed:
			ord = s.co.order
			if s.co.payment != nil {
				paid = s.co.payment.Paid
			}
		default:
			return ErrWrongPhase
		}
		s.resetLocked(PhaseWelcome)
		s.availabilityLocked()
		return ""
	})
	s.closeOrder(ord, paid)
	s.flagUnknown(unknown)
	return v, nil
}

// flagUnknown closes an order whose outcome the kiosk could not know once
// its screen is gone: the customer will not be asked again. The journal
// keeps it needing attention while its attempt is unknown, and settles it
// as the attempt ends (paid, or cancelled when nothing was charged).
func (s *Service) flagUnknown(ord *order) {
	if ord == nil || ord.id == "" {
		return
	}
	ctx, cancel := context.WithTimeout(s.ctx, 10*time.Second)
	defer cancel()
	if err := s.cfg.Journal.CloseOrder(ctx, ord.id, "outcome unknown at the kiosk: screen released by staff"); err != nil {
		s.log.Error("close an order of unknown outcome", "order", ord.id, "err", err)
	}
}

// closeOrder records an order left unpaid: the journal makes it
// cancelled, or needs_attention when a part was charged (staff refund it
// or collect the rest).
func (s *Service) closeOrder(ord *order, paid int64) {
	if ord == nil || ord.id == "" || ord.pending != nil {
		return // never recorded: no attempt was
	}
	why := "cancelled at the kiosk"
	if paid > 0 {
		why = fmt.Sprintf("abandoned at the kiosk after %d of %d was paid: refund or collect the rest", paid, ord.total)
	}
	ctx, cancel := context.WithTimeout(s.ctx, 10*time.Second)
	defer cancel()
	if err := s.cfg.Journal.CloseOrder(ctx, ord.id, why); err != nil {
		s.log.Error("record the order's end", "order", ord.id, "err", err)
	}
}
