package crash

import (
	"fmt"
	"strings"
	"testing"

	"github.com/comptoir-pos/comptoir/backend/cloudsim"
	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/terminalsim"
)

// eachAttemptAgrees holds every attempt of the journal, one by one, to
// what was done for it: the terminal's ledger (a debit or a refund by its
// idempotentUuid, a reversal by the debit it reverses) and, for an
// attempt the provider's cloud started, the cloud's own record of it.
// Approved here means made there, once, under the journal's transaction
// id, for its order and for the amounts the journal holds; declined,
// cancelled or failed here means nothing made there, and nothing still
// running at the provider. Totals that balance do not hide a wrong
// settle: each attempt answers for itself.
func eachAttemptAgrees(t *testing.T, atts []journal.Attempt, ledger []terminalsim.LedgerEntry, cloud []cloudsim.Transaction) {
	t.Helper()
	byUUID := map[string][]terminalsim.LedgerEntry{}
	reversalsOf := map[string][]terminalsim.LedgerEntry{}
	for _, l := range ledger {
		if l.Kind == "reversal" {
			reversalsOf[l.InitialTransactionID] = append(reversalsOf[l.InitialTransactionID], l)
			continue
		}
		byUUID[l.Kind+" "+l.IdempotentUUID] = append(byUUID[l.Kind+" "+l.IdempotentUUID], l)
	}
	approvedTx := map[string]bool{}
	for _, a := range atts {
		if a.State == journal.StateApproved && a.TransactionID != "" {
			approvedTx[a.TransactionID] = true
		}
	}
	recorded := map[string][]cloudsim.Transaction{}
	for _, tx := range cloud {
		if tx.Via != cloudsim.ViaTerminal && tx.IdempotentUUID != "" {
			recorded[tx.IdempotentUUID] = append(recorded[tx.IdempotentUUID], tx)
		}
	}
	for _, a := range atts {
		var problems []string
		if a.Kind == journal.KindReversal {
			problems = reversalAgrees(a, reversalsOf[a.InitialTransactionID], approvedTx)
		} else {
			problems = madeAgrees(a, byUUID[string(a.Kind)+" "+a.UUID])
		}
		if a.Channel == journal.ChannelCloud && a.Kind != journal.KindReversal {
			problems = append(problems, cloudAgrees(a, recorded[a.UUID])...)
		}
		for _, p := range problems {
			t.Errorf("%s %s of order %s, %s in the journal (%d asked, %d charged): %s",
				a.Kind, a.UUID, a.OrderID, a.State, a.Amount, a.Total(), p)
		}
	}
}

// madeAgrees compares a debit or a refund with the ledger's entries for
// its idempotentUuid.
func madeAgrees(a journal.Attempt, made []terminalsim.LedgerEntry) []string {
	if a.State != journal.StateApproved {
		if len(made) > 0 {
			return []string{fmt.Sprintf("the terminal made it %d time(s) (%s)", len(made), entries(made))}
		}
		return nil
	}
	if len(made) != 1 {
		return []string{fmt.Sprintf("the terminal made it %d time(s), not once (%s)", len(made), entries(made))}
	}
	l := made[0]
	var out []string
	if l.TransactionID != a.TransactionID {
		out = append(out, fmt.Sprintf("transaction %s there, %s here", l.TransactionID, a.TransactionID))
	}
	if l.CartID != a.OrderID {
		out = append(out, fmt.Sprintf("order %s there", l.CartID))
	}
	if l.Amount != a.Paid() || l.GiftAmount != a.Gift() {
		out = append(out, fmt.Sprintf("%d + tip %d there, %d + tip %d here", l.Amount, l.GiftAmount, a.Paid(), a.Gift()))
	}
	if a.ChargedCurrency != "" && !strings.EqualFold(l.Currency, a.ChargedCurrency) {
		out = append(out, fmt.Sprintf("currency %s there, %s here", l.Currency, a.ChargedCurrency))
	}
	return out
}

// reversalAgrees compares a reversal with the ledger's reversals of its
// debit: approved means one of them is it, for the whole debit; otherwise
// each of them is some other reversal approved in the journal.
func reversalAgrees(a journal.Attempt, made []terminalsim.LedgerEntry, approvedTx map[string]bool) []string {
	if a.State != journal.StateApproved {
		for _, l := range made {
			if !approvedTx[l.TransactionID] {
				return []string{fmt.Sprintf("the terminal reversed %s (%s), and no approved reversal holds it", a.InitialTransactionID, l.TransactionID)}
			}
		}
		return nil
	}
	for _, l := range made {
		if l.TransactionID != a.TransactionID {
			continue
		}
		if l.Total != a.Total() {
			return []string{fmt.Sprintf("%d given back there, %d here", l.Total, a.Total())}
		}
		return nil
	}
	return []string{fmt.Sprintf("no reversal %s of %s on the terminal (%s)", a.TransactionID, a.InitialTransactionID, entries(made))}
}

// cloudAgrees compares an attempt the cloud started with the cloud's
// transactions for its idempotentUuid.
func cloudAgrees(a journal.Attempt, txs []cloudsim.Transaction) []string {
	var ok []cloudsim.Transaction
	var out []string
	for _, tx := range txs {
		switch tx.Status {
		case cloudsim.StatusOK:
			ok = append(ok, tx)
		case cloudsim.StatusPending:
			out = append(out, fmt.Sprintf("the cloud's transaction %s is still pending", tx.TransactionID))
		}
	}
	switch {
	case a.State != journal.StateApproved && len(ok) > 0:
		out = append(out, fmt.Sprintf("the cloud says %s was made (ok)", ok[0].TransactionID))
	case a.State == journal.StateApproved && len(ok) != 1:
		out = append(out, fmt.Sprintf("the cloud has %d transaction(s) ok for it, not one", len(ok)))
	case a.State == journal.StateApproved:
		if tx := ok[0]; tx.TransactionID != a.TransactionID || tx.Amount != a.Paid() || tx.GiftAmount != a.Gift() {
			out = append(out, fmt.Sprintf("the cloud says %s for %d + tip %d", tx.TransactionID, tx.Amount, tx.GiftAmount))
		}
	}
	return out
}

func entries(ls []terminalsim.LedgerEntry) string {
	var s []string
	for _, l := range ls {
		s = append(s, fmt.Sprintf("%s %s %d+%d", l.Kind, l.TransactionID, l.Amount, l.GiftAmount))
	}
	if len(s) == 0 {
		return "nothing"
	}
	return strings.Join(s, ", ")
}
