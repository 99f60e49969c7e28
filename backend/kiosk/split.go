package kiosk

import (
	"fmt"

	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/orders"
	"github.com/comptoir-pos/comptoir/backend/payment"
	"github.com/comptoir-pos/comptoir/backend/receipt"
)

// The split of means: which part of the order an attempt pays and by
// which means (a bank card, a meal-voucher card, a payment link on a
// phone), and what follows an approved part. The terminal never splits a
// payment: a meal-voucher part and the rest by card are two attempts.

// firstPart is Pay's attempt for method: the total by card or by phone,
// or the meal-voucher part first (up to the cap); the refusal's message
// key when method cannot pay this cart.
func firstPart(method PaymentMethod, total, eligible int64) (*attempt, string) {
	switch method {
	case MethodCard:
		return &attempt{step: StepCard, amount: total}, ""
	case MethodVoucherThenCard:
		if eligible <= 0 {
			return nil, ErrAmount
		}
		return &attempt{step: StepVoucher, amount: min(eligible, total), medium: payment.MediumMealVouchers}, ""
	case MethodPhone:
		return &attempt{step: StepPhone, amount: total, link: true}, ""
	}
	return nil, ErrWrongPhase
}

// retryPart is the attempt for what is still due (due) after a declined
// or failed part (last, nil when none ended): the same means again, by
// phone when phone, or a bank card for all of it when byCard.
func retryPart(ord *order, last *attempt, due int64, byCard, phone bool) *attempt {
	step := StepCard
	if last != nil && !byCard {
		step = last.step
	}
	// A voucher already charged (despite a Cancel, say) counts against
	// what vouchers may pay: never a second voucher charge for it.
	voucherLeft := min(ord.voucherEligible-ord.paidVoucher, due)
	if step == StepVoucher && voucherLeft <= 0 {
		step = StepCard
	}
	switch {
	case phone:
		return &attempt{step: StepPhone, amount: due, link: true}
	case step == StepVoucher:
		return &attempt{step: StepVoucher, amount: voucherLeft, medium: payment.MediumMealVouchers}
	case byCard || ord.method == MethodVoucherThenCard:
		// The rest of a split tender is not meal-voucher eligible.
		return &attempt{step: StepCard, amount: due, medium: payment.MediumBankCards}
	}
	return &attempt{step: StepCard, amount: due}
}

// paidLocked counts an ended attempt's charge in the order and says what
// the order has paid: the journal's sum (journalPaid), or this kiosk's own
// count when the journal could not be read (err).
func (s *Service) paidLocked(ord *order, att *attempt, v payment.View, journalPaid int64, err error) int64 {
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
	if err != nil {
		s.log.Error("order summary", "order", ord.id, "err", err)
		return ord.paidVoucher + ord.paidCard
	}
	return journalPaid
}

// chargedPart is an approved attempt's part of the receipt: only what a
// receipt may show of the provider's transaction.
func chargedPart(att *attempt, v payment.View) receipt.Part {
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
	return part
}

// approvedLocked settles an approved part: the order paid (approved, its
// ticket to print), or, with money still due, the rest by card (next), or
// no further part when the customer had asked to stop, or unknown when a
// card part leaves money due (the journal and the terminal disagree).
func (s *Service) approvedLocked(att *attempt, v payment.View, ord *order, p *PaymentView, cancelled bool) (next *attempt, printTicket bool) {
	ord.parts = append(ord.parts, chargedPart(att, v))
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
		s.enterLocked(PhaseApproved)
		s.co.receipt = &ReceiptView{}
		printTicket = true
	case att.step == StepCard || att.link:
		// A card part pays all that is due: money still due after it
		// means the journal and the terminal disagree. Never a guess.
		s.enterLocked(PhaseUnknown)
		p.Message = fmt.Sprintf("the card part (%d) was approved but %d is still due by the journal: call staff", v.ChargedAmount, p.Due)
	case cancelled:
		// The customer wanted to stop, and the voucher part went through:
		// no card attempt behind their back. They pay the rest or call staff.
		s.enterLocked(PhaseDeclined)
		p.Step = StepCard
		p.Message = fmt.Sprintf("the meal-voucher part (%d) was charged although Cancel was pressed; %d is still due", v.ChargedAmount, p.Due)
	default:
		next = &attempt{step: StepCard, amount: p.Due, medium: payment.MediumBankCards, wake: make(chan struct{}, 1)}
		s.co.att = next
		s.enterLocked(PhasePaying)
		p.Step, p.Amount, p.AttemptUUID, p.Message, p.Outcome = StepCard, p.Due, "", "", ""
	}
	return next, printTicket
}
