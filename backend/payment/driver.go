package payment

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/comptoir-pos/comptoir/backend/fault"
	"github.com/comptoir-pos/comptoir/backend/journal"
)

// driver owns one attempt while it is driven: it alone talks to the
// channel about it and asks the journal for its transitions. It runs as one
// loop over events (an answer, a timer, the customer's cancel), with at
// most one request, one cancel and one history search out at a time. It
// decides on the channel's neutral answers (channel.go), so that the rules
// below hold for every channel.
type driver struct {
	o     *Orchestrator
	r     *run
	ch    Channel
	rules ChannelRules
	att   journal.Attempt // as the journal last returned it

	// deadline is the request-open limit, or the last moment of the
	// idempotency window: past it the outcome is unknown.
	deadline time.Time

	// cancel: the customer's cancel is in force, until the attempt is final.
	cancel bool
	// known: the provider has shown that it knows this attempt, so that
	// following it (a resend, on the Local API) starts nothing.
	known bool

	pay       chan Answer // the request out (a send or a follow), nil if none
	payCancel context.CancelFunc
	abort     chan CancelAnswer // the cancel out
	search    chan searchResult

	resendAt <-chan time.Time // send or follow again
	abortAt  <-chan time.Time // send the cancel again
	searchAt <-chan time.Time // search the history again
	graceAt  <-chan time.Time // after a cancel that stopped it: its own answer is awaited until then

	aborts int // cancels sent
	// searchedAt is when an overdue polled attempt last asked the history.
	searchedAt time.Time
	// changedAt is when the attempt was last seen to change (its send, the
	// provider's new word, money paid): the polls slow down from it.
	changedAt time.Time
	// lifetimeOver: the channel's lifetime of the attempt ended, and the
	// driver cancelled it.
	lifetimeOver bool
	over         bool // final, or stopped (left open for recovery)
}

type searchResult struct {
	m   Match
	err error
}

func (d *driver) now() time.Time { return d.o.cfg.Now() }

func (d *driver) run() {
	d.changedAt = d.now()
	if !d.att.FirstSentAt.IsZero() {
		d.setDeadline()
	}
	if d.att.State == journal.StateAbortRequested {
		// The customer's cancel was pending when the process stopped: it
		// still is, and the provider may never have registered the attempt.
		d.cancel = true
		d.r.requestCancel()
	}
	if d.att.State == journal.StatePrepared && d.cancelRequested() {
		d.finish(journal.StateCancelled, nil, "cancelled before the request was sent", nil)
		return
	}
	if d.att.SendCount > 0 && !d.rules.FollowSends {
		// Resumed: ask how it stands, never send it again.
		d.followUp()
	} else {
		d.sendPayment()
	}
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
	case a := <-d.pay:
		d.pay = nil
		d.payCancel()
		if d.o.ctx.Err() != nil {
			d.stop()
			return
		}
		d.onAnswer(a)
	case a := <-d.abort:
		d.abort = nil
		if d.o.ctx.Err() != nil {
			d.stop()
			return
		}
		d.onCancelAnswer(a)
	case res := <-d.search:
		d.search = nil
		if d.o.ctx.Err() != nil {
			d.stop()
			return
		}
		d.onSearch(res)
	case <-d.resendAt:
		d.resendAt = nil
		d.followUp()
	case <-d.abortAt:
		d.abortAt = nil
		if d.pay == nil && d.expired() {
			return
		}
		d.sendCancel()
	case <-d.searchAt:
		d.searchAt = nil
		d.searchHistory()
	case <-d.graceAt:
		d.graceAt = nil
		if d.pay != nil {
			d.payCancel()
			d.pay = nil
		}
		d.finish(journal.StateCancelled, nil, "the cancel stopped it; no answer of its own within the grace period", nil)
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
// one full client timeout: after a long stop the provider has long answered,
// and asking tells what it answered. Never past the idempotency window
// (less its margin): a terminal would no longer know the uuid.
func (d *driver) setDeadline() {
	lim := d.o.cfg.Limits
	if d.rules.Lifetime > 0 {
		// The provider keeps the attempt, under an id that never expires.
		d.deadline = d.att.FirstSentAt.Add(d.rules.Lifetime + d.rules.LifetimeMargin)
		if d.r.recovery {
			d.deadline = later(d.deadline, d.now().Add(d.r.policy.ClientTimeout))
		}
		expires := d.att.FirstSentAt.Add(d.rules.Lifetime)
		d.update(func(v *View) { v.Expires = expires })
		return
	}
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

// expired ends an attempt past its deadline as unknown (or, on a channel
// with a Lifetime, cancels it first), and reports whether it did: then
// nothing else is sent now.
func (d *driver) expired() bool {
	if d.att.SendCount == 0 || d.now().Before(d.deadline) {
		return false
	}
	lim := d.o.cfg.Limits
	if d.rules.Lifetime > 0 && !d.lifetimeOver {
		// Still open past the provider's own lifetime: cancelled, and the
		// provider's answer decides, within the request-open limit.
		d.lifetimeOver = true
		d.deadline = d.now().Add(lim.RequestOpen)
		d.startCancel(fmt.Sprintf("still open %s after its first send: cancelled by Comptoir", d.rules.Lifetime+d.rules.LifetimeMargin))
		return true
	}
	why := fmt.Sprintf("no answer within the request-open limit (%s since the first send): call staff", lim.RequestOpen)
	switch {
	case d.rules.Lifetime > 0:
		why = "no answer to its cancel after its lifetime: call staff"
	case !d.deadline.Before(lim.lastSend(d.att.FirstSentAt)):
		why = "no answer before the end of the terminal's idempotency window: asking again would start a new payment; call staff"
	}
	if d.pay != nil {
		d.payCancel()
		d.pay = nil
	}
	d.finish(journal.StateUnknown, nil, why, nil)
	return true
}

// mayFollow reports whether the attempt may be followed now: always, but
// on a channel that follows by sending again, after the customer's cancel
// only once the provider has shown it knows the attempt (otherwise the
// resend could start the payment the customer walked away from).
func (d *driver) mayFollow() bool { return !d.resends() || !d.cancel || d.known }

// resends reports whether following the attempt now means sending its
// request again.
func (d *driver) resends() bool {
	return d.rules.FollowSends || (d.rules.ResendUntilKnown && d.att.ProviderID == "")
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// sendPayment journals the send, then sends the exact body.
func (d *driver) sendPayment() {
	if d.pay != nil || d.over {
		return
	}
	if d.att.SendCount > 0 && !d.mayFollow() {
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
	d.att = att
	if d.deadline.IsZero() { // the first send: the limits count from it
		d.setDeadline()
	}
	d.update(func(v *View) { v.State, v.SendCount = att.State, att.SendCount })
	d.out(d.ch.Send)
}

// followUp asks how the attempt stands: a journaled resend on a channel
// that has no other way, a poll otherwise (or, when the provider's id of
// the attempt was never learnt, a search of its history).
func (d *driver) followUp() {
	switch {
	case d.rules.FollowSends:
		d.sendPayment()
	case d.pay != nil || d.over:
	case d.expired():
	case d.att.ProviderID == "" && d.rules.ResendUntilKnown:
		// The answer was lost, and asking again is safe: it tells.
		d.sendPayment()
	case d.att.ProviderID == "":
		// The acknowledgement was lost: the history, never a blind resend.
		d.searchHistory()
	case d.overdue() && d.searchDue():
		// Polled past the client timeout without an outcome (the terminal
		// may never have received it): the history decides, never the
		// silence. Polls go on between two searches.
		d.searchedAt = d.now()
		d.searchHistory()
	default:
		d.out(d.ch.Follow)
	}
}

// overdue: a polled attempt has had no outcome for its whole client
// timeout (the spec's wait for the result: 62 s kiosk and refunds, 125 s
// counter).
func (d *driver) overdue() bool {
	return !d.rules.FollowSends && d.rules.Lifetime == 0 && !d.att.FirstSentAt.IsZero() &&
		!d.now().Before(d.att.FirstSentAt.Add(d.r.policy.ClientTimeout))
}

// out sends one request to the channel, bounded by the client timeout and
// the deadline.
func (d *driver) out(call func(context.Context, journal.Attempt) Answer) {
	timeout := d.r.policy.ClientTimeout
	if left := d.deadline.Sub(d.now()); left < timeout && !d.deadline.IsZero() {
		timeout = left
	}
	ctx, cancel := context.WithTimeout(d.o.ctx, timeout)
	ch := make(chan Answer, 1)
	d.pay, d.payCancel = ch, cancel
	att := d.att
	go func() { ch <- call(ctx, att) }()
}

// again follows the attempt after pause, if it may; otherwise the cancel
// protocol goes on.
func (d *driver) again(pause time.Duration) {
	if !d.mayFollow() {
		d.protect()
		return
	}
	if d.expired() {
		return
	}
	if pause <= 0 {
		d.followUp()
		return
	}
	d.resendAt = time.After(pause)
}

// onAnswer applies one answer about the attempt.
func (d *driver) onAnswer(a Answer) {
	lim := d.o.cfg.Limits
	if a.Known {
		d.known = true
	}
	d.noteChange(a)
	if a.ProviderID != "" || a.ProviderStatus != "" {
		d.noteProvider(a)
	}
	switch a.Outcome {
	case OutcomeCharged:
		d.finish(journal.StateApproved, &a, "", nil)
	case OutcomeNotCharged:
		d.notCharged(&a, "declined")
	case OutcomePending:
		if a.Paid != d.r.snapshot().Paid {
			d.update(func(v *View) { v.Paid = a.Paid })
		}
		d.record(a.Raw, "the provider has it in progress ("+orDefault(a.ProviderStatus, a.Message)+"): following it")
		d.again(d.pollPause())
	case OutcomeEnded:
		d.finish(journal.StateCancelled, &a, a.Message, nil)
	case OutcomeUnclear:
		d.finish(journal.StateUnknown, &a, a.Message+": call staff", nil)
	case OutcomeForeign:
		// Never applied: ask again about our own.
		d.record(a.Raw, fmt.Sprintf("ignored: an answer about %q, not this attempt", a.Message))
		d.again(d.retryPause())
	case OutcomeBusy, OutcomeRefused:
		if (d.att.SendCount > 1 || d.r.recovery) && a.Known && a.Charge != nil {
			// The provider's own record of this attempt, refused with its
			// reason: a ko is final for its uuid (the terminal replays it).
			d.notCharged(&a, "not charged: the terminal's record of it is a ko: "+a.Message)
			return
		}
		if d.att.SendCount > 1 || d.r.recovery {
			// An earlier send of this attempt may have been processed: a
			// refusal of this one proves nothing about that one.
			d.record(a.Raw, "refused on a resend ("+a.Message+"): asking again")
			d.again(max(lim.ResendPause, d.rules.PollEvery))
			return
		}
		msg := a.Message
		if a.Outcome == OutcomeBusy {
			// The provider does not know it (it would attach otherwise):
			// it never started this payment.
			msg = "the terminal is busy with another payment"
		}
		if d.cancel {
			d.finish(journal.StateCancelled, nil, "cancelled: the provider refused the payment ("+msg+"): nothing was charged", &refusal{msg: msg, raw: a.Raw})
			return
		}
		d.finish(journal.StateFailed, nil, msg, &refusal{msg: msg, raw: a.Raw})
	case OutcomeInvalid:
		d.finish(journal.StateFailed, nil, "invalid request: "+a.Message, nil)
	case OutcomeExpired:
		// The provider dropped it undelivered (an offline terminal):
		// nothing ran. Said by the provider itself, not guessed.
		d.finish(journal.StateFailed, nil, "the terminal did not receive the payment in time (offline): nothing was charged: "+a.Message,
			&refusal{msg: a.Message, raw: a.Raw})
	case OutcomeNotSent:
		switch {
		case d.att.SendCount == 1 && !d.r.recovery && d.att.ProviderID == "":
			// The only send never left this machine: nothing can have happened.
			d.finish(journal.StateFailed, nil, "the terminal is unreachable: "+a.Message, nil)
		case d.leftOpenWhenUnreachable() && !d.cancel:
			d.unreachable("unreachable during recovery: the attempt stays open: " + a.Message)
		default:
			d.record(nil, "unreachable: "+a.Message)
			d.again(d.retryPause())
		}
	case OutcomeTimeout:
		d.record(nil, "client timeout: asking again")
		d.again(0)
	default: // OutcomeIndefinite
		// HTTP 500, unreadable answer, connection reset: the provider may
		// have acted; asking about the same attempt tells.
		d.record(a.Raw, "no usable answer: "+a.Message)
		d.again(d.retryPause())
	}
}

// notCharged finishes the attempt on the provider's word that nothing was
// charged: cancelled when the customer asked for it, else declined with
// note.
func (d *driver) notCharged(a *Answer, note string) {
	if d.cancel {
		d.finish(journal.StateCancelled, a, "not charged: cancelled by the customer", nil)
		return
	}
	d.finish(journal.StateDeclined, a, note, nil)
}

// noteProvider journals the provider's id and status of the attempt when
// they change.
func (d *driver) noteProvider(a Answer) {
	att, err := d.o.cfg.Journal.SetProvider(d.o.ctx, d.r.uuid, a.ProviderID, a.ProviderStatus, a.Raw, a.Outcome.String())
	if err != nil {
		d.o.log.Error("journal the provider's word", "uuid", d.r.uuid, "err", err)
		return
	}
	d.att = att
	d.update(func(v *View) { v.setProvider(att) })
}

func orDefault(s, def string) string {
	if s != "" {
		return s
	}
	return def
}

// refusal is the provider's refusal an attempt failed on.
type refusal struct {
	msg string
	raw []byte
}

// leftOpenWhenUnreachable: the attempt is being recovered, and recovery
// waits for it, so a provider that cannot be reached leaves it open for
// the next recovery. An attempt of a concurrent channel is not waited for:
// it keeps asking.
func (d *driver) leftOpenWhenUnreachable() bool { return d.r.recovery && !d.rules.Concurrent }

// unreachable leaves a recovered attempt open: the provider cannot be asked
// about it now.
func (d *driver) unreachable(note string) {
	d.record(nil, note)
	d.r.mu.Lock()
	d.r.unreachable = true
	d.r.mu.Unlock()
	d.stop()
}

// onCancel is the customer's Cancel: journaled, then sent to the provider.
func (d *driver) onCancel() { d.startCancel("the customer pressed Cancel") }

// startCancel puts a cancel in force: journaled, then sent to the provider.
func (d *driver) startCancel(why string) {
	d.cancel = true
	if d.att.State == journal.StateSent {
		att, err := d.o.cfg.Journal.Transition(d.o.ctx, d.r.uuid, journal.StateSent, journal.StateAbortRequested,
			journal.TransitionInfo{Note: why})
		if err != nil {
			// The cancel is still sent: failing to journal the request must
			// not charge a customer who asked to stop. The outcome is journaled.
			d.o.log.Error("journal the abort request", "uuid", d.r.uuid, "err", err)
		} else {
			d.att = att
		}
	} else {
		// A cancel already in force (the lifetime ended while the
		// customer's was on its way): why is still journaled.
		d.record(nil, why)
	}
	// A resend waiting to go out no longer may, unless the provider knows
	// the attempt.
	if d.resendAt != nil && !d.mayFollow() {
		d.resendAt = nil
	}
	d.update(func(v *View) { v.State, v.Abort = d.att.State, AbortPending })
	d.sendCancel()
}

// protect moves the cancel protocol on when nothing may be sent: a fresh
// cancel answer tells what to do next.
func (d *driver) protect() {
	if d.abort != nil || d.abortAt != nil || d.search != nil || d.searchAt != nil || d.graceAt != nil {
		return // already on its way
	}
	if d.expired() {
		return
	}
	d.sendCancel()
}

// sendCancel asks the provider to stop the attempt. The terminal may hold
// the answer until the payment ends.
func (d *driver) sendCancel() {
	if d.abort != nil || d.over {
		return
	}
	d.aborts++
	ch := make(chan CancelAnswer, 1)
	d.abort = ch
	d.update(func(v *View) {
		if v.Abort == AbortNone {
			v.Abort = AbortPending
		}
	})
	timeout, att := d.r.policy.ClientTimeout, d.att
	go func() {
		ctx, cancel := context.WithTimeout(d.o.ctx, timeout)
		defer cancel()
		ch <- d.ch.Cancel(ctx, att)
	}()
}

// onCancelAnswer applies one cancel answer through the cancel protocol.
func (d *driver) onCancelAnswer(a CancelAnswer) {
	rule := ruleFor(a.Outcome, d.pay != nil)
	note := fmt.Sprintf("abort #%d: %s", d.aborts, a.Outcome)
	if a.Message != "" {
		note += " (" + a.Message + ")"
	}
	note += "; next: " + rule.then.String()
	if rule.abortAgain {
		note += ", and abort again"
	}
	if err := d.o.cfg.Journal.RecordResponse(d.o.ctx, d.r.uuid, a.Raw, note); err != nil {
		d.o.log.Error("journal the abort answer", "uuid", d.r.uuid, "err", err)
	}
	d.update(func(v *View) { v.Abort = a.Outcome.view() })
	if rule.known {
		d.known = true
	}
	if !d.cancel {
		// An answer that came after the outcome's (see finish): recorded only.
		return
	}
	if a.Outcome == CancelNotSent && d.leftOpenWhenUnreachable() && d.pay == nil {
		d.unreachable("unreachable during recovery while the customer's cancel is pending: the attempt stays open")
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
	case followAttempt:
		// The provider knows the attempt (or following it sends nothing):
		// its own outcome decides, asked at once. When following it would
		// send it again and the provider has not shown that it knows it (a
		// link whose answer was lost, then cancelled), its record decides:
		// cancelling again would only get the same answer.
		d.resendAt = nil
		if !d.mayFollow() {
			d.searchHistory()
			return
		}
		d.again(0)
	case lookUpHistory:
		d.searchHistory()
	case awaitPayment, awaitAbort:
		// The request still out (awaitPayment is ruled only while one is)
		// or the next cancel answer decides.
	}
}

// abortBackoff is the pause before the next cancel: AbortRetryPause,
// doubled at each try, up to AbortRetryMax.
func (d *driver) abortBackoff() time.Duration {
	lim := d.o.cfg.Limits
	p := lim.AbortRetryPause
	for i := 1; i < d.aborts && p < lim.AbortRetryMax; i++ {
		p *= 2
	}
	return min(p, max(lim.AbortRetryMax, lim.AbortRetryPause))
}

// searchHistory looks the attempt up in the provider's history.
func (d *driver) searchHistory() {
	if d.search != nil || d.over {
		return
	}
	if d.expired() {
		return
	}
	ch := make(chan searchResult, 1)
	d.search = ch
	att := d.att
	go func() {
		m, err := d.o.lookup(d.o.ctx, d.ch, att)
		ch <- searchResult{m, err}
	}()
}

// onSearch decides from the provider's history: after a cancel, once the
// terminal has said that nothing runs for the attempt; or when the
// acknowledgement of a channel that polls was lost.
func (d *driver) onSearch(res searchResult) {
	if res.err != nil {
		d.record(nil, "the provider's history could not be read: "+res.err.Error())
		if d.leftOpenWhenUnreachable() && !isSent(res.err) {
			d.unreachable("unreachable during recovery: the attempt stays open")
			return
		}
		d.searchAt = time.After(d.abortBackoff())
		return
	}
	m := res.m
	lostAck := !d.rules.FollowSends && (d.att.ProviderID == "" || d.overdue())
	switch {
	case m.Verdict == InHistory && m.Pending:
		// The lost acknowledgement's transaction, or an overdue one, still
		// running: follow it.
		if d.att.ProviderID == "" {
			d.noteProvider(Answer{ProviderID: m.Charge.TransactionID, ProviderStatus: "pending", Raw: m.Raw, Outcome: OutcomePending})
		}
		d.known = true
		d.again(d.pollPause())
	case m.Verdict == InHistory:
		a := Answer{Charge: &m.Charge, Raw: m.Raw, Known: true}
		switch {
		case m.Charge.Approved && d.cancel:
			d.finish(journal.StateApproved, &a, "charged although the customer pressed Cancel: "+m.String(), nil)
		case m.Charge.Approved:
			d.finish(journal.StateApproved, &a, "charged: "+m.String(), nil)
		case d.cancel:
			d.finish(journal.StateCancelled, &a, "not charged: "+m.String(), nil)
		default:
			d.finish(journal.StateDeclined, &a, "declined: "+m.String(), nil)
		}
	case m.Verdict == AmbiguousHistory:
		d.finish(journal.StateUnknown, nil, m.String()+": call staff", nil)
	case lostAck && !d.historyComplete() && d.att.ProviderID != "":
		// Overdue, not there yet: the polls go on, the history is asked
		// again at its own cadence (followUp).
		d.record(nil, m.String()+" yet: polling, and looking again later")
		d.again(d.pollPause())
	case lostAck && !d.historyComplete():
		// Not there yet: the request may still reach the terminal.
		d.record(nil, m.String()+" yet: looking again")
		d.searchAt = time.After(d.searchPause())
	case lostAck && d.att.ProviderID == "":
		d.finish(journal.StateFailed, nil, "its acknowledgement was lost, and "+m.String()+" since: nothing was charged", nil)
	case lostAck:
		d.finish(journal.StateFailed, nil, "no outcome within the client timeout, and "+m.String()+": the terminal never received it (offline?); nothing was charged", nil)
	case !d.historyComplete():
		// Nothing runs for it now, but a payment its last request started may
		// have ended moments ago and not be listed yet: only a complete
		// history tells "never started" from "ran and ended".
		d.record(nil, m.String()+" yet: looking again")
		d.searchAt = time.After(max(d.searchPause(), d.o.cfg.Limits.AbortRetryMax))
	default:
		d.finish(journal.StateCancelled, nil, "cancelled: "+m.String()+", and nothing runs for it on the terminal: nothing was charged", nil)
	}
}

// historyComplete: any payment the last request could have started has
// ended, so the history lists it if it exists.
func (d *driver) historyComplete() bool { return !d.now().Before(d.completeAt()) }

// record journals an answer that changes nothing.
func (d *driver) record(raw []byte, note string) { d.o.record("attempt", d.r.uuid, raw, note) }

// finish moves the attempt to its final state and tells everyone. If the
// journal cannot record it, the view still tells the truth the provider
// told, and the attempt stays open for recovery to record.
func (d *driver) finish(to journal.State, a *Answer, note string, ref *refusal) {
	if d.abort != nil {
		d.awaitCancelAnswer()
	}
	d.over = true
	info := journal.TransitionInfo{Note: note}
	var c *Charge
	switch {
	case a != nil:
		c = a.Charge
		info.Response = a.Raw
		if c != nil {
			info.TransactionID = c.TransactionID
			if to == journal.StateApproved {
				info.Charged = &journal.Charge{Amount: c.Amount, GiftAmount: c.GiftAmount, Currency: c.Currency, Type: c.Type,
					NoTipScreen: noTipScreen(d.att)}
			}
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
	info.AwaitWitness = d.needsWitness(to)
	att, err := d.o.journalOutcome(d.r.uuid, d.att.State, to, info)
	if err != nil {
		msg = notRecorded(note, err)
	} else {
		d.att = att
		if att.Witness == journal.WitnessAwaiting {
			// Nobody is told "approved" before the provider's record spoke.
			d.att = d.o.awaitWitness(d.o.ctx, att, func() {
				d.update(func(v *View) { v.Message = "confirming the approval with the provider's record" })
			})
		}
	}
	charged := to == journal.StateApproved
	flag := ""
	if err == nil {
		flag = d.att.Flag
	}
	if flag != "" {
		msg = "the terminal's answer does not match the payment asked (" + flag + "): call staff"
	}
	if w := WitnessFlag(d.att); err == nil && w != "" {
		flag, msg = strings.TrimPrefix(flag+"; "+w, "; "), w+": call staff"
	}
	paid := err == nil && d.o.orderPaid(d.r.snapshot().OrderID)
	d.update(func(v *View) {
		v.State, v.Message, v.Charge, v.Flag, v.OrderPaid = to, msg, c, flag, paid
		if a != nil {
			v.Raw = a.Raw
		}
		if c != nil {
			v.TransactionID, v.GiftAmount = c.TransactionID, c.GiftAmount
			if charged {
				v.ChargedAmount = c.Amount
			}
		}
		v.ChargedDespiteCancel = charged && d.cancel
	})
}

// awaitCancelAnswer keeps the audit trail whole when the outcome came
// before the cancel's answer: that answer follows at once, or never will.
func (d *driver) awaitCancelAnswer() {
	timer := time.NewTimer(d.o.cfg.Limits.AbortGrace)
	defer timer.Stop()
	wasCancel := d.cancel
	d.cancel = false // recorded only: the outcome is decided
	select {
	case a := <-d.abort:
		d.abort = nil
		d.onCancelAnswer(a)
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

// journalFailed handles a journal that refuses to record a send (a full
// disk): nothing is sent without its record. A first send becomes failed
// when that can be recorded; a resend leaves the attempt open for recovery.
func (d *driver) journalFailed(what string, err error) {
	msg := fmt.Sprintf("could not %s: %s", what, fault.MessageOf(err))
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
func (d *driver) update(f func(*View)) { d.o.update(d.r, f) }
