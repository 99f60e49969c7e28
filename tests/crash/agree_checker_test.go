package crash

import (
	"testing"

	"github.com/comptoir-pos/comptoir/backend/cloudsim"
	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/terminalsim"
)

// The rule checker itself: a journal whose totals balance but whose single
// attempt was settled the wrong way is caught, and one that agrees with the
// terminal and the cloud is not. (The crash runs only ever show the second
// case when Comptoir is right; these show that the first would be seen.)
func TestTheRuleCheckerSeesEachWrongSettle(t *testing.T) {
	debit := func(state journal.State, tx string) journal.Attempt {
		return journal.Attempt{UUID: "u1", OrderID: "o1", Kind: journal.KindDebit, State: state,
			Amount: 500, TransactionID: tx, ChargedCurrency: "EUR"}
	}
	made := terminalsim.LedgerEntry{Kind: "debit", TransactionID: "T1", IdempotentUUID: "u1",
		CartID: "o1", Amount: 500, Total: 500, Currency: "EUR"}
	reversal := func(state journal.State, tx string) journal.Attempt {
		return journal.Attempt{UUID: "r1", OrderID: "o1", Kind: journal.KindReversal, State: state,
			Amount: 500, TransactionID: tx, InitialTransactionID: "T1"}
	}
	reversed := terminalsim.LedgerEntry{Kind: "reversal", TransactionID: "R1", InitialTransactionID: "T1", Amount: 500, Total: 500}
	ok := cloudsim.Transaction{Status: cloudsim.StatusOK, TransactionID: "T1", Amount: 500, IdempotentUUID: "u1"}
	pending := cloudsim.Transaction{Status: cloudsim.StatusPending, TransactionID: "T1", Amount: 500, IdempotentUUID: "u1"}

	tests := []struct {
		name  string
		check func() []string
		wrong bool
	}{
		{"approved here, made once there", func() []string {
			return madeAgrees(debit(journal.StateApproved, "T1"), []terminalsim.LedgerEntry{made})
		}, false},
		{"declined here, nothing there", func() []string { return madeAgrees(debit(journal.StateDeclined, ""), nil) }, false},
		{"cancelled here, charged there", func() []string { return madeAgrees(debit(journal.StateCancelled, ""), []terminalsim.LedgerEntry{made}) }, true},
		{"declined here, charged there", func() []string { return madeAgrees(debit(journal.StateDeclined, ""), []terminalsim.LedgerEntry{made}) }, true},
		{"approved here, nothing there", func() []string { return madeAgrees(debit(journal.StateApproved, "T1"), nil) }, true},
		{"approved here, charged twice there", func() []string {
			return madeAgrees(debit(journal.StateApproved, "T1"), []terminalsim.LedgerEntry{made, made})
		}, true},
		{"approved under another transaction", func() []string {
			return madeAgrees(debit(journal.StateApproved, "T9"), []terminalsim.LedgerEntry{made})
		}, true},
		{"approved for another amount", func() []string {
			other := made
			other.Amount, other.Total = 400, 400
			return madeAgrees(debit(journal.StateApproved, "T1"), []terminalsim.LedgerEntry{other})
		}, true},
		{"a reversal approved here, made there", func() []string {
			return reversalAgrees(reversal(journal.StateApproved, "R1"), []terminalsim.LedgerEntry{reversed}, map[string]bool{"R1": true})
		}, false},
		{"a reversal failed here, made there", func() []string {
			return reversalAgrees(reversal(journal.StateFailed, ""), []terminalsim.LedgerEntry{reversed}, map[string]bool{})
		}, true},
		{"a reversal approved here, not there", func() []string {
			return reversalAgrees(reversal(journal.StateApproved, "R1"), nil, map[string]bool{"R1": true})
		}, true},
		{"a cloud attempt approved, ok at the cloud", func() []string { return cloudAgrees(debit(journal.StateApproved, "T1"), []cloudsim.Transaction{ok}) }, false},
		{"a cloud attempt cancelled, ok at the cloud", func() []string { return cloudAgrees(debit(journal.StateCancelled, ""), []cloudsim.Transaction{ok}) }, true},
		{"a cloud attempt declined, still pending at the cloud", func() []string {
			return cloudAgrees(debit(journal.StateDeclined, ""), []cloudsim.Transaction{pending})
		}, true},
		{"a cloud attempt approved, nothing at the cloud", func() []string { return cloudAgrees(debit(journal.StateApproved, "T1"), nil) }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			problems := tt.check()
			if tt.wrong && len(problems) == 0 {
				t.Fatal("the checker saw nothing wrong")
			}
			if !tt.wrong && len(problems) > 0 {
				t.Fatalf("the checker complained: %v", problems)
			}
		})
	}
}
