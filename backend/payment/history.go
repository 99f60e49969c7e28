package payment

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/localapi"
)

// verdict is what the terminal's history says about an attempt.
type verdict int

const (
	// inHistoryNone: no transaction of the history can be the attempt.
	inHistoryNone verdict = iota
	// inHistoryOne: exactly one can be, and it names the attempt's order.
	inHistoryOne
	// inHistoryAmbiguous: several can be, or one can be without naming
	// the order: a person must decide.
	inHistoryAmbiguous
)

// historyMatch is the outcome of a search of the history.
type historyMatch struct {
	verdict    verdict
	entry      localapi.HistoryEntry   // inHistoryOne
	candidates []localapi.HistoryEntry // every entry that could be the attempt
}

// charged reports whether the matched transaction moved money.
func (m historyMatch) charged() bool { return m.entry.Status == localapi.StatusOK }

// raw is the matched entry as JSON, for the journal.
func (m historyMatch) raw() []byte {
	b, _ := json.Marshal(m.entry)
	return b
}

func (m historyMatch) String() string {
	switch m.verdict {
	case inHistoryOne:
		return fmt.Sprintf("transaction %s (%s) of the terminal's history", m.entry.TransactionID, m.entry.Status)
	case inHistoryAmbiguous:
		return fmt.Sprintf("%d transactions of the terminal's history could be it", len(m.candidates))
	}
	return "no transaction of the terminal's history is it"
}

// historyKind is the history's type of an attempt's transactions.
func historyKind(k journal.Kind) string {
	switch k {
	case journal.KindRefund:
		return localapi.HistoryRefund
	case journal.KindReversal:
		return localapi.HistoryReversal
	}
	return localapi.HistoryDebit
}

// findInHistory looks the attempt up in the terminal's history since its
// first send (less HistorySkew). A transaction is a candidate when it is of
// the attempt's kind and amount, no other attempt of the journal holds it,
// and its cartId is the attempt's order or absent; it is the attempt when
// it is the only candidate and names the order. A transaction without a
// type, or with a time that cannot be read, is a candidate too: it may be
// the attempt.
func (o *Orchestrator) findInHistory(ctx context.Context, att journal.Attempt) (historyMatch, error) {
	from := att.FirstSentAt
	if from.IsZero() {
		from = att.CreatedAt
	}
	from = from.Add(-o.cfg.Limits.HistorySkew)
	entries, err := localapi.History(ctx, o.cfg.Terminal, from, time.Time{}, 0, o.cfg.Limits.RefundTimeout)
	if err != nil {
		return historyMatch{}, err
	}
	var ids []string
	for _, e := range entries {
		if e.TransactionID != "" {
			ids = append(ids, e.TransactionID)
		}
	}
	held, err := o.cfg.Journal.HeldTransactions(ctx, ids)
	if err != nil {
		return historyMatch{}, err
	}
	kind := historyKind(att.Kind)
	var m historyMatch
	var named []localapi.HistoryEntry
	for _, e := range entries {
		if e.TransactionID != "" && held[e.TransactionID] {
			continue
		}
		if e.Type != "" && e.Type != kind {
			continue
		}
		if e.CartID != "" && e.CartID != att.OrderID {
			continue
		}
		if !sameAmount(att, e) {
			continue
		}
		m.candidates = append(m.candidates, e)
		if e.CartID == att.OrderID && e.Type == kind {
			named = append(named, e)
		}
	}
	switch {
	case len(m.candidates) == 0:
		m.verdict = inHistoryNone
	case len(m.candidates) == 1 && len(named) == 1:
		m.verdict, m.entry = inHistoryOne, named[0]
	default:
		m.verdict = inHistoryAmbiguous
	}
	return m, nil
}

// sameAmount: the history lists a payment's amount without its tip; a
// reversal's as the whole amount given back, which some terminals may split
// into amount and gift.
func sameAmount(att journal.Attempt, e localapi.HistoryEntry) bool {
	if att.Kind == journal.KindReversal {
		return e.Amount == att.Amount || e.Amount+e.GiftAmount == att.Amount
	}
	return e.Amount == att.Amount
}
