package kiosk

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/orders"
	"github.com/comptoir-pos/comptoir/backend/payment"
	"github.com/comptoir-pos/comptoir/backend/receipt"
	"github.com/comptoir-pos/comptoir/backend/settings"
)

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
		switch method {
		case MethodCard:
			att = &attempt{step: StepCard, amount: total}
		case MethodVoucherThenCard:
			if eligible <= 0 {
				return ErrAmount
			}
			att = &attempt{step: StepVoucher, amount: min(eligible, total), medium: payment.MediumMealVouchers}
		case MethodPhone:
			att = &attempt{step: StepPhone, amount: total, link: true}
		default:
			return ErrWrongPhase
		}
		att.wake = make(chan struct{}, 1)
		co.order, co.att, co.phase, gen = ord, att, PhasePaying, co.gen
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
		s.co.order, s.co.att, s.co.payment, s.co.phase, s.co.err = nil, nil, nil, PhaseOrdering, ErrJournal
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
		s.co.phase = PhaseCanceling
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
		step := StepCard
		if co.last != nil && !byCard {
			step = co.last.step
		}
		// A voucher already charged (despite a Cancel, say) counts against
		// what vouchers may pay: never a second voucher charge for it.
		voucherLeft := min(co.order.voucherEligible-co.order.paidVoucher, due)
		if step == StepVoucher && voucherLeft <= 0 {
			step = StepCard
		}
		switch {
		case phone:
			att = &attempt{step: StepPhone, amount: due, link: true}
		case step == StepVoucher:
			att = &attempt{step: StepVoucher, amount: voucherLeft, medium: payment.MediumMealVouchers}
		case byCard || co.order.method == MethodVoucherThenCard:
			// The rest of a split tender is not meal-voucher eligible.
			att = &attempt{step: StepCard, amount: due, medium: payment.MediumBankCards}
		default:
			att = &attempt{step: StepCard, amount: due}
		}
		att.wake = make(chan struct{}, 1)
		co.att, co.phase, gen = att, PhasePaying, co.gen
		p := *co.payment
		p.Step, p.Amount, p.AttemptUUID, p.Deadline, p.Message, p.ChargedDespiteCancel = att.step, att.amount, "", time.Time{}, "", false
		p.Outcome, p.Via = "", ""
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
		s.co.phase = PhaseDeclined
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
		s.co.phase = PhaseFailed
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

// follow reads the attempt's view until it is final: at every event (the
// Relay pokes wake), and every PollInterval whatever the events do.
func (s *Service) follow(gen int, att *attempt) {
	tick := time.NewTicker(s.cfg.PollInterval)
	defer tick.Stop()
	done := att.h.Done()
	var screenOver <-chan time.Time
	if att.link {
		t := time.NewTimer(att.deadline.Sub(s.now()))
		defer t.Stop()
		screenOver = t.C
	}
	for {
		if !s.shown(gen, att) {
			return // the screen moved on (a printed link runs on without it)
		}
		v := att.h.View()
		if v.Final() {
			s.settle(gen, att, v)
			return
		}
		if done == nil {
			if s.ctx.Err() == nil {
				// The driver stopped with the attempt open while the kiosk
				// runs (the journal refused a resend): the terminal may still
				// charge. Never a guess: call staff. Recovery resolves it.
				s.stranded(gen, att, v)
			}
			return
		}
		s.progress(gen, att, v)
		select {
		case <-att.wake:
		case <-tick.C:
		case <-screenOver:
			screenOver = nil
			if s.linkScreenOver(gen, att) {
				return
			}
		case <-done:
			done = nil // read the view once more
		case <-s.ctx.Done():
			return
		}
	}
}

// shown reports whether the checkout still shows this attempt.
func (s *Service) shown(gen int, att *attempt) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.co.gen == gen && s.co.att == att
}

// stranded shows an attempt nobody drives any more as unknown.
func (s *Service) stranded(gen int, att *attempt, v payment.View) {
	s.mu.Lock()
	if s.co.gen != gen || s.co.att != att || s.co.payment == nil {
		s.mu.Unlock()
		return
	}
	s.co.att, s.co.last = nil, att
	s.co.phase = PhaseUnknown
	p := *s.co.payment
	p.Message = "the payment could not be followed to its end (" + v.Message + "): call staff"
	s.co.payment = &p
	c, t := s.snapshotsLocked(true)
	s.mu.Unlock()
	s.publish(c, t)
}

// progress shows an attempt still out.
func (s *Service) progress(gen int, att *attempt, v payment.View) {
	s.mu.Lock()
	if s.co.gen != gen || s.co.att != att || s.co.payment == nil {
		s.mu.Unlock()
		return
	}
	changed := false
	if (v.State == journal.StateAbortRequested || v.Abort != payment.AbortNone) && s.co.phase == PhasePaying {
		s.co.phase, changed = PhaseCanceling, true
	}
	if v.Message != "" && s.co.payment.Message != v.Message {
		p := *s.co.payment
		p.Message, changed = v.Message, true
		s.co.payment = &p
	}
	if via := viaOf(v.Channel); via != s.co.payment.Via {
		p := *s.co.payment
		p.Via, changed = via, true
		s.co.payment = &p
	}
	if att.link && (s.co.payment.Link != v.Link || s.co.payment.LinkPaid != v.Paid) {
		p := *s.co.payment
		p.Link, p.LinkPaid, changed = v.Link, v.Paid, true
		s.co.payment = &p
	}
	if !changed {
		s.mu.Unlock()
		return
	}
	c, t := s.snapshotsLocked(true)
	s.mu.Unlock()
	s.publish(c, t)
}

// settle shows an attempt's outcome, and starts the card part after an
// approved meal-voucher part.
func (s *Service) settle(gen int, att *attempt, v payment.View) {
	s.mu.Lock()
	ord := s.co.order
	s.mu.Unlock()
	if ord == nil {
		return
	}
	ctx, cancel := context.WithTimeout(s.ctx, 10*time.Second)
	sum, sumErr := s.cfg.Payments.Summary(ctx, ord.id)
	cancel()

	s.mu.Lock()
	if s.co.gen != gen || s.co.att != att || s.co.payment == nil {
		s.mu.Unlock()
		return
	}
	s.co.att, s.co.last = nil, att
	p := *s.co.payment
	p.AttemptUUID, p.Deadline, p.Message, p.Via = v.UUID, time.Time{}, v.Message, viaOf(v.Channel)
	// What pays is what the provider says it charged, and only when that
	// agrees with what was asked (v.Flag: the journal's judgement).
	if v.State == journal.StateApproved && v.Flag == "" {
		if att.step == StepVoucher {
			ord.paidVoucher += v.ChargedAmount
		} else {
			ord.paidCard += v.ChargedAmount
		}
	}
	// The journal is the record. Only when it cannot be read does this
	// kiosk's own count of the charges stand in.
	p.Paid = ord.paidVoucher + ord.paidCard
	if sumErr != nil {
		s.log.Error("order summary", "order", ord.id, "err", sumErr)
	} else {
		p.Paid = sum.Paid
	}
	p.Due = max(ord.total-p.Paid, 0)
	// The customer asked to stop: no further part starts behind their back.
	cancelled := att.cancel || s.co.phase == PhaseCanceling || v.ChargedDespiteCancel
	var next *attempt
	printTicket := false
	switch {
	case v.State == journal.StateApproved && v.Flag != "":
		// Money was taken, but not what was asked: never "approved", never
		// a further part; staff decide from the journal.
		s.co.phase = PhaseUnknown
		p.Message = "the terminal's answer does not match the payment asked (" + v.Flag + "): call staff"
	case v.State == journal.StateApproved:
		part := receipt.Part{Kind: receipt.KindCard, Amount: v.ChargedAmount, TransactionID: v.TransactionID}
		switch c := v.Charge; {
		case att.link:
			part.Kind = receipt.KindLink
			if c != nil {
				part.Tip = c.GiftAmount
			}
		case c != nil:
			part = orders.CardPart(*c)
		}
		ord.parts = append(ord.parts, part)
		// Paid on a phone: the terminal knows no transaction to share.
		if !att.link && (ord.shareTxID == "" || att.step == StepCard) {
			ord.shareTxID = v.TransactionID
		}
		p.ChargedDespiteCancel = p.ChargedDespiteCancel || cancelled
		p.Outcome = OutcomeCharged
		if p.ChargedDespiteCancel {
			p.Outcome = OutcomeChargedDespiteCancel
		}
		switch {
		case p.Due <= 0:
			s.co.phase = PhaseApproved
			s.co.receipt = &ReceiptView{}
			printTicket = true
		case att.step == StepCard || att.link:
			// A card part pays all that is due: money still due after it
			// means the journal and the terminal disagree. Never a guess.
			s.co.phase = PhaseUnknown
			p.Message = fmt.Sprintf("the card part (%d) was approved but %d is still due by the journal: call staff", v.ChargedAmount, p.Due)
		case cancelled:
			// The customer wanted to stop, and the voucher part went through:
			// no card attempt behind their back. They pay the rest or call staff.
			s.co.phase = PhaseDeclined
			p.Step = StepCard
			p.Message = fmt.Sprintf("the meal-voucher part (%d) was charged although Cancel was pressed; %d is still due", v.ChargedAmount, p.Due)
		default:
			next = &attempt{step: StepCard, amount: p.Due, medium: payment.MediumBankCards, wake: make(chan struct{}, 1)}
			s.co.att = next
			s.co.phase = PhasePaying
			p.Step, p.Amount, p.AttemptUUID, p.Message, p.Outcome = StepCard, p.Due, "", "", ""
		}
	case v.State == journal.StateDeclined, v.State == journal.StateCancelled:
		s.co.phase = PhaseDeclined
		p.Outcome = s.notCharged(att, v, cancelled)
	case v.State == journal.StateFailed:
		s.co.phase = PhaseFailed
	default: // unknown: never a guess
		s.co.phase = PhaseUnknown
		if p.Message == "" {
			p.Message = "the payment's outcome is unknown: call staff"
		}
	}
	s.co.payment = &p
	phase := s.co.phase
	c, t := s.snapshotsLocked(true)
	s.mu.Unlock()
	s.publish(c, t)
	if phase == PhaseFailed || phase == PhaseUnknown {
		// The customer's screen says it in their words; the cause is here
		// and in staff mode's payments.
		s.log.Warn("payment "+string(phase), "order", ord.id, "uuid", v.UUID, "cause", p.Message)
	}
	if printTicket {
		s.wg.Add(1)
		go func() { defer s.wg.Done(); s.printOrderTicket(ord) }()
	}
	if next != nil {
		s.launch(gen, next)
	}
}

// noCardMargin: a decline this close to the end of the terminal's card
// window is read as no card presented in time (the terminal answers both
// with the same ko).
const noCardMargin = 5 * time.Second

// notCharged says how an attempt that charged nothing ended, in the
// customer's terms: their Cancel, no card in time, or a decline.
func (s *Service) notCharged(att *attempt, v payment.View, cancelled bool) Outcome {
	switch {
	case v.State == journal.StateCancelled || cancelled:
		return OutcomeCancelled
	case !att.link && !att.deadline.IsZero() && !s.now().Before(att.deadline.Add(-noCardMargin)):
		return OutcomeNoCard
	}
	return OutcomeDeclined
}
