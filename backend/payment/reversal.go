package payment

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/localapi"
	"github.com/google/uuid"
)

// StartReversal journals a reversal of an approved debit (its uuid) and
// starts driving it: the whole debit, amount + gift as the terminal charged
// them, given back on the terminal that took it. The reversal's row, with
// its exact /reversal body, is committed before the request leaves; the
// journal refuses it if the order's money given back would exceed what it
// took, or if the debit already has a reversal not failed.
func (o *Orchestrator) StartReversal(ctx context.Context, debitUUID string) (*Handle, error) {
	o.mu.Lock()
	ready, closed := o.ready, o.closed
	o.mu.Unlock()
	switch {
	case closed:
		return nil, ErrClosed
	case !ready:
		return nil, ErrNotReady
	}
	debit, err := o.cfg.Journal.Attempt(ctx, debitUUID)
	if err != nil {
		return nil, fmt.Errorf("payment: %w", err)
	}
	switch {
	case debit.Kind != journal.KindDebit || debit.State != journal.StateApproved:
		return nil, fmt.Errorf("payment: only an approved debit is reversed; attempt %s is a %s %s", debitUUID, debit.State, debit.Kind)
	case debit.TransactionID == "":
		return nil, fmt.Errorf("payment: attempt %s has no transaction of the terminal to reverse", debitUUID)
	case debit.Channel != journal.ChannelLocal:
		return nil, fmt.Errorf("payment: attempt %s went through the %s channel, not this terminal", debitUUID, debit.Channel)
	case debit.Terminal != o.cfg.TerminalID:
		return nil, fmt.Errorf("payment: attempt %s was taken on terminal %s; only that terminal reverses it, and this kiosk uses %s",
			debitUUID, debit.Terminal, o.cfg.TerminalID)
	}
	req := localapi.ReversalRequest{Amount: debit.Total(), InitialTransactionID: debit.TransactionID}
	if err := req.Validate(); err != nil {
		return nil, fmt.Errorf("payment: %w", err)
	}
	body, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	id, err := uuid.NewV7()
	if err != nil {
		return nil, fmt.Errorf("payment: new uuid: %w", err)
	}
	att, err := o.cfg.Journal.PrepareAttempt(ctx, journal.Attempt{
		UUID: id.String(), OrderID: debit.OrderID, Kind: journal.KindReversal, Channel: journal.ChannelLocal,
		Amount: req.Amount, Policy: journal.PolicyReversal, Terminal: o.cfg.TerminalID,
		InitialTransactionID: debit.TransactionID, RequestBody: body,
	})
	if err != nil {
		return nil, fmt.Errorf("payment: %w", err)
	}
	policy, err := o.cfg.Limits.Policy(journal.PolicyReversal)
	if err != nil {
		return nil, err
	}
	r := o.newRun(att, policy, false)
	if err := o.launch(r, att); err != nil {
		return nil, err
	}
	return &Handle{o: o, r: r}, nil
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

// reversal drives one reversal attempt. /reversal has no idempotency key,
// but the terminal reverses a transaction once: a second request for it
// reverses it then, or answers "already reversed". An answer lost on the
// way is settled from the terminal's history; the same request goes out
// again only when that history shows no reversal.
type reversal struct {
	o        *Orchestrator
	r        *run
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

func (v *reversal) send() revStep {
	att, err := v.o.cfg.Journal.MarkSent(v.o.ctx, v.r.uuid)
	if err != nil {
		msg := fmt.Sprintf("could not record the send: %s", journal.ErrorMessage(err))
		if v.att.State == journal.StatePrepared {
			v.finish(journal.StateFailed, nil, nil, msg+": nothing was sent")
		} else {
			v.update(func(view *View) { view.Message = msg + ": call staff" })
		}
		return revDone
	}
	first := v.att.SendCount == 0
	v.att = att
	if first {
		v.deadline = att.FirstSentAt.Add(v.o.cfg.Limits.RequestOpen)
	}
	v.update(func(view *View) { view.State, view.SendCount = att.State, att.SendCount })
	ctx, cancel := context.WithTimeout(v.o.ctx, v.r.policy.ClientTimeout)
	resp, err := v.o.cfg.Terminal.ReversalBody(ctx, v.r.body)
	cancel()
	if v.o.ctx.Err() != nil {
		return revDone
	}
	var (
		ae *localapi.APIError
		ve *localapi.ValidationError
		te *localapi.TransportError
	)
	switch {
	case err == nil:
		v.finish(journal.StateApproved, resp.Raw, &found{tx: &localapi.Transaction{TransactionID: resp.ReversalTransactionID}},
			"reversed: reversal transaction "+resp.ReversalTransactionID)
		return revDone
	case errors.As(err, &ae) && ae.Code == localapi.CodeReversalAlready:
		// Reversed already: by this attempt's earlier request, or on the
		// terminal itself. Either way the debit is given back, once; the
		// history may name the reversal transaction.
		v.record(ae.Raw, "the terminal says the transaction is already reversed")
		return v.alreadyReversed()
	case errors.As(err, &ae):
		if att.SendCount > 1 {
			// A refusal of this request says nothing of the earlier one's.
			v.record(ae.Raw, "refused on a resend ("+ae.Message+"): the history decides")
			return revSearch
		}
		v.finish(journal.StateFailed, ae.Raw, nil, ae.Message)
		return revDone
	case errors.As(err, &ve):
		v.finish(journal.StateFailed, nil, nil, "invalid request: "+ve.Error())
		return revDone
	case errors.As(err, &te) && !te.Sent && att.SendCount == 1 && !v.r.recovery:
		v.finish(journal.StateFailed, nil, nil, "the terminal is unreachable: nothing was sent: "+te.Err.Error())
		return revDone
	}
	var raw []byte
	var he *localapi.HTTPError
	var de *localapi.DecodeError
	if errors.As(err, &he) {
		raw = he.Body
	} else if errors.As(err, &de) {
		raw = de.Body
	}
	v.record(raw, "no clear answer ("+err.Error()+"): the history decides")
	return revSearch
}

// alreadyReversed approves the attempt, with the reversal's transaction
// when the history names exactly one.
func (v *reversal) alreadyReversed() revStep {
	m, err := v.o.findInHistory(v.o.ctx, v.att)
	var f *found
	note := "the terminal says the transaction is already reversed"
	if err == nil && m.verdict == inHistoryOne && m.charged() {
		f = historyCharge(m)
		note += "; " + m.String()
	}
	v.finish(journal.StateApproved, nil, f, note)
	return revDone
}

// search settles a reversal whose answer was lost from the history.
func (v *reversal) search() revStep {
	m, err := v.o.findInHistory(v.o.ctx, v.att)
	if err != nil {
		if v.o.ctx.Err() != nil {
			return revDone
		}
		v.record(nil, "the terminal's history could not be read: "+err.Error())
		if v.r.recovery && !isSent(err) {
			v.r.mu.Lock()
			v.r.unreachable = true
			v.r.mu.Unlock()
			return revDone
		}
		return revPause
	}
	switch {
	case m.verdict == inHistoryOne && m.charged():
		v.finish(journal.StateApproved, nil, historyCharge(m), "reversed: "+m.String())
		return revDone
	case m.verdict == inHistoryOne:
		v.finish(journal.StateFailed, nil, historyCharge(m), "not reversed: "+m.String())
		return revDone
	case m.verdict == inHistoryAmbiguous:
		v.finish(journal.StateUnknown, nil, nil, m.String()+": call staff")
		return revDone
	}
	// Not made: the terminal reverses a transaction once, so the same
	// request either makes it now or answers that it is made.
	v.record(nil, m.String()+": sending the request again")
	return revSend
}

func (v *reversal) record(raw []byte, note string) {
	v.o.log.Info("reversal", "uuid", v.r.uuid, "note", note)
	if err := v.o.cfg.Journal.RecordResponse(v.o.ctx, v.r.uuid, raw, note); err != nil {
		v.o.log.Error("journal a response", "uuid", v.r.uuid, "err", err)
	}
}

// finish records the reversal's outcome: approved gives back the whole
// amount asked, found names its transaction when known.
func (v *reversal) finish(to journal.State, raw []byte, f *found, note string) {
	v.over = true
	info := journal.TransitionInfo{Note: note, Response: raw}
	if f != nil {
		info.TransactionID = f.tx.TransactionID
		if info.Response == nil {
			info.Response = f.raw
		}
	}
	if to == journal.StateApproved {
		info.Charged = &journal.Charge{Amount: v.att.Amount}
	} else {
		info.Error = note
	}
	msg := note
	att, err := v.o.cfg.Journal.Transition(v.o.ctx, v.r.uuid, v.att.State, to, info)
	if err != nil {
		v.o.log.Error("journal the reversal's outcome", "uuid", v.r.uuid, "to", to, "err", err)
		msg = fmt.Sprintf("%s (not recorded: %s)", note, journal.ErrorMessage(err))
	} else {
		v.att = att
	}
	v.update(func(view *View) {
		view.State, view.Message, view.TransactionID = to, msg, info.TransactionID
		if to == journal.StateApproved {
			view.ChargedAmount = v.att.Amount
		}
	})
	if err == nil && to == journal.StateUnknown {
		if err := v.o.cfg.Journal.SetOrderStatus(v.o.ctx, v.att.OrderID, journal.OrderNeedsAttention,
			"reversal "+v.r.uuid+" outcome unknown"); err != nil {
			v.o.log.Error("order status", "order", v.att.OrderID, "err", err)
		}
	}
}

func (v *reversal) update(f func(*View)) {
	v.r.mu.Lock()
	f(&v.r.view)
	view := v.r.view
	v.r.mu.Unlock()
	v.o.emit(view)
}
