package kiosk

import (
	"context"
	"time"

	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/payment"
)

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
	s.enterLocked(PhaseUnknown)
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
		s.enterLocked(PhaseCanceling)
		changed = true
	}
	if v.Message != "" && s.co.payment.Message != v.Message {
		p := *s.co.payment
		p.Message, changed = v.Message, true
		s.co.payment = &p
	}
	if cloud := payment.TraitsOf(v.Channel).ThroughCloud; cloud != s.co.payment.ThroughCloud {
		p := *s.co.payment
		p.ThroughCloud, changed = cloud, true
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
	p.AttemptUUID, p.Deadline, p.Message, p.ThroughCloud = v.UUID, time.Time{}, v.Message, payment.TraitsOf(v.Channel).ThroughCloud
	p.Paid = s.paidLocked(ord, att, v, sum.Paid, sumErr)
	p.Due = max(ord.total-p.Paid, 0)
	// The customer asked to stop: no further part starts behind their back.
	cancelled := att.cancel || s.co.phase == PhaseCanceling || v.ChargedDespiteCancel
	var next *attempt
	printTicket := false
	switch {
	case v.State == journal.StateApproved && v.Flag != "":
		// Money was taken, but not what was asked: never "approved", never
		// a further part; staff decide from the journal.
		s.enterLocked(PhaseUnknown)
		p.Message = "the terminal's answer does not match the payment asked (" + v.Flag + "): call staff"
	case v.State == journal.StateApproved:
		next, printTicket = s.approvedLocked(att, v, ord, &p, cancelled)
	case v.State == journal.StateDeclined, v.State == journal.StateCancelled:
		s.enterLocked(PhaseDeclined)
		p.Outcome = s.notCharged(att, v, cancelled)
	case v.State == journal.StateFailed:
		s.enterLocked(PhaseFailed)
	default: // unknown: never a guess
		s.enterLocked(PhaseUnknown)
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
