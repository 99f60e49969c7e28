package payment

import (
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/cloudapi"
	"github.com/comptoir-pos/comptoir/backend/journal"
)

// The means of payment the Webservices never refund are told by whole
// words of the scheme or issuer, letters and digits alike: a word that
// only contains one of them (CASHBACK, CUP9) is another means of payment.
func TestRuleAMeansOfPaymentIsNotRefundableByAPIOnlyByItsWholeName(t *testing.T) {
	for name, refundable := range map[string]bool{
		"AMEX": false, "amex": false, "American Express": false, "UNIONPAY-INTL": false, "cup": false, "VISA/CUP": false,
		"CASH": false, "ANCV": false, "Conecs": false,
		"CASHBACK": true, "ACUP": true, "CASHZ": true, "CUP9": true, "CUP0": true, "0CUP": true, "9CUP": true, "VISA": true,
	} {
		if got := refundableByAPI("VISA", name) == ""; got != refundable {
			t.Errorf("%q: refundable %v, want %v", name, got, refundable)
		}
	}
}

// The company's list names a refund by API only as the sole refund (or
// credit) of its amount, tip part included, that no other attempt holds,
// on the terminal, the cart and the reference of the transaction it gives
// back when both name them; its status says whether it is done, refused
// or still running. Another till's refund of the same amount is not it.
func TestRuleTheCompanysListNamesARefundOnlyWhenNothingElseCouldBeIt(t *testing.T) {
	orig := cloudapi.HistoryEntry{TransactionID: "T1", Type: "debit", Status: "ok", Amount: 1500, SerialNumber: "SN-A", CartID: "C1", Reference: "R1"}
	ours := cloudapi.HistoryEntry{TransactionID: "F1", Type: "refund", Status: "refunded", Amount: 500, SerialNumber: "SN-A", CartID: "C1", Reference: "R1"}
	with := func(e cloudapi.HistoryEntry, f func(*cloudapi.HistoryEntry)) cloudapi.HistoryEntry { f(&e); return e }
	for _, tt := range []struct {
		name    string
		entries []cloudapi.HistoryEntry
		held    []string
		want    want
	}{
		{"done", []cloudapi.HistoryEntry{orig, ours}, nil, want{InHistory, "F1", true, false}},
		{"still running", []cloudapi.HistoryEntry{orig, with(ours, func(e *cloudapi.HistoryEntry) { e.Status = "pending" })}, nil, want{InHistory, "F1", false, true}},
		{"refused", []cloudapi.HistoryEntry{orig, with(ours, func(e *cloudapi.HistoryEntry) { e.Status = "rejected" })}, nil, want{InHistory, "F1", false, false}},
		{"a credit", []cloudapi.HistoryEntry{orig, with(ours, func(e *cloudapi.HistoryEntry) { e.Type = "Credit" })}, nil, want{InHistory, "F1", true, false}},
		{"its tip part apart", []cloudapi.HistoryEntry{orig, with(ours, func(e *cloudapi.HistoryEntry) { e.Amount, e.GiftAmount = 400, 100 })}, nil, want{InHistory, "F1", true, false}},
		{"another till's, listed before the original", []cloudapi.HistoryEntry{ours, with(ours, func(e *cloudapi.HistoryEntry) { e.TransactionID, e.SerialNumber = "F2", "SN-B" }), orig},
			nil, want{InHistory, "F1", true, false}},
		{"another till's only", []cloudapi.HistoryEntry{orig, with(ours, func(e *cloudapi.HistoryEntry) { e.SerialNumber = "SN-B" })}, nil, want{verdict: NotInHistory}},
		{"another cart's", []cloudapi.HistoryEntry{orig, with(ours, func(e *cloudapi.HistoryEntry) { e.CartID = "C2" })}, nil, want{verdict: NotInHistory}},
		{"another reference's", []cloudapi.HistoryEntry{orig, with(ours, func(e *cloudapi.HistoryEntry) { e.Reference = "R2" })}, nil, want{verdict: NotInHistory}},
		{"a debit", []cloudapi.HistoryEntry{orig, with(ours, func(e *cloudapi.HistoryEntry) { e.Type = "debit" })}, nil, want{verdict: NotInHistory}},
		{"another amount", []cloudapi.HistoryEntry{orig, with(ours, func(e *cloudapi.HistoryEntry) { e.Amount = 501 })}, nil, want{verdict: NotInHistory}},
		{"held by another attempt", []cloudapi.HistoryEntry{orig, ours}, []string{"F1"}, want{verdict: NotInHistory}},
		{"two of them", []cloudapi.HistoryEntry{orig, ours, with(ours, func(e *cloudapi.HistoryEntry) { e.TransactionID = "F2" })}, nil, want{verdict: AmbiguousHistory}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ch := Webservices(fakeList{entries: tt.entries}, WebservicesOptions{})
			m, err := ch.Lookup(t.Context(), journal.Attempt{Kind: journal.KindRefund, InitialTransactionID: "T1", Amount: 500}, time.Now().Add(-time.Hour), heldBy(tt.held...))
			tt.want.check(t, m, err)
		})
	}
}

// ChargeOf reads a transaction only from an answer that is one: never
// from a reversal's answer, nor from an answer without a status.
func TestRuleChargeOfReadsOnlyATransaction(t *testing.T) {
	tx := []byte(`{"status":"ok","transactionId":"tx-1","amount":500}`)
	if c, ok := ChargeOf(journal.Attempt{Kind: journal.KindDebit, Response: tx}); !ok || c.TransactionID != "tx-1" || !c.Approved {
		t.Fatalf("a debit's answer: %+v, %v", c, ok)
	}
	if _, ok := ChargeOf(journal.Attempt{Kind: journal.KindReversal, Response: tx}); ok {
		t.Fatal("a reversal's answer read as a charge")
	}
	if _, ok := ChargeOf(journal.Attempt{Kind: journal.KindDebit, Response: []byte(`{"transactionId":"tx-1","amount":500}`)}); ok {
		t.Fatal("an answer without a status read as a charge")
	}
}
