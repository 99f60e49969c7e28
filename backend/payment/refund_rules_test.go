package payment

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/cloudapi"
	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/localapi"
	"github.com/google/uuid"
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

// scriptedWS is the provider's Webservices for one refund by API of
// transaction T1 (15.00 by Visa on SN-A): its answer to the refund is
// lost, and the company's list shows the refund when listed is set, with
// status; reads of the list are timed.
type scriptedWS struct {
	mu      sync.Mutex
	refunds int
	listed  bool
	status  string // the refund's, in the list and fetched
	reads   []time.Time
	fetches int // of the refund itself
}

func (s *scriptedWS) Refund(context.Context, string, []byte) (*cloudapi.Refund, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refunds++
	if s.refunds > 1 {
		s.listed = true // the second request made it
	}
	return nil, &cloudapi.TransportError{Sent: true, Timeout: true, Err: context.DeadlineExceeded}
}

func (s *scriptedWS) Details(_ context.Context, id string) (*cloudapi.TransactionDetails, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if id == "T1" {
		return &cloudapi.TransactionDetails{TransactionID: "T1", Status: "ok", TotalAmount: 1500, Scheme: "VISA", SerialNumber: "SN-A"}, nil
	}
	s.fetches++
	return &cloudapi.TransactionDetails{TransactionID: id, Status: s.status, Type: "refund"}, nil
}

func (s *scriptedWS) BatchAll(context.Context, cloudapi.BatchRequest, time.Time) ([]cloudapi.HistoryEntry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reads = append(s.reads, time.Now())
	out := []cloudapi.HistoryEntry{{TransactionID: "T1", Type: "debit", Status: "ok", Amount: 1500, SerialNumber: "SN-A"}}
	if s.listed {
		out = append(out, cloudapi.HistoryEntry{TransactionID: "F1", Type: "refund", Status: s.status, Amount: 1500, SerialNumber: "SN-A"})
	}
	return out, nil
}

func (s *scriptedWS) set(f func()) { s.mu.Lock(); defer s.mu.Unlock(); f() }

// wsRefund takes 15.00 for order W1 on the cloud (transaction T1) in the
// journal, and refunds it by API through s, polled every poll.
func wsRefund(t *testing.T, s *scriptedWS, poll time.Duration) (*env, *Handle) {
	t.Helper()
	e := pollingEnv(t, &polling{}, testLimits)
	e.order("W1", 1500)
	id := uuid.Must(uuid.NewV7()).String()
	body, _ := json.Marshal(map[string]any{"idempotentUuid": id, "amount": 1500, "cartId": "W1"})
	if _, err := e.db.PrepareAttempt(e.ctx, journal.Attempt{UUID: id, OrderID: "W1", Kind: journal.KindDebit, Channel: journal.ChannelCloud,
		Amount: 1500, Policy: journal.PolicyKiosk, Terminal: "SN-1", RequestBody: body}); err != nil {
		t.Fatal(err)
	}
	e.db.MarkSent(e.ctx, id)
	if _, err := e.db.Transition(e.ctx, id, journal.StateSent, journal.StateApproved, journal.TransitionInfo{TransactionID: "T1",
		Charged: &journal.Charge{Amount: 1500}}); err != nil {
		t.Fatal(err)
	}
	o, err := New(Config{Journal: e.db, Channel: Webservices(s, WebservicesOptions{UserEmail: "owner@example.com", PollEvery: poll,
		Vendor: &localapi.Vendor{SoftwareName: "Comptoir", SoftwareVersion: "test"}}),
		TerminalID: "webservices", Limits: testLimits, OtherChannels: []journal.Channel{journal.ChannelCloud}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(o.Close)
	if _, err := o.Recover(e.ctx); err != nil {
		t.Fatal(err)
	}
	h, err := o.StartAPIRefund(e.ctx, id, 1500)
	if err != nil {
		t.Fatal(err)
	}
	return e, h
}

// A refund by API whose answer was lost, and that the company's list then
// shows still running, is followed until it ends: never settled declined
// for running, never asked for again.
func TestRuleARefundByAPIRunningAtTheProviderIsFollowedNeverDeclined(t *testing.T) {
	s := &scriptedWS{listed: true, status: "pending"}
	e, h := wsRefund(t, s, 5*time.Millisecond)
	waitView(t, e, h, func(View) bool { return e.attempt(h.UUID()).ProviderID == "F1" })
	s.set(func() { s.status = "refunded" })
	v := e.wait(h)
	if v.State != journal.StateApproved || v.TransactionID != "F1" {
		t.Fatalf("view %+v", v)
	}
	if a := e.attempt(h.UUID()); a.SendCount != 1 || s.refunds != 1 {
		t.Fatalf("asked %d times (%d sends journaled)", s.refunds, a.SendCount)
	}
}

// A refund by API whose answer was lost, and that the company's list then
// shows done, is settled from the list: not followed as if still running.
func TestRuleALostRefundByAPIFoundDoneInTheListIsSettledFromIt(t *testing.T) {
	s := &scriptedWS{listed: true, status: "refunded"}
	e, h := wsRefund(t, s, 5*time.Millisecond)
	v := e.wait(h)
	if v.State != journal.StateApproved || v.TransactionID != "F1" {
		t.Fatalf("view %+v", v)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if a := e.attempt(h.UUID()); s.fetches != 0 || s.refunds != 1 || a.ProviderStatus == "pending" {
		t.Fatalf("followed as running: %d fetches, %d requests, provider's word %q", s.fetches, s.refunds, a.ProviderStatus)
	}
}

// A refund by API whose answer was lost is asked for again only once the
// company's list, read wsSearches times PollEvery apart, has not shown it:
// the provider refunds a transaction once, and a second request must
// never go out while the first may be on its way into the list.
func TestRuleALostRefundByAPIIsAskedAgainOnlyAfterTheListWasReadEnough(t *testing.T) {
	const poll = 40 * time.Millisecond
	s := &scriptedWS{status: "refunded"}
	e, h := wsRefund(t, s, poll)
	v := e.wait(h)
	if v.State != journal.StateApproved || v.TransactionID != "F1" {
		t.Fatalf("view %+v", v)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.refunds != 2 || len(s.reads) != wsSearches+1 {
		t.Fatalf("%d requests, %d reads of the list: want 2 requests, the second after %d reads", s.refunds, len(s.reads), wsSearches)
	}
	for i := 1; i < wsSearches; i++ {
		if gap := s.reads[i].Sub(s.reads[i-1]); gap < poll {
			t.Fatalf("reads %d and %d of the list %s apart: at least PollEvery (%s)", i, i+1, gap, poll)
		}
	}
}
