package payment

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/cloudapi"
	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/localapi"
)

// historyCloud is a provider cloud that only lists its history, page by
// page (cloudHistoryPage entries each), and counts the pages asked for.
type historyCloud struct {
	entries []cloudapi.HistoryEntry
	reads   int
}

var errNotHere = errors.New("not in this fake")

func (h *historyCloud) Payment(context.Context, []byte) (*cloudapi.Ack, error) {
	return nil, errNotHere
}
func (h *historyCloud) Transaction(context.Context, string) (*cloudapi.Transaction, error) {
	return nil, errNotHere
}
func (h *historyCloud) Abort(context.Context, string, string) (*cloudapi.Status, error) {
	return nil, errNotHere
}
func (h *historyCloud) Reversal(context.Context, []byte) (*cloudapi.ReversalResponse, error) {
	return nil, errNotHere
}

func (h *historyCloud) Transactions(_ context.Context, r cloudapi.TransactionsRequest) (*cloudapi.TransactionsPage, error) {
	h.reads++
	if h.reads > 10 {
		return nil, errors.New("the history was read more than ten times for one lookup")
	}
	end := min(r.Offset+r.Limit, len(h.entries))
	page := h.entries[min(r.Offset, end):end]
	return &cloudapi.TransactionsPage{Total: len(h.entries), Limit: r.Limit, Offset: r.Offset, Count: len(page), Transactions: page}, nil
}

// heldBy is a Holder for which the given transactions are other attempts'.
func heldBy(ids ...string) Holder {
	return func(_ context.Context, among []string) (map[string]bool, error) {
		out := map[string]bool{}
		for _, a := range among {
			for _, id := range ids {
				if a == id {
					out[a] = true
				}
			}
		}
		return out, nil
	}
}

// lookupAttempt is an attempt sent with its own uuid as checkoutExternalId.
func lookupAttempt(kind journal.Kind, amount int64) journal.Attempt {
	const id = "01a20000-0000-7000-8000-0000000000aa"
	body, _ := json.Marshal(map[string]any{"idempotentUuid": id, "checkoutExternalId": id, "amount": amount, "cartId": "O1"})
	return journal.Attempt{UUID: id, OrderID: "O1", Kind: kind, Amount: amount, RequestBody: body, Channel: journal.ChannelCloud}
}

// want is what a lookup must conclude: the verdict and, when the history
// has the attempt, its transaction and how it stands.
type want struct {
	verdict  Verdict
	tx       string
	approved bool
	pending  bool
}

func (w want) check(t *testing.T, m Match, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	if m.Verdict != w.verdict {
		t.Fatalf("%s (%d candidates), want verdict %d", m, m.Candidates, w.verdict)
	}
	if w.verdict == InHistory && (m.Charge.TransactionID != w.tx || m.Charge.Approved != w.approved || m.Pending != w.pending) {
		t.Fatalf("%s: transaction %s approved %v pending %v", m, m.Charge.TransactionID, m.Charge.Approved, m.Pending)
	}
}

// The provider's history says an attempt is there only when nothing else
// could be it: a transaction named by the attempt's own ids is it, one
// named by another attempt's ids or held by another attempt never is; one
// that names no attempt is it only as the sole candidate of its kind, its
// amount (a tip aside; a reversal's whole amount) and its order, naming
// that order. Anything less certain is for staff.
func TestRuleTheHistoryNamesAnAttemptOnlyWhenNothingElseCouldBeIt(t *testing.T) {
	const us = "01a20000-0000-7000-8000-0000000000aa"
	const other = "01a20000-0000-7000-8000-0000000000bb"
	debit := lookupAttempt(journal.KindDebit, 500)
	reversal := lookupAttempt(journal.KindReversal, 600)
	sole := cloudapi.HistoryEntry{TransactionID: "tx-1", Status: "ok", Type: "debit", CartID: "O1", Amount: 500}
	with := func(e cloudapi.HistoryEntry, f func(*cloudapi.HistoryEntry)) cloudapi.HistoryEntry { f(&e); return e }
	tests := []struct {
		name    string
		attempt journal.Attempt
		entries []cloudapi.HistoryEntry
		held    []string
		local   bool // the terminal's own history can say it too (it has no ids)
		want    want
	}{
		{"named by its idempotentUuid, whatever else it says", debit, []cloudapi.HistoryEntry{{TransactionID: "tx-9", Status: "ok", IdempotentUUID: us, CartID: "X", Amount: 1}},
			nil, false, want{InHistory, "tx-9", true, false}},
		{"named by its checkoutExternalId, still running", debit, []cloudapi.HistoryEntry{{TransactionID: "tx-8", Status: "pending", CheckoutExternalID: us}},
			nil, false, want{InHistory, "tx-8", false, true}},
		{"named by another attempt's uuid", debit, []cloudapi.HistoryEntry{with(sole, func(e *cloudapi.HistoryEntry) { e.IdempotentUUID = other })},
			nil, false, want{verdict: NotInHistory}},
		{"named by another attempt's checkoutExternalId", debit, []cloudapi.HistoryEntry{with(sole, func(e *cloudapi.HistoryEntry) { e.CheckoutExternalID = other })},
			nil, false, want{verdict: NotInHistory}},
		{"held by another attempt", debit, []cloudapi.HistoryEntry{sole}, []string{"tx-1"}, true, want{verdict: NotInHistory}},
		{"one held, then its own", debit, []cloudapi.HistoryEntry{sole, with(sole, func(e *cloudapi.HistoryEntry) { e.TransactionID, e.IdempotentUUID = "tx-2", us })},
			[]string{"tx-1"}, false, want{InHistory, "tx-2", true, false}},
		{"one held, then the sole candidate", debit, []cloudapi.HistoryEntry{sole, with(sole, func(e *cloudapi.HistoryEntry) { e.TransactionID, e.Status = "tx-2", "ko" })},
			[]string{"tx-1"}, true, want{InHistory, "tx-2", false, false}},
		{"the sole candidate, naming its order", debit, []cloudapi.HistoryEntry{sole}, nil, true, want{InHistory, "tx-1", true, false}},
		{"of another kind", debit, []cloudapi.HistoryEntry{with(sole, func(e *cloudapi.HistoryEntry) { e.Type = "refund" })},
			nil, true, want{verdict: NotInHistory}},
		{"of another order", debit, []cloudapi.HistoryEntry{with(sole, func(e *cloudapi.HistoryEntry) { e.CartID = "O2" })},
			nil, true, want{verdict: NotInHistory}},
		{"of another amount", debit, []cloudapi.HistoryEntry{with(sole, func(e *cloudapi.HistoryEntry) { e.Amount = 501 })},
			nil, true, want{verdict: NotInHistory}},
		{"the amount with a tip beside it", debit, []cloudapi.HistoryEntry{with(sole, func(e *cloudapi.HistoryEntry) { e.GiftAmount = 50 })},
			nil, true, want{InHistory, "tx-1", true, false}},
		{"a tip is not part of the amount", debit, []cloudapi.HistoryEntry{with(sole, func(e *cloudapi.HistoryEntry) { e.Amount, e.GiftAmount = 400, 100 })},
			nil, true, want{verdict: NotInHistory}},
		{"without a type: may be it, for staff", debit, []cloudapi.HistoryEntry{with(sole, func(e *cloudapi.HistoryEntry) { e.Type = "" })},
			nil, true, want{verdict: AmbiguousHistory}},
		{"without an order: may be it, for staff", debit, []cloudapi.HistoryEntry{with(sole, func(e *cloudapi.HistoryEntry) { e.CartID = "" })},
			nil, true, want{verdict: AmbiguousHistory}},
		{"two candidates: for staff", debit, []cloudapi.HistoryEntry{sole, with(sole, func(e *cloudapi.HistoryEntry) { e.TransactionID = "tx-2" })},
			nil, true, want{verdict: AmbiguousHistory}},
		// Whatever is passed over does not end the search.
		{"another attempt's, then the sole candidate", debit, []cloudapi.HistoryEntry{with(sole, func(e *cloudapi.HistoryEntry) { e.TransactionID, e.IdempotentUUID = "tx-0", other }), sole},
			nil, false, want{InHistory, "tx-1", true, false}},
		{"one of another kind, then the sole candidate", debit, []cloudapi.HistoryEntry{with(sole, func(e *cloudapi.HistoryEntry) { e.TransactionID, e.Type = "tx-0", "refund" }), sole},
			nil, true, want{InHistory, "tx-1", true, false}},
		{"one of another order, then the sole candidate", debit, []cloudapi.HistoryEntry{with(sole, func(e *cloudapi.HistoryEntry) { e.TransactionID, e.CartID = "tx-0", "O2" }), sole},
			nil, true, want{InHistory, "tx-1", true, false}},
		{"one of another amount, then the sole candidate", debit, []cloudapi.HistoryEntry{with(sole, func(e *cloudapi.HistoryEntry) { e.TransactionID, e.Amount = "tx-0", 501 }), sole},
			nil, true, want{InHistory, "tx-1", true, false}},
		{"a reversal's whole amount", reversal, []cloudapi.HistoryEntry{{TransactionID: "rv-1", Status: "ok", Type: "reversal", CartID: "O1", Amount: 600}},
			nil, true, want{InHistory, "rv-1", true, false}},
		{"a reversal's amount split with its tip", reversal, []cloudapi.HistoryEntry{{TransactionID: "rv-1", Status: "ok", Type: "reversal", CartID: "O1", Amount: 500, GiftAmount: 100}},
			nil, true, want{InHistory, "rv-1", true, false}},
		{"a reversal listed whole, its tip beside it", reversal, []cloudapi.HistoryEntry{{TransactionID: "rv-1", Status: "ok", Type: "reversal", CartID: "O1", Amount: 600, GiftAmount: 100}},
			nil, true, want{InHistory, "rv-1", true, false}},
		{"a reversal of another amount", reversal, []cloudapi.HistoryEntry{{TransactionID: "rv-1", Status: "ok", Type: "reversal", CartID: "O1", Amount: 500}},
			nil, true, want{verdict: NotInHistory}},
	}
	for _, tt := range tests {
		t.Run("cloud/"+tt.name, func(t *testing.T) {
			h := &historyCloud{entries: tt.entries}
			m, err := Cloud(h, "SN-1", nil, 0).Lookup(t.Context(), tt.attempt, time.Now(), heldBy(tt.held...))
			tt.want.check(t, m, err)
		})
		if !tt.local {
			continue
		}
		t.Run("local/"+tt.name, func(t *testing.T) {
			var list []localapi.HistoryEntry
			for _, e := range tt.entries {
				list = append(list, localapi.HistoryEntry{TransactionID: e.TransactionID, Status: e.Status, Type: e.Type, CartID: e.CartID,
					Amount: e.Amount, GiftAmount: e.GiftAmount, CreatedAt: time.Now().UTC().Format(time.RFC3339)})
			}
			f := &fakeTerminal{transactions: func(_ context.Context, r *localapi.TransactionsRequest) (*localapi.TransactionList, error) {
				return &localapi.TransactionList{Count: len(list), Total: len(list), Limit: r.Limit, Transactions: list}, nil
			}}
			a := tt.attempt
			a.Channel = journal.ChannelLocal
			m, err := Local(f, nil, time.Second).Lookup(t.Context(), a, time.Now().Add(-time.Hour), heldBy(tt.held...))
			tt.want.check(t, m, err)
		})
	}
}

// The cloud's history is read page after page to its end, each page once.
func TestTheCloudHistoryIsReadToItsEndEachPageOnce(t *testing.T) {
	h := &historyCloud{}
	for i := range 2*cloudHistoryPage + 1 {
		h.entries = append(h.entries, cloudapi.HistoryEntry{TransactionID: fmt.Sprintf("tx-%d", i), Status: "ok", Type: "debit", CartID: "O2", Amount: 500})
	}
	h.entries[len(h.entries)-1] = cloudapi.HistoryEntry{TransactionID: "ours", Status: "ok", Type: "debit", CartID: "O1", Amount: 500}
	m, err := Cloud(h, "SN-1", nil, 0).Lookup(t.Context(), lookupAttempt(journal.KindDebit, 500), time.Now(), heldBy())
	want{InHistory, "ours", true, false}.check(t, m, err)
	if h.reads != 3 {
		t.Fatalf("%d pages read for 3", h.reads)
	}
}
