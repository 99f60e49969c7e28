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
// and asks the journal for its transitions.
type driver struct {
	o   *Orchestrator
	r   *run
	att journal.Attempt // as the journal last returned it

	deadline   time.Time // the request-open limit, or the last moment of the idempotency window
	cancelSeen bool
	abort      AbortAnswer
	abortCh    chan abortResult
	abortsSent int
	abortRetry <-chan time.Time // "Nothing to abort" early on: ask again
	graceC     <-chan time.Time
}

type sendResult struct {
	tx  *localapi.Transaction
	err error
}

type abortResult struct {
	resp *localapi.AbortResponse
	err  error
}

// step is what the driver does after an answer.
type step int

const (
	stepDone    step = iota // final (or stopped): the driver returns
	stepResend              // send the same body again now
	stepPause               // send it again after Limits.ResendPause
	stepStopped             // the orchestrator closed, or the journal failed: leave it open
)

func (d *driver) now() time.Time { return d.o.cfg.Now() }

func (d *driver) run() {
	lim := d.o.cfg.Limits
	if !d.att.FirstSentAt.IsZero() {
		d.setDeadline()
	}
	if d.att.State == journal.StateAbortRequested {
		// The customer's cancel was pending when the process stopped: it still is.
		d.cancelSeen = true
		d.r.requestCancel()
	}
	for {
		if d.att.State == journal.StatePrepared && d.cancelRequested() {
			d.finish(journal.StateCancelled, nil, "cancelled before the request was sent", nil)
			return
		}
		if d.att.SendCount > 0 && !d.now().Before(d.deadline) {
			why := fmt.Sprintf("no answer within the request-open limit (%s since the first send): call staff", lim.RequestOpen)
			if !d.deadline.Before(lim.lastSend(d.att.FirstSentAt)) {
				why = "no answer before the end of the terminal's idempotency window: asking again would start a new payment; call staff"
			}
			d.finish(journal.StateUnknown, nil, why, nil)
			return
		}
		next := d.send()
		switch next {
		case stepDone, stepStopped:
			return
		case stepPause:
			timer := time.NewTimer(lim.ResendPause)
			next = d.wait(nil, timer.C, func() {})
			timer.Stop()
			if next == stepDone || next == stepStopped {
				return
			}
		}
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

// send journals the send, then sends, then waits for the answer.
func (d *driver) send() step {
	att, err := d.o.cfg.Journal.MarkSent(d.o.ctx, d.r.uuid)
	if err != nil {
		return d.journalFailed("record the send", err)
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
	defer cancel()
	results := make(chan sendResult, 1)
	go func() {
		tx, err := d.o.cfg.Terminal.PaymentBody(ctx, d.r.body)
		results <- sendResult{tx, err}
	}()
	return d.wait(results, nil, cancel)
}

// wait handles what happens while a request is out (results) or during a
// pause (pause): the customer's cancel, the abort's answer, the grace after
// an abort ok, the orchestrator closing.
func (d *driver) wait(results <-chan sendResult, pause <-chan time.Time, cancelSend func()) step {
	for {
		var cancelCh <-chan struct{}
		if d.abort == AbortNone {
			cancelCh = d.r.cancelCh // until the abort is sent
		}
		select {
		case res := <-results:
			if d.o.ctx.Err() != nil {
				return stepStopped
			}
			next := d.handle(res)
			if next == stepDone && d.abortCh != nil {
				d.awaitAbortAnswer()
			}
			return next
		case <-pause:
			return stepResend
		case <-cancelCh:
			d.cancelSeen = true
			d.requestAbort()
		case ar := <-d.abortCh:
			d.abortCh = nil
			d.onAbortAnswer(ar)
		case <-d.abortRetry:
			d.abortRetry = nil
			d.requestAbort()
		case <-d.graceC:
			cancelSend()
			d.finish(journal.StateCancelled, nil, "abort answered ok; no /payment answer within the grace period", nil)
			return stepDone
		case <-d.o.ctx.Done():
			cancelSend()
			return stepStopped
		}
	}
}

// requestAbort journals the cancel and sends /abort naming the attempt. The
// abort may be held by the terminal until the payment ends.
func (d *driver) requestAbort() {
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
	d.abort = AbortPending
	d.abortsSent++
	d.update(func(v *View) { v.State, v.Abort = d.att.State, AbortPending })
	d.abortCh = make(chan abortResult, 1)
	ch := d.abortCh
	timeout := d.r.policy.ClientTimeout
	go func() {
		ctx, cancel := context.WithTimeout(d.o.ctx, timeout)
		defer cancel()
		resp, err := d.o.cfg.Terminal.Abort(ctx, &localapi.AbortRequest{IdempotentUUID: d.r.uuid})
		ch <- abortResult{resp, err}
	}()
}

func (d *driver) onAbortAnswer(ar abortResult) {
	var raw []byte
	answer := AbortFailed
	var ae *localapi.APIError
	switch {
	case ar.err == nil:
		raw, answer = ar.resp.Raw, AbortOK
		d.graceC = time.After(d.o.cfg.Limits.AbortGrace)
	case errors.As(ar.err, &ae):
		raw = ae.Raw
		switch ae.Code {
		case localapi.CodeAbortNotPossible:
			answer = AbortNotPossible
		case localapi.CodeNothingToAbort:
			answer = AbortNothing
			// The /abort may have overtaken the /payment on its way (or a
			// resend during recovery): the payment may start after it. Ask
			// again a few times while no answer has come.
			if d.abortsSent <= d.o.cfg.Limits.AbortRetries {
				d.abortRetry = time.After(d.o.cfg.Limits.AbortRetryPause)
			}
		}
	}
	note := "abort: " + string(answer)
	if ar.err != nil {
		note += ": " + ar.err.Error()
	}
	if err := d.o.cfg.Journal.RecordResponse(d.o.ctx, d.r.uuid, raw, note); err != nil {
		d.o.log.Error("journal the abort answer", "uuid", d.r.uuid, "err", err)
	}
	d.abort = answer
	d.update(func(v *View) { v.Abort = answer })
}

// awaitAbortAnswer keeps the audit trail whole when the /payment answer came
// before the abort's: the abort's answer follows at once, or never will.
func (d *driver) awaitAbortAnswer() {
	timer := time.NewTimer(d.o.cfg.Limits.AbortGrace)
	defer timer.Stop()
	select {
	case ar := <-d.abortCh:
		d.abortCh = nil
		d.onAbortAnswer(ar)
	case <-timer.C:
		d.update(func(v *View) { v.Abort = AbortFailed })
	case <-d.o.ctx.Done():
	}
}

// handle applies one /payment answer.
func (d *driver) handle(res sendResult) step {
	if tx := res.tx; tx != nil {
		if tx.IdempotentUUID != d.r.uuid {
			// Never applied: ask again with our own uuid.
			d.record(tx.Raw, fmt.Sprintf("ignored: an answer for idempotentUuid %q, not this attempt", tx.IdempotentUUID))
			return stepPause
		}
		if tx.Approved() {
			d.finish(journal.StateApproved, tx, "", nil)
			return stepDone
		}
		if d.cancelSeen {
			d.finish(journal.StateCancelled, tx, "not charged: cancelled by the customer", nil)
		} else {
			d.finish(journal.StateDeclined, tx, "declined", nil)
		}
		return stepDone
	}

	err := res.err
	var (
		ae *localapi.APIError
		ve *localapi.ValidationError
		te *localapi.TransportError
	)
	switch {
	case errors.As(err, &ae) && ae.Code == localapi.CodeBusy && ae.Arg == d.r.uuid:
		// Our own payment is in progress: the next send attaches to it.
		d.record(ae.Raw, "terminal busy with this very attempt: asking again")
		return stepPause
	case errors.As(err, &ae) && (d.att.SendCount > 1 || d.r.recovery):
		// An earlier send of this uuid may have been processed: a refusal of
		// this one proves nothing about that one. Ask again until the limit.
		d.record(ae.Raw, "refused on a resend ("+ae.Message+"): asking again")
		return stepPause
	case errors.As(err, &ae) && ae.Code == localapi.CodeBusy:
		// The terminal does not know our uuid (it would attach otherwise): it
		// never started this payment. Reported, not retried blindly.
		d.finish(journal.StateFailed, nil, "the terminal is busy with another payment", ae)
		return stepDone
	case errors.As(err, &ae):
		d.finish(journal.StateFailed, nil, ae.Message, ae)
		return stepDone
	case errors.As(err, &ve):
		d.finish(journal.StateFailed, nil, "invalid request: "+ve.Error(), nil)
		return stepDone
	case errors.As(err, &te) && !te.Sent:
		// Refused, no route, or a dial timeout: the request never left.
		if d.att.SendCount == 1 && !d.r.recovery {
			// The only send never left this machine: nothing can have happened.
			d.finish(journal.StateFailed, nil, "the terminal is unreachable: "+te.Err.Error(), nil)
			return stepDone
		}
		if d.r.recovery {
			d.record(nil, "terminal unreachable during recovery: the attempt stays open: "+te.Err.Error())
			d.r.mu.Lock()
			d.r.unreachable = true
			d.r.mu.Unlock()
			return stepStopped
		}
		d.record(nil, "terminal unreachable: asking again: "+te.Err.Error())
		return stepPause
	case errors.As(err, &te) && te.Timeout:
		d.record(nil, "client timeout: resending the same request")
		return stepResend
	default:
		// HTTP 500, unreadable answer, connection reset: the terminal may
		// have acted; the same uuid tells.
		var raw []byte
		var he *localapi.HTTPError
		if errors.As(err, &he) {
			raw = he.Body
		}
		d.record(raw, "no usable answer: asking again: "+err.Error())
		return stepPause
	}
}

// record journals an answer that changes nothing.
func (d *driver) record(raw []byte, note string) {
	d.o.log.Info("attempt", "uuid", d.r.uuid, "note", note)
	if err := d.o.cfg.Journal.RecordResponse(d.o.ctx, d.r.uuid, raw, note); err != nil {
		d.o.log.Error("journal a response", "uuid", d.r.uuid, "err", err)
	}
}

// finish moves the attempt to its final state and tells everyone. If the
// journal cannot record it, the view still tells the truth the terminal
// told, and the attempt stays open for recovery to record.
func (d *driver) finish(to journal.State, tx *localapi.Transaction, note string, ae *localapi.APIError) {
	info := journal.TransitionInfo{Note: note}
	switch {
	case tx != nil:
		info.Response, info.TransactionID = tx.Raw, tx.TransactionID
	case ae != nil:
		info.Response, info.Error = ae.Raw, ae.Message
	default:
		info.Error = note
	}
	// Approved and declined speak for themselves; every other outcome says why.
	msg := note
	if to == journal.StateApproved || to == journal.StateDeclined {
		msg = ""
	}
	d.o.money.Lock()
	defer d.o.money.Unlock()
	att, err := d.o.cfg.Journal.Transition(d.o.ctx, d.r.uuid, d.att.State, to, info)
	if err != nil {
		d.o.log.Error("journal the outcome", "uuid", d.r.uuid, "to", to, "err", err)
		msg = fmt.Sprintf("%s (not recorded: %s)", note, journal.ErrorMessage(err))
	} else {
		d.att = att
	}
	charged := to == journal.StateApproved
	d.update(func(v *View) {
		v.State, v.Message, v.Transaction = to, msg, tx
		if tx != nil {
			v.TransactionID, v.GiftAmount = tx.TransactionID, tx.GiftAmount
		}
		v.ChargedDespiteCancel = charged && d.cancelSeen
	})
	if err == nil {
		d.settleOrder(to)
	}
}

// settleOrder keeps the order's status in step with its attempts.
func (d *driver) settleOrder(to journal.State) {
	ctx := d.o.ctx
	orderID := d.r.snapshot().OrderID
	switch {
	case to == journal.StateUnknown:
		d.setOrder(ctx, orderID, journal.OrderNeedsAttention, "attempt "+d.r.uuid+" outcome unknown")
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
func (d *driver) journalFailed(what string, err error) step {
	msg := fmt.Sprintf("could not %s: %s", what, journal.ErrorMessage(err))
	d.o.log.Error("journal", "uuid", d.r.uuid, "err", err)
	if d.att.State == journal.StatePrepared {
		if att, terr := d.o.cfg.Journal.Transition(d.o.ctx, d.r.uuid, journal.StatePrepared, journal.StateFailed,
			journal.TransitionInfo{Error: msg, Note: "nothing was sent"}); terr == nil {
			d.att = att
		}
		d.update(func(v *View) { v.State, v.Message = journal.StateFailed, msg+": nothing was sent" })
		return stepDone
	}
	d.update(func(v *View) { v.Message = msg + ": call staff" })
	return stepStopped
}

// update changes the run's view and publishes it.
func (d *driver) update(f func(*View)) {
	d.r.mu.Lock()
	f(&d.r.view)
	v := d.r.view
	d.r.mu.Unlock()
	d.o.emit(v)
}
