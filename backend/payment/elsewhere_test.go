package payment

import (
	"testing"

	"github.com/comptoir-pos/comptoir/backend/cloudapi"
	"github.com/comptoir-pos/comptoir/backend/journal"
)

// What the provider gave back for an order is made elsewhere only when no
// attempt of the journal stands for it: by its id, or (a give-back over the
// LAN that the provider lists under an id of its own) by its amount.
func TestMoneyGivenBackElsewhereIsWhatNoAttemptStandsFor(t *testing.T) {
	debit := journal.Attempt{UUID: "d", Kind: journal.KindDebit, State: journal.StateApproved, TransactionID: "lan-debit", Amount: 990}
	refund := func(id string, amount int64, state journal.State) journal.Attempt {
		return journal.Attempt{UUID: "r-" + id, Kind: journal.KindRefund, State: state, TransactionID: id, Amount: amount}
	}
	entry := func(id, kind, status string, amount int64) cloudapi.HistoryEntry {
		return cloudapi.HistoryEntry{TransactionID: id, Type: kind, Status: status, Amount: amount, CartID: "o", CurrencyCode: "EUR"}
	}
	tests := []struct {
		name    string
		entries []cloudapi.HistoryEntry
		atts    []journal.Attempt
		held    map[string]string
		want    []journal.Kind // what is adopted, in order
	}{
		{"a back-office refund", []cloudapi.HistoryEntry{entry("bo-1", "refund", "ok", 500)}, nil, nil, []journal.Kind{journal.KindRefund}},
		{"a keypad reversal", []cloudapi.HistoryEntry{entry("kp-1", "reversal", "ok", 990)}, nil, nil, []journal.Kind{journal.KindReversal}},
		{"held by an attempt", []cloudapi.HistoryEntry{entry("own-1", "refund", "ok", 500)}, nil, map[string]string{"own-1": "r"}, nil},
		{"a refund over the LAN, listed under the provider's id", []cloudapi.HistoryEntry{entry("srv-9", "refund", "ok", 500)},
			[]journal.Attempt{refund("lan-refund", 500, journal.StateApproved)}, nil, nil},
		{"one over the LAN and one elsewhere", []cloudapi.HistoryEntry{entry("srv-9", "refund", "ok", 500), entry("bo-2", "refund", "ok", 300)},
			[]journal.Attempt{refund("lan-refund", 500, journal.StateApproved)}, nil, []journal.Kind{journal.KindRefund}},
		{"a refused refund of the journal pairs nothing", []cloudapi.HistoryEntry{entry("bo-3", "refund", "ok", 500)},
			[]journal.Attempt{refund("lan-x", 500, journal.StateDeclined)}, nil, []journal.Kind{journal.KindRefund}},
		{"not approved", []cloudapi.HistoryEntry{entry("bo-4", "refund", "ko", 500)}, nil, nil, nil},
		{"a debit", []cloudapi.HistoryEntry{entry("x", "debit", "ok", 990)}, nil, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var es []cloudapi.HistoryEntry
			for _, e := range tt.entries {
				if givesBack(e) {
					es = append(es, e)
				}
			}
			got := madeElsewhere("o", es, append([]journal.Attempt{debit}, tt.atts...), tt.held)
			if len(got) != len(tt.want) {
				t.Fatalf("adopted %+v, want %v", got, tt.want)
			}
			for i, g := range got {
				if g.Kind != tt.want[i] || g.OrderID != "o" || g.InitialTransactionID != "lan-debit" || g.Amount <= 0 {
					t.Fatalf("adopted %+v", g)
				}
			}
		})
	}
}
