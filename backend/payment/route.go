package payment

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/comptoir-pos/comptoir/backend/journal"
)

// The LAN first, the cloud behind it: one terminal reached two ways, its
// Local API on the LAN (Config.Channel) and its serial number through the
// provider's cloud (Config.Fallback). Both are journaled under one
// terminal identity (Config.TerminalID, the physical terminal), so the
// journal's rule of one open attempt per terminal holds across the two:
// the terminal never holds an attempt from each at once.
//
// A new attempt goes over the LAN when the terminal answers there
// (Config.Reachable), through the cloud otherwise, and stays on the
// channel it started on until it ends: an attempt whose LAN request may
// have reached the terminal is followed over the LAN (resent, or left
// open for recovery), never moved to the cloud, which would start a
// second payment. Only a new attempt goes the other way.

// DefaultProbeTimeout bounds the check that the LAN reaches the terminal
// before a new attempt chooses its way.
const DefaultProbeTimeout = 2 * time.Second

// checkFallback refuses a second way that the rules above cannot hold.
func checkFallback(primary, fallback Channel) error {
	if fallback == nil {
		return nil
	}
	p, f := primary.Rules(), fallback.Rules()
	switch {
	case primary.Name() == fallback.Name():
		return errors.New("payment: the fallback is the same channel as the first way")
	case p.Concurrent || f.Concurrent || p.Lifetime > 0 || f.Lifetime > 0:
		return errors.New("payment: a fallback is another way to one terminal: neither way may run attempts side by side or for days")
	}
	return nil
}

// channelFor is the orchestrator's channel of this name, nil if it drives
// none: an attempt is followed only through its own.
func (o *Orchestrator) channelFor(name journal.Channel) Channel {
	switch {
	case name == o.ch.Name() || (name == "" && o.ch.Name() == journal.ChannelLocal):
		return o.ch
	case o.fallback != nil && name == o.fallback.Name():
		return o.fallback
	}
	return nil
}

// Channels are the journal's names of the channels this orchestrator
// drives: its first way, then its fallback.
func (o *Orchestrator) Channels() []journal.Channel {
	if o.fallback == nil {
		return []journal.Channel{o.ch.Name()}
	}
	return []journal.Channel{o.ch.Name(), o.fallback.Name()}
}

// route is the channel of a new attempt: the first way while it reaches
// the terminal, the fallback otherwise.
func (o *Orchestrator) route(ctx context.Context) Channel {
	if o.fallback == nil || o.cfg.Reachable == nil {
		return o.ch
	}
	timeout := o.cfg.ProbeTimeout
	if timeout <= 0 {
		timeout = DefaultProbeTimeout
	}
	pctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	err := o.cfg.Reachable(pctx)
	if err == nil {
		return o.ch
	}
	o.log.Warn("the terminal does not answer on the first way: the new attempt goes through the fallback",
		"first", o.ch.Name(), "fallback", o.fallback.Name(), "err", err)
	return o.fallback
}

// crossChannel keeps a history search from taking another channel's
// attempt for this one. The same terminal reached two ways lists the
// transactions of both, under ids that may differ from those the journal
// holds (the cloud's own id, the terminal's localId), so one transaction
// of this order, kind and amount may be an earlier attempt of the other
// way: when one exists, a match is kept only if it names this attempt by
// its own ids, and is otherwise left to staff.
func (o *Orchestrator) crossChannel(ctx context.Context, att journal.Attempt, m Match) Match {
	if o.fallback == nil || m.Verdict != InHistory || namesAttempt(m.Raw, att) {
		return m
	}
	others, err := o.cfg.Journal.AttemptsForOrder(ctx, att.OrderID)
	if err != nil {
		return Match{Verdict: AmbiguousHistory, Candidates: m.Candidates}
	}
	for _, x := range others {
		if x.UUID != att.UUID && x.Channel != att.Channel && x.Kind == att.Kind && x.Amount == att.Amount && x.SendCount > 0 &&
			o.channelFor(x.Channel) != nil && x.TransactionID != m.Charge.TransactionID {
			o.log.Warn("a history match may be another way's attempt: left to staff", "uuid", att.UUID, "other", x.UUID,
				"transactionId", m.Charge.TransactionID)
			return Match{Verdict: AmbiguousHistory, Candidates: max(m.Candidates, 2)}
		}
	}
	return m
}

// namesAttempt reports whether a history entry names the attempt by its
// own ids (its idempotentUuid, or the checkoutExternalId it was sent with).
func namesAttempt(raw []byte, att journal.Attempt) bool {
	var e struct {
		IdempotentUUID     string `json:"idempotentUuid"`
		CheckoutExternalID string `json:"checkoutExternalId"`
	}
	if json.Unmarshal(raw, &e) != nil {
		return false
	}
	ext := cloudExternalID(att)
	return (e.IdempotentUUID != "" && e.IdempotentUUID == att.UUID) || (ext != "" && e.CheckoutExternalID == ext)
}
