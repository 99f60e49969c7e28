package payment

import (
	"context"
	"testing"

	"github.com/comptoir-pos/comptoir/backend/cloudapi"
	"github.com/comptoir-pos/comptoir/backend/journal"
)

// failingReads is the provider's cloud, online payment and Webservices,
// whose every read of an attempt's state (the poll, the cart, the
// refund's transaction) and every reversal fail with err.
type failingReads struct {
	CloudAPI
	LinkAPI
	WebservicesAPI
	err error
}

func (f failingReads) Transaction(context.Context, string) (*cloudapi.Transaction, error) {
	return nil, f.err
}

func (f failingReads) Cart(context.Context, string) (*cloudapi.Cart, error) { return nil, f.err }

func (f failingReads) Details(context.Context, string) (*cloudapi.TransactionDetails, error) {
	return nil, f.err
}

func (f failingReads) Reversal(context.Context, []byte) (*cloudapi.ReversalResponse, error) {
	return nil, f.err
}

// readFailures are the ways a read can fail without saying anything of
// the attempt it asks about.
var readFailures = map[string]error{
	"401":        &cloudapi.AuthError{Body: []byte(`{"detail":"Invalid API key"}`)},
	"400 ko":     &cloudapi.APIError{Status: 400, Message: "Parameter 'transactionId' is missing", Body: []byte(`{"status":"ko"}`)},
	"404":        &cloudapi.HTTPError{Status: 404, Body: []byte(`{"detail":"Not found."}`)},
	"500":        &cloudapi.HTTPError{Status: 500},
	"unreadable": &cloudapi.DecodeError{Op: "transaction", Body: []byte(`<html>`)},
	"timeout":    &cloudapi.TransportError{Op: "GET", Err: context.DeadlineExceeded, Sent: true, Timeout: true},
}

// A read of an attempt's state that fails (the cloud's poll, a link's
// cart, a refund's transaction) says nothing of the payment, whatever the
// failure: a 401 or a 400 refuses the read, not the payment. It is never
// a refusal, a decline or an end: the attempt is asked about again, and
// past its deadline the history or staff decide.
func TestRuleAFailedReadOfAnAttemptSaysNothingOfItsMoney(t *testing.T) {
	ctx := context.Background()
	att := journal.Attempt{UUID: "u1", OrderID: "O1", Kind: journal.KindDebit, Amount: 900, ProviderID: "p1", ProviderStatus: "pending",
		RequestBody: []byte(`{"cart_id":"O1-u1"}`)}
	for name, err := range readFailures {
		api := failingReads{err: err}
		for ch, c := range map[string]Channel{
			"cloud": Cloud(api, "SN-1", nil, 0), "link": Link(api, LinkOptions{}), "webservices": Webservices(api, WebservicesOptions{}),
		} {
			switch a := c.Follow(ctx, att); a.Outcome {
			case OutcomeIndefinite, OutcomeTimeout, OutcomePending:
			default:
				t.Errorf("%s, %s: a failed read is %s (%s)", ch, name, a.Outcome, a.Message)
			}
		}
	}
}

// A poll the cloud refuses with a 401 (a key rotated, a terminal moved
// to another account for a while) does not fail a payment the terminal
// goes on to approve: the poll is asked again, and the approval is taken.
func TestCloudAPollRefusedWithA401IsAskedAgainNotFailed(t *testing.T) {
	f := &fakeCloud{outcome: cloudapi.StatusOK, pollFails: 3}
	e := cloudEnv(t, f, testLimits)
	v := e.wait(e.kiosk("A1", 1250))
	if v.State != journal.StateApproved || !v.OrderPaid {
		t.Fatalf("view %+v", v)
	}
	if payments, polls, _ := f.counts(); payments != 1 || polls < 4 {
		t.Fatalf("%d payments, %d polls", payments, polls)
	}
}

// A 401 to a reversal names no reversal made or refused: it is left to
// the history, never read as "not reversed" (which would let the money be
// given back a second time). The terminal's own refusals stay refusals.
func TestRuleA401ToAReversalIsLeftToTheHistory(t *testing.T) {
	ctx := context.Background()
	att := journal.Attempt{UUID: "r1", OrderID: "O1", Kind: journal.KindReversal, Amount: 900, InitialTransactionID: "T1"}
	a := Cloud(failingReads{err: readFailures["401"]}, "SN-1", nil, 0).Reverse(ctx, att)
	if a.Outcome != OutcomeIndefinite {
		t.Fatalf("a 401 to a reversal is %s (%s)", a.Outcome, a.Message)
	}
	refused := &cloudapi.APIError{Status: 400, Message: "Error : Amount mismatch"}
	if a := Cloud(failingReads{err: refused}, "SN-1", nil, 0).Reverse(ctx, att); a.Outcome != OutcomeRefused {
		t.Fatalf("the terminal's refusal of a reversal is %s (%s)", a.Outcome, a.Message)
	}
}

// polledAnswer is the provider's cloud whose poll answers raw, read by
// the real client's parser.
type polledAnswer struct {
	CloudAPI
	raw string
}

func (p polledAnswer) Transaction(context.Context, string) (*cloudapi.Transaction, error) {
	return cloudapi.ParseTransaction([]byte(p.raw))
}

// A poll's answer is applied to the attempt only when it is about it: a
// status beside a wrapped transaction is the envelope's; a ko with a
// message that names no transaction of the attempt is an application
// error, not a decline; an answer naming another transaction, or another
// attempt, is never applied. An approval that does not repeat the id
// polled is the transaction polled.
func TestRuleAPollsAnswerIsAppliedOnlyWhenItIsAboutTheAttempt(t *testing.T) {
	ctx := context.Background()
	att := journal.Attempt{UUID: "u1", OrderID: "O1", Kind: journal.KindDebit, Amount: 900, ProviderID: "p1"}
	for raw, want := range map[string]Outcome{
		`{"status":"ok","transaction":{"status":"pending","transactionId":"p1"}}`: OutcomePending,
		`{"status":"ko","message":"Transaction not available yet"}`:               OutcomeIndefinite,
		`{"status":"KO","message":"Service unavailable","transactionId":""}`:      OutcomeIndefinite,
		`{"status":"ko","message":"Card declined","transactionId":"p1"}`:          OutcomeNotCharged,
		`{"status":"ko","message":"Card declined","idempotentUuid":"u1"}`:         OutcomeNotCharged,
		`{"status":"ko","transactionId":"p1","amount":900}`:                       OutcomeNotCharged,
		`{"status":"ko"}`: OutcomeNotCharged,
		`{"status":"ok","transactionId":"p2","amount":900}`:                               OutcomeForeign,
		`{"status":"ko","transactionId":"p2"}`:                                            OutcomeForeign,
		`{"status":"ok","transactionId":"p1","idempotentUuid":"u2","amount":900}`:         OutcomeForeign,
		`{"status":"ok","transactionId":"p1","amount":900,"currencyCode":"EUR"}`:          OutcomeCharged,
		`{"transactionDetails":{"status":"ok","transactionId":"p1","askedAmount":900}}`:   OutcomeCharged,
		`{"status":"ok","amount":900}`:                                                    OutcomeCharged,
		`{"status":"ok","transactionId":"p1","idempotentUuid":"u1","amount":900}`:         OutcomeCharged,
		`{"status":"pending","transactionId":"p1"}`:                                       OutcomePending,
		`{"status":"ok","transactionDetails":{"transactionId":"p1","askedAmount":900}}`:   OutcomeIndefinite,
		`{"status":"ok","data":{"status":"ko","message":"Not found","transactionId":""}}`: OutcomeIndefinite,
	} {
		a := Cloud(polledAnswer{raw: raw}, "SN-1", nil, 0).Follow(ctx, att)
		if a.Outcome != want {
			t.Errorf("%s: %s (%s), want %s", raw, a.Outcome, a.Message, want)
			continue
		}
		if a.Outcome == OutcomeCharged && (a.Charge.TransactionID != "p1" || a.Charge.Amount != 900 || !a.Charge.Approved) {
			t.Errorf("%s: charge %+v", raw, a.Charge)
		}
	}
}
