package payment

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/comptoir-pos/comptoir/backend/cloudapi"
	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/localapi"
)

// bodyOfChannel builds ch's request for a of policy, decoded.
func bodyOfChannel(t *testing.T, ch Channel, policy journal.Policy, req Request) map[string]any {
	t.Helper()
	pol, _ := DefaultLimits.Policy(policy)
	raw, err := ch.Body(NewAttempt{UUID: "01a20000-0000-7000-8000-0000000000cc", Policy: pol, Request: req})
	if err != nil {
		t.Fatal(err)
	}
	var b map[string]any
	if err := json.Unmarshal(raw, &b); err != nil {
		t.Fatal(err)
	}
	return b
}

// A request restricts the means of payment only for a debit that asks
// it (the meal-voucher part); a refund, and a debit that asks nothing,
// leave the terminal its choice. The external ids are sent when asked
// for, the attempt's own uuid standing for a checkoutExternalId not
// given; the cloud always sends one (the provider's second safety net).
func TestRuleARequestRestrictsTheMeansOfPaymentOnlyWhenADebitAsks(t *testing.T) {
	const id = "01a20000-0000-7000-8000-0000000000cc"
	channels := map[string]Channel{"local": Local(nil, nil, 0), "cloud": Cloud(nil, "SN-1", nil, 0)}
	for name, ch := range channels {
		t.Run(name, func(t *testing.T) {
			b := bodyOfChannel(t, ch, journal.PolicyKiosk, Request{OrderID: "O1", Amount: 260, AcceptedMedium: localapi.MediumTypeLunchVouchersOnly})
			if ap, _ := b["acceptedPayment"].(map[string]any); ap == nil || ap["acceptedMediumType"] != localapi.MediumTypeLunchVouchersOnly {
				t.Fatalf("the voucher part: %v", b["acceptedPayment"])
			}
			if b := bodyOfChannel(t, ch, journal.PolicyKiosk, Request{OrderID: "O1", Amount: 260}); b["acceptedPayment"] != nil {
				t.Fatalf("a debit that asks nothing restricted: %v", b["acceptedPayment"])
			}
			if b := bodyOfChannel(t, ch, journal.PolicyRefund, Request{OrderID: "O1", Amount: 260, AcceptedMedium: localapi.MediumTypeLunchVouchersOnly}); b["acceptedPayment"] != nil {
				t.Fatalf("a refund restricted: %v", b["acceptedPayment"])
			}
		})
	}
	local := channels["local"]
	if b := bodyOfChannel(t, local, journal.PolicyKiosk, Request{OrderID: "O1", Amount: 260, ExternalOrderNumber: "42"}); b["checkoutExternalId"] != nil || b["externalOrderNumber"] != nil {
		t.Fatalf("external ids sent unasked: %v", b)
	}
	if b := bodyOfChannel(t, local, journal.PolicyKiosk, Request{OrderID: "O1", Amount: 260, UseExternalIDs: true, ExternalOrderNumber: "42"}); b["checkoutExternalId"] != id || b["externalOrderNumber"] != "42" {
		t.Fatalf("external ids asked for: %v", b)
	}
	if b := bodyOfChannel(t, local, journal.PolicyKiosk, Request{OrderID: "O1", Amount: 260, CheckoutExternalID: "ext-7"}); b["checkoutExternalId"] != "ext-7" {
		t.Fatalf("a checkoutExternalId given: %v", b["checkoutExternalId"])
	}
	if b := bodyOfChannel(t, channels["cloud"], journal.PolicyKiosk, Request{OrderID: "O1", Amount: 260}); b["checkoutExternalId"] != id || b["serialNumber"] != "SN-1" {
		t.Fatalf("the cloud's body: %v", b)
	}
}

// A reversal names the debit's transaction and gives back all of it, tip
// included; a debit without a transaction or amount cannot be reversed.
func TestRuleAReversalGivesBackTheWholeDebitItNames(t *testing.T) {
	for name, ch := range map[string]Channel{"local": Local(nil, nil, 0), "cloud": Cloud(nil, "SN-1", nil, 0)} {
		t.Run(name, func(t *testing.T) {
			raw, err := ch.ReversalBody(journal.Attempt{TransactionID: "tx-1", Amount: 900, Charged: true, ChargedAmount: 900, ChargedGift: 100})
			var b map[string]any
			if err != nil || json.Unmarshal(raw, &b) != nil || b["amount"] != 1000.0 || b["initialTransactionId"] != "tx-1" {
				t.Fatalf("%s, %v", raw, err)
			}
			for _, bad := range []journal.Attempt{{Amount: 900}, {TransactionID: "tx-1"}} {
				if _, err := ch.ReversalBody(bad); err == nil {
					t.Fatalf("reversal of %+v accepted", bad)
				}
			}
		})
	}
}

// pollCloud is a provider cloud that answers polls with tx.
type pollCloud struct {
	historyCloud
	tx cloudapi.Transaction
}

func (p *pollCloud) Transaction(context.Context, string) (*cloudapi.Transaction, error) {
	return &p.tx, nil
}

// A polled answer that names another attempt's uuid is never applied to
// this one (invariant 4); one that names this attempt, or none, is.
func TestRuleAPolledAnswerForAnotherAttemptIsNeverApplied(t *testing.T) {
	a := journal.Attempt{UUID: "01a20000-0000-7000-8000-0000000000aa", ProviderID: "cl-1"}
	for uuid, want := range map[string]Outcome{
		"01a20000-0000-7000-8000-0000000000bb": OutcomeForeign,
		a.UUID:                                 OutcomeCharged,
		"":                                     OutcomeCharged,
	} {
		p := &pollCloud{tx: cloudapi.Transaction{Status: "ok", TransactionID: "cl-1", Amount: 500, IdempotentUUID: uuid}}
		if got := Cloud(p, "SN-1", nil, 0).Follow(t.Context(), a); got.Outcome != want {
			t.Errorf("a poll naming %q: %s, want %s", uuid, got.Outcome, want)
		}
	}
}

// An error nobody classified still says what it was.
func TestAnUnclassifiedErrorSaysWhatItWas(t *testing.T) {
	boom := errors.New("boom: something new")
	if a := cloudError(boom); a.Outcome != OutcomeIndefinite || !strings.Contains(a.Message, "boom") {
		t.Fatalf("cloud %+v", a)
	}
	if c := localCancel(nil, boom); c.Outcome != CancelIndefinite || !strings.Contains(c.Message, "boom") {
		t.Fatalf("local cancel %+v", c)
	}
	if errMsg(nil) != "" {
		t.Fatal("no error, no message")
	}
}
