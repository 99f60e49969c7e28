package payment

import (
	"context"
	"strings"
	"time"

	"github.com/comptoir-pos/comptoir/backend/cloudapi"
	"github.com/comptoir-pos/comptoir/backend/device"
	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/localapi"
)

// seen is what a lookup reads of one transaction of a terminal's history,
// whichever API listed it.
type seen struct {
	transactionID, kind, cartID string
	amount, giftAmount          int64
	// mine: the transaction names this attempt by the attempt's own ids;
	// other: it names another attempt's. The Local API's history names
	// none, the Cloud API's may.
	mine, other bool
}

// findInHistory is the rule of a lookup in a terminal's history, on the
// LAN or through the cloud. A transaction another attempt holds is never
// the attempt. One that names the attempt's own ids is it; one that names
// another attempt's is not. Otherwise a transaction is a candidate when it
// may be of the attempt's kind (its type names that kind in any case, or
// is none or a word that names no kind: HistoryKindOf), of its amount,
// and its cartId is the attempt's order or absent; it is the attempt when
// it is the only candidate and names both the order and the kind. i is
// the index of the attempt's entry in entries, -1 when none is.
func findInHistory[E any](ctx context.Context, a journal.Attempt, entries []E, held Holder, read func(E) seen) (m Match, i int, err error) {
	facts := make([]seen, len(entries))
	for j, e := range entries {
		facts[j] = read(e)
	}
	isHeld, err := heldAmong(ctx, held, facts, func(s seen) string { return s.transactionID })
	if err != nil {
		return Match{}, -1, err
	}
	kind := historyKind(a.Kind)
	// named is the last candidate naming the order and the kind; nNamed
	// counts them: named is read only when exactly one does.
	var named, nNamed int
	for j, e := range facts {
		ek := HistoryKindOf(e.kind)
		switch {
		case e.transactionID != "" && isHeld[e.transactionID]:
			continue
		case e.mine:
			return Match{Verdict: InHistory, Candidates: 1}, j, nil
		case e.other,
			ek != "" && ek != kind,
			e.cartID != "" && e.cartID != a.OrderID,
			!sameAmount(a, e.amount, e.giftAmount):
			continue
		}
		m.Candidates++
		if e.cartID == a.OrderID && ek == kind {
			named, nNamed = j, nNamed+1
		}
	}
	switch {
	case m.Candidates == 0:
		m.Verdict = NotInHistory
	case m.Candidates == 1 && nNamed == 1:
		m.Verdict = InHistory
		return m, named, nil
	default:
		m.Verdict = AmbiguousHistory
	}
	return m, -1, nil
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

// HistoryKindOf is the kind a history's type plainly names, whatever its
// case: a reversal, a refund (or a credit), a debit; "" when it names none
// (none at all, na, payment, a word nobody listed), which may then be any
// kind. The types are not all shown: one that is not clearly another kind
// is never a reason to say that nothing was charged.
func HistoryKindOf(t string) string {
	switch s := strings.ToLower(strings.TrimSpace(t)); {
	case strings.Contains(s, "revers"):
		return localapi.HistoryReversal
	case strings.Contains(s, "refund"), s == "credit":
		return localapi.HistoryRefund
	case strings.Contains(s, "debit"):
		return localapi.HistoryDebit
	}
	return ""
}

// sameAmount: the history lists a payment's amount without its tip; a
// reversal's as the whole amount given back, which some terminals may split
// into amount and gift.
func sameAmount(a journal.Attempt, amount, gift int64) bool {
	if a.Kind == journal.KindReversal {
		return amount == a.Amount || amount+gift == a.Amount
	}
	return amount == a.Amount
}

// heldAmong asks which of the history's transactions other attempts hold.
func heldAmong[E any](ctx context.Context, held Holder, entries []E, id func(E) string) (map[string]bool, error) {
	var ids []string
	for _, e := range entries {
		if v := id(e); v != "" {
			ids = append(ids, v)
		}
	}
	return held(ctx, ids)
}

// HistoryStatus reads the status of a transaction a provider's history
// lists. Approved only for ok; not charged only for ko or a word that
// plainly says the transaction failed, was refused, cancelled or expired
// (wsKO). The lists of statuses are not shown: any other word (pending,
// in_progress, one nobody listed, none at all) is undetermined, pending,
// so that the history is asked again or staff decide, never "declined".
func HistoryStatus(status string) (approved, pending bool) {
	switch s := strings.TrimSpace(status); {
	case strings.EqualFold(s, "ok"):
		return true, false
	case wsStatus(s, wsKO):
		return false, false
	}
	return false, true
}

// CompanyList reads, through batchAll (the Webservices' BatchAll), the
// company's transactions created in [from, to) (to zero: up to now) that
// req's other filters select. It asks by whole days (device.HistoryDays:
// whether the provider reads startTime and endTime as the ends of one
// period or as a time of day on every day is not shown, and a wrong guess
// would hide transactions), its end fixed at the day after now at the
// latest, and keeps the transactions created in the period
// (device.InHistoryPeriod: one whose time cannot be read is kept).
func CompanyList(ctx context.Context, batchAll func(context.Context, cloudapi.BatchRequest, time.Time) ([]cloudapi.HistoryEntry, error),
	req cloudapi.BatchRequest, from, to, now time.Time) ([]cloudapi.HistoryEntry, error) {
	end := to
	if end.IsZero() || end.After(now) {
		end = later(now, from)
	}
	req.StartDate, req.EndDate = device.HistoryDays(from, end)
	req.StartTime, req.EndTime, req.Timezone = "", "", "UTC"
	entries, err := batchAll(ctx, req, now)
	if err != nil {
		return nil, err
	}
	var kept []cloudapi.HistoryEntry
	for _, e := range entries {
		if device.InHistoryPeriod(e.CreatedAt, from, to) {
			kept = append(kept, e)
		}
	}
	return kept, nil
}
