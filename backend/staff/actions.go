package staff

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/kiosk"
	"github.com/comptoir-pos/comptoir/backend/localapi"
	"github.com/comptoir-pos/comptoir/backend/payment"
	"github.com/comptoir-pos/comptoir/backend/receipt"
)

// ReversalResult is a reversal the terminal accepted.
type ReversalResult struct {
	AttemptUUID           string `json:"attemptUuid,omitempty"`
	InitialTransactionID  string `json:"initialTransactionId"`
	ReversalTransactionID string `json:"reversalTransactionId"`
	Amount                int64  `json:"amount"` // amount + giftAmount of the original, cents
}

// reversalRecord is the machine-readable part of the note a successful
// reversal leaves on its attempt; Compare and Report read it back.
type reversalRecord struct {
	ReversalTransactionID string `json:"reversalTransactionId"`
	InitialTransactionID  string `json:"initialTransactionId"`
	Amount                int64  `json:"amount"`
}

const reversalNotePrefix = "reversal approved "

// transactionOf decodes the terminal's answer an attempt was decided on.
func transactionOf(a journal.Attempt) (*localapi.Transaction, bool) {
	if len(a.Response) == 0 {
		return nil, false
	}
	var tx localapi.Transaction
	if json.Unmarshal(a.Response, &tx) != nil || tx.Status == "" {
		return nil, false
	}
	return &tx, true
}

// Reverse reverses an approved debit of the journal on the terminal that
// took it. The amount is the terminal's amount + giftAmount of that
// transaction, never typed. The terminal decides whether it is still
// reversible (16 h by its own clock). Every outcome, with the terminal's raw
// answer, is a note on the attempt.
func (s *Staff) Reverse(ctx context.Context, sessionID, uuid string) (ReversalResult, error) {
	sess, err := s.session(sessionID)
	if err != nil {
		return ReversalResult{}, err
	}
	s.actMu.Lock()
	defer s.actMu.Unlock()
	att, err := s.cfg.Journal.Attempt(ctx, uuid)
	if err != nil {
		return ReversalResult{}, journalErr(err, "Finding the payment")
	}
	switch {
	case att.Kind != journal.KindDebit:
		return ReversalResult{}, errorf(EINVALID, "Only a card payment can be reversed; this is a %s.", att.Kind)
	case att.State != journal.StateApproved:
		return ReversalResult{}, errorf(EINVALID, "Only an approved payment can be reversed; this one is %s.", att.State)
	}
	tx, ok := transactionOf(att)
	if !ok || tx.TransactionID == "" {
		return ReversalResult{}, errorf(EINVALID, "The journal has no transaction from the terminal for this payment (it was settled by hand): find it in the terminal's history and reverse it from there.")
	}
	res, err := s.reverse(ctx, sess, tx.TransactionID, tx.Total(), func(text string) { s.note(ctx, uuid, sess.Who, text) })
	res.AttemptUUID = uuid
	return res, err
}

// ReverseTransaction reverses a debit of the terminal's history that the
// journal does not know (a charge made on the terminal's keypad, for
// instance). The amount is taken from the history entry, never typed. The
// outcome is a line of the journal's audit table (action "reversal"), which
// the day's comparison and report read back.
func (s *Staff) ReverseTransaction(ctx context.Context, sessionID, transactionID string) (ReversalResult, error) {
	sess, err := s.session(sessionID)
	if err != nil {
		return ReversalResult{}, err
	}
	s.actMu.Lock()
	defer s.actMu.Unlock()
	if transactionID == "" {
		return ReversalResult{}, errorf(EINVALID, "Choose the transaction to reverse.")
	}
	// Reversible means under 16 h: the last day of history holds it.
	now := s.now().UTC()
	entries, err := s.historyRange(ctx, now.Add(-24*time.Hour), time.Time{})
	if err != nil {
		return ReversalResult{}, err
	}
	var found *localapi.HistoryEntry
	for i := range entries {
		if entries[i].TransactionID == transactionID {
			found = &entries[i]
			break
		}
	}
	if found == nil {
		return ReversalResult{}, errorf(ENOTFOUND, "The terminal's history of the last 24 hours has no transaction %s.", transactionID)
	}
	if found.Type != localapi.HistoryDebit || found.Status != localapi.StatusOK {
		return ReversalResult{}, errorf(EINVALID, "Only an approved card payment can be reversed; this is a %s (%s).", found.Type, found.Status)
	}
	return s.reverse(ctx, sess, transactionID, found.Amount+found.GiftAmount, func(text string) {
		s.audit(ctx, sess.Who, actionReversal, transactionID, text, nil)
	})
}

// reverse sends /reversal once and says what happened, in record and in
// the returned error.
func (s *Staff) reverse(ctx context.Context, sess Session, txID string, amount int64, record func(string)) (ReversalResult, error) {
	res := ReversalResult{InitialTransactionID: txID, Amount: amount}
	tctx, cancel := s.terminalCtx(ctx)
	defer cancel()
	resp, err := s.cfg.Terminal.Reversal(tctx, &localapi.ReversalRequest{Amount: amount, InitialTransactionID: txID})
	var (
		ae *localapi.APIError
		ve *localapi.ValidationError
		te *localapi.TransportError
	)
	switch {
	case err == nil:
		res.ReversalTransactionID = resp.ReversalTransactionID
		rec, _ := json.Marshal(reversalRecord{ReversalTransactionID: resp.ReversalTransactionID, InitialTransactionID: txID, Amount: amount})
		record(reversalNotePrefix + string(rec) + "\nterminal answered: " + rawText(resp.Raw))
		s.log.Info("staff: reversal", "who", sess.Who, "initialTransactionId", txID, "amount", amount)
		return res, nil
	case errors.As(err, &ae):
		record(fmt.Sprintf("reversal of %s for %d refused by the terminal (%s)\nterminal answered: %s", txID, amount, ae.Code, rawText(ae.Raw)))
		return res, &Error{Code: ETERMINAL, Message: ReversalMessage(ae.Code), TerminalCode: ae.Code, TerminalMessage: ae.Message, Err: err}
	case errors.As(err, &ve):
		return res, &Error{Code: EINVALID, Message: "The reversal request is not valid (" + ve.Field + ": " + ve.Reason + "). Nothing was sent.", Err: err}
	case errors.As(err, &te) && !te.Sent:
		record(fmt.Sprintf("reversal of %s for %d not sent: the terminal could not be reached (%v)", txID, amount, te.Err))
		return res, &Error{Code: ETERMINAL, Message: "The terminal could not be reached: nothing was sent, nothing was reversed. Check that it is on and connected, then try again.", Err: err}
	default:
		var raw []byte
		var he *localapi.HTTPError
		var de *localapi.DecodeError
		if errors.As(err, &he) {
			raw = he.Body
		} else if errors.As(err, &de) {
			raw = de.Body
		}
		record(fmt.Sprintf("reversal of %s for %d: outcome unknown (%v)\nterminal answered: %s", txID, amount, err, rawText(raw)))
		return res, &Error{Code: EUNKNOWN, Message: "The reversal was sent but no clear answer came back: it may or may not have been made. Check the terminal's history before trying again.", Err: err}
	}
}

// Refund refunds amount (cents) of an order to the customer's card: a
// payment attempt of kind refund through the orchestrator, with its own
// uuid, journaled before it leaves, never more than the order was charged
// less what was already refunded. It waits for the outcome; cancelling ctx
// asks the terminal to abort, and the outcome is still returned.
func (s *Staff) Refund(ctx context.Context, sessionID, orderID string, amount int64) (payment.View, error) {
	sess, err := s.session(sessionID)
	if err != nil {
		return payment.View{}, err
	}
	if s.cfg.Payments == nil {
		return payment.View{}, errorf(ETERMINAL, "Refunds are not available: the kiosk is not connected to a terminal.")
	}
	if amount <= 0 {
		return payment.View{}, errorf(EINVALID, "The amount to refund must be more than zero.")
	}
	sum, err := s.cfg.Payments.Summary(ctx, orderID)
	if err != nil {
		return payment.View{}, journalErr(err, "Finding the order")
	}
	if max := sum.Paid + sum.Gifts - sum.Refunded; amount > max {
		s.audit(ctx, sess.Who, "refund_refused", orderID, fmt.Sprintf("refund of %d asked, %d at most", amount, max), nil)
		if max <= 0 {
			return payment.View{}, errorf(EINVALID, "Nothing can be refunded on this order: nothing approved is left to refund.")
		}
		currency := ""
		if o, err := s.cfg.Journal.Order(ctx, orderID); err == nil {
			currency = o.Currency
		}
		return payment.View{}, errorf(EINVALID, "This order can be refunded %s at most (what was charged, less what was already refunded).", formatMoney(max, currency))
	}
	v, err := s.cfg.Payments.Pay(ctx, payment.Request{
		OrderID: orderID, Amount: amount, Policy: journal.PolicyRefund, Reference: sess.Who,
	})
	if err != nil {
		// Refused before anything was sent (the orchestrator's own checks,
		// an unresolved attempt on the order or terminal, not ready).
		s.audit(ctx, sess.Who, "refund_refused", orderID, fmt.Sprintf("refund of %d: %v", amount, err), nil)
		msg := "The refund could not be started: " + strings.TrimPrefix(err.Error(), "payment: ") + ". Nothing was sent."
		if errors.Is(err, payment.ErrNotReady) {
			msg = "The kiosk is still checking unfinished payments with the terminal: try the refund again in a moment. Nothing was sent."
		}
		return payment.View{}, &Error{Code: EINVALID, Message: msg, Err: err}
	}
	raw := []byte(nil)
	if v.Transaction != nil {
		raw = v.Transaction.Raw
	}
	s.note(ctx, v.UUID, sess.Who, fmt.Sprintf("refund of %d asked by staff: %s %s\nterminal answered: %s", amount, v.State, v.Message, rawText(raw)))
	return v, nil
}

// Reprint prints the customer receipt of the order an attempt paid, rebuilt
// from the journal, on the terminal's printer.
func (s *Staff) Reprint(ctx context.Context, sessionID, uuid string) error {
	sess, err := s.session(sessionID)
	if err != nil {
		return err
	}
	r, opt, att, err := s.receiptFor(ctx, uuid)
	if err != nil {
		return err
	}
	b, err := receipt.CustomerReceipt(r, opt)
	if err != nil {
		return &Error{Code: EINTERNAL, Message: "The receipt could not be laid out.", Err: err}
	}
	tctx, cancel := s.terminalCtx(ctx)
	defer cancel()
	resp, err := s.cfg.Terminal.Print(tctx, &localapi.PrintRequest{Data: hex.EncodeToString(b), Format: localapi.FormatESCPOS})
	if err != nil {
		s.note(ctx, att.UUID, sess.Who, "receipt reprint failed: "+err.Error()+"\nterminal answered: "+rawText(rawOf(err)))
		return terminalErr(err, receiptMessage, "The receipt was not printed")
	}
	s.note(ctx, att.UUID, sess.Who, "receipt reprinted\nterminal answered: "+rawText(resp.Raw))
	return nil
}

// Share sends the customer receipt through the terminal, which asks the
// customer for the address or number. medium: email, sms, print or service.
func (s *Staff) Share(ctx context.Context, sessionID, uuid, medium string) error {
	sess, err := s.session(sessionID)
	if err != nil {
		return err
	}
	switch medium {
	case localapi.ShareEmail, localapi.ShareSMS, localapi.SharePrint, localapi.ShareService:
	default:
		return errorf(EINVALID, "Choose how to send the receipt: email, SMS, print or the customer's preference.")
	}
	r, opt, att, err := s.receiptFor(ctx, uuid)
	if err != nil {
		return err
	}
	if att.TransactionID == "" {
		return errorf(EINVALID, "The terminal has no transaction for this payment, so it cannot send its receipt: print it instead.")
	}
	tctx, cancel := s.terminalCtx(ctx)
	defer cancel()
	resp, err := s.cfg.Terminal.ShareReceipt(tctx, &localapi.ShareReceiptRequest{
		ReceiptTicket: receipt.ShareReceiptTicket(r, opt), TransactionID: att.TransactionID, Medium: medium,
	})
	if err != nil {
		s.note(ctx, att.UUID, sess.Who, "receipt share ("+medium+") failed: "+err.Error()+"\nterminal answered: "+rawText(rawOf(err)))
		return terminalErr(err, receiptMessage, "The receipt was not sent")
	}
	s.note(ctx, att.UUID, sess.Who, "receipt shared ("+medium+")\nterminal answered: "+rawText(resp.Raw))
	return nil
}

func (s *Staff) receiptFor(ctx context.Context, uuid string) (receipt.Receipt, receipt.Options, journal.Attempt, error) {
	att, err := s.cfg.Journal.Attempt(ctx, uuid)
	if err != nil {
		return receipt.Receipt{}, receipt.Options{}, att, journalErr(err, "Finding the payment")
	}
	if att.Kind != journal.KindDebit || att.State != journal.StateApproved {
		return receipt.Receipt{}, receipt.Options{}, att, errorf(EINVALID, "A receipt is for an approved payment; this one is %s.", att.State)
	}
	st, err := kiosk.LoadSettings(ctx, s.cfg.Journal, s.log)
	if err != nil {
		return receipt.Receipt{}, receipt.Options{}, att, journalErr(err, "Reading the settings")
	}
	r, opt, err := kiosk.OrderReceipt(ctx, s.cfg.Journal, st, att.OrderID)
	if err != nil {
		var je *journal.Error
		if errors.As(err, &je) {
			return receipt.Receipt{}, receipt.Options{}, att, journalErr(err, "Rebuilding the receipt")
		}
		return receipt.Receipt{}, receipt.Options{}, att, &Error{Code: EINVALID, Message: "This order's lines were not recorded (it was not taken at this kiosk): no receipt can be rebuilt.", Err: err}
	}
	return r, opt, att, nil
}

// rawOf is the terminal's raw answer carried by an error, if any.
func rawOf(err error) []byte {
	var ae *localapi.APIError
	var he *localapi.HTTPError
	var de *localapi.DecodeError
	switch {
	case errors.As(err, &ae):
		return ae.Raw
	case errors.As(err, &he):
		return he.Body
	case errors.As(err, &de):
		return de.Body
	}
	return nil
}

// TerminalStatus is the terminal as staff see it.
type TerminalStatus struct {
	Reachable bool   `json:"reachable"`
	Message   string `json:"message,omitempty"` // why not, as a sentence
	Greeted   bool   `json:"greeted,omitempty"` // the terminal shows its greeting
	// Mode is kiosk or counter (setting kiosk.mode), with its timeouts.
	Mode                 string  `json:"mode"`
	ClientTimeoutSeconds float64 `json:"clientTimeoutSeconds"`
	RefundTimeoutSeconds float64 `json:"refundTimeoutSeconds"`
	RequestOpenSeconds   float64 `json:"requestOpenSeconds"`
	Raw                  string  `json:"raw,omitempty"` // /ping's answer
}

// Terminal pings the terminal; with greet it shows its greeting message,
// which tells staff which terminal they are talking to.
func (s *Staff) Terminal(ctx context.Context, sessionID string, greet bool) (TerminalStatus, error) {
	sess, err := s.session(sessionID)
	if err != nil {
		return TerminalStatus{}, err
	}
	st, err := kiosk.LoadSettings(ctx, s.cfg.Journal, s.log)
	if err != nil {
		return TerminalStatus{}, journalErr(err, "Reading the settings")
	}
	lim := s.cfg.Limits
	out := TerminalStatus{Mode: st.Mode, RefundTimeoutSeconds: lim.RefundTimeout.Seconds(), RequestOpenSeconds: lim.RequestOpen.Seconds()}
	out.ClientTimeoutSeconds = lim.KioskTimeout.Seconds()
	if st.Mode == "counter" {
		out.ClientTimeoutSeconds = lim.CounterTimeout.Seconds()
	}
	tctx, cancel := s.terminalCtx(ctx)
	defer cancel()
	resp, err := s.cfg.Terminal.Ping(tctx, greet)
	if err != nil {
		out.Message = "The terminal does not answer: check that it is on, logged in and on the same network."
		out.Raw = string(rawOf(err))
	} else {
		out.Reachable, out.Greeted, out.Raw = true, greet, string(resp.Raw)
	}
	if greet {
		s.audit(ctx, sess.Who, "ping", "", fmt.Sprintf("ping with greeting: reachable=%v", out.Reachable), []byte(out.Raw))
	}
	return out, nil
}

// Evidence is what the terminal's history says about an attempt whose
// outcome is unknown: its entries of the same amount within ±EvidenceWindow
// of the attempt's first send.
type Evidence struct {
	Attempt AttemptView    `json:"attempt"`
	From    time.Time      `json:"from"`
	To      time.Time      `json:"to"`
	Entries []HistoryEntry `json:"entries"`
	// Charged lists the approved entries: one with the order's cartId is
	// almost certainly this attempt.
	Charged []HistoryEntry `json:"charged"`
	// Hint is a sentence for staff; the decision stays theirs.
	Hint string `json:"hint"`
}

// EvidenceWindow is how far around the first send the history is searched.
const EvidenceWindow = 10 * time.Minute

// ResolveUnknown gathers the evidence for settling an unknown attempt.
func (s *Staff) ResolveUnknown(ctx context.Context, sessionID, uuid string) (Evidence, error) {
	if _, err := s.session(sessionID); err != nil {
		return Evidence{}, err
	}
	att, err := s.cfg.Journal.Attempt(ctx, uuid)
	if err != nil {
		return Evidence{}, journalErr(err, "Finding the payment")
	}
	if att.State != journal.StateUnknown {
		return Evidence{}, errorf(EINVALID, "Only a payment whose outcome is unknown needs settling; this one is %s.", att.State)
	}
	return s.evidence(ctx, att)
}

func (s *Staff) evidence(ctx context.Context, att journal.Attempt) (Evidence, error) {
	at := att.FirstSentAt
	if at.IsZero() {
		at = att.CreatedAt
	}
	ev := Evidence{Attempt: s.view(ctx, att, nil), From: at.Add(-EvidenceWindow).UTC(), To: at.Add(EvidenceWindow).UTC(),
		Entries: []HistoryEntry{}, Charged: []HistoryEntry{}}
	entries, err := s.historyRange(ctx, ev.From, ev.To)
	if err != nil {
		return Evidence{}, err
	}
	kind := localapi.HistoryDebit
	if att.Kind == journal.KindRefund {
		kind = localapi.HistoryRefund
	}
	sameCart := false
	for _, e := range entries {
		if e.Amount != att.Amount || e.Type != kind {
			continue
		}
		h := s.historyEntry(e)
		ev.Entries = append(ev.Entries, h)
		if e.Status == localapi.StatusOK {
			ev.Charged = append(ev.Charged, h)
			if e.CartID == att.OrderID {
				sameCart = true
			}
		}
	}
	switch {
	case sameCart:
		ev.Hint = "The terminal lists an approved transaction for this very order: the customer was most likely charged."
	case len(ev.Charged) > 0:
		ev.Hint = "The terminal lists an approved transaction of this amount at about that time, but not for this order: check the card ticket with the customer."
	case len(ev.Entries) > 0:
		ev.Hint = "The terminal lists only declined or cancelled transactions of this amount at that time: the customer was most likely not charged."
	default:
		ev.Hint = "The terminal lists no transaction of this amount at that time: the customer was most likely not charged."
	}
	return ev, nil
}

// ConfirmUnknown records staff's decision on an unknown attempt: paid (the
// customer was charged) or not. The journal keeps who decided, with the
// evidence that was shown and the note; the order then follows: paid once
// its approved debits cover it, open again otherwise (the customer can pay
// again), and still needing attention while another attempt is unknown.
func (s *Staff) ConfirmUnknown(ctx context.Context, sessionID, uuid string, paid bool, note string) (AttemptView, error) {
	sess, err := s.session(sessionID)
	if err != nil {
		return AttemptView{}, err
	}
	s.actMu.Lock()
	defer s.actMu.Unlock()
	att, err := s.cfg.Journal.Attempt(ctx, uuid)
	if err != nil {
		return AttemptView{}, journalErr(err, "Finding the payment")
	}
	if att.State != journal.StateUnknown {
		return AttemptView{}, errorf(EINVALID, "Only a payment whose outcome is unknown can be settled; this one is %s.", att.State)
	}
	// The evidence is fetched again: what is recorded is what the terminal
	// said at the moment of the decision. A terminal out of reach does not
	// block staff, who may have checked the back office instead.
	var buf bytes.Buffer
	to, verdict := journal.StateDeclined, "not paid"
	if paid {
		to, verdict = journal.StateApproved, "paid"
	}
	fmt.Fprintf(&buf, "staff confirmed: %s", verdict)
	if strings.TrimSpace(note) != "" {
		fmt.Fprintf(&buf, "; note: %s", strings.TrimSpace(note))
	}
	if ev, err := s.evidence(ctx, att); err == nil {
		b, _ := json.Marshal(struct {
			From    time.Time      `json:"from"`
			To      time.Time      `json:"to"`
			Entries []HistoryEntry `json:"entries"`
			Hint    string         `json:"hint"`
		}{ev.From, ev.To, ev.Entries, ev.Hint})
		fmt.Fprintf(&buf, "\nterminal history at decision time: %s", b)
	} else {
		fmt.Fprintf(&buf, "\nterminal history not available at decision time: %v", err)
	}
	att, err = s.cfg.Journal.Resolve(ctx, uuid, journal.Resolution{To: to, Who: sess.Who, Note: buf.String()})
	if err != nil {
		return AttemptView{}, journalErr(err, "Recording the decision")
	}
	if err := s.settleOrder(ctx, att, sess.Who); err != nil {
		return s.view(ctx, att, nil), err
	}
	return s.view(ctx, att, nil), nil
}

// settleOrder brings the order's status in line with its attempts after a
// resolution.
func (s *Staff) settleOrder(ctx context.Context, att journal.Attempt, who string) error {
	atts, err := s.cfg.Journal.AttemptsForOrder(ctx, att.OrderID)
	if err != nil {
		return journalErr(err, "Reading the order's payments")
	}
	ord, err := s.cfg.Journal.Order(ctx, att.OrderID)
	if err != nil {
		return journalErr(err, "Reading the order")
	}
	var paid int64
	unknown := false
	for _, a := range atts {
		switch {
		case a.State == journal.StateUnknown:
			unknown = true
		case a.State == journal.StateApproved && a.Kind == journal.KindDebit:
			paid += a.Amount
		}
	}
	status := journal.OrderOpen
	switch {
	case unknown:
		status = journal.OrderNeedsAttention
	case paid >= ord.Total && ord.Total > 0:
		status = journal.OrderPaid
	case ord.Status == journal.OrderCancelled:
		status = journal.OrderCancelled
	}
	if status == ord.Status {
		return nil
	}
	if err := s.cfg.Journal.SetOrderStatus(ctx, att.OrderID, status, fmt.Sprintf("attempt %s settled by %s", att.UUID, who)); err != nil {
		return journalErr(err, "Updating the order")
	}
	return nil
}
