package payment

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/comptoir-pos/comptoir/backend/journal"
)

// SettledBy names the system in the journal when the terminal's history
// settled an unknown outcome.
const SettledBy = "system:history"

// SettleUnknown looks every attempt whose outcome is unknown up in the
// history of the provider that took it, and settles those the history
// decides without doubt: exactly one transaction is the attempt (approved
// with its transactionId, or declined if it was refused), or none is and
// the history is complete for it (its last send is SettleAfter old: any
// payment it started has ended). Ambiguous ones stay with staff. Each
// settlement is an event saying how it was settled. It returns the views
// of the attempts it settled; an error means the history could not be read
// (the rest waits for the next check).
func (o *Orchestrator) SettleUnknown(ctx context.Context) ([]View, error) {
	o.recovering.Lock()
	defer o.recovering.Unlock()
	return o.settleUnknown(ctx)
}

func (o *Orchestrator) settleUnknown(ctx context.Context) ([]View, error) {
	atts, err := o.cfg.Journal.UnknownAttempts(ctx)
	if err != nil {
		return nil, fmt.Errorf("payment: %w", err)
	}
	var views []View
	for _, att := range atts {
		ch := o.channelFor(att.Channel)
		if !o.owns(att) || ch == nil {
			continue // only the provider that took it knows it
		}
		m, err := o.lookup(ctx, ch, att)
		if err != nil {
			return views, fmt.Errorf("payment: the provider's history: %w", err)
		}
		res := journal.Resolution{Who: SettledBy}
		switch {
		case m.Verdict == InHistory && m.Pending:
			continue // still running at the provider: its outcome is not known yet
		case m.Verdict == InHistory:
			res.TransactionID, res.Response = m.Charge.TransactionID, m.Raw
			res.To, res.Note = journal.StateDeclined, "settled from the provider's history: "+m.String()+": not charged"
			if m.Charge.Approved {
				res.To, res.Note = journal.StateApproved, "settled from the provider's history: "+m.String()
				res.Charged = &journal.Charge{Amount: m.Charge.Amount, GiftAmount: m.Charge.GiftAmount, Currency: m.Charge.Currency,
					NoTipScreen: noTipScreen(att)}
				if att.Kind == journal.KindReversal {
					res.Charged = &journal.Charge{Amount: att.Amount}
				}
			}
		case m.Verdict == NotInHistory && att.Channel == journal.ChannelWebservices:
			continue // a refund the list does not show yet may still be waiting: staff decide
		case m.Verdict == NotInHistory:
			last := att.LastSentAt
			if last.IsZero() {
				last = att.CreatedAt
			}
			if o.cfg.Now().Before(last.Add(o.cfg.Limits.SettleAfter)) {
				continue // a payment its last request started may not have ended yet
			}
			res.To = journal.StateDeclined
			res.Note = fmt.Sprintf("settled from the provider's history: %s since its first send, and its last request went out at %s: nothing was made",
				m, last.UTC().Format(time.RFC3339))
		default:
			continue // staff decide, with the candidates before them
		}
		// An approval the terminal's own history shows over the LAN is
		// witnessed like a direct answer.
		res.AwaitWitness = res.To == journal.StateApproved && o.cfg.Witness != nil && ch.Name() == journal.ChannelLocal &&
			att.Kind == journal.KindDebit
		a, err := o.cfg.Journal.Resolve(ctx, att.UUID, res)
		if err != nil {
			// Staff may have settled it meanwhile: theirs stands.
			o.log.Warn("settle an unknown outcome", "uuid", att.UUID, "err", err)
			continue
		}
		if a.Witness == journal.WitnessAwaiting {
			a = o.awaitWitness(ctx, a, func() {})
		}
		o.log.Info("unknown outcome settled from the terminal's history", "uuid", a.UUID, "state", a.State, "transactionId", a.TransactionID)
		policy, _ := o.cfg.Limits.Policy(a.Policy)
		v := o.newRun(a, policy, false).view
		v.Message = res.Note
		if w := WitnessFlag(a); w != "" {
			v.Flag, v.Message = strings.TrimPrefix(v.Flag+"; "+w, "; "), w+": call staff"
		}
		v.OrderPaid = o.orderPaid(a.OrderID)
		o.emit(v)
		views = append(views, v)
	}
	return views, nil
}

// watchUnknown settles unknown outcomes every UnknownCheck until Close.
func (o *Orchestrator) watchUnknown() {
	defer o.wg.Done()
	t := time.NewTicker(o.cfg.Limits.UnknownCheck)
	defer t.Stop()
	for {
		select {
		case <-o.ctx.Done():
			return
		case <-t.C:
			if _, err := o.SettleUnknown(o.ctx); err != nil && o.ctx.Err() == nil {
				o.log.Info("unknown outcomes not looked up now", "err", err)
			}
			o.recheckWitnesses(o.ctx)
		}
	}
}
