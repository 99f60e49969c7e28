package payment

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/localapi"
)

// driver owns one attempt while it is driven: it alone sends its requests
// and asks the journal for its transitions. It runs as one loop over
// events (an answer, a timer, the customer's cancel), with at most one
// /payment, one /abort and one history search out at a time.
type driver struct {
	o   *Orchestrator
	r   *run
	att journal.Attempt // as the journal last returned it

	// deadline is the request-open limit, or the last moment of the
	// idempotency window: past it the outcome is unknown.
	deadline time.Time

	// cancel: the customer's cancel is in force, until the attempt is final.
	cancel bool
	// known: the terminal has shown that it knows this attempt, so that a
	// resend attaches to it or replays its outcome, and starts nothing.
	known bool

	pay       chan sendResult // the /payment request out, nil if none
	payCancel context.CancelFunc
	abort     chan abortResult // the /abort out
	search    chan searchResult

	resendAt <-chan time.Time // send /payment again
	abortAt  <-chan time.Time // send /abort again
	searchAt <-chan time.Time // search the history again
	graceAt  <-chan time.Time // after an /abort ok: the /payment answer is awaited until then

	aborts   int // /abort requests sent
	searches int
	over     bool // final, or stopped (left open for recovery)
}

type sendResult struct {
	tx  *localapi.Transaction
	err error
}

type abortResult struct {
	resp *localapi.AbortResponse
	err  error
}

type searchResult struct {
	m   historyMatch
	err error
}

func (d *driver) now() time.Time { return d.o.cfg.Now() }

func (d *driver) run() {
	if !d.att.FirstSentAt.IsZero() {
		d.setDeadline()
	}
	if d.att.State == journal.StateAbortRequested {
		// The customer's cancel was pending when the process stopped: it
		// still is, and the terminal may never have registered the attempt.
		d.cancel = true
		d.r.requestCancel()
	}
	if d.att.State == journal.StatePrepared && d.cancelRequested() {
		d.finish(journal.StateCancelled, nil, "cancelled before the request was sent", nil)
		return
	}
	d.sendPayment()
	for !d.over {
		d.step()
	}
}

func (d *driver) cancelRequested() bool {
	select {
	case <-d.r.cancelCh:
		return true
	default:
		return false
	}
}

// step waits for one event and handles it.
func (d *driver) step() {
	var cancelCh <-chan struct{}
	if !d.cancel {
		cancelCh = d.r.cancelCh
	}
	select {
	case res := <-d.pay:
		d.pay = nil
		d.payCancel()
		if d.o.ctx.Err() != nil {
			d.stop()
			return
		}
		d.onPayment(classifyPayment(d.r.uuid, res.tx, res.err))
	case res := <-d.abort:
		d.abort = nil
		if d.o.ctx.Err() != nil {
			d.stop()
			return
		}
		d.onAbort(classifyAbort(d.r.uuid, res.resp, res.err))
	case res := <-d.search:
		d.search = nil
		if d.o.ctx.Err() != nil {
			d.stop()
			return
		}
		d.onSearch(res)
	case <-d.resendAt:
		d.resendAt = nil
		d.sendPayment()
	case <-d.abortAt:
		d.abortAt = nil
		if d.pay == nil && d.expired() {
			return
		}
		d.sendAbort()
	case <-d.searchAt:
		d.searchAt = nil
		d.searchHistory()
	case <-d.graceAt:
		d.graceAt = nil
		if d.pay != nil {
			d.payCancel()
			d.pay = nil
		}
		d.finish(journal.StateCancelled, nil, "abort answered ok; no /payment answer within the grace period", nil)
	case <-cancelCh:
		d.onCancel()
	case <-d.o.ctx.Done():
		d.stop()
	}
}

// stop leaves the attempt open, for the next recovery: the orchestrator is
// closing, or the journal refuses to record.
func (d *driver) stop() {
	if d.pay != nil {
		d.payCancel()
	}
	d.over = true
}

// setDeadline fixes the request-open limit. A resumed attempt gets at least
// one full client timeout: after a long stop the terminal has long answered,
// and the same uuid asks it what it answered. Never past the idempotency
// window (less its margin): the terminal would no longer know the uuid.
func (d *driver) setDeadline() {
	lim := d.o.cfg.Limits
	d.deadline = d.att.FirstSentAt.Add(lim.RequestOpen)
	if d.r.recovery {
		if min := d.now().Add(d.r.policy.ClientTimeout); d.deadline.Before(min) {
			d.deadline = min
		}
	}
	if last := lim.lastSend(d.att.FirstSentAt); last.Before(d.deadline) {
		d.deadline = last
	}
}

// expired ends an attempt past its deadline as unknown, and reports whether
// it did.
func (d *driver) expired() bool {
	if d.att.SendCount == 0 || d.now().Before(d.deadline) {
		return false
	}
	lim := d.o.cfg.Limits
	why := fmt.Sprintf("no answer within the request-open limit (%s since the first send): call staff", lim.RequestOpen)
	if !d.deadline.Before(lim.lastSend(d.att.FirstSentAt)) {
		why = "no answer before the end of the terminal's idempotency window: asking again would start a new payment; call staff"
	}
	if d.pay != nil {
		d.payCancel()
		d.pay = nil
	}
	d.finish(journal.StateUnknown, nil, why, nil)
	return true
}

// mayResend reports whether a /payment may go out now: always before the
// customer's cancel, and after it only once the terminal has shown it
// knows the attempt (otherwise a resend could start the payment the
// customer walked away from).
func (d *driver) mayResend() bool { return !d.cancel || d.known }

// sendPayment journals the send, then sends the exact body. Under a cancel
// with the attempt unknown to the terminal, it sends nothing and lets the
// cancel protocol decide instead.
func (d *driver) sendPayment() {
	if d.pay != nil || d.over {
		return
	}
	if d.att.SendCount > 0 && !d.mayResend() {
		d.protect()
		return
	}
	if d.expired() {
		return
	}
	att, err := d.o.cfg.Journal.MarkSent(d.o.ctx, d.r.uuid)
	if err != nil {
		d.journalFailed("record the send", err)
		return
	}
	first := d.att.SendCount == 0
	d.att = att
	if first || d.deadline.IsZero() {
		d.setDeadline()
	}
	d.update(func(v *View) { v.State, v.SendCount = att.State, att.SendCount })

	timeout := d.r.policy.ClientTimeout
	if left := d.deadline.Sub(d.now()); left < timeout {
		timeout = left
	}
	ctx, cancel := context.WithTimeout(d.o.ctx, timeout)
	ch := make(chan sendResult, 1)
	d.pay, d.payCancel = ch, cancel
	go func() {
		tx, err := d.o.cfg.Terminal.PaymentBody(ctx, d.r.body)
		ch <- sendResult{tx, err}
	}()
}

// again asks /payment again after pause, if it may; otherwise the cancel
// protocol goes on.
func (d *driver) again(pause time.Duration) {
	if !d.mayResend() {
		d.protect()
		return
	}
	if d.expired() {
		return
	}
	if pause <= 0 {
		d.sendPayment()
		return
	}
	d.resendAt = time.After(pause)
}

// onPayment applies one /payment answer.
func (d *driver) onPayment(a payAnswer) {
	lim := d.o.cfg.Limits
	switch a.kind {
	case payCharged:
		d.finish(journal.StateApproved, a.tx, "", nil)
	case payNotCharged:
		if d.cancel {
			d.finish(journal.StateCancelled, a.tx, "not charged: cancelled by the customer", nil)
		} else {
			d.finish(journal.StateDeclined, a.tx, "declined", nil)
		}
	case payForeign:
		// Never applied: ask again with our own uuid.
		d.record(a.raw, fmt.Sprintf("ignored: an answer for idempotentUuid %q, not this attempt", a.msg))
		d.again(lim.ResendPause)
	case payOurs:
		// Our own payment is in progress: the next send attaches to it.
		d.known = true
		d.record(a.raw, "terminal busy with this very attempt: asking again")
		d.again(lim.ResendPause)
	case payBusyOther, payRefused:
		if d.att.SendCount > 1 || d.r.recovery {
			// An earlier send of this uuid may have been processed: a
			// refusal of this one proves nothing about that one.
			d.record(a.raw, "refused on a resend ("+a.msg+"): asking again")
			d.again(lim.ResendPause)
			return
		}
		msg := a.msg
		if a.kind == payBusyOther {
			// The terminal does not know our uuid (it would attach
			// otherwise): it never started this payment.
			msg = "the terminal is busy with another payment"
		}
		if d.cancel {
			d.finish(journal.StateCancelled, nil, "cancelled: the terminal refused the payment ("+msg+"): nothing was charged", &refusal{msg: msg, raw: a.raw})
			return
		}
		d.finishRefused(msg, a.raw)
	case payInvalid:
		d.finish(journal.StateFailed, nil, "invalid request: "+a.msg, nil)
	case payNotSent:
		switch {
		case d.att.SendCount == 1 && !d.r.recovery:
			// The only send never left this machine: nothing can have happened.
			d.finish(journal.StateFailed, nil, "the terminal is unreachable: "+a.msg, nil)
		case d.r.recovery && !d.cancel:
			d.unreachable("terminal unreachable during recovery: the attempt stays open: " + a.msg)
		default:
			d.record(nil, "terminal unreachable: "+a.msg)
			d.again(lim.ResendPause)
		}
	case payTimeout:
		d.record(nil, "client timeout: resending the same request")
		d.again(0)
	default: // payIndefinite
		// HTTP 500, unreadable answer, connection reset: the terminal may
		// have acted; the same uuid tells.
		d.record(a.raw, "no usable answer: "+a.msg)
		d.again(lim.ResendPause)
	}
}

// finishRefused ends an attempt the terminal refused on its first send.
func (d *driver) finishRefused(msg string, raw []byte) {
	d.finish(journal.StateFailed, nil, msg, &refusal{msg: msg, raw: raw})
}

// refusal is the terminal's refusal an attempt failed on.
type refusal struct {
	msg string
	raw []byte
}

// unreachable leaves a recovered attempt open: the terminal cannot be
// asked about it now.
func (d *driver) unreachable(note string) {
	d.record(nil, note)
	d.r.mu.Lock()
	d.r.unreachable = true
	d.r.mu.Unlock()
	d.stop()
}

// onCancel is the customer's Cancel: journaled, then /abort.
func (d *driver) onCancel() {
	d.cancel = true
	if d.att.State == journal.StateSent {
		att, err := d.o.cfg.Journal.Transition(d.o.ctx, d.r.uuid, journal.StateSent, journal.StateAbortRequested,
			journal.TransitionInfo{Note: "the customer pressed Cancel"})
		if err != nil {
			// The abort is still sent: failing to journal the request must not
			// charge a customer who asked to stop. The outcome is journaled.
			d.o.log.Error("journal the abort request", "uuid", d.r.uuid, "err", err)
		} else {
			d.att = att
		}
	}
	// A resend waiting to go out no longer may, unless the terminal knows
	// the attempt.
	if d.resendAt != nil && !d.known {
		d.resendAt = nil
	}
	d.update(func(v *View) { v.State, v.Abort = d.att.State, AbortPending })
	d.sendAbort()
}

// protect moves the cancel protocol on when no /payment may go out: a
// fresh /abort answer tells what to do next.
func (d *driver) protect() {
	if d.abort != nil || d.abortAt != nil || d.search != nil || d.searchAt != nil || d.graceAt != nil {
		return // already on its way
	}
	if d.expired() {
		return
	}
	d.sendAbort()
}

// sendAbort sends /abort naming the attempt. The terminal may hold it until
// the payment ends.
func (d *driver) sendAbort() {
	if d.abort != nil || d.over {
		return
	}
	d.aborts++
	ch := make(chan abortResult, 1)
	d.abort = ch
	d.update(func(v *View) {
		if v.Abort == AbortNone {
			v.Abort = AbortPending
		}
	})
	timeout := d.r.policy.ClientTimeout
	go func() {
		ctx, cancel := context.WithTimeout(d.o.ctx, timeout)
		defer cancel()
		resp, err := d.o.cfg.Terminal.Abort(ctx, &localapi.AbortRequest{IdempotentUUID: d.r.uuid})
		ch <- abortResult{resp, err}
	}()
}

// onAbort applies one /abort answer through the cancel protocol.
func (d *driver) onAbort(a abortAnswer) {
	rule := ruleFor(a.kind, d.pay != nil)
	note := fmt.Sprintf("abort #%d: %s", d.aborts, a.kind)
	if a.msg != "" {
		note += " (" + a.msg + ")"
	}
	note += "; next: " + rule.then.String()
	if rule.abortAgain {
		note += ", and abort again"
	}
	if err := d.o.cfg.Journal.RecordResponse(d.o.ctx, d.r.uuid, a.raw, note); err != nil {
		d.o.log.Error("journal the abort answer", "uuid", d.r.uuid, "err", err)
	}
	d.update(func(v *View) { v.Abort = a.kind.view() })
	if rule.known {
		d.known = true
	}
	if !d.cancel {
		// An answer that came after the outcome's (see finish): recorded only.
		return
	}
	if a.kind == abortNotSent && d.r.recovery && d.pay == nil {
		d.unreachable("terminal unreachable during recovery while the customer's cancel is pending: the attempt stays open")
		return
	}
	if rule.abortAgain {
		d.abortAt = time.After(d.abortBackoff())
	}
	switch rule.then {
	case awaitGrace:
		d.graceAt = time.After(d.o.cfg.Limits.AbortGrace)
	case finishCanceled:
		d.finish(journal.StateCancelled, nil, "aborted on the terminal at the customer's request: nothing was charged", nil)
	case resendPayment:
		// The terminal knows the attempt: the resend attaches to it or
		// replays its outcome, at once.
		d.resendAt = nil
		d.again(0)
	case lookUpHistory:
		d.searchHistory()
	}
}

// abortBackoff is the pause before the next /abort: AbortRetryPause,
// doubled at each try, up to AbortRetryMax.
func (d *driver) abortBackoff() time.Duration {
	lim := d.o.cfg.Limits
	p := lim.AbortRetryPause
	for i := 1; i < d.aborts && p < lim.AbortRetryMax; i++ {
		p *= 2
	}
	return min(p, max(lim.AbortRetryMax, lim.AbortRetryPause))
}

// searchHistory looks the attempt up in the terminal's history.
func (d *driver) searchHistory() {
	if d.search != nil || d.over {
		return
	}
	if d.expired() {
		return
	}
	d.searches++
	ch := make(chan searchResult, 1)
	d.search = ch
	att := d.att
	go func() {
		m, err := d.o.findInHistory(d.o.ctx, att)
		ch <- searchResult{m, err}
	}()
}

// onSearch decides a cancelled attempt from the terminal's history, once
// the terminal has said that nothing runs for it.
func (d *driver) onSearch(res searchResult) {
	if res.err != nil {
		d.record(nil, "the terminal's history could not be read: "+res.err.Error())
		if d.r.recovery && localapi.IsTransport(res.err) && !isSent(res.err) {
			d.unreachable("terminal unreachable during recovery while the customer's cancel is pending: the attempt stays open")
			return
		}
		d.searchAt = time.After(d.abortBackoff())
		return
	}
	m := res.m
	switch m.verdict {
	case inHistoryNone:
		d.finish(journal.StateCancelled, nil, "cancelled: "+m.String()+", and nothing runs for it on the terminal: nothing was charged", nil)
	case inHistoryOne:
		h := historyCharge(m)
		if m.charged() {
			d.finishFound(journal.StateApproved, h, "charged although the customer pressed Cancel: "+m.String())
		} else {
			d.finishFound(journal.StateCancelled, h, "not charged: "+m.String())
		}
	default:
		d.finish(journal.StateUnknown, nil, "cancel requested, and "+m.String()+": call staff", nil)
	}
}

// isSent reports whether a transport error may have reached the terminal.
func isSent(err error) bool {
	var te *localapi.TransportError
	return !errors.As(err, &te) || te.Sent
}

// record journals an answer that changes nothing.
func (d *driver) record(raw []byte, note string) {
	d.o.log.Info("attempt", "uuid", d.r.uuid, "note", note)
	if err := d.o.cfg.Journal.RecordResponse(d.o.ctx, d.r.uuid, raw, note); err != nil {
		d.o.log.Error("journal a response", "uuid", d.r.uuid, "err", err)
	}
}

// found is a transaction the history showed to be the attempt's.
type found struct {
	tx  *localapi.Transaction // as the history describes it
	raw []byte
}

func historyCharge(m historyMatch) *found {
	e := m.entry
	status := localapi.StatusKO
	if m.charged() {
		status = localapi.StatusOK
	}
	return &found{raw: m.raw(), tx: &localapi.Transaction{Status: status, TransactionID: e.TransactionID, Amount: e.Amount,
		GiftAmount: e.GiftAmount, CurrencyCode: e.CurrencyCode, Scheme: e.Scheme, Issuer: e.Issuer, CartID: e.CartID}}
}

// finishFound ends the attempt on a transaction found in the history.
func (d *driver) finishFound(to journal.State, f *found, note string) {
	tx := *f.tx
	tx.Raw = f.raw
	d.finish(to, &tx, note, nil)
}

// finish moves the attempt to its final state and tells everyone. If the
// journal cannot record it, the view still tells the truth the terminal
// told, and the attempt stays open for recovery to record.
func (d *driver) finish(to journal.State, tx *localapi.Transaction, note string, ref *refusal) {
	if d.abort != nil {
		d.awaitAbortAnswer()
	}
	d.over = true
	info := journal.TransitionInfo{Note: note}
	switch {
	case tx != nil:
		info.Response, info.TransactionID = tx.Raw, tx.TransactionID
		if to == journal.StateApproved {
			info.Charged = &journal.Charge{Amount: tx.Amount, GiftAmount: tx.GiftAmount}
		}
	case ref != nil:
		info.Response, info.Error = ref.raw, ref.msg
	default:
		info.Error = note
	}
	// Approved and declined speak for themselves; every other outcome says why.
	msg := note
	if to == journal.StateApproved || to == journal.StateDeclined {
		msg = ""
	}
	att, err := d.o.cfg.Journal.Transition(d.o.ctx, d.r.uuid, d.att.State, to, info)
	if err != nil {
		d.o.log.Error("journal the outcome", "uuid", d.r.uuid, "to", to, "err", err)
		msg = fmt.Sprintf("%s (not recorded: %s)", note, journal.ErrorMessage(err))
	} else {
		d.att = att
	}
	charged := to == journal.StateApproved
	discrepancy := ""
	if charged && tx != nil && tx.Amount != d.att.Amount {
		discrepancy = fmt.Sprintf("the terminal charged %d where %d was asked: call staff", tx.Amount, d.att.Amount)
		msg = discrepancy
	}
	d.update(func(v *View) {
		v.State, v.Message, v.Transaction = to, msg, tx
		if tx != nil {
			v.TransactionID, v.GiftAmount = tx.TransactionID, tx.GiftAmount
			if charged {
				v.ChargedAmount = tx.Amount
			}
		}
		v.ChargedDespiteCancel = charged && d.cancel && d.att.Kind != journal.KindReversal
	})
	if err == nil {
		d.settleOrder(to, discrepancy)
	}
}

// awaitAbortAnswer keeps the audit trail whole when the outcome came before
// the abort's answer: that answer follows at once, or never will.
func (d *driver) awaitAbortAnswer() {
	timer := time.NewTimer(d.o.cfg.Limits.AbortGrace)
	defer timer.Stop()
	wasCancel := d.cancel
	d.cancel = false // recorded only: the outcome is decided
	select {
	case res := <-d.abort:
		d.abort = nil
		d.onAbort(classifyAbort(d.r.uuid, res.resp, res.err))
	case <-timer.C:
		d.abort = nil
		d.update(func(v *View) {
			if v.Abort == AbortPending {
				v.Abort = AbortFailed
			}
		})
	case <-d.o.ctx.Done():
	}
	d.cancel = wasCancel
}

// settleOrder keeps the order's status in step with its attempts.
func (d *driver) settleOrder(to journal.State, discrepancy string) {
	ctx := d.o.ctx
	orderID := d.r.snapshot().OrderID
	switch {
	case to == journal.StateUnknown:
		d.setOrder(ctx, orderID, journal.OrderNeedsAttention, "attempt "+d.r.uuid+" outcome unknown")
	case discrepancy != "":
		d.setOrder(ctx, orderID, journal.OrderNeedsAttention, "attempt "+d.r.uuid+": "+discrepancy)
	case to == journal.StateApproved && d.att.Kind == journal.KindDebit:
		sum, err := d.o.Summary(ctx, orderID)
		if err != nil {
			d.o.log.Error("order summary", "order", orderID, "err", err)
			return
		}
		if sum.Paid >= sum.Total {
			d.setOrder(ctx, orderID, journal.OrderPaid, "paid by attempt "+d.r.uuid)
			d.update(func(v *View) { v.OrderPaid = true })
		}
	}
}

func (d *driver) setOrder(ctx context.Context, id string, s journal.OrderStatus, note string) {
	if err := d.o.cfg.Journal.SetOrderStatus(ctx, id, s, note); err != nil {
		d.o.log.Error("order status", "order", id, "status", s, "err", err)
	}
}

// journalFailed handles a journal that refuses to record a send (a full
// disk): nothing is sent without its record. A first send becomes failed
// when that can be recorded; a resend leaves the attempt open for recovery.
func (d *driver) journalFailed(what string, err error) {
	msg := fmt.Sprintf("could not %s: %s", what, journal.ErrorMessage(err))
	d.o.log.Error("journal", "uuid", d.r.uuid, "err", err)
	if d.att.State == journal.StatePrepared {
		if att, terr := d.o.cfg.Journal.Transition(d.o.ctx, d.r.uuid, journal.StatePrepared, journal.StateFailed,
			journal.TransitionInfo{Error: msg, Note: "nothing was sent"}); terr == nil {
			d.att = att
		}
		d.update(func(v *View) { v.State, v.Message = journal.StateFailed, msg+": nothing was sent" })
		d.over = true
		return
	}
	d.update(func(v *View) { v.Message = msg + ": call staff" })
	d.stop()
}

// update changes the run's view and publishes it.
func (d *driver) update(f func(*View)) {
	d.r.mu.Lock()
	f(&d.r.view)
	v := d.r.view
	d.r.mu.Unlock()
	d.o.emit(v)
}
