package kiosk

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/payment"
	"github.com/comptoir-pos/comptoir/backend/receipt"
	"github.com/comptoir-pos/comptoir/backend/settings"
)

// order is the cart from Pay on: frozen, recorded in the journal.
type order struct {
	id, number      string
	total           int64
	voucherEligible int64
	currency        string
	language        string
	dining          Dining
	method          PaymentMethod
	lines           []cartLine
	created         time.Time
	parts           []receipt.Part // approved, in order
	shareTxID       string         // the card attempt's transaction, for /share-receipt
	// What this kiosk saw approved, by step. The journal's sum is the
	// record; these keep the screen true when the journal could not record
	// an approval (a full disk) and bound a retried voucher part.
	paidVoucher, paidCard int64
}

// attempt is one card presentation for the order.
type attempt struct {
	step     Step
	amount   int64
	medium   string
	deadline time.Time
	h        *payment.Handle
	uuid     string
	cancel   bool // Cancel pressed before the handle came
	wake     chan struct{}
	// link: a payment link (Config.Links); printed: its QR code was printed.
	link    bool
	printed bool
}

// Pay starts paying the cart: ordering → paying. The order is recorded in
// the journal first, then the attempt (card: the total; voucher_then_card:
// the meal-voucher part, then a card for the rest once it is approved).
func (s *Service) Pay(method PaymentMethod) (CheckoutView, error) {
	var (
		ord *order
		att *attempt
		gen int
	)
	v := s.intent(func() string {
		co := &s.co
		if co.phase != PhaseOrdering {
			return ErrWrongPhase
		}
		if len(co.lines) == 0 {
			return ErrCartEmpty
		}
		if !s.mayPayLocked(method == MethodPhone) {
			return ErrTerminalUnavailable
		}
		total, _, eligible := totals(co.lines, s.settings.VoucherCap)
		if total <= 0 {
			return ErrAmount
		}
		// The cart's own checks keep within bounds; checked again here, as
		// this sum becomes a charge and a signed fiscal ticket.
		if checked, ok := cartTotal(co.lines); !ok || checked != total || len(co.lines) > MaxLines {
			return ErrOrderLimit
		}
		ord = &order{
			total: total, voucherEligible: eligible, currency: s.currencyLocked(), language: co.language, dining: co.dining,
			method: method, lines: append([]cartLine(nil), co.lines...), created: s.now(),
		}
		first, refusal := firstPart(method, total, eligible)
		if refusal != "" {
			return refusal
		}
		att = first
		att.wake = make(chan struct{}, 1)
		co.order, co.att, gen = ord, att, co.gen
		s.enterLocked(PhasePaying)
		co.payment = &PaymentView{Method: method, Step: att.step, Amount: att.amount, Due: total}
		return ""
	})
	if att == nil {
		return v, nil
	}
	ctx, cancel := context.WithTimeout(s.ctx, 10*time.Second)
	defer cancel()
	id, number, err := s.createOrder(ctx, ord)
	s.mu.Lock()
	if s.co.gen != gen || s.co.att != att {
		s.mu.Unlock()
		return s.Checkout(), nil
	}
	if err != nil {
		// Nothing was sent: back to the cart, with the error.
		s.log.Error("record the order: nothing was sent", "err", err)
		s.co.order, s.co.att, s.co.payment, s.co.err = nil, nil, nil, ErrJournal
		s.enterLocked(PhaseOrdering)
		s.co.lines = ord.lines
		c, t := s.snapshotsLocked(true)
		s.mu.Unlock()
		s.publish(c, t)
		return c.view, fmt.Errorf("kiosk: record the order: %w", err)
	}
	ord.id, ord.number = id, number
	c, t := s.snapshotsLocked(true)
	s.mu.Unlock()
	s.publish(c, t)
	return s.launch(gen, att), nil
}

// Cancel is the customer's Cancel: paying → canceling. The terminal's
// answer decides; a customer charged anyway sees approved, saying so.
func (s *Service) Cancel() (CheckoutView, error) {
	return s.intent(func() string {
		switch s.co.phase {
		case PhaseCanceling:
			return ""
		case PhasePaying:
		default:
			return ErrWrongPhase
		}
		s.enterLocked(PhaseCanceling)
		if a := s.co.att; a != nil {
			a.cancel = true
			if a.h != nil {
				a.h.Cancel() // closes a channel: the driver sends /abort
			}
		}
		return ""
	}), nil
}

// Retry is a new attempt for the same part of the same order: declined or
// failed → paying.
func (s *Service) Retry() (CheckoutView, error) {
	return s.again(false)
}

// PayRestByCard pays everything still due with a bank card, after a
// declined or failed meal-voucher (or card) part.
func (s *Service) PayRestByCard() (CheckoutView, error) {
	return s.again(true)
}

func (s *Service) again(byCard bool) (CheckoutView, error) {
	var (
		att *attempt
		gen int
	)
	v := s.intent(func() string {
		co := &s.co
		if (co.phase != PhaseDeclined && co.phase != PhaseFailed) || co.order == nil || co.order.id == "" || co.payment == nil {
			return ErrWrongPhase
		}
		phone := co.last != nil && co.last.step == StepPhone && !byCard
		if !s.mayPayLocked(phone) {
			return ErrTerminalUnavailable
		}
		due := co.payment.Due
		if due <= 0 {
			return ErrAmount
		}
		att = retryPart(co.order, co.last, due, byCard, phone)
		att.wake = make(chan struct{}, 1)
		co.att, gen = att, co.gen
		s.enterLocked(PhasePaying)
		p := *co.payment
		p.Step, p.Amount, p.AttemptUUID, p.Deadline, p.Message, p.ChargedDespiteCancel = att.step, att.amount, "", time.Time{}, "", false
		p.Outcome, p.ThroughCloud = "", false
		p.Link, p.LinkPaid, p.LinkPrinted = "", 0, false
		co.payment = &p
		return ""
	})
	if att == nil {
		return v, nil
	}
	return s.launch(gen, att), nil
}

// launch starts the attempt with the orchestrator, outside the lock, and
// follows it.
func (s *Service) launch(gen int, att *attempt) CheckoutView {
	s.mu.Lock()
	if s.co.gen != gen || s.co.att != att || s.co.order == nil {
		s.mu.Unlock()
		return s.Checkout()
	}
	ord := s.co.order
	if att.cancel {
		// Cancel came before anything was sent: send nothing.
		s.co.att, s.co.last = nil, att
		s.enterLocked(PhaseDeclined)
		p := *s.co.payment
		p.Message, p.Outcome = "cancelled before anything was sent to the terminal", OutcomeCancelled
		s.co.payment = &p
		c, t := s.snapshotsLocked(true)
		s.mu.Unlock()
		s.publish(c, t)
		return c.view
	}
	policy := journal.PolicyKiosk
	if s.settings.Mode == settings.ModeCounter {
		policy = journal.PolicyCounter
	}
	r, opt := s.receiptLocked(ord, false)
	format := s.settings.ReceiptFormat
	var details *payment.LinkDetails
	if att.link {
		details = s.linkDetailsLocked(ord, att.amount, s.settings.Mode == settings.ModeCounter)
	}
	s.mu.Unlock()

	req := payment.Request{OrderID: ord.id, Amount: att.amount, Policy: policy, AcceptedMedium: att.medium}
	orch := s.cfg.Payments
	if att.link {
		orch = s.cfg.Links
		req.Link = details
	} else if t, err := receipt.ReceiptTicket(r, format, opt); err == nil {
		req.ReceiptTicket = t
	} else {
		s.log.Warn("receipt ticket left out of the payment", "err", err)
	}
	start := s.now()
	h, err := orch.Start(s.ctx, req)
	return s.launched(gen, att, ord, policy, start, h, err)
}

// launched shows the attempt launch started (h) and follows it, or shows
// why it could not start (err): nothing was sent, not charged.
func (s *Service) launched(gen int, att *attempt, ord *order, policy journal.Policy, start time.Time, h *payment.Handle, err error) CheckoutView {
	s.mu.Lock()
	if s.co.gen != gen || s.co.att != att {
		// Cannot happen while paying (nothing leaves paying but the outcome);
		// kept so a bug never drives a payment nobody follows.
		s.mu.Unlock()
		if h != nil {
			s.log.Error("an attempt started for a checkout that ended: the journal has it", "uuid", h.UUID(), "order", ord.id)
		}
		return s.Checkout()
	}
	p := *s.co.payment
	if err != nil {
		// Start failed before anything was sent: not charged.
		s.co.att, s.co.last = nil, att
		s.enterLocked(PhaseFailed)
		p.Message = "the payment could not start: " + err.Error()
		if errors.Is(err, payment.ErrNotReady) {
			p.Message = "unfinished payments are being recovered: try again in a moment"
		}
		s.co.payment = &p
		s.log.Warn("payment not started", "order", ord.id, "err", err)
	} else {
		att.h, att.uuid = h, h.UUID()
		att.deadline = start.Add(DeadlineHandover + DeadlineCardRead)
		switch {
		case att.link:
			att.deadline = start.Add(s.cfg.LinkScreen)
		case policy == journal.PolicyCounter:
			att.deadline = att.deadline.Add(DeadlineScreens)
		}
		p.AttemptUUID, p.Deadline = att.uuid, att.deadline
		s.co.payment = &p
		if att.cancel {
			h.Cancel()
		}
		s.wg.Add(1)
		go func() { defer s.wg.Done(); s.follow(gen, att) }()
	}
	c, t := s.snapshotsLocked(true)
	s.mu.Unlock()
	s.publish(c, t)
	return c.view
}
