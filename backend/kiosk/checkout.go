package kiosk

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/comptoir-pos/comptoir/backend/device"
	"github.com/comptoir-pos/comptoir/backend/fault"
	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/payment"
	"github.com/comptoir-pos/comptoir/backend/receipt"
	"github.com/comptoir-pos/comptoir/backend/settings"
)

// order is the cart from Pay on: frozen, recorded in the journal.
type order struct {
	id, number      string
	pending         *journal.NewOrder // not recorded yet: recorded with its first attempt
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
	// receiptPrinted: the customer's receipt went to the printer (or may
	// have): another print is a duplicate.
	receiptPrinted bool
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
	n, number, err := s.nextOrder(ctx, ord)
	if err != nil {
		return s.orderNotRecorded(gen, att, ord, err)
	}
	s.mu.Lock()
	if s.co.gen != gen || s.co.att != att {
		s.mu.Unlock()
		return s.Checkout(), nil
	}
	ord.id, ord.number, ord.pending = n.Order.ID, number, &n
	c, t := s.snapshotsLocked(true)
	s.mu.Unlock()
	s.publish(c, t)
	return s.launch(gen, att)
}

// orderNotRecorded goes back to the cart, with the error, when the order
// could not be numbered or recorded: nothing was sent.
func (s *Service) orderNotRecorded(gen int, att *attempt, ord *order, err error) (CheckoutView, error) {
	s.mu.Lock()
	if s.co.gen != gen || s.co.att != att {
		s.mu.Unlock()
		return s.Checkout(), nil
	}
	s.log.Error("record the order: nothing was sent", "err", err)
	s.co.order, s.co.att, s.co.payment, s.co.err = nil, nil, nil, ErrJournal
	s.enterLocked(PhaseOrdering)
	s.co.lines = ord.lines
	c, t := s.snapshotsLocked(true)
	s.mu.Unlock()
	s.publish(c, t)
	return c.view, fmt.Errorf("kiosk: record the order: %w", err)
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
	return s.launch(gen, att)
}

// maxRenumber bounds the numbers a new order tries when the one it was
// given is taken by the time it is recorded.
const maxRenumber = 3

// launch starts the attempt with the orchestrator, outside the lock, and
// follows it. An order not recorded yet is recorded with the attempt, in
// one transaction; should its number have been taken meanwhile, it takes
// the next free one. An error: the order could not be recorded (back to
// the cart, nothing sent).
func (s *Service) launch(gen int, att *attempt) (CheckoutView, error) {
	for tries := 1; ; tries++ {
		s.mu.Lock()
		if s.co.gen != gen || s.co.att != att || s.co.order == nil {
			s.mu.Unlock()
			return s.Checkout(), nil
		}
		ord := s.co.order
		if att.cancel {
			return s.cancelledBeforeSendLocked(att), nil
		}
		plan := s.planLocked(ord, att)
		s.mu.Unlock()

		req := plan.request(s.log)
		start := s.now()
		h, err := plan.orch.Start(s.ctx, req)
		if req.NewOrder != nil && err != nil {
			if errors.Is(err, journal.ErrOrderExists) {
				if tries >= maxRenumber {
					return s.orderNotRecorded(gen, att, ord, err)
				}
				if err = s.renumber(ord); err == nil {
					continue
				}
			}
			if notRecorded(err) {
				return s.orderNotRecorded(gen, att, ord, err)
			}
		}
		return s.launched(gen, att, ord, plan.req.Policy, start, h, err), nil
	}
}

// cancelledBeforeSendLocked ends an attempt whose Cancel came before
// anything was sent: nothing is sent (an order not recorded yet stays so).
// It unlocks.
func (s *Service) cancelledBeforeSendLocked(att *attempt) CheckoutView {
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

// launchPlan is what launch reads under the lock to build the request
// outside it.
type launchPlan struct {
	req     payment.Request // all but the receipt ticket
	link    bool
	orch    *payment.Orchestrator
	receipt receipt.Receipt
	opt     receipt.Options
	format  device.Format
}

func (s *Service) planLocked(ord *order, att *attempt) launchPlan {
	policy := journal.PolicyKiosk
	if s.settings.Mode == settings.ModeCounter {
		policy = journal.PolicyCounter
	}
	r, opt := s.receiptLocked(ord, false)
	p := launchPlan{
		req:  payment.Request{OrderID: ord.id, Amount: att.amount, Policy: policy, AcceptedMedium: att.medium, NewOrder: ord.pending},
		orch: s.cfg.Payments, receipt: r, opt: opt, format: s.settings.ReceiptFormat,
	}
	if att.link {
		p.link, p.orch = true, s.cfg.Links
		p.req.Link = s.linkDetailsLocked(ord, att.amount, s.settings.Mode == settings.ModeCounter)
	}
	return p
}

// request is the payment request, with the receipt ticket the terminal
// prints (not for a link).
func (p launchPlan) request(log *slog.Logger) payment.Request {
	req := p.req
	if p.link {
		return req
	}
	if t, err := receipt.ReceiptTicket(p.receipt, p.format, p.opt); err == nil {
		req.ReceiptTicket = t
	} else {
		log.Warn("receipt ticket left out of the payment", "err", err)
	}
	return req
}

// renumber gives an order not recorded yet the next free number, its own
// being taken.
func (s *Service) renumber(ord *order) error {
	ctx, cancel := context.WithTimeout(s.ctx, 10*time.Second)
	defer cancel()
	n, number, err := s.nextOrder(ctx, ord)
	if err != nil {
		return err
	}
	s.mu.Lock()
	ord.id, ord.number, ord.pending = n.Order.ID, number, &n
	s.mu.Unlock()
	return nil
}

// notRecorded says whether err is the journal failing or refusing to
// record a new order with its attempt (a full or read-only disk, a damaged
// database, a write its schema refuses): nothing was recorded. A conflict
// with another record (an unresolved attempt on the terminal) is the
// payment's refusal, not the order's.
func notRecorded(err error) bool {
	e := fault.As(err)
	return e != nil && e.From == "journal" && e.Code != fault.ECONFLICT
}

// launched shows the attempt launch started (h) and follows it, or shows
// why it could not start (err): nothing was sent, not charged.
func (s *Service) launched(gen int, att *attempt, ord *order, policy journal.Policy, start time.Time, h *payment.Handle, err error) CheckoutView {
	s.mu.Lock()
	if h != nil {
		ord.pending = nil // recorded with the attempt
	}
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
