package payment

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/localapi"
)

// "A transaction with the given idempotentUuid is already in progress"
// names a uuid in backticks; the specification does not say whether it is
// the one the request gave or the one running. Naming this very attempt on
// its first send, it cannot be this attempt running (nothing was sent
// before): another payment holds the terminal, and nothing was charged.
func TestRuleBusyNamingThisAttemptOnItsFirstSendFails(t *testing.T) {
	e := newEnv(t, testLimits)
	var calls atomic.Int32
	e.restartOn(paying(func(_ context.Context, _ []byte, req localapi.PaymentRequest) (*localapi.Transaction, error) {
		calls.Add(1)
		msg := localapi.BusyMessage(req.IdempotentUUID)
		return nil, &localapi.APIError{Endpoint: "/payment", Code: localapi.CodeBusy, Arg: req.IdempotentUUID, Message: msg}
	}), testLimits)
	v := e.wait(e.kiosk("BZ1", 100))
	if v.State != journal.StateFailed || !strings.Contains(v.Message, "busy") || calls.Load() != 1 {
		t.Fatalf("view %+v after %d sends", v, calls.Load())
	}
}

// After the customer's Cancel, when the terminal said that nothing runs
// and no /payment is out, the history decides; but a payment the last
// request started may have ended moments ago and not be listed yet. An
// absence says "nothing was charged" only once the history is complete
// (SettleAfter after the last send); until then it is read again, and no
// /payment goes out.
func TestRuleCancelWaitsForACompleteHistory(t *testing.T) {
	lim := testLimits
	lim.SettleAfter = 30 * time.Second // complete long after the second read
	lim.ResendPause = time.Hour        // no resend unless the rule allowed one
	e, s, h := startScripted(t, lim)
	s.setAborts(list(abortKO(localapi.MsgNothingToAbort)))
	// The approval's answer is lost: no /payment is out when the customer
	// cancels.
	s.answer(1, nil, &localapi.HTTPError{Endpoint: "/payment", StatusCode: 500})
	waitView(t, e, h, func(v View) bool { return v.SendCount == 1 && len(e.eventsOf(h.UUID())) >= 3 })
	h.Cancel()
	s.waitFor(t, e.ctx, "the first history read", func(p, a, hi int) bool { return hi >= 1 })
	// The terminal lists it only now.
	s.mu.Lock()
	s.history = append(s.history, localapi.HistoryEntry{Status: localapi.StatusOK, TransactionID: "T-late", Amount: 700,
		CurrencyCode: "EUR", Type: "debit", CartID: "C1", CreatedAt: time.Now().UTC().Format(time.RFC3339)})
	s.mu.Unlock()
	v := e.wait(h)
	if v.State != journal.StateApproved || !v.ChargedDespiteCancel {
		t.Fatalf("view %+v: the charge listed late was not found", v)
	}
	if p, _, hi := s.counts(); p != 1 || hi < 2 {
		t.Fatalf("%d /payment requests, %d history reads", p, hi)
	}
}

// A /payment answer that names another attempt's uuid is never applied to
// this one (invariant 4); one that names this attempt, or none (the
// specification's rule 7: keys whose value is null are left out), is the
// answer to this request.
func TestRuleALocalAnswerWithoutTheEchoIsThisAttempts(t *testing.T) {
	const id = "01a20000-0000-7000-8000-0000000000aa"
	for echo, want := range map[string]Outcome{
		"01a20000-0000-7000-8000-0000000000bb": OutcomeForeign,
		id:                                     OutcomeCharged,
		"":                                     OutcomeCharged,
	} {
		tx := &localapi.Transaction{Status: localapi.StatusOK, TransactionID: "T1", Amount: 500, IdempotentUUID: echo}
		if got := localAnswer(id, tx, nil); got.Outcome != want {
			t.Errorf("an answer echoing %q: %s, want %s", echo, got.Outcome, want)
		}
	}
}

// afterATimeout runs a kiosk payment whose first send times out, whose
// resend gets second's refusal, and any later send an approval; it returns
// the attempt's final view and the number of sends.
func afterATimeout(t *testing.T, second func(req localapi.PaymentRequest) error) (View, int32) {
	t.Helper()
	e := newEnv(t, testLimits)
	var calls atomic.Int32
	e.restartOn(paying(func(_ context.Context, _ []byte, req localapi.PaymentRequest) (*localapi.Transaction, error) {
		switch calls.Add(1) {
		case 1:
			return nil, &localapi.TransportError{Endpoint: "/payment", Sent: true, Timeout: true, Err: context.DeadlineExceeded}
		case 2:
			return nil, second(req)
		}
		return &localapi.Transaction{Status: "ok", TransactionID: "T", Amount: req.Amount, IdempotentUUID: req.IdempotentUUID, Raw: []byte(`{}`)}, nil
	}), testLimits)
	v := e.wait(e.kiosk("RS1", 100))
	return v, calls.Load()
}

// A ko with a message is an application error, and a refusal of a resend
// proves nothing about the first send; but a ko that is the terminal's own
// record of this attempt (its transaction, naming this uuid) is final for
// the uuid: the terminal replays it as is to every resend, so it ends the
// attempt instead of being asked again until the request-open limit.
func TestRuleTheTerminalsKoRecordOfThisAttemptEndsItOnAResend(t *testing.T) {
	for _, tc := range []struct {
		name  string
		txID  string // the refusal's transactionId
		other bool   // the refusal names another uuid
		want  journal.State
		sends int32
	}{
		{"its transaction", "T9", false, journal.StateDeclined, 2},
		{"no transaction named: asked again", "", false, journal.StateApproved, 3},
		{"another attempt's transaction: asked again", "T9", true, journal.StateApproved, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, sends := afterATimeout(t, func(req localapi.PaymentRequest) error {
				echo := req.IdempotentUUID
				if tc.other {
					echo = "01a20000-0000-7000-8000-0000000000bb"
				}
				raw, _ := json.Marshal(map[string]any{"status": "ko", "message": "Transaction aborted",
					"idempotentUuid": echo, "transactionId": tc.txID})
				return &localapi.APIError{Endpoint: "/payment", Message: "Transaction aborted", Code: localapi.CodeUnknown, Raw: raw}
			})
			if v.State != tc.want || sends != tc.sends {
				t.Fatalf("view %+v after %d sends", v, sends)
			}
		})
	}
}

// The terminal's history is read like the cloud's: "ok" in any case is a
// charge, a word that plainly says it failed is none, and any other (one
// the specification does not list, or none) leaves it undetermined, never
// "not charged".
func TestRuleTheTerminalsHistoryStatusIsReadLikeTheClouds(t *testing.T) {
	a := lookupAttempt(journal.KindDebit, 900)
	a.Channel = journal.ChannelLocal
	for status, w := range map[string]want{
		"in_progress": {verdict: InHistory, tx: "T1", pending: true},
		"":            {verdict: InHistory, tx: "T1", pending: true},
		"KO":          {verdict: InHistory, tx: "T1"},
		"OK":          {verdict: InHistory, tx: "T1", approved: true},
	} {
		term := &fakeTerminal{transactions: func(context.Context, *localapi.TransactionsRequest) (*localapi.TransactionList, error) {
			return &localapi.TransactionList{Count: 1, Total: 1, Transactions: []localapi.HistoryEntry{{TransactionID: "T1", Status: status,
				Type: "debit", Amount: 900, CurrencyCode: "EUR", CartID: "O1", CreatedAt: time.Now().UTC().Format(time.RFC3339)}}}, nil
		}}
		m, err := Local(term, nil, 0).Lookup(context.Background(), a, time.Now().Add(-time.Hour), heldBy())
		w.check(t, m, err)
	}
}

// A terminal whose clock is behind ours dates its transactions earlier
// than our send: with the default limits, one 40 minutes behind still
// shows the attempt's charge to a lookup.
func TestRuleALookupFindsTheChargeOfATerminalWhoseClockIsBehind(t *testing.T) {
	e := newEnv(t, DefaultLimits)
	sent := time.Now().UTC()
	term := &fakeTerminal{transactions: func(context.Context, *localapi.TransactionsRequest) (*localapi.TransactionList, error) {
		return &localapi.TransactionList{Count: 1, Total: 1, Transactions: []localapi.HistoryEntry{{TransactionID: "T-late-clock",
			Status: localapi.StatusOK, Type: "debit", Amount: 900, CurrencyCode: "EUR", CartID: "O1",
			CreatedAt: sent.Add(-40 * time.Minute).Format(time.RFC3339)}}}, nil
	}}
	a := lookupAttempt(journal.KindDebit, 900)
	a.Channel, a.FirstSentAt = journal.ChannelLocal, sent
	m, err := e.o.lookup(e.ctx, Local(term, nil, 0), a)
	want{verdict: InHistory, tx: "T-late-clock", approved: true}.check(t, m, err)
}

// On the first send, a ko with a message is a refusal, even when it is the
// terminal's record of this attempt: nothing was sent before it, so it is
// this request's answer, failed (an application error), not a decline.
func TestRuleTheTerminalsKoRecordOnTheFirstSendIsARefusal(t *testing.T) {
	e := newEnv(t, testLimits)
	var calls atomic.Int32
	e.restartOn(paying(func(_ context.Context, _ []byte, req localapi.PaymentRequest) (*localapi.Transaction, error) {
		calls.Add(1)
		raw, _ := json.Marshal(map[string]any{"status": "ko", "message": "Transaction aborted",
			"idempotentUuid": req.IdempotentUUID, "transactionId": "T9"})
		return nil, &localapi.APIError{Endpoint: "/payment", Message: "Transaction aborted", Code: localapi.CodeUnknown, Raw: raw}
	}), testLimits)
	v := e.wait(e.kiosk("KO2", 100))
	if v.State != journal.StateFailed || calls.Load() != 1 {
		t.Fatalf("view %+v after %d sends", v, calls.Load())
	}
}
