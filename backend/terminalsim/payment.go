package terminalsim

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/comptoir-pos/comptoir/backend/escpos"
	"github.com/comptoir-pos/comptoir/backend/localapi"
	"github.com/google/uuid"
)

// result is how a payment ended.
type result int

const (
	resApproved  result = iota
	resDeclined         // card presented and refused
	resNoCard           // card-read window expired
	resAborted          // abort before the handover, or optional screens expired
	resCancelled        // the customer pressed Cancel
	resReset            // Reset ended it
)

func (r result) String() string {
	return [...]string{"approved", "declined", "no card", "aborted", "cancelled by customer", "reset"}[r]
}

// payment is one payment in progress. Fields under "guarded" are read and
// written with Terminal.mu held; the result fields are written before done
// (or answered) is closed and read only after.
type payment struct {
	uuid      string
	generated bool // the request had no idempotentUuid
	req       localapi.PaymentRequest
	refund    bool
	keypad    bool
	screens   bool
	b         Behaviour
	from      string // where b came from
	started   time.Time

	events   chan Action   // customer actions, to the payment's goroutine
	abortCh  chan struct{} // closed by an abort before the handover
	killCh   chan struct{} // closed by Reset
	done     chan struct{} // closed when decided: the terminal is free
	answered chan struct{} // closed when /payment waiters may answer

	// guarded
	phase   Phase
	reached int // bit set of Phase.rank()
	aborted bool
	held    int // aborts after the handover, waiting for the end
	waiters int // /payment requests waiting for the answer
	killed  bool
	tip     int64

	// result
	res   result
	body  []byte
	total int64
}

func (p *payment) infoLocked() *PaymentInfo {
	tt := localapi.TypeDebit
	if p.refund {
		tt = localapi.TypeRefund
	}
	return &PaymentInfo{
		IdempotentUUID: p.uuid, Amount: p.req.Amount, GiftAmount: p.req.GiftAmount + p.tip,
		TransactionType: tt, CartID: p.req.CartID, Phase: p.phase, Screens: p.screens,
		Keypad: p.keypad, AbortRequested: p.aborted, AbortsHeld: p.held, Waiters: p.waiters, Behaviour: p.b, BehaviourFrom: p.from,
		StartedAt: p.started,
	}
}

// startLocked creates the payment and its goroutine. The caller checked that
// the terminal is free and not closed.
func (t *Terminal) startLocked(req localapi.PaymentRequest, id string, b Behaviour, from string, keypad bool) *payment {
	refund := req.TransactionType == localapi.TypeRefund
	screens := t.tips
	if req.EnableGiftScreen != nil {
		screens = *req.EnableGiftScreen
	}
	p := &payment{
		uuid: id, generated: req.IdempotentUUID == "", req: req, refund: refund, keypad: keypad,
		screens: screens && !refund, b: b, from: from, started: t.nowLocked(),
		events: make(chan Action, 16), abortCh: make(chan struct{}), killCh: make(chan struct{}),
		done: make(chan struct{}), answered: make(chan struct{}),
	}
	p.phase = PhasePreparing
	if p.screens {
		p.phase = PhaseScreens
	}
	p.reached = 1 << p.phase.rank()
	t.current = p
	t.payments[id] = p
	t.broadcastLocked()
	t.wg.Add(1)
	go t.run(p)
	t.log.Info("payment started", "uuid", id, "amount", req.Amount, "giftAmount", req.GiftAmount,
		"refund", refund, "screens", p.screens, "keypad", keypad, "behaviour", from, "cartId", req.CartID)
	return p
}

// enter moves p to a later phase, unless an abort got there first.
func (t *Terminal) enter(p *payment, ph Phase) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if p.aborted {
		return false
	}
	p.phase = ph
	p.reached |= 1 << ph.rank()
	t.broadcastLocked()
	t.log.Debug("payment phase", "uuid", p.uuid, "phase", ph)
	return true
}

// timers starts timers and stops them all when the payment's goroutine is
// done with them.
type timers []*time.Timer

// after returns a channel that fires after d, or nil (never fires) when off.
func (ts *timers) after(d time.Duration, on bool) <-chan time.Time {
	if !on {
		return nil
	}
	tm := time.NewTimer(d)
	*ts = append(*ts, tm)
	return tm.C
}

func (ts timers) stop() {
	for _, tm := range ts {
		tm.Stop()
	}
}

func (t *Terminal) run(p *payment) {
	defer t.wg.Done()
	res, ok := t.drive(p)
	if !ok {
		return // closing: handlers end on t.closing
	}
	late := t.finish(p, res)
	if late > 0 {
		tm := time.NewTimer(late)
		defer tm.Stop()
		select {
		case <-tm.C:
		case <-t.closing:
			return
		}
	}
	close(p.answered)
}

// drive runs the payment's steps until it is decided. ok is false when the
// terminal closed first.
func (t *Terminal) drive(p *payment) (res result, ok bool) {
	var ts timers
	defer ts.stop()
	// A card (or a refusal) offered before the banking screen is read as
	// soon as the banking screen shows.
	var early ActionKind

	if p.screens {
		if res, ok, decided := t.driveScreens(p, &ts, &early); decided {
			return res, ok
		}
		if !t.enter(p, PhasePreparing) {
			return resAborted, true
		}
	}
	if res, ok, decided := t.drivePreparing(p, &ts, &early); decided {
		return res, ok
	}
	if !t.enter(p, PhaseBanking) {
		return resAborted, true
	}

	switch early {
	case ActPresentCard:
		return resApproved, true
	case ActDecline:
		return resDeclined, true
	}
	return t.driveBanking(p, &ts)
}

// driveScreens waits on the screens before the payment (the tip's choice):
// decided is true when the payment ended there, with res and ok as drive's.
func (t *Terminal) driveScreens(p *payment, ts *timers, early *ActionKind) (res result, ok, decided bool) {
	b := p.b
	screensFor, chooseAfter := t.scaled(t.cfg.Timings.Screens), t.scaled(b.TipDelay)
	window := ts.after(screensFor, !b.Hold)
	choose := ts.after(chooseAfter, !b.Hold)
	for {
		select {
		case <-choose:
			t.setTip(p, b.Tip)
			return 0, false, false
		case <-window:
			if chooseAfter < screensFor { // both due: the first decides (driveBanking)
				select {
				case <-choose:
					t.setTip(p, b.Tip)
					return 0, false, false
				default:
				}
			}
			return resAborted, true, true
		case <-p.abortCh:
			return resAborted, true, true
		case <-p.killCh:
			return resReset, true, true
		case <-t.closing:
			return 0, false, true
		case a := <-p.events:
			switch a.Kind {
			case ActTip:
				t.setTip(p, a.Tip)
				return 0, false, false
			case ActCancel:
				return resCancelled, true, true
			case ActTimeout:
				return resAborted, true, true
			case ActHandover:
				return 0, false, false
			case ActPresentCard, ActDecline:
				*early = a.Kind
				return 0, false, false
			}
		}
	}
}

// drivePreparing waits for the terminal to be handed to the customer; a card
// offered meanwhile is kept in early. decided is as driveScreens'.
func (t *Terminal) drivePreparing(p *payment, ts *timers, early *ActionKind) (res result, ok, decided bool) {
	handover := ts.after(t.scaled(t.cfg.Timings.Handover), !p.b.HoldHandover)
	for {
		select {
		case <-handover:
			return 0, false, false
		case <-p.abortCh:
			return resAborted, true, true
		case <-p.killCh:
			return resReset, true, true
		case <-t.closing:
			return 0, false, true
		case a := <-p.events:
			switch a.Kind {
			case ActHandover:
				return 0, false, false
			case ActCancel:
				return resCancelled, true, true
			case ActPresentCard, ActDecline:
				*early = a.Kind
			}
		}
	}
}

// driveBanking waits on the banking screen for the customer's card, the
// script's outcome or the card-read window's end.
func (t *Terminal) driveBanking(p *payment, ts *timers) (res result, ok bool) {
	b := p.b
	readFor, actAfter := t.scaled(t.cfg.Timings.CardRead), t.scaled(b.Delay)
	window := ts.after(readFor, !b.Hold)
	customer := ts.after(actAfter, !b.Hold && b.outcome() != OutcomeNoCard)
	acts := func() result {
		switch b.outcome() {
		case OutcomeDecline:
			return resDeclined
		case OutcomeCancel:
			return resCancelled
		}
		return resApproved
	}
	for {
		select {
		case <-customer:
			return acts(), true
		case <-window:
			// Both may be due by the time this runs (a loaded machine, a
			// small time scale): the one due first decides, not select's
			// random pick.
			if actAfter < readFor {
				select {
				case <-customer:
					return acts(), true
				default:
				}
			}
			return resNoCard, true
		case <-p.killCh:
			return resReset, true
		case <-t.closing:
			return 0, false
		case a := <-p.events:
			switch a.Kind {
			case ActPresentCard:
				return resApproved, true
			case ActDecline:
				return resDeclined, true
			case ActCancel:
				return resCancelled, true
			case ActTimeout:
				return resNoCard, true
			}
		}
	}
}

func (t *Terminal) setTip(p *payment, tip int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if tip > 0 {
		p.tip = tip
	}
}

// finish records the decided payment: the transaction, its history and
// ledger entries, the idempotency store. It frees the terminal and returns
// how long the answer must still wait.
func (t *Terminal) finish(p *payment, res result) (late time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.nowLocked()
	req := p.req
	gift := req.GiftAmount + p.tip
	total := req.Amount + gift
	medium := ""
	if !p.refund && req.AcceptedPayment != nil {
		medium = req.AcceptedPayment.AcceptedMediumType
	}
	c := pickCard(p.b, medium)
	if res == resApproved && !p.refund {
		if why := c.declines(medium, total); why != "" {
			t.log.Info("card declined by the terminal's rules", "uuid", p.uuid, "reason", why)
			res = resDeclined
		}
	}

	tx := t.newTransaction(p, gift)
	kind := tx.TransactionType // what it does, whatever it answers
	if res == resApproved {
		total = t.misreport(p, tx, total, gift)
	}
	if res == resApproved || res == resDeclined {
		// A card was read: the transaction exists, approved or not.
		if res == resApproved {
			tx.Status = localapi.StatusOK
		}
		t.recordTransactionLocked(p, tx, c, kind, gift, now)
	}
	if res == resApproved {
		t.recordChargeLocked(p, tx, kind, gift, total, now)
	}

	p.res, p.total = res, total
	p.body = t.encodeTransaction(tx, p.b.Odd)
	if res != resReset {
		t.known[p.uuid] = &known{body: p.body, at: now}
	}
	p.phase = PhaseDone
	p.reached |= 1 << PhaseDone.rank()
	if t.current == p {
		t.current = nil
	}
	close(p.done)
	t.broadcastLocked()
	t.log.Info("payment decided", "uuid", p.uuid, "result", res.String(), "status", tx.Status,
		"transactionId", tx.TransactionID, "amount", req.Amount, "giftAmount", gift,
		"charged", res == resApproved, "answer", p.b.answer())
	if p.b.answer() == AnswerLate {
		return t.scaled(p.b.Late)
	}
	return 0
}

// newTransaction is the payment's answer before it is decided: refused, with
// the request's amounts and references.
func (t *Terminal) newTransaction(p *payment, gift int64) *localapi.Transaction {
	req := p.req
	tx := &localapi.Transaction{
		Status:              localapi.StatusKO,
		Amount:              req.Amount,
		GiftAmount:          gift,
		CurrencyCode:        t.cfg.CurrencyCode,
		TransactionType:     localapi.TypeDebit,
		AppVersion:          t.cfg.AppVersion,
		CartID:              req.CartID,
		Reference:           req.Reference,
		Customer:            req.Customer,
		CheckoutExternalID:  req.CheckoutExternalID,
		ExternalTableNumber: req.ExternalTableNumber,
		ExternalOrderNumber: req.ExternalOrderNumber,
		ExternalOrderID:     req.ExternalOrderID,
	}
	if !p.generated {
		tx.IdempotentUUID = p.uuid
	}
	if p.refund {
		tx.TransactionType = localapi.TypeRefund
	}
	return tx
}

// misreport applies a scripted misreport to an approved transaction: it
// answers another amount, currency or type than asked. It returns the total
// charged.
func (t *Terminal) misreport(p *payment, tx *localapi.Transaction, total, gift int64) int64 {
	m := p.b.Misreport
	if m == nil {
		return total
	}
	if m.Amount > 0 {
		tx.Amount = m.Amount
		total = m.Amount + gift
	}
	if m.Currency != "" {
		tx.CurrencyCode = m.Currency
	}
	if m.Type != "" {
		tx.TransactionType = m.Type
	}
	t.log.Warn("approving something else than asked (scripted misreport)", "uuid", p.uuid,
		"amount", tx.Amount, "currency", tx.CurrencyCode, "type", tx.TransactionType)
	return total
}

// recordTransactionLocked gives a transaction whose card was read its id,
// card details and tickets, and keeps it in the history.
func (t *Terminal) recordTransactionLocked(p *payment, tx *localapi.Transaction, c card, kind string, gift int64, now time.Time) {
	req := p.req
	tx.TransactionID = uuid.NewString()
	tx.CardToken = c.token(t.cfg.Serial)
	tx.PaymentApplication = c.application
	tx.Scheme = c.scheme
	tx.Issuer = c.issuer
	tx.ClientCardTicket = t.ticket("CUSTOMER COPY", tx, c, now)
	tx.MerchantCardTicket = t.ticket("MERCHANT COPY", tx, c, now)
	rec := &txRecord{
		id: tx.TransactionID, kind: kind, status: tx.Status,
		amount: tx.Amount, gift: gift, uuid: p.uuid, cartID: req.CartID, reference: req.Reference,
		customer: req.Customer, scheme: c.scheme, issuer: c.issuer, at: now,
	}
	t.txs = append(t.txs, rec)
	t.byID[rec.id] = rec
}

// recordChargeLocked writes an approved transaction to the ledger, links its
// checkout and prints the receipt the request carried.
func (t *Terminal) recordChargeLocked(p *payment, tx *localapi.Transaction, kind string, gift, total int64, now time.Time) {
	req := p.req
	net := total
	if p.refund {
		net = -total
	}
	t.ledger = append(t.ledger, LedgerEntry{
		Time: now, Kind: kind, TransactionID: tx.TransactionID, IdempotentUUID: p.uuid,
		CartID: req.CartID, Amount: tx.Amount, GiftAmount: gift, Total: total, Net: net,
		Currency: tx.CurrencyCode, Answer: string(p.b.answer()), Keypad: p.keypad,
	})
	if rt := req.ReceiptTicket; rt != nil {
		t.ledger[len(t.ledger)-1].TaxBreakdown = rt.TaxBreakdown
	}
	if req.CheckoutExternalID != "" {
		t.checkouts[req.CheckoutExternalID] = tx.TransactionID
	}
	if rt := req.ReceiptTicket; rt != nil && rt.Data != "" {
		t.printLocked("payment", rt.Format, rt.Data)
	}
}

// encodeTransaction writes the answer's JSON; odd answers drop optional keys,
// report transactionType "na" and carry keys no client knows.
func (t *Terminal) encodeTransaction(tx *localapi.Transaction, odd bool) []byte {
	body, err := json.Marshal(tx)
	if err != nil || !odd {
		return body
	}
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		return body
	}
	for _, k := range []string{"appVersion", "cardToken", "clientCardTicket", "merchantCardTicket", "issuer", "paymentApplication"} {
		delete(m, k)
	}
	m["transactionType"] = "na"
	m["terminalSerial"] = t.cfg.Serial
	m["batchNumber"] = 17
	m["extensions"] = map[string]any{"loyaltyPoints": 3, "tags": []string{"sim", "odd"}}
	if odd, err := json.Marshal(m); err == nil {
		return odd
	}
	return body
}

func decodeTransaction(body []byte) (*localapi.Transaction, error) {
	var tx localapi.Transaction
	if err := json.Unmarshal(body, &tx); err != nil {
		return nil, err
	}
	tx.Raw = append([]byte(nil), body...)
	return &tx, nil
}

// printLocked records something printed, or drops it without paper.
func (t *Terminal) printLocked(source, format, data string) {
	if format == "" {
		format = localapi.FormatText
	}
	if !t.paper {
		t.dropped++
		t.log.Warn("printer out of paper: nothing printed", "source", source, "format", format)
		return
	}
	tk := Ticket{Time: t.nowLocked(), Source: source, Format: format, Data: data, Text: data}
	if format == localapi.FormatESCPOS {
		doc, err := escpos.DecodeHex(data)
		tk.Text, tk.Lines = doc.Text(), doc.Lines
		if err != nil {
			tk.Error = err.Error()
		}
	}
	t.printed = append(t.printed, tk)
	if tk.Error != "" {
		t.log.Warn("printed, with an ESC/POS decoding error", "source", source, "text", tk.Text, "error", tk.Error)
		return
	}
	t.log.Info("printed", "source", source, "format", format, "text", tk.Text)
}

// ActionKind is something the customer (or the terminal's operator) does.
type ActionKind string

// Customer actions.
const (
	ActPresentCard ActionKind = "present_card" // an accepted card: approved (from the banking screen on)
	ActDecline     ActionKind = "decline"      // a refused card
	ActTip         ActionKind = "tip"          // choose Tip on the gift screen
	ActCancel      ActionKind = "cancel"       // press Cancel: ko, no message
	ActHandover    ActionKind = "handover"     // go to the banking screen now (ends a held handover)
	ActTimeout     ActionKind = "timeout"      // let the current window expire now
)

// Action is a customer action on the payment in progress.
type Action struct {
	Kind ActionKind `json:"action"`
	Tip  int64      `json:"tip,omitempty"`
	// IdempotentUUID names the payment; empty means the one in progress.
	IdempotentUUID string `json:"idempotentUuid,omitempty"`
}

// Act performs a customer action on the payment in progress. A card offered
// before the banking screen is read when it shows. ErrWrongStep: a tip
// outside the gift screen, or a handover after it happened.
func (t *Terminal) Act(a Action) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return ErrClosed
	}
	p := t.current
	if p == nil || (a.IdempotentUUID != "" && p.uuid != a.IdempotentUUID) {
		return ErrNoPayment
	}
	switch a.Kind {
	case ActTip:
		if p.phase != PhaseScreens {
			return ErrWrongStep
		}
		if a.Tip < 0 {
			return fmt.Errorf("terminalsim: negative tip %d", a.Tip)
		}
	case ActHandover:
		if p.phase == PhaseBanking {
			return ErrWrongStep
		}
	case ActPresentCard, ActDecline, ActCancel, ActTimeout:
	default:
		return fmt.Errorf("terminalsim: unknown action %q", a.Kind)
	}
	select {
	case p.events <- a:
		t.log.Info("customer action", "uuid", p.uuid, "action", a.Kind, "tip", a.Tip)
		return nil
	default:
		return fmt.Errorf("terminalsim: too many pending actions")
	}
}

// PresentCard presents an accepted card to the payment in progress.
func (t *Terminal) PresentCard() error { return t.Act(Action{Kind: ActPresentCard}) }

// Decline presents a card that is refused.
func (t *Terminal) Decline() error { return t.Act(Action{Kind: ActDecline}) }

// ChooseTip chooses a tip on the gift screen (0: no tip).
func (t *Terminal) ChooseTip(cents int64) error { return t.Act(Action{Kind: ActTip, Tip: cents}) }

// CancelOnTerminal presses Cancel on the terminal.
func (t *Terminal) CancelOnTerminal() error { return t.Act(Action{Kind: ActCancel}) }

// Handover moves a payment held before the handover to the banking screen.
func (t *Terminal) Handover() error { return t.Act(Action{Kind: ActHandover}) }

// StartOnKeypad starts a debit on the terminal's own keypad, not through the
// Local API: /abort then answers "Abort is not allowed" and /payment busy.
// A nil behaviour takes the amount's or the default (never the script's).
// It returns the payment's internal idempotentUuid.
func (t *Terminal) StartOnKeypad(amount int64, b *Behaviour) (string, error) {
	if amount <= 0 {
		return "", fmt.Errorf("terminalsim: amount must be positive")
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return "", ErrClosed
	}
	if p := t.current; p != nil {
		return "", fmt.Errorf("terminalsim: %s", localapi.BusyMessage(p.uuid))
	}
	var beh Behaviour
	from := "keypad"
	if b != nil {
		beh = *b
	} else if ab, ok := BehaviourForAmount(amount); ok && !t.cfg.NoTestAmounts {
		beh, from = ab, "amount"
	} else {
		beh, from = t.def, "default"
	}
	id := uuid.NewString()
	t.startLocked(localapi.PaymentRequest{Amount: amount, IdempotentUUID: id}, id, beh, from, true)
	return id, nil
}
