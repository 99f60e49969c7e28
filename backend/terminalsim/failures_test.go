package terminalsim

import (
	"testing"

	"github.com/comptoir-pos/comptoir/backend/localapi"
)

func ledgerKinds(sim *Terminal, kind string) int {
	n := 0
	for _, e := range sim.Ledger() {
		if e.Kind == kind {
			n++
		}
	}
	return n
}

// A reversal's answer can be lost, or turned into HTTP 500, after the
// reversal is made or before; the terminal still reverses a transaction
// once.
func TestReversalAnswersThatDoNotArrive(t *testing.T) {
	for _, tt := range []struct {
		how  Answer
		made bool
	}{
		{AnswerLost, true},
		{AnswerHTTP500, true},
		{AnswerHTTP500NotStarted, false},
	} {
		t.Run(string(tt.how), func(t *testing.T) {
			sim, c := newSim(t, Config{})
			ctx := testCtx(t)
			debit := pay(t, ctx, sim, c, Approve(), &localapi.PaymentRequest{Amount: 1000, CartID: "o-1"})
			if err := sim.FailNextReversalAnswers(tt.how); err != nil {
				t.Fatal(err)
			}
			req := &localapi.ReversalRequest{InitialTransactionID: debit.TransactionID, Amount: 1000}
			_, err := c.Reversal(ctx, req)
			if !localapi.IsTransport(err) {
				t.Fatalf("answer %s: err = %v, want a transport-level error", tt.how, err)
			}
			if got := ledgerKinds(sim, "reversal"); got != map[bool]int{true: 1, false: 0}[tt.made] {
				t.Fatalf("%d reversals in the ledger", got)
			}
			_, err = c.Reversal(ctx, req)
			if tt.made {
				mustCode(t, err, localapi.CodeReversalAlready, localapi.MsgReversalAlreadyReversed)
			} else if err != nil {
				t.Fatalf("second reversal: %v", err)
			}
			if got := ledgerKinds(sim, "reversal"); got != 1 {
				t.Fatalf("%d reversals in the ledger after asking again", got)
			}
		})
	}
	sim, _ := newSim(t, Config{})
	if err := sim.FailNextReversalAnswers(AnswerLate); err == nil {
		t.Fatal("a late reversal answer was accepted")
	}
}

// An abort's answer can fail too: before the terminal acts on it (the
// payment goes on), or after (the payment is stopped, the answer lost).
func TestAbortAnswersThatDoNotArrive(t *testing.T) {
	for _, tt := range []struct {
		how     Answer
		stopped bool
	}{
		{AnswerHTTP500NotStarted, false},
		{AnswerHTTP500, true},
		{AnswerLost, true},
	} {
		t.Run(string(tt.how), func(t *testing.T) {
			sim, c := newSim(t, Config{})
			ctx := testCtx(t)
			id, res := payIn(t, ctx, sim, c, HoldBeforeHandover(), 1000, PhasePreparing)
			if err := sim.FailNextAbortAnswers(tt.how); err != nil {
				t.Fatal(err)
			}
			_, err := c.Abort(ctx, &localapi.AbortRequest{IdempotentUUID: id})
			if !localapi.IsTransport(err) {
				t.Fatalf("err = %v, want a transport-level error", err)
			}
			if !tt.stopped {
				if _, running := sim.Current(); !running {
					t.Fatal("the payment stopped on an abort the terminal never acted on")
				}
				if _, err := c.Abort(ctx, &localapi.AbortRequest{IdempotentUUID: id}); err != nil {
					t.Fatalf("the next abort: %v", err)
				}
			}
			mustDeclined(t, wait(t, ctx, res))
			if len(sim.Ledger()) != 0 {
				t.Fatalf("charged: %+v", sim.Ledger())
			}
		})
	}
}

// The control API queues the same failures, and refuses what does not apply.
func TestScriptAnswersByControl(t *testing.T) {
	sim, _ := newSim(t, Config{})
	if code := control(t, sim, "POST", "/sim/script", `{"abortAnswers":["lost"],"reversalAnswers":["http500","normal"]}`, nil); code != 200 {
		t.Fatalf("script: HTTP %d", code)
	}
	sim.mu.Lock()
	abortAns, revAns := append([]Answer(nil), sim.abortAns...), append([]Answer(nil), sim.revAns...)
	sim.mu.Unlock()
	if len(abortAns) != 1 || abortAns[0] != AnswerLost || len(revAns) != 2 || revAns[0] != AnswerHTTP500 {
		t.Fatalf("queued aborts %v, reversals %v", abortAns, revAns)
	}
	if code := control(t, sim, "POST", "/sim/script", `{"abortAnswers":["late"]}`, nil); code != 400 {
		t.Fatalf("a late abort answer: HTTP %d", code)
	}
	sim.Reset()
	sim.mu.Lock()
	defer sim.mu.Unlock()
	if len(sim.abortAns)+len(sim.revAns) != 0 {
		t.Fatal("reset kept the queued answers")
	}
}
