package kiosk

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/comptoir-pos/comptoir/backend/device"
	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/orders"
	"github.com/comptoir-pos/comptoir/backend/receipt"
	"github.com/comptoir-pos/comptoir/backend/settings"
)

// Receipt statuses (ReceiptView.Status).
const (
	ReceiptWorking = "working"
	ReceiptDone    = "done"
	ReceiptError   = "error"
)

// ChooseReceipt is the customer's receipt choice once paid: print (the
// terminal's printer), email or sms (the terminal asks for the address or
// number), or none. The outcome follows in the next snapshots.
//
// The receipt is printed once as the original. A customer who prints it
// again gets a copy recorded and marked as staff's reprints are
// (Config.Duplicate: DUPLICATA n° k in the fiscal journal's count of the
// ticket's copies), never a second original: a French tax inspector
// expects every reprint of a sale's ticket to say it is one and to be
// counted, and a customer is entitled to a copy, so it is not refused
// (unless no fiscal journal can count it).
func (s *Service) ChooseReceipt(choice ReceiptChoice) (CheckoutView, error) {
	var (
		ord       *order
		gen       int
		r         receipt.Receipt
		opt       receipt.Options
		txID      string
		duplicate bool
	)
	v := s.intent(func() string {
		if s.co.phase != PhaseApproved || s.co.order == nil {
			return ErrWrongPhase
		}
		if s.co.receipt != nil && s.co.receipt.Status == ReceiptWorking {
			return ErrWrongPhase
		}
		switch choice {
		case ReceiptNone:
			s.co.receipt = &ReceiptView{Choice: choice, Status: ReceiptDone}
			return ""
		case ReceiptPrint, ReceiptEmail, ReceiptSMS:
		default:
			return ErrWrongPhase
		}
		s.co.receipt = &ReceiptView{Choice: choice, Status: ReceiptWorking}
		ord, gen = s.co.order, s.co.gen
		r, opt = s.receiptLocked(ord, true)
		txID = ord.shareTxID
		duplicate = choice == ReceiptPrint && ord.receiptPrinted
		return ""
	})
	if ord == nil {
		return v, nil
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		printed, err := s.issueReceipt(ord.id, duplicate, choice, txID, r, opt)
		s.mu.Lock()
		if printed {
			ord.receiptPrinted = true
		}
		if s.co.gen != gen || s.co.phase != PhaseApproved {
			s.mu.Unlock()
			return
		}
		rv := &ReceiptView{Choice: choice, Status: ReceiptDone}
		if err != nil {
			s.log.Warn("receipt", "choice", choice, "order", ord.id, "err", err)
			rv.Status, rv.Message = ReceiptError, receiptMessage(err)
		}
		s.co.receipt = rv
		c, t := s.snapshotsLocked(true)
		s.mu.Unlock()
		s.publish(c, t)
	}()
	return v, nil
}

// issueReceipt gives the receipt of order its fiscal ticket's number, as
// the original or, when duplicate, as a copy recorded before it is printed
// (or not printed), then sends it as sendReceipt does.
func (s *Service) issueReceipt(order string, duplicate bool, choice ReceiptChoice, txID string, r receipt.Receipt, opt receipt.Options) (printed bool, err error) {
	switch {
	case duplicate && s.cfg.Duplicate == nil:
		return false, errNoCopy
	case duplicate:
		f, err := s.cfg.Duplicate(s.ctx, order)
		if err != nil {
			return false, fmt.Errorf("%w: %w", errCopyNotRecorded, err)
		}
		r.Fiscal = f
	case s.cfg.Sales != nil:
		// The recorded ticket's number on the receipt: recorded now if the
		// ledger has not yet.
		if f, err := s.cfg.Sales(s.ctx, order); err != nil {
			s.log.Warn("receipt without its ticket number", "order", order, "err", err)
		} else {
			r.Fiscal = f
		}
	}
	return s.sendReceipt(choice, txID, r, opt)
}

// sendReceipt prints or shares the receipt. printed: a print went to the
// printer, accepted or perhaps (an answer lost on the way): the next print
// is a copy.
func (s *Service) sendReceipt(choice ReceiptChoice, txID string, r receipt.Receipt, opt receipt.Options) (printed bool, err error) {
	if s.cfg.Printer == nil {
		return false, errNoPrinter
	}
	timeout := shareTimeout
	if choice == ReceiptPrint {
		timeout = receiptTimeout
	}
	ctx, cancel := context.WithTimeout(s.ctx, timeout)
	defer cancel()
	switch choice {
	case ReceiptPrint:
		b, err := receipt.CustomerReceipt(r, opt)
		if err != nil {
			return false, err
		}
		_, err = s.cfg.Printer.Print(ctx, device.Print{Data: hex.EncodeToString(b), Format: device.FormatESCPOS})
		return err == nil || device.KindOf(err) == device.Unsure, err
	default:
		if txID == "" {
			return false, errNoTransaction
		}
		medium := device.ShareEmail
		if choice == ReceiptSMS {
			medium = device.ShareSMS
		}
		_, err := s.cfg.Printer.ShareReceipt(ctx, device.Share{
			Ticket: receipt.ShareReceiptTicket(r, opt), TransactionID: txID, Medium: medium,
		})
		return false, err
	}
}

// printOrderTicket prints the collection ticket after approval. A failure
// is logged: the order number is on the screen too.
func (s *Service) printOrderTicket(ord *order) {
	if s.cfg.Printer == nil {
		return
	}
	s.mu.Lock()
	r, opt := s.receiptLocked(ord, false)
	s.mu.Unlock()
	b, err := receipt.OrderTicket(r.Order, opt)
	if err == nil {
		ctx, cancel := context.WithTimeout(s.ctx, receiptTimeout)
		_, err = s.cfg.Printer.Print(ctx, device.Print{Data: hex.EncodeToString(b), Format: device.FormatESCPOS})
		cancel()
	}
	if err != nil {
		s.log.Warn("order ticket not printed", "order", ord.id, "err", err)
		s.tellStaff(ActionTicketNotPrinted, ord.id, fmt.Sprintf("the order ticket of order %s (number %s) was not printed: %v; prepare it from the order", ord.id, ord.number, err))
	}
}

// ActionTicketNotPrinted is the audit action of an order ticket the
// terminal's printer did not take: staff prepare the order from it.
const ActionTicketNotPrinted = "order_ticket_not_printed"

// tellStaff records, in the audit trail staff mode shows, what the kiosk
// could not do by itself.
func (s *Service) tellStaff(action, subject, detail string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(s.ctx), receiptTimeout)
	defer cancel()
	if err := s.cfg.Journal.AppendAudit(ctx, journal.AuditRecord{Who: "system:kiosk", Action: action, Subject: subject, Detail: detail}); err != nil {
		s.log.Error("staff not told", "action", action, "subject", subject, "err", err)
	}
}

// receiptLocked is the order as the receipt package lays it out, in the
// customer's language; with the approved parts when withParts.
func (s *Service) receiptLocked(ord *order, withParts bool) (receipt.Receipt, receipt.Options) {
	o := receipt.Order{Number: ord.number, Dining: string(ord.dining), Time: ord.created, Currency: ord.currency}
	for _, l := range ord.lines {
		o.Lines = append(o.Lines, orders.ReceiptLines(l.LineView, func(t Text) string { return s.textLocked(t, ord.language) })...)
	}
	r := receipt.Receipt{Merchant: s.settings.Merchant, Order: o}
	if withParts {
		r.Payments = append([]receipt.Part(nil), ord.parts...)
	}
	return r, receipt.Options{Columns: s.settings.ReceiptColumns, Locale: ord.language}
}

// textLocked picks a name in lang, else the default language, else any.
func (s *Service) textLocked(t Text, lang string) string {
	if v := t[lang]; v != "" {
		return v
	}
	if v := t[s.settings.DefaultLanguage]; v != "" {
		return v
	}
	for _, l := range settings.DefaultLanguages {
		if v := t[l]; v != "" {
			return v
		}
	}
	for _, v := range t {
		return v
	}
	return ""
}

var (
	errNoPrinter       = errors.New("kiosk: no printer configured")
	errNoTransaction   = errors.New("kiosk: no card transaction to attach the receipt to")
	errNoCopy          = errors.New("kiosk: the receipt was printed already, and no fiscal journal counts copies")
	errCopyNotRecorded = errors.New("kiosk: the copy could not be recorded in the fiscal journal: nothing printed")
)

// receiptMessage says why a receipt failed, for the screen.
func receiptMessage(err error) string {
	switch {
	case errors.Is(err, errNoPrinter):
		return "No printer is available: please ask at the counter for your receipt."
	case errors.Is(err, errNoTransaction):
		return "This payment cannot be sent as a receipt: please ask at the counter."
	case errors.Is(err, errNoCopy), errors.Is(err, errCopyNotRecorded):
		return "Your receipt was printed already: please ask at the counter for a copy."
	}
	var de *device.Error
	if !errors.As(err, &de) {
		return "The receipt could not be sent. Please ask at the counter."
	}
	switch de.Kind {
	case device.Invalid:
		return "The receipt could not be prepared: please ask at the counter."
	case device.NotSent:
		return "The terminal could not be reached: no receipt was sent. Please ask at the counter."
	case device.Unsure:
		return "The terminal did not answer clearly: the receipt may not have been sent. Please ask at the counter."
	}
	return receipt.RefusalOf(de.Code).Customer
}
