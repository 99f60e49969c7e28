package kiosk

import (
	"context"
	"encoding/hex"

	"github.com/comptoir-pos/comptoir/backend/device"
	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/orders"
	"github.com/comptoir-pos/comptoir/backend/payment"
	"github.com/comptoir-pos/comptoir/backend/receipt"
)

// Paying with the phone: a payment link shown as a QR code. The terminal
// is not needed (that is the point when it is busy, offline or out of
// paper); the provider's cloud is.

// mayPayLocked reports whether a payment may start now: by phone, when
// links are offered and orders are taken; by card, when the terminal can
// take it too.
func (s *Service) mayPayLocked(phone bool) bool {
	if phone {
		ok, _ := s.openLocked()
		return ok && s.cfg.Links != nil
	}
	ok, _ := s.usableLocked()
	return ok
}

// Sources of a link's order: the kiosk's customer is in the restaurant;
// the counter's is ordering for collection.
const (
	linkSourceKiosk   = "pay_at_table"
	linkSourceCounter = "click_and_collect"
)

// linkDetailsLocked is what the link shows: the order's lines when the
// link pays all of it (one line for the rest otherwise), their VAT, and
// whether meal vouchers may pay them. A self-service kiosk offers no tip,
// as it turns off the terminal's optional screens.
func (s *Service) linkDetailsLocked(ord *order, amount int64, counter bool) *payment.LinkDetails {
	d := &payment.LinkDetails{Source: linkSourceKiosk}
	if counter {
		d.Source = linkSourceCounter
	} else {
		off := false
		d.Tips = &off
	}
	if amount != ord.total {
		d.Items = []payment.LinkItem{{Name: "#" + ord.number, Quantity: 1, Total: amount}}
		return d
	}
	for _, l := range ord.lines {
		it := payment.LinkItem{Name: s.textLocked(l.Name, ord.language), Quantity: l.Qty, Total: l.Total,
			VoucherEligible: l.voucherUnit > 0}
		rate, single := -1, true
		for _, rl := range orders.ReceiptLines(l.LineView, nil) {
			parts := rl.Parts
			if len(parts) == 0 {
				parts = []receipt.VATPart{{Rate: rl.VATRate, Amount: rl.UnitPrice}}
			}
			for _, p := range parts {
				if p.Rate < 0 {
					single = false
					continue
				}
				it.Tax += receipt.TaxIncluded(p.Amount*int64(rl.Qty), p.Rate)
				if rate >= 0 && rate != p.Rate {
					single = false
				}
				rate = p.Rate
			}
		}
		if single && rate > 0 {
			it.VATBasisPoints = rate
		}
		d.Items = append(d.Items, it)
	}
	return d
}

// linkScreenOver is the end of the QR code's time on screen: a link with
// nothing paid and nothing printed is cancelled (the customer left); a
// printed one goes on without the kiosk, which goes back to welcome (the
// customer pays at their table; the journal follows the link); one with a
// payment in it is never abandoned. It reports whether the kiosk stopped
// following the attempt.
func (s *Service) linkScreenOver(gen int, att *attempt) bool {
	v := att.h.View()
	s.mu.Lock()
	if s.co.gen != gen || s.co.att != att {
		s.mu.Unlock()
		return true
	}
	switch {
	case v.Paid > 0 || v.Final():
		s.mu.Unlock()
		return false
	case att.printed:
		s.handOverLocked(att)
		c, t := s.snapshotsLocked(true)
		s.mu.Unlock()
		s.publish(c, t)
		s.followAway(att.h)
		return true
	}
	s.enterLocked(PhaseCanceling)
	att.cancel = true
	s.mu.Unlock()
	att.h.Cancel()
	s.poke(att)
	return false
}

// handOverLocked gives the screen back to the next customer once a link's
// QR code is printed: its customer pays at their table, the link runs on
// in the background (followAway), and nobody at the kiosk can cancel it.
func (s *Service) handOverLocked(att *attempt) {
	s.log.Info("payment link left to run: its QR code was printed", "order", s.co.order.id, "uuid", att.uuid)
	s.resetLocked(PhaseWelcome)
	s.availabilityLocked()
}

// followAway follows a link no screen shows any more (its QR code was
// printed, or recovery resumed it after a stop) to its end, in the
// background, and then does what the screen would have done: the kitchen
// gets the order's ticket once the link paid it; an order the link leaves
// unpaid is closed (cancelled, or needs attention when part was paid).
func (s *Service) followAway(h *payment.Handle) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		select {
		case <-h.Done():
		case <-s.ctx.Done():
			return
		}
		v := h.View()
		s.linkEndedAway(v.UUID, v.OrderID, v.State)
	}()
}

// linkAway takes up a payment link recovery found after a stop: followed
// to its end when it still runs, its end acted on when it came meanwhile.
// It reports whether v was a link.
func (s *Service) linkAway(v payment.View) bool {
	if s.cfg.Links == nil || !payment.TraitsOf(v.Channel).Phone {
		return false
	}
	if h, ok := s.cfg.Links.Active(v.UUID); ok {
		s.followAway(h)
		return true
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		state := v.State
		if !v.Final() { // it ended between recovery's answer and now
			att, err := s.cfg.Journal.Attempt(s.ctx, v.UUID)
			if err != nil {
				s.log.Error("read a recovered payment link", "uuid", v.UUID, "err", err)
				return
			}
			state = att.State
		}
		s.linkEndedAway(v.UUID, v.OrderID, state)
	}()
	return true
}

func (s *Service) linkEndedAway(uuid, orderID string, state journal.State) {
	if !state.Final() {
		return // the orchestrator closed: recovery takes it up at the next start
	}
	ctx, cancel := context.WithTimeout(s.ctx, receiptTimeout)
	defer cancel()
	if state != journal.StateApproved {
		s.settleLeft(ctx, orderID, "its payment link ended unpaid ("+string(state)+")")
		return
	}
	sum, err := s.cfg.Links.Summary(ctx, orderID)
	if err != nil || sum.Paid < sum.Total {
		s.log.Warn("payment link paid away from the screen, the order not yet paid", "order", orderID, "uuid", uuid, "err", err)
		return
	}
	if s.cfg.Printer == nil {
		return
	}
	s.mu.Lock()
	st := s.settings
	s.mu.Unlock()
	r, opt, err := orders.OrderReceipt(ctx, s.cfg.Journal, st, orderID)
	if err != nil {
		// Not an order taken at this kiosk (a link sent by the counter):
		// nothing for its kitchen ticket.
		s.log.Info("payment link paid away from the screen", "order", orderID, "uuid", uuid, "ticket", err)
		return
	}
	b, err := receipt.OrderTicket(r.Order, opt)
	if err == nil {
		_, err = s.cfg.Printer.Print(ctx, device.Print{Data: hex.EncodeToString(b), Format: device.FormatESCPOS})
	}
	if err != nil {
		s.log.Warn("order ticket of a link paid away from the screen not printed", "order", orderID, "err", err)
		return
	}
	s.log.Info("payment link paid away from the screen: order ticket printed", "order", orderID, "uuid", uuid)
}

// poke wakes the attempt's follower.
func (s *Service) poke(att *attempt) {
	select {
	case att.wake <- struct{}{}:
	default:
	}
}

// PrintLink prints the payment link's QR code on the terminal's printer,
// for a customer who would rather pay at their table. Once printed, the
// kiosk returns to welcome at once and the link runs on without it.
func (s *Service) PrintLink() (CheckoutView, error) {
	var (
		att  *attempt
		gen  int
		data []byte
		err  error
	)
	v := s.intent(func() string {
		co := &s.co
		if co.phase != PhasePaying || co.att == nil || !co.att.link || co.payment == nil || co.payment.Link == "" || co.order == nil {
			return ErrWrongPhase
		}
		if s.cfg.Printer == nil {
			return ErrPrinter
		}
		att, gen = co.att, co.gen
		r, opt := s.receiptLocked(co.order, false)
		until := att.h.View().Expires
		data, err = receipt.LinkTicket(r.Order, co.payment.Link, att.amount, until.Local(), opt)
		return ""
	})
	if att == nil {
		return v, nil
	}
	if err == nil {
		ctx, cancel := context.WithTimeout(s.ctx, receiptTimeout)
		_, err = s.cfg.Printer.Print(ctx, device.Print{Data: hex.EncodeToString(data), Format: device.FormatESCPOS})
		cancel()
	}
	if err != nil {
		s.log.Warn("payment link not printed", "uuid", att.uuid, "err", err)
		return s.intent(func() string {
			if s.co.gen != gen {
				return ""
			}
			return ErrPrinter
		}), nil
	}
	handed := false
	v = s.intent(func() string {
		if s.co.gen != gen || s.co.att != att || s.co.payment == nil {
			return ""
		}
		att.printed = true
		if f := att.h.View(); f.Final() {
			// It ended while printing: its outcome is the screen's.
			return ""
		}
		s.handOverLocked(att)
		handed = true
		return ""
	})
	if handed {
		s.followAway(att.h)
	}
	return v, nil
}
