package kiosk

import (
	"context"
	"encoding/hex"

	"github.com/comptoir-pos/comptoir/backend/device"
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
		for _, rl := range receiptLines(l.LineView, nil) {
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
		ord := s.co.order
		s.log.Info("payment link left to run: its QR code was printed", "order", ord.id, "uuid", att.uuid)
		s.resetLocked(PhaseWelcome)
		s.availabilityLocked()
		c, t := s.snapshotsLocked(true)
		s.mu.Unlock()
		s.publish(c, t)
		return true
	}
	s.co.phase = PhaseCanceling
	att.cancel = true
	s.mu.Unlock()
	att.h.Cancel()
	s.poke(att)
	return false
}

// poke wakes the attempt's follower.
func (s *Service) poke(att *attempt) {
	select {
	case att.wake <- struct{}{}:
	default:
	}
}

// PrintLink prints the payment link's QR code on the terminal's printer,
// for a customer who would rather pay at their table. The kiosk then lets
// the link run without it when its time on screen ends.
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
	return s.intent(func() string {
		if s.co.gen != gen || s.co.att != att || s.co.payment == nil {
			return ""
		}
		att.printed = true
		p := *s.co.payment
		p.LinkPrinted = true
		s.co.payment = &p
		return ""
	}), nil
}
