package payment

import (
	"context"
	"fmt"
	"time"

	"github.com/comptoir-pos/comptoir/backend/fault"
	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/google/uuid"
)

// StartReversal journals a reversal of an approved debit (its uuid) and
// starts driving it: the whole debit, amount + gift as the terminal charged
// them, given back on the terminal that took it. The reversal's row, with
// its exact /reversal body, is committed before the request leaves; the
// journal refuses it if the order's money given back would exceed what it
// took, or if the debit already has a reversal not failed.
func (o *Orchestrator) StartReversal(ctx context.Context, debitUUID string) (*Handle, error) {
	if err := o.accepting(); err != nil {
		return nil, err
	}
	debit, err := o.givingBackFrom(ctx, debitUUID, "reversed", "of the terminal to reverse")
	if err != nil {
		return nil, err
	}
	if err := o.givenBackFirst(ctx, debit.OrderID); err != nil {
		return nil, err
	}
	// A reversal goes the way its debit went: the transaction id the
	// journal holds is that way's.
	ch := o.channelFor(debit.Channel)
	switch {
	case ch == nil:
		return nil, fmt.Errorf("payment: attempt %s went through the %s channel, and this kiosk uses %s", debitUUID, debit.Channel, o.ch.Name())
	case debit.Terminal != o.cfg.TerminalID:
		return nil, fmt.Errorf("payment: attempt %s was taken on terminal %s; only that terminal reverses it, and this kiosk uses %s",
			debitUUID, debit.Terminal, o.cfg.TerminalID)
	}
	body, err := ch.ReversalBody(debit)
	if err != nil {
		return nil, fmt.Errorf("payment: %w", err)
	}
	id, err := uuid.NewV7()
	if err != nil {
		return nil, fmt.Errorf("payment: new uuid: %w", err)
	}
	policy, err := o.cfg.Limits.Policy(journal.PolicyReversal)
	if err != nil {
		return nil, err
	}
	return o.prepareAndLaunch(ctx, policy, journal.Attempt{
		UUID: id.String(), OrderID: debit.OrderID, Kind: journal.KindReversal, Channel: ch.Name(),
		Amount: debit.Total(), Policy: journal.PolicyReversal, Terminal: o.cfg.TerminalID,
		InitialTransactionID: debit.TransactionID, RequestBody: body,
	}, nil)
}

// Reverse runs a reversal to its outcome. A reversal cannot be cancelled:
// if ctx ends first, the view so far is returned and the reversal goes on.
func (o *Orchestrator) Reverse(ctx context.Context, debitUUID string) (View, error) {
	h, err := o.StartReversal(context.WithoutCancel(ctx), debitUUID)
	if err != nil {
		return View{}, err
	}
	select {
	case <-h.Done():
	case <-ctx.Done():
	}
	return h.View(), nil
}

// reversal drives one reversal attempt. A reversal has no idempotency key,
// but the terminal reverses a transaction once: a second request for it
// reverses it then, or answers that it is reversed. An answer lost on the
// way is settled from the provider's history; the same request goes out
// again only when that history shows no reversal.
type reversal struct {
	o        *Orchestrator
	r        *run
	ch       Channel
	att      journal.Attempt
	deadline time.Time
	over     bool
}

type revStep int

const (
	revSend   revStep = iota // send the journaled request
	revSearch                // look for the reversal in the history
	revPause                 // wait ResendPause, then search
	revDone                  // final, or left open
)

func (v *reversal) now() time.Time { return v.o.cfg.Now() }

func (v *reversal) run() {
	next := revSend
	if v.att.SendCount > 0 {
		// Resumed after a stop: the last request's answer was never seen.
		v.deadline = v.att.FirstSentAt.Add(v.o.cfg.Limits.RequestOpen)
		if min := v.now().Add(v.r.policy.ClientTimeout); v.deadline.Before(min) {
			v.deadline = min
		}
		next = revSearch
	}
	for next != revDone {
		if v.o.ctx.Err() != nil {
			return
		}
		if v.att.SendCount > 0 && !v.now().Before(v.deadline) {
			v.finish(journal.StateUnknown, nil, nil, fmt.Sprintf(
				"no clear answer within the request-open limit (%s): check the terminal's history; call staff", v.o.cfg.Limits.RequestOpen))
			return
		}
		switch next {
		case revSend:
			next = v.send()
		case revSearch:
			next = v.search()
		case revPause:
			t := time.NewTimer(v.o.cfg.Limits.ResendPause)
			select {
			case <-t.C:
				next = revSearch
			case <-v.o.ctx.Done():
				t.Stop()
				return
			}
		}
	}
}

// markSent journals the send before the request leaves; false when it
// could not be recorded (then nothing is sent, and the view says why).
func (v *reversal) markSent() bool {
	att, err := v.o.cfg.Journal.MarkSent(v.o.ctx, v.r.uuid)
	if err != nil {
		msg := fmt.Sprintf("could not record the send: %s", fault.MessageOf(err))
		if v.att.State == journal.StatePrepared {
			v.finish(journal.StateFailed, nil, nil, msg+": nothing was sent")
		} else {
			v.update(func(view *View) { view.Message = msg + ": call staff" })
		}
		return false
	}
	v.att = att
	v.update(func(view *View) { view.State, view.SendCount = att.State, att.SendCount })
	return true
}

func (v *reversal) send() revStep {
	first := v.att.SendCount == 0
	if !v.markSent() {
		return revDone
	}
	att := v.att
	if first {
		v.deadline = att.FirstSentAt.Add(v.o.cfg.Limits.RequestOpen)
	}
	ctx, cancel := context.WithTimeout(v.o.ctx, v.r.policy.ClientTimeout)
	a := v.ch.Reverse(ctx, att)
	cancel()
	if v.o.ctx.Err() != nil {
		return revDone
	}
	switch a.Outcome {
	case OutcomeCharged:
		if a.Charge == nil || a.Charge.TransactionID == "" {
			// Reversed, without its transaction named (already reversed,
			// by this attempt's earlier request or on the terminal): the
			// history may name it.
			v.record(a.Raw, "reversed, its transaction not named ("+a.Message+"): the history may name it")
			return v.alreadyReversed(a)
		}
		v.finish(journal.StateApproved, a.Raw, a.Charge, "reversed: reversal transaction "+a.Charge.TransactionID)
		return revDone
	case OutcomeRefused, OutcomeBusy, OutcomeNotCharged:
		if att.SendCount > 1 {
			// A refusal of this request says nothing of the earlier one's.
			v.record(a.Raw, "refused on a resend ("+a.Message+"): the history decides")
			return revSearch
		}
		v.finish(journal.StateFailed, a.Raw, nil, a.Message)
		return revDone
	case OutcomeInvalid:
		v.finish(journal.StateFailed, nil, nil, "invalid request: "+a.Message)
		return revDone
	case OutcomeNotSent:
		if att.SendCount == 1 && !v.r.recovery {
			v.finish(journal.StateFailed, nil, nil, "the terminal is unreachable: nothing was sent: "+a.Message)
			return revDone
		}
	}
	// The history is read after a pause: a reversal the terminal has just
	// received (a v4 ok) is not listed yet, and a history read at once
	// would send the request again at once, again and again.
	v.record(a.Raw, "no clear answer ("+a.Outcome.String()+": "+a.Message+"): the history decides")
	return revPause
}

// alreadyReversed approves the attempt, with the reversal's transaction
// when the history names exactly one.
func (v *reversal) alreadyReversed(a Answer) revStep {
	m, err := v.o.lookup(v.o.ctx, v.ch, v.att)
	c, note := a.Charge, "the terminal says the transaction is reversed"
	if err == nil && m.Verdict == InHistory && m.Charge.Approved {
		c, note = &m.Charge, note+"; "+m.String()
	}
	v.finish(journal.StateApproved, a.Raw, c, note)
	return revDone
}

// search settles a reversal whose answer was lost from the history.
func (v *reversal) search() revStep {
	m, err := v.o.lookup(v.o.ctx, v.ch, v.att)
	if err != nil {
		if v.o.ctx.Err() != nil {
			return revDone
		}
		v.record(nil, "the provider's history could not be read: "+err.Error())
		if v.r.recovery && !isSent(err) {
			v.r.mu.Lock()
			v.r.unreachable = true
			v.r.mu.Unlock()
			return revDone
		}
		return revPause
	}
	if m.Verdict == InHistory && m.Pending {
		// Listed, not ended (or under a status nobody listed): neither made
		// nor refused yet. Sending it again would ask the same terminal
		// about the same reversal: the history is read again instead.
		v.record(m.Raw, m.String()+": looking again")
		return revPause
	}
	if v.settled(m, journal.StateFailed, "reversed") {
		return revDone
	}
	// Not made: the terminal reverses a transaction once, so the same
	// request either makes it now or answers that it is made.
	v.record(nil, m.String()+": sending the request again")
	return revSend
}

// settled finishes the attempt from what the provider's history says of
// it, and reports whether it did: made (approved), not made (notMade),
// or several candidates (unknown, for staff). A history that shows
// nothing leaves it to the caller. done words what was made.
func (v *reversal) settled(m Match, notMade journal.State, done string) bool {
	switch {
	case m.Verdict == InHistory && m.Charge.Approved:
		v.finish(journal.StateApproved, m.Raw, &m.Charge, done+": "+m.String())
	case m.Verdict == InHistory:
		v.finish(notMade, m.Raw, &m.Charge, "not "+done+": "+m.String())
	case m.Verdict == AmbiguousHistory:
		v.finish(journal.StateUnknown, nil, nil, m.String()+": call staff")
	default:
		return false
	}
	return true
}

func (v *reversal) record(raw []byte, note string) { v.o.record("reversal", v.r.uuid, raw, note) }

// finish records the reversal's outcome: approved gives back the whole
// amount asked; c names its transaction when known.
func (v *reversal) finish(to journal.State, raw []byte, c *Charge, note string) {
	v.over = true
	info := journal.TransitionInfo{Note: note, Response: raw}
	if c != nil {
		info.TransactionID = c.TransactionID
	}
	if to == journal.StateApproved {
		info.Charged = &journal.Charge{Amount: v.att.Amount}
	} else {
		info.Error = note
	}
	msg := note
	att, err := v.o.journalOutcome(v.r.uuid, v.att.State, to, info)
	if err != nil {
		msg = notRecorded(note, err)
	} else {
		v.att = att
	}
	v.update(func(view *View) {
		view.State, view.Message, view.TransactionID, view.Raw = to, msg, info.TransactionID, raw
		if to == journal.StateApproved {
			view.ChargedAmount = v.att.Amount
		}
	})
}

func (v *reversal) update(f func(*View)) { v.o.update(v.r, f) }
