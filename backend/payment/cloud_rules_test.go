package payment

import (
	"context"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/cloudapi"
	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/localapi"
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

// A status in a provider's history is approved only when it is ok, not
// charged only when it is ko or plainly says the transaction failed, was
// refused, cancelled or expired (whatever its case); any other word, or
// none, is undetermined: pending, never declined.
func TestRuleAHistoryStatusNobodyListedIsUndeterminedNeverDeclined(t *testing.T) {
	for _, tc := range []struct {
		statuses          []string
		approved, pending bool
	}{
		{[]string{"ok", "OK", " Ok "}, true, false},
		{[]string{"ko", "KO", "failed", "Refused", "declined", "rejected", "cancelled", "canceled", "EXPIRED", "aborted", "not_possible"}, false, false},
		{[]string{"pending", "in_progress", "IN_PROGRESS", "processing", "success", "authorised", "error", "unknown", "okay", ""}, false, true},
	} {
		for _, s := range tc.statuses {
			if approved, pending := HistoryStatus(s); approved != tc.approved || pending != tc.pending {
				t.Errorf("%q: approved %v pending %v, want %v %v", s, approved, pending, tc.approved, tc.pending)
			}
		}
	}
	// The cloud's lookup reads it so.
	a := lookupAttempt(journal.KindDebit, 900)
	for status, w := range map[string]want{
		"in_progress": {verdict: InHistory, tx: "T1", pending: true},
		"":            {verdict: InHistory, tx: "T1", pending: true},
		"Declined":    {verdict: InHistory, tx: "T1"},
		"OK":          {verdict: InHistory, tx: "T1", approved: true},
	} {
		h := &historyCloud{entries: []cloudapi.HistoryEntry{{TransactionID: "T1", Status: status, Type: "debit", Amount: 900,
			CartID: "O1", IdempotentUUID: a.UUID}}}
		m, err := Cloud(h, "SN-1", nil, 0).Lookup(context.Background(), a, time.Now().Add(-time.Hour), heldBy())
		w.check(t, m, err)
	}
}

// A cloud payment past its client timeout whose history lists it under a
// status nobody listed (in_progress) is not declined: it is followed, and
// the terminal's approval, when it comes, is taken.
func TestCloudAHistoryStatusNobodyListedKeepsThePaymentFollowed(t *testing.T) {
	lim := testLimits
	lim.KioskTimeout, lim.SettleAfter = 100*time.Millisecond, 50*time.Millisecond
	f := &fakeCloud{listedAs: "in_progress"}
	e := cloudEnv(t, f, lim)
	h := e.kiosk("H1", 900)
	waitView(t, e, h, func(View) bool { f.mu.Lock(); defer f.mu.Unlock(); return f.lists >= 2 })
	if v := h.View(); v.Final() {
		t.Fatalf("ended on a status nobody listed: %+v", v)
	}
	f.set(func() { f.txs[0].status = cloudapi.StatusOK })
	if v := e.wait(h); v.State != journal.StateApproved || !v.OrderPaid {
		t.Fatalf("view %+v", v)
	}
}

// unclearReversal is a polled channel whose reversals get no usable
// answer: the history decides them.
type unclearReversal struct{ *polling }

func (u unclearReversal) Reverse(context.Context, journal.Attempt) Answer {
	return Answer{Outcome: OutcomeIndefinite, Message: "HTTP 502"}
}

// A reversal whose answer was unclear, and that the history lists as not
// ended (or under a status nobody listed), is neither made nor refused:
// the history is read again until it says, never "not reversed" at once.
func TestRuleAReversalTheHistoryListsAsRunningIsLookedUpAgain(t *testing.T) {
	p := &polling{send: func(int) Answer { return ack("cloud-1") }, poll: func(int) Answer { return paid("cloud-1", 900) }}
	e := channelEnv(t, unclearReversal{p}, "SN-1", testLimits)
	debit := e.wait(e.kiosk("V1", 900))
	if debit.State != journal.StateApproved {
		t.Fatalf("debit %+v", debit)
	}
	p.mu.Lock()
	p.lookup = func(n int) (Match, error) {
		m := Match{Verdict: InHistory, Candidates: 1, Pending: n < 3, Charge: Charge{TransactionID: "rv-1", Amount: 900}}
		m.Charge.Approved = !m.Pending
		return m, nil
	}
	p.mu.Unlock()
	v, err := e.o.Reverse(e.ctx, debit.UUID)
	if err != nil {
		t.Fatal(err)
	}
	if v.State != journal.StateApproved || v.TransactionID != "rv-1" {
		t.Fatalf("reversal %+v", v)
	}
	if _, _, _, lookups := p.counts(); lookups < 3 {
		t.Fatalf("%d lookups", lookups)
	}
}

// A history's type is read whatever its case, and a type that names no
// kind (na, payment, none) may be the attempt's: it is a candidate, never
// a reason to say that nothing was charged; only a type that plainly
// names another kind (a debit, a refund or credit, a reversal) rules a
// transaction out. A candidate names the attempt only when its type names
// the attempt's kind. The same rule serves the LAN's history and the
// cloud's.
func TestRuleAHistoryTypeIsReadInAnyCaseAndOneNamingNoKindMayBeTheAttempt(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		kind   journal.Kind
		listed string
		want   Verdict
	}{
		{journal.KindDebit, "debit", InHistory},
		{journal.KindDebit, "DEBIT", InHistory},
		{journal.KindDebit, " Debit ", InHistory},
		{journal.KindDebit, "na", AmbiguousHistory},
		{journal.KindDebit, "payment", AmbiguousHistory},
		{journal.KindDebit, "", AmbiguousHistory},
		{journal.KindDebit, "refund", NotInHistory},
		{journal.KindDebit, "Credit", NotInHistory},
		{journal.KindDebit, "REVERSAL", NotInHistory},
		{journal.KindRefund, "REFUND", InHistory},
		{journal.KindRefund, "credit", InHistory},
		{journal.KindRefund, "na", AmbiguousHistory},
		{journal.KindRefund, "debit", NotInHistory},
		{journal.KindReversal, "Reversal", InHistory},
		{journal.KindReversal, "NA", AmbiguousHistory},
		{journal.KindReversal, "DEBIT", NotInHistory},
		{journal.KindReversal, "refund", NotInHistory},
	} {
		a := journal.Attempt{UUID: "u1", OrderID: "O1", Kind: tc.kind, Amount: 900}
		entries := []seen{{transactionID: "T1", kind: tc.listed, cartID: "O1", amount: 900}}
		m, i, err := findInHistory(ctx, a, entries, heldBy(), func(s seen) seen { return s })
		if err != nil || m.Verdict != tc.want || (tc.want == InHistory) != (i == 0) {
			t.Errorf("a %s listed as %q: %s (entry %d), want verdict %d", tc.kind, tc.listed, m, i, tc.want)
		}
	}
	// The cloud's lookup reads a debit listed in capitals as the debit.
	a := lookupAttempt(journal.KindDebit, 900)
	h := &historyCloud{entries: []cloudapi.HistoryEntry{{TransactionID: "T1", Status: "ok", TransactionType: "DEBIT", Amount: 900, CartID: "O1"}}}
	m, err := Cloud(h, "SN-1", nil, 0).Lookup(ctx, a, time.Now().Add(-time.Hour), heldBy())
	want{verdict: InHistory, tx: "T1", approved: true}.check(t, m, err)
}

// reachedReversal is a polled channel whose reversals the cloud answers
// ok without naming the reversal (the v4 form's ok: the request reached
// the terminal), read by the cloud channel itself.
type reachedReversal struct {
	*polling
	sent *[]time.Time
}

func (r reachedReversal) Reverse(ctx context.Context, a journal.Attempt) Answer {
	*r.sent = append(*r.sent, time.Now())
	ok := &cloudapi.ReversalResponse{Status: "ok", InitialTransactionID: "cloud-1", Raw: []byte(`{"status":"ok"}`)}
	return Cloud(reversingCloud{resp: ok}, "SN-1", nil, 0).Reverse(ctx, a)
}

// An ok to a reversal that names no reversal transaction (on the cloud's
// v4 form it may only mean that the request reached the terminal) is not
// taken as a reversal made: the history decides, read after a pause, and
// the reversal is journaled with the transaction the history names. An ok
// naming its reversal, or the terminal's "already reversed", stays done.
func TestRuleAReversalOkWithoutItsTransactionIsLeftToTheHistory(t *testing.T) {
	a := journal.Attempt{UUID: "r1", Amount: 900}
	for name, ch := range map[string]Channel{
		"cloud": Cloud(reversingCloud{resp: &cloudapi.ReversalResponse{Status: "ok", Raw: []byte(`{"status":"ok"}`)}}, "SN-1", nil, 0),
		"local": Local(reversingTerminal{resp: &localapi.ReversalResponse{Status: "ok", Raw: []byte(`{"status":"ok"}`)}}, nil, 0),
	} {
		if got := ch.Reverse(context.Background(), a); got.Outcome != OutcomeIndefinite {
			t.Errorf("%s: an ok naming no reversal is %s", name, got.Outcome)
		}
	}
	p := &polling{send: func(int) Answer { return ack("cloud-1") }, poll: func(int) Answer { return paid("cloud-1", 900) }}
	var sent []time.Time
	var looked time.Time
	lim := testLimits
	lim.ResendPause = 50 * time.Millisecond
	e := channelEnv(t, reachedReversal{p, &sent}, "SN-1", lim)
	debit := e.wait(e.kiosk("V2", 900))
	if debit.State != journal.StateApproved {
		t.Fatalf("debit %+v", debit)
	}
	p.mu.Lock()
	p.lookup = func(n int) (Match, error) {
		if n == 1 {
			looked = time.Now()
		}
		if n < 2 {
			return Match{Verdict: NotInHistory}, nil
		}
		return Match{Verdict: InHistory, Candidates: 1, Charge: Charge{TransactionID: "rv-9", Amount: 900, Approved: true}}, nil
	}
	p.mu.Unlock()
	v, err := e.o.Reverse(e.ctx, debit.UUID)
	if err != nil {
		t.Fatal(err)
	}
	if v.State != journal.StateApproved || v.TransactionID != "rv-9" || len(sent) != 2 {
		t.Fatalf("reversal %+v, sent %d times", v, len(sent))
	}
	if gap := looked.Sub(sent[0]); gap < lim.ResendPause {
		t.Fatalf("the history was read %s after the unclear answer, before the pause (%s)", gap, lim.ResendPause)
	}
}
