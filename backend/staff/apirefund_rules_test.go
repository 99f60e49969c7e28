package staff

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/cloudapi"
	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/payment"
)

// The rules of refunds by API (without the card, through the provider's
// Webservices) and of money given back outside Comptoir, each a test named
// after it.

// providerRecord is the provider's Webservices, with some transactions'
// details written by the test (what the provider says of a transaction
// Comptoir never made).
type providerRecord struct {
	*cloudapi.Webservices
	details map[string]*cloudapi.TransactionDetails
}

func (p *providerRecord) Details(ctx context.Context, id string) (*cloudapi.TransactionDetails, error) {
	if d, ok := p.details[id]; ok {
		return d, nil
	}
	return p.Webservices.Details(ctx, id)
}

// withProviderRecord is withAPIRefunds over a providerRecord (give it
// after withLinks).
func withProviderRecord(details map[string]*cloudapi.TransactionDetails) option {
	return withRefundsThrough(func(ws *cloudapi.Webservices) payment.WebservicesAPI {
		return &providerRecord{Webservices: ws, details: details}
	})
}

// A refund by API is of more than zero: zero or less is refused as such,
// before the provider is asked.
func TestRuleARefundByAPIIsMoreThanZero(t *testing.T) {
	e, sid, debit := paidLinkToRefund(t)
	for _, amount := range []int64{-100, 0} {
		_, err := e.st.RefundByAPI(e.ctx, sid, debit.UUID, amount)
		if se := wantCode(t, err, EINVALID); !strings.Contains(se.Message, "more than zero") {
			t.Fatalf("refund by API of %d: %q", amount, se.Message)
		}
	}
	e.refundsAtTheProvider(0)
	if r, err := e.st.RefundByAPI(e.ctx, sid, debit.UUID, 1); err != nil || r.State != journal.StateApproved {
		t.Fatalf("refund by API of 1: %+v, %v", r, err)
	}
}

// Before a refund by API, what the provider gave back for the order
// outside Comptoir is read and recorded (and audited): what the order can
// still give back is true before the provider is asked.
func TestRuleMoneyGivenBackElsewhereIsReadBeforeARefundByAPI(t *testing.T) {
	e, sid, debit := paidLinkToRefund(t)
	backOfficeRefund(e, debit.TransactionID, 500)
	_, err := e.st.RefundByAPI(e.ctx, sid, debit.UUID, 2450)
	wantCode(t, err, EINVALID)
	if m, _ := e.db.OrderMoney(e.ctx, debit.OrderID); m.Refunded != 500 || m.Givable() != 1950 {
		t.Fatalf("the order's money right after the refund by API was asked: %+v", m)
	}
	if n := len(e.auditLines(GivenBackAdopted)); n != 1 {
		t.Fatalf("%d adoptions audited, want 1", n)
	}
	e.refundsAtTheProvider(1)
}

// A transaction refunded by API for what its order can still give back
// is refused with nothing left, and staff are told that nothing is left.
func TestRuleARefundOfATransactionByAPIWithNothingLeftSaysSo(t *testing.T) {
	e, sid, debit := paidLinkToRefund(t)
	if r, err := e.st.RefundByAPI(e.ctx, sid, debit.UUID, 2450); err != nil || r.State != journal.StateApproved {
		t.Fatalf("refund of it all: %+v, %v", r, err)
	}
	_, err := e.st.RefundTransactionByAPI(e.ctx, sid, debit.TransactionID)
	if se := wantCode(t, err, EINVALID); !strings.Contains(se.Message, "Nothing is left to give back") {
		t.Fatalf("refund of a transaction given back in full: %q", se.Message)
	}
	e.refundsAtTheProvider(1)
}

// A charge of the provider's that the journal does not know is recorded
// and refunded only when the provider lists it as an approved debit of
// more than zero: a refund, a declined debit, a debit of nothing are
// refused as such, nothing recorded, nothing asked.
func TestRuleOnlyTheProvidersApprovedDebitIsRecordedForARefundByAPI(t *testing.T) {
	at := time.Now().UTC().Format(time.RFC3339)
	details := map[string]*cloudapi.TransactionDetails{
		"ws-refund":   {TransactionID: "ws-refund", Type: "refund", Status: "ok", AskedAmount: 500, ServerDatetime: at},
		"ws-declined": {TransactionID: "ws-declined", Type: "debit", Status: "ko", AskedAmount: 500, ServerDatetime: at},
		"ws-refused":  {TransactionID: "ws-refused", Type: "DEBIT", Status: "refused", AskedAmount: 500, ServerDatetime: at},
		"ws-nothing":  {TransactionID: "ws-nothing", Type: "debit", Status: "ok", AskedAmount: 0, ServerDatetime: at},
	}
	e := newEnv(t, withLinks(5*time.Millisecond, nil), withProviderRecord(details))
	sid := e.unlock().ID
	for id := range details {
		_, err := e.st.RefundTransactionByAPI(e.ctx, sid, id)
		if se := wantCode(t, err, EINVALID); !strings.Contains(se.Message, "Only an approved card payment can be refunded") {
			t.Errorf("%s: %q", id, se.Message)
		}
		if _, err := e.db.AttemptByTransaction(e.ctx, id); err == nil {
			t.Errorf("%s recorded in the journal", id)
		}
	}
	e.refundsAtTheProvider(0)
}

// The day's reconciliation records money given back outside Comptoir
// against its order, and reports the day as it stands once it has: the
// refund it recorded is one of the report's lines, not a difference.
func TestRuleTheReconciliationReportsTheMoneyGivenBackElsewhereItRecorded(t *testing.T) {
	e := newEnv(t, withLinks(5*time.Millisecond, nil), withAPIRefunds())
	e.reconcileWithTheProvider()
	sid := e.unlock().ID
	debit := e.paidLink(sid)
	backOfficeRefund(e, debit.TransactionID, 700)
	r, err := e.st.ReconcileDay(e.ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if m, _ := e.db.OrderMoney(e.ctx, debit.OrderID); m.Refunded != 700 || m.Givable() != 1750 {
		t.Fatalf("after the reconciliation: %+v", m)
	}
	for _, d := range r.Differences {
		if d.OtherType == "refund" {
			t.Fatalf("the refund made elsewhere is still a difference: %+v", d)
		}
	}
	atts, err := e.db.AttemptsForOrder(e.ctx, debit.OrderID)
	if err != nil || len(atts) != 2 || atts[1].Kind != journal.KindRefund || atts[1].Amount != 700 {
		t.Fatalf("the order's attempts after the reconciliation %+v, %v", atts, err)
	}
	found := false
	for _, l := range r.Lines {
		found = found || (l.Journal != nil && l.Journal.UUID == atts[1].UUID)
	}
	if !found {
		t.Fatalf("the refund recorded is not in the report's lines: %+v", r.Lines)
	}
}
