package payment

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/comptoir-pos/comptoir/backend/cloudapi"
	"github.com/comptoir-pos/comptoir/backend/device"
	"github.com/comptoir-pos/comptoir/backend/fault"
	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/localapi"
)

// Money given back outside Comptoir: a refund made in the provider's back
// office, a reversal made on the terminal's keypad. The provider's record
// (the Webservices' list of the company's transactions) shows it; the
// journal does not, until it is adopted (journal.AdoptGiveBack) and counts
// in what the order can still give back.
//
// An entry of the list is the order's when it names the order (cartId);
// it is money given back when it is an approved refund or reversal. It was
// made outside Comptoir when no attempt of the journal stands for it: none
// holds its id, and (as the provider may list a give-back made over the
// LAN under an id of its own) no give-back of the order's journal of the
// same amount is left unmatched.

// GivenBackElsewhere reads the company's list since from (and until now)
// and returns the money given back for these orders (every order of the
// journal the list names, when none is given) that no attempt of the
// journal made. The Webservices' orchestrator only.
func (o *Orchestrator) GivenBackElsewhere(ctx context.Context, from time.Time, orders ...string) ([]journal.AdoptedGiveBack, error) {
	ws, ok := o.ch.(*wsChannel)
	if !ok {
		return nil, ErrNotWebservices
	}
	entries, err := CompanyList(ctx, ws.api.BatchAll, cloudapi.BatchRequest{}, from.Add(-o.cfg.Limits.HistorySkew), time.Time{}, ws.opts.Now())
	if err != nil {
		return nil, fmt.Errorf("payment: the provider's record: %w", err)
	}
	want := map[string]bool{}
	for _, id := range orders {
		want[id] = true
	}
	byOrder := map[string][]cloudapi.HistoryEntry{}
	var ids []string
	for _, e := range entries {
		if e.CartID == "" || e.TransactionID == "" || !givesBack(e) {
			continue
		}
		order := o.orderOfCart(ctx, e.CartID)
		if len(orders) > 0 && !want[order] {
			continue
		}
		byOrder[order] = append(byOrder[order], e)
		ids = append(ids, e.TransactionID)
	}
	held, err := o.cfg.Journal.Holders(ctx, ids)
	if err != nil {
		return nil, fmt.Errorf("payment: %w", err)
	}
	var out []journal.AdoptedGiveBack
	for order, es := range byOrder {
		atts, err := o.cfg.Journal.AttemptsForOrder(ctx, order)
		if fault.CodeOf(err) == fault.ENOTFOUND || (err == nil && len(atts) == 0) {
			continue // not an order of this journal
		}
		if err != nil {
			return nil, fmt.Errorf("payment: %w", err)
		}
		out = append(out, madeElsewhere(order, es, atts, held)...)
	}
	return out, nil
}

// orderOfCart is the order a cartId names: the order itself, or the order
// of the payment link whose cart it is (LinkCartID).
func (o *Orchestrator) orderOfCart(ctx context.Context, cartID string) string {
	const uuidLen = 36
	if n := len(cartID); n > uuidLen+1 && cartID[n-uuidLen-1] == '-' {
		if a, err := o.cfg.Journal.Attempt(ctx, cartID[n-uuidLen:]); err == nil && a.Channel == journal.ChannelLink &&
			LinkCartID(a.OrderID, a.UUID) == cartID {
			return a.OrderID
		}
	}
	return cartID
}

// givesBack: an approved refund or reversal.
func givesBack(e cloudapi.HistoryEntry) bool {
	k := HistoryKindOf(e.Kind())
	return wsStatus(e.Status, wsOK) && (k == localapi.HistoryRefund || k == localapi.HistoryReversal)
}

// madeElsewhere is the order's entries no attempt of the journal stands
// for: not held by id, and not paired with a give-back of the journal of
// the same amount that no entry holds.
func madeElsewhere(order string, es []cloudapi.HistoryEntry, atts []journal.Attempt, held map[string]string) []journal.AdoptedGiveBack {
	listed := map[string]bool{}
	for _, e := range es {
		listed[e.TransactionID] = true
	}
	// The journal's give-backs the list does not show under their ids:
	// each may be one of the entries under the provider's own id.
	var unpaired []journal.Attempt
	var debits []journal.Attempt
	for _, a := range atts {
		switch {
		case a.Kind == journal.KindDebit && a.State == journal.StateApproved && a.TransactionID != "":
			debits = append(debits, a)
		case a.Kind.GivesBack() && a.State != journal.StateFailed && a.State != journal.StateDeclined && a.State != journal.StateCancelled &&
			!listed[a.TransactionID] && (a.ProviderID == "" || !listed[a.ProviderID]):
			unpaired = append(unpaired, a)
		}
	}
	var out []journal.AdoptedGiveBack
	for _, e := range es {
		if held[e.TransactionID] != "" {
			continue
		}
		total := e.Amount + e.GiftAmount
		if i := pairOf(unpaired, total); i >= 0 {
			unpaired = append(unpaired[:i], unpaired[i+1:]...)
			continue
		}
		g := journal.AdoptedGiveBack{OrderID: order, Kind: journal.KindRefund, TransactionID: e.TransactionID, Amount: total,
			Currency: e.CurrencyCode, Who: SettledBy}
		if HistoryKindOf(e.Kind()) == localapi.HistoryReversal {
			g.Kind = journal.KindReversal
		}
		// The list names no original: the order's debit of that amount,
		// else its only debit.
		for _, d := range debits {
			if d.Total() == total || len(debits) == 1 {
				g.InitialTransactionID = d.TransactionID
			}
		}
		if g.Kind == journal.KindReversal && g.InitialTransactionID == "" {
			g.Kind = journal.KindRefund // given back all the same; which debit, staff see
		}
		g.At, _ = device.ParseCreatedAt(e.CreatedAt)
		g.Raw, _ = json.Marshal(e)
		out = append(out, g)
	}
	return out
}

// pairOf is the index of a journal give-back of this amount, -1 if none.
func pairOf(atts []journal.Attempt, total int64) int {
	for i, a := range atts {
		if a.Total() == total || a.Amount == total {
			return i
		}
	}
	return -1
}

// GivenBackBy names the system in the journal when it records money the
// provider's record shows given back outside Comptoir.
const GivenBackBy = "system:provider-record"

// AdoptGivenBack records in the journal what the provider's record shows
// given back for the order outside Comptoir, since its first attempt, and
// returns the attempts it recorded (the Webservices' orchestrator only).
func (o *Orchestrator) AdoptGivenBack(ctx context.Context, who, orderID string) ([]journal.Attempt, error) {
	atts, err := o.cfg.Journal.AttemptsForOrder(ctx, orderID)
	if err != nil || len(atts) == 0 {
		return nil, err
	}
	from := atts[0].CreatedAt
	for _, a := range atts {
		if a.CreatedAt.Before(from) {
			from = a.CreatedAt
		}
	}
	gbs, err := o.GivenBackElsewhere(ctx, from, orderID)
	if err != nil {
		return nil, err
	}
	var out []journal.Attempt
	for _, g := range gbs {
		g.Who = who
		a, err := o.cfg.Journal.AdoptGiveBack(ctx, g)
		if fault.CodeOf(err) == fault.ECONFLICT {
			continue // recorded meanwhile
		}
		if err != nil {
			return out, fmt.Errorf("payment: %w", err)
		}
		o.log.Info("money given back outside Comptoir recorded", "order", orderID, "kind", a.Kind, "amount", a.Amount, "transactionId", a.TransactionID)
		out = append(out, a)
	}
	return out, nil
}

// UseGivenBackCheck has every give-back this orchestrator starts (a
// refund, a reversal, a refund by API) first record what the provider gave
// back for its order outside Comptoir: what the order can still give back
// is then true. Set before any attempt starts.
func (o *Orchestrator) UseGivenBackCheck(check func(ctx context.Context, orderID string) error) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.runs) > 0 {
		return fmt.Errorf("payment: the check of money given back is set before any attempt starts")
	}
	o.cfg.GivenBackCheck = check
	return nil
}

// givenBackFirst runs the check before a give-back of the order: when the
// provider's record cannot be read, nothing is sent.
func (o *Orchestrator) givenBackFirst(ctx context.Context, orderID string) error {
	o.mu.Lock()
	check := o.cfg.GivenBackCheck
	o.mu.Unlock()
	if check == nil {
		return nil
	}
	if err := check(ctx, orderID); err != nil {
		return fmt.Errorf("payment: money given back for order %s outside Comptoir could not be read from the provider, so nothing was sent: %w", orderID, err)
	}
	return nil
}
