package payment

import (
	"testing"

	"github.com/comptoir-pos/comptoir/backend/cloudapi"
	"github.com/comptoir-pos/comptoir/backend/journal"
)

// Money given back outside Comptoir is what the provider's list shows for
// the order that no attempt stands for: an entry another attempt holds is
// passed over (and the list read on), one the journal's give-back of the
// same amount (tip included or not) stands for is paired with it; the
// rest is adopted for its whole money, tip included, against the order's
// debit of that total (else its only debit); a reversal with no debit to
// name is adopted as a refund.
func TestRuleMoneyGivenBackElsewhereIsWhatNoAttemptStandsFor(t *testing.T) {
	debit := func(tx string, amount int64) journal.Attempt {
		return journal.Attempt{Kind: journal.KindDebit, State: journal.StateApproved, TransactionID: tx, Amount: amount}
	}
	refund := func(amount, tip int64) journal.Attempt {
		return journal.Attempt{Kind: journal.KindRefund, State: journal.StateApproved, TransactionID: "mine", Amount: amount, GiftAmount: tip}
	}
	entry := func(tx, typ string, amount, tip int64) cloudapi.HistoryEntry {
		return cloudapi.HistoryEntry{TransactionID: tx, Type: typ, Status: "ok", Amount: amount, GiftAmount: tip, CurrencyCode: "EUR"}
	}
	type adopted struct {
		tx, initial string
		kind        journal.Kind
		amount      int64
	}
	for _, tc := range []struct {
		name string
		es   []cloudapi.HistoryEntry
		atts []journal.Attempt
		held map[string]string
		want []adopted
	}{
		{"held by another attempt, then one of its own", []cloudapi.HistoryEntry{entry("R1", "refund", 300, 0), entry("R2", "refund", 200, 0)},
			[]journal.Attempt{debit("D1", 900)}, map[string]string{"R1": "someone"},
			[]adopted{{"R2", "D1", journal.KindRefund, 200}}},
		{"its tip with it", []cloudapi.HistoryEntry{entry("R1", "refund", 500, 100)}, []journal.Attempt{debit("D1", 900)}, nil,
			[]adopted{{"R1", "D1", journal.KindRefund, 600}}},
		{"against the debit of that total", []cloudapi.HistoryEntry{entry("R1", "refund", 900, 0)}, []journal.Attempt{debit("D1", 600), debit("D2", 900)}, nil,
			[]adopted{{"R1", "D2", journal.KindRefund, 900}}},
		{"no debit of that total among several", []cloudapi.HistoryEntry{entry("R1", "refund", 100, 0)}, []journal.Attempt{debit("D1", 600), debit("D2", 900)}, nil,
			[]adopted{{"R1", "", journal.KindRefund, 100}}},
		{"a reversal of the only debit", []cloudapi.HistoryEntry{entry("V1", "reversal", 900, 0)}, []journal.Attempt{debit("D1", 900)}, nil,
			[]adopted{{"V1", "D1", journal.KindReversal, 900}}},
		{"a reversal with no debit to name: a refund", []cloudapi.HistoryEntry{entry("V1", "reversal", 900, 0)}, nil, nil,
			[]adopted{{"V1", "", journal.KindRefund, 900}}},
		{"paired with the journal's give-back of its total", []cloudapi.HistoryEntry{entry("R9", "refund", 500, 100)},
			[]journal.Attempt{debit("D1", 900), refund(500, 100)}, nil, nil},
		{"paired with the journal's give-back of its amount", []cloudapi.HistoryEntry{entry("R9", "refund", 600, 0)},
			[]journal.Attempt{debit("D1", 900), refund(600, 0)}, nil, nil},
		{"not paired with a give-back of another amount", []cloudapi.HistoryEntry{entry("R9", "refund", 700, 0)},
			[]journal.Attempt{debit("D1", 900), refund(600, 0)}, nil, []adopted{{"R9", "D1", journal.KindRefund, 700}}},
	} {
		got := madeElsewhere("O1", tc.es, tc.atts, tc.held)
		if len(got) != len(tc.want) {
			t.Fatalf("%s: adopted %+v, want %+v", tc.name, got, tc.want)
		}
		for i, g := range got {
			w := tc.want[i]
			if g.TransactionID != w.tx || g.InitialTransactionID != w.initial || g.Kind != w.kind || g.Amount != w.amount || g.OrderID != "O1" {
				t.Fatalf("%s: adopted %+v, want %+v", tc.name, g, w)
			}
		}
	}
}
