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

	"github.com/comptoir-pos/comptoir/backend/device"
	"github.com/comptoir-pos/comptoir/backend/fault"
	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/orders"
	"github.com/comptoir-pos/comptoir/backend/payment"
	"github.com/comptoir-pos/comptoir/backend/receipt"
	"github.com/comptoir-pos/comptoir/backend/settings"
)

// ReversalResult is a reversal the terminal accepted.
type ReversalResult struct {
	AttemptUUID           string `json:"attemptUuid,omitempty"` // the debit reversed
	ReversalUUID          string `json:"reversalUuid,omitempty"`
	InitialTransactionID  string `json:"initialTransactionId"`
	ReversalTransactionID string `json:"reversalTransactionId"`
	Amount                int64  `json:"amount"` // amount + giftAmount of the original, cents
}

// reversalRecord is the machine-readable part of the note a reversal left
// on its debit, or on an audit line, in versions that did not journal
// reversals as attempts; the day's comparison still reads the audit lines.
type reversalRecord struct {
	ReversalTransactionID string `json:"reversalTransactionId"`
	InitialTransactionID  string `json:"initialTransactionId"`
	Amount                int64  `json:"amount"`
}

const reversalNotePrefix = "reversal approved "

// Reverse reverses an approved debit of the journal on the terminal that
// took it: a reversal attempt of its own, journaled with its exact request
// before it leaves, for the whole debit as the terminal charged it (amount
// + gift, never typed). The journal refuses it when the order's money given
// back (refunds and reversals, unsettled ones included) would exceed what it
// took. The terminal decides whether it is still reversible (16 h by its
// own clock); an answer lost on the way is settled from its history.
func (s *Staff) Reverse(ctx context.Context, sessionID, uuid string) (ReversalResult, error) {
	sess, err := s.reversalSession(sessionID)
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
	case att.TransactionID == "":
		return ReversalResult{}, errorf(EINVALID, "The journal has no transaction from the terminal for this payment (it was settled by hand without one): find it in the terminal's history and reverse it from there.")
	}
	return s.reverse(ctx, sess, att)
}

// reversalSession is the session of a reversal, which needs a terminal
// that takes payments.
func (s *Staff) reversalSession(sessionID string) (Session, error) {
	sess, err := s.session(sessionID)
	if err != nil {
		return Session{}, err
	}
	if s.cfg.Payments == nil {
		return Session{}, errorf(ETERMINAL, "Reversals are not available: the kiosk is not connected to a terminal.")
	}
	return sess, nil
}

// ReverseTransaction reverses a debit of the terminal's history that the
// journal does not know (a charge made on the terminal's keypad, for
// instance). The charge is first recorded in the journal as what it is (an
// approved debit of an order of its own, taken from the history entry,
// never typed), then reversed like any other, so that it is given back
// once and never beyond what it took.
func (s *Staff) ReverseTransaction(ctx context.Context, sessionID, transactionID string) (ReversalResult, error) {
	sess, err := s.reversalSession(sessionID)
	if err != nil {
		return ReversalResult{}, err
	}
	s.actMu.Lock()
	defer s.actMu.Unlock()
	if transactionID == "" {
		return ReversalResult{}, errorf(EINVALID, "Choose the transaction to reverse.")
	}
	if att, err := s.cfg.Journal.AttemptByTransaction(ctx, transactionID); err == nil {
		if att.Kind == journal.KindDebit && att.State == journal.StateApproved {
			return s.reverse(ctx, sess, att)
		}
		return ReversalResult{}, errorf(EINVALID, "The journal holds transaction %s as a %s %s: only an approved card payment can be reversed.", transactionID, att.State, att.Kind)
	} else if fault.CodeOf(err) != fault.ENOTFOUND {
		return ReversalResult{}, journalErr(err, "Finding the transaction")
	}
	// Reversible means under 16 h: the last day of history holds it.
	now := s.now().UTC()
	entries, err := s.historyRange(ctx, now.Add(-24*time.Hour), time.Time{})
	if err != nil {
		return ReversalResult{}, err
	}
	var found *device.HistoryEntry
	for i := range entries {
		if entries[i].TransactionID == transactionID {
			found = &entries[i]
			break
		}
	}
	if found == nil {
		return ReversalResult{}, errorf(ENOTFOUND, "The terminal's history of the last 24 hours has no transaction %s.", transactionID)
	}
	if found.Type != device.HistoryDebit || found.Status != device.StatusOK {
		return ReversalResult{}, errorf(EINVALID, "Only an approved card payment can be reversed; this is a %s (%s).", found.Type, found.Status)
	}
	currency := found.CurrencyCode
	if currency == "" {
		currency = s.currency(ctx)
	}
	at, _ := found.Created()
	raw, _ := json.Marshal(found)
	att, err := s.cfg.Journal.AdoptCharge(ctx, journal.AdoptedCharge{
		TransactionID: transactionID, Amount: found.Amount, GiftAmount: found.GiftAmount, Currency: currency,
		Terminal: s.cfg.Payments.TerminalID(), At: at, CartID: found.CartID, Raw: raw, Who: sess.Who,
	})
	if err != nil {
		return ReversalResult{}, journalErr(err, "Recording the terminal's charge")
	}
	s.audit(ctx, sess.Who, "charge_adopted", transactionID, fmt.Sprintf("a charge of %d (gift %d) the journal did not know, recorded as attempt %s of order %s before its reversal",
		found.Amount, found.GiftAmount, att.UUID, att.OrderID), raw)
	return s.reverse(ctx, sess, att)
}

// currency is the kiosk's currency: its setting, else the catalog's, else
// the default.
func (s *Staff) currency(ctx context.Context) string {
	if st, err := settings.LoadSettings(ctx, s.cfg.Journal, s.log); err == nil && st.Currency != "" {
		return st.Currency
	}
	if s.cfg.Currency != nil {
		if c := s.cfg.Currency(); c != "" {
			return c
		}
	}
	return settings.DefaultCurrency
}

// reverse runs the reversal of an approved debit through the orchestrator
// and says what happened as a result or a sentence.
func (s *Staff) reverse(ctx context.Context, sess Session, debit journal.Attempt) (ReversalResult, error) {
	res := ReversalResult{AttemptUUID: debit.UUID, InitialTransactionID: debit.TransactionID, Amount: debit.Total()}
	if err := s.beforeGivingBack(ctx, sess.Who, debit.OrderID); err != nil {
		return res, err
	}
	v, err := s.cfg.Payments.Reverse(ctx, debit.UUID)
	if err != nil {
		msg := "The reversal could not be started: " + strings.TrimPrefix(err.Error(), "payment: ") + ". Nothing was sent."
		if errors.Is(err, payment.ErrNotReady) {
			msg = "The kiosk is still checking unfinished payments with the terminal: try again in a moment. Nothing was sent."
		}
		s.note(ctx, debit.UUID, sess.Who, "reversal refused before anything was sent: "+err.Error())
		return res, &Error{Code: EINVALID, Message: msg, Err: err}
	}
	res.ReversalUUID = v.UUID
	s.note(ctx, v.UUID, sess.Who, fmt.Sprintf("reversal of %s for %d asked by staff: %s %s", debit.TransactionID, res.Amount, v.State, v.Message))
	switch v.State {
	case journal.StateApproved:
		res.ReversalTransactionID = v.TransactionID
		s.log.Info("staff: reversal", "who", sess.Who, "initialTransactionId", debit.TransactionID, "amount", res.Amount)
		return res, nil
	case journal.StateFailed, journal.StateDeclined:
		code := device.RefusalCode(v.Message)
		if code == device.CodeOther {
			return res, &Error{Code: ETERMINAL, Message: "The reversal was not made: " + v.Message + ".", TerminalMessage: v.Message}
		}
		return res, &Error{Code: ETERMINAL, Message: ReversalMessage(code), TerminalCode: string(code), TerminalMessage: v.Message}
	case journal.StateUnknown:
		return res, errorf(EUNKNOWN, "The reversal was sent but no clear answer came back, and the terminal's history cannot tell: it is listed under \"needs attention\" for a decision. Do not give this money back another way before it is settled.")
	}
	return res, errorf(EUNKNOWN, "The reversal is still waiting for the terminal's answer: it goes on by itself, and this payment's detail will show its outcome. Do not give this money back another way meanwhile.")
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
	if err := s.beforeGivingBack(ctx, sess.Who, orderID); err != nil {
		return payment.View{}, err
	}
	sum, err := s.cfg.Payments.Summary(ctx, orderID)
	if err != nil {
		return payment.View{}, journalErr(err, "Finding the order")
	}
	if max := sum.Givable(); amount > max {
		s.audit(ctx, sess.Who, "refund_refused", orderID, fmt.Sprintf("refund of %d asked, %d at most", amount, max), nil)
		if max <= 0 {
			return payment.View{}, errorf(EINVALID, "Nothing can be refunded on this order: nothing approved is left to refund.")
		}
		currency := ""
		if o, err := s.cfg.Journal.Order(ctx, orderID); err == nil {
			currency = o.Currency
		}
		return payment.View{}, errorf(EINVALID, "This order can be refunded %s at most (what was charged, less what was refunded or reversed, or may have been).", formatMoney(max, currency))
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
	// The note says what happened; the answer itself is journaled on the
	// refund's attempt, its card data apart (and purged in time).
	s.note(ctx, v.UUID, sess.Who, strings.TrimSpace(fmt.Sprintf("refund of %d asked by staff: %s %s", amount, v.State, outcomeWords(v.TransactionID, v.Message))))
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
	if s.cfg.Duplicate != nil {
		// A reprint is recorded, and says it is a copy.
		f, err := s.cfg.Duplicate(ctx, att.OrderID)
		if err != nil {
			return &Error{Code: EINTERNAL, Message: "The reprint could not be recorded in the fiscal journal: nothing was printed.", Err: err}
		}
		r.Fiscal = f
	}
	b, err := receipt.CustomerReceipt(r, opt)
	if err != nil {
		return &Error{Code: EINTERNAL, Message: "The receipt could not be laid out.", Err: err}
	}
	tctx, cancel := s.terminalCtx(ctx)
	defer cancel()
	resp, err := s.cfg.Terminal.Print(tctx, device.Print{Data: hex.EncodeToString(b), Format: device.FormatESCPOS})
	if err != nil {
		s.note(ctx, att.UUID, sess.Who, "receipt reprint failed: "+err.Error())
		return terminalErr(err, receiptMessage, "The receipt was not printed")
	}
	s.note(ctx, att.UUID, sess.Who, "receipt reprinted: "+answerWords(resp))
	return nil
}

// shareTimeout bounds a receipt sent through the terminal, which prompts
// the customer: it stays under browser mode's write timeout (60 s), so
// that staff are told the outcome on their screen.
const shareTimeout = 55 * time.Second

// Share sends the customer receipt through the terminal, which asks the
// customer for the address or number. medium: email, sms, print or service.
func (s *Staff) Share(ctx context.Context, sessionID, uuid string, medium device.Medium) error {
	sess, err := s.session(sessionID)
	if err != nil {
		return err
	}
	switch medium {
	case device.ShareEmail, device.ShareSMS, device.SharePrint, device.ShareService:
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
	// The terminal asks the customer for the address or number: longer
	// than another call to it.
	tctx, cancel := context.WithTimeout(ctx, max(shareTimeout, s.cfg.TerminalTimeout))
	defer cancel()
	resp, err := s.cfg.Terminal.ShareReceipt(tctx, device.Share{
		Ticket: receipt.ShareReceiptTicket(r, opt), TransactionID: att.TransactionID, Medium: medium,
	})
	if err != nil {
		s.note(ctx, att.UUID, sess.Who, "receipt share ("+string(medium)+") failed: "+err.Error())
		return terminalErr(err, receiptMessage, "The receipt was not sent")
	}
	s.note(ctx, att.UUID, sess.Who, "receipt shared ("+string(medium)+"): "+answerWords(resp))
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
	st, err := settings.LoadSettings(ctx, s.cfg.Journal, s.log)
	if err != nil {
		return receipt.Receipt{}, receipt.Options{}, att, journalErr(err, "Reading the settings")
	}
	r, opt, err := orders.OrderReceipt(ctx, s.cfg.Journal, st, att.OrderID)
	if err != nil {
		if fault.As(err) != nil {
			return receipt.Receipt{}, receipt.Options{}, att, journalErr(err, "Rebuilding the receipt")
		}
		return receipt.Receipt{}, receipt.Options{}, att, &Error{Code: EINVALID, Message: "This order's lines were not recorded (it was not taken at this kiosk): no receipt can be rebuilt.", Err: err}
	}
	return r, opt, att, nil
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
	st, err := settings.LoadSettings(ctx, s.cfg.Journal, s.log)
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
		if device.CodeOf(err) == device.CodeUnauthorized {
			out.Message = "The provider's cloud refused the API key for this terminal: check the key and the serial number in the terminal's settings."
		}
		out.Raw = string(device.RawOf(err))
	} else {
		out.Reachable, out.Greeted, out.Raw = true, greet, string(resp.Raw)
	}
	if greet {
		s.audit(ctx, sess.Who, "ping", "", fmt.Sprintf("ping with greeting: reachable=%v", out.Reachable), []byte(out.Raw))
	}
	return out, nil
}

// Evidence is what the terminal's history says about an attempt whose
// outcome is unknown: its entries of the same kind and amount within
// ±EvidenceWindow of the attempt's first send.
type Evidence struct {
	Attempt AttemptView    `json:"attempt"`
	From    time.Time      `json:"from"`
	To      time.Time      `json:"to"`
	Entries []HistoryEntry `json:"entries"`
	// Charged lists the approved entries no other attempt holds: one with
	// the order's cartId is almost certainly this attempt.
	Charged []HistoryEntry `json:"charged"`
	// Hint is a sentence for staff; the decision stays theirs.
	Hint string `json:"hint"`
}

// EvidenceWindow is how far around the first send the history is searched.
const EvidenceWindow = 10 * time.Minute

// ResolveUnknown gathers the evidence for settling an unknown attempt.
// AcceptOrder is staff's word, after checking, on the order of an attempt
// that needs attention for a flag (an approval of another amount,
// currency or type; a link released instead of captured; a screen left
// unknown): the flagged money counts as what it charged, and the order's
// status follows. A note is required: it goes into the audit trail with
// who accepted. Attempts still running or of unknown outcome are settled
// first (ResolveUnknown).
func (s *Staff) AcceptOrder(ctx context.Context, sessionID, uuid, note string) (AttemptView, error) {
	sess, err := s.session(sessionID)
	if err != nil {
		return AttemptView{}, err
	}
	note = strings.TrimSpace(note)
	if note == "" {
		return AttemptView{}, errorf(EINVALID, "Say what you checked before accepting this payment.")
	}
	att, err := s.cfg.Journal.Attempt(ctx, uuid)
	if err != nil {
		return AttemptView{}, journalErr(err, "Finding the payment")
	}
	atts, err := s.cfg.Journal.AttemptsForOrder(ctx, att.OrderID)
	if err != nil {
		return AttemptView{}, journalErr(err, "Reading the order's payments")
	}
	for _, o := range atts {
		if o.State.Open() || o.State == journal.StateUnknown {
			return AttemptView{}, errorf(EINVALID, "Payment %s of this order is %s: settle it first.", o.UUID, o.State)
		}
	}
	if !s.view(ctx, att, nil).CanAccept {
		return AttemptView{}, errorf(EINVALID, "This order does not need accepting.")
	}
	status, err := s.cfg.Journal.AcceptOrder(ctx, att.OrderID, sess.Who, note)
	if err != nil {
		return AttemptView{}, journalErr(err, "Recording the acceptance")
	}
	s.audit(ctx, sess.Who, "accept_order", att.OrderID, fmt.Sprintf("order now %s: %s", status, note), nil)
	att, err = s.cfg.Journal.Attempt(ctx, uuid)
	if err != nil {
		return AttemptView{}, journalErr(err, "Reading the payment")
	}
	return s.view(ctx, att, nil), nil
}

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
	kind := device.HistoryDebit
	switch att.Kind {
	case journal.KindRefund:
		kind = device.HistoryRefund
	case journal.KindReversal:
		kind = device.HistoryReversal
	}
	var hist []HistoryEntry
	for _, e := range entries {
		amount := e.Amount
		if att.Kind == journal.KindReversal {
			amount += e.GiftAmount
		}
		if amount != att.Amount || e.Type != kind {
			continue
		}
		hist = append(hist, s.historyEntry(e))
	}
	s.markJournal(ctx, hist)
	for i := range hist {
		// An entry paired with this very attempt (by cartId and amount) is
		// what is being decided, not another payment's.
		if hist[i].AttemptUUID == att.UUID {
			hist[i].InJournal, hist[i].AttemptUUID, hist[i].AttemptState, hist[i].OrderID = false, "", "", ""
		}
	}
	sameCart := false
	for _, h := range hist {
		ev.Entries = append(ev.Entries, h)
		if h.Status == device.StatusOK && !h.InJournal {
			ev.Charged = append(ev.Charged, h)
			if h.CartID == att.OrderID {
				sameCart = true
			}
		}
	}
	switch {
	case sameCart:
		ev.Hint = "The terminal lists an approved transaction for this very order: the customer was most likely charged. Choose it to record it with the payment."
	case len(ev.Charged) > 0:
		ev.Hint = "The terminal lists an approved transaction of this amount at about that time, but not for this order: check the card ticket with the customer."
	case len(ev.Entries) > 0:
		ev.Hint = "The terminal lists only declined, cancelled or already recorded transactions of this amount at that time: the customer was most likely not charged."
	default:
		ev.Hint = "The terminal lists no transaction of this amount at that time: the customer was most likely not charged."
	}
	return ev, nil
}

// Decision is staff's decision on an unknown outcome.
type Decision struct {
	Paid bool   `json:"paid"` // the customer was charged (or, for a refund or reversal, given back)
	Note string `json:"note"`
	// TransactionID is the transaction of the terminal's history that staff
	// recognised as this attempt (its card ticket, its time): stored with
	// it, so that it can later be reversed and matched. It must be one of
	// the evidence's entries that no other attempt holds; a paid decision
	// names an approved one.
	TransactionID string `json:"transactionId"`
}

// ConfirmUnknown records staff's decision on an unknown attempt: paid (the
// customer was charged) or not, with the transaction it was when staff
// recognised one. The journal keeps who decided, with the evidence that was
// shown and the note; the order then follows: paid once its approved debits
// cover it, open again otherwise (the customer can pay again), and still
// needing attention while another attempt is unknown.
func (s *Staff) ConfirmUnknown(ctx context.Context, sessionID, uuid string, d Decision) (AttemptView, error) {
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
	// block staff, who may have checked the back office instead, unless
	// they name a transaction, which only the history can vouch for.
	var buf bytes.Buffer
	res := journal.Resolution{To: journal.StateDeclined, Who: sess.Who}
	verdict := "not paid"
	if d.Paid {
		res.To, verdict = journal.StateApproved, "paid"
	}
	fmt.Fprintf(&buf, "staff confirmed: %s", verdict)
	if strings.TrimSpace(d.Note) != "" {
		fmt.Fprintf(&buf, "; note: %s", strings.TrimSpace(d.Note))
	}
	ev, everr := s.evidence(ctx, att)
	if everr == nil {
		b, _ := json.Marshal(struct {
			From    time.Time      `json:"from"`
			To      time.Time      `json:"to"`
			Entries []HistoryEntry `json:"entries"`
			Hint    string         `json:"hint"`
		}{ev.From, ev.To, ev.Entries, ev.Hint})
		fmt.Fprintf(&buf, "\nterminal history at decision time: %s", b)
	} else {
		fmt.Fprintf(&buf, "\nterminal history not available at decision time: %v", everr)
	}
	if d.TransactionID != "" {
		if everr != nil {
			return AttemptView{}, errorf(ETERMINAL, "The terminal's history cannot be read now, so transaction %s cannot be checked: try again, or decide without naming it.", d.TransactionID)
		}
		var picked *HistoryEntry
		for i := range ev.Entries {
			if ev.Entries[i].TransactionID == d.TransactionID {
				picked = &ev.Entries[i]
			}
		}
		switch {
		case picked == nil:
			return AttemptView{}, errorf(EINVALID, "Transaction %s is not one of the terminal's transactions of this amount at that time.", d.TransactionID)
		case picked.InJournal:
			return AttemptView{}, errorf(EINVALID, "Transaction %s is already another payment's (%s).", d.TransactionID, picked.AttemptUUID)
		case d.Paid != (picked.Status == device.StatusOK):
			return AttemptView{}, errorf(EINVALID, "Transaction %s is %s on the terminal: it cannot stand for a payment settled as %s.", d.TransactionID, picked.Status, verdict)
		}
		raw, _ := json.Marshal(picked.HistoryEntry)
		res.TransactionID, res.Response = picked.TransactionID, raw
		if d.Paid {
			res.Charged = &journal.Charge{Amount: picked.Amount, GiftAmount: picked.GiftAmount, Currency: picked.CurrencyCode}
			if att.Kind == journal.KindReversal {
				res.Charged = &journal.Charge{Amount: att.Amount}
			}
		}
	}
	res.Note = buf.String()
	att, err = s.cfg.Journal.Resolve(ctx, uuid, res)
	if err != nil {
		return AttemptView{}, journalErr(err, "Recording the decision")
	}
	return s.view(ctx, att, nil), nil
}
