package payment

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/localapi"
)

// sentAnswer is how the test answers one /payment.
type sentAnswer struct {
	tx  *localapi.Transaction
	err error
}

// scripted is a terminal whose /abort answers are scripted in order (the
// last one repeats), whose /payment is held until the test releases it,
// and which records every request.
type scripted struct {
	mu       sync.Mutex
	aborts   []func() (*localapi.AbortResponse, error)
	payments []chan sentAnswer // one per /payment received, answered by the test
	nAborts  int
	abortsAt []time.Time // when each /abort came
	nHistory int
	history  []localapi.HistoryEntry
	changed  chan struct{}
	ends     []error // why each /payment left unanswered ended: its context's error
}

func newScripted() *scripted { return &scripted{changed: make(chan struct{})} }

// startScripted starts a kiosk debit of order C1 on a scripted terminal
// and waits until its first /payment is out.
func startScripted(t *testing.T, lim Limits) (*env, *scripted, *Handle) {
	t.Helper()
	e := newEnv(t, lim)
	s := newScripted()
	e.restartOn(s, lim)
	h := e.kiosk("C1", 700)
	s.waitFor(t, e.ctx, "the first /payment", func(p, a, hi int) bool { return p == 1 })
	return e, s, h
}

// setAborts scripts the answers to the next /abort requests.
func (s *scripted) setAborts(aborts []func() (*localapi.AbortResponse, error)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.aborts = aborts
}

func (s *scripted) signal() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// waitFor waits until cond holds on the terminal's counts.
func (s *scripted) waitFor(t *testing.T, ctx context.Context, what string, cond func(payments, aborts, history int) bool) {
	t.Helper()
	for {
		s.mu.Lock()
		ok := cond(len(s.payments), s.nAborts, s.nHistory)
		ch := s.changed
		s.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-ch:
		case <-ctx.Done():
			s.mu.Lock()
			defer s.mu.Unlock()
			t.Fatalf("waiting for %s: %d payments, %d aborts, %d history reads", what, len(s.payments), s.nAborts, s.nHistory)
		}
	}
}

func (s *scripted) PaymentBody(ctx context.Context, body []byte) (*localapi.Transaction, error) {
	ch := make(chan sentAnswer, 1)
	s.mu.Lock()
	s.payments = append(s.payments, ch)
	s.signal()
	s.mu.Unlock()
	select {
	case r := <-ch:
		return r.tx, r.err
	case <-ctx.Done():
		s.mu.Lock()
		s.ends = append(s.ends, ctx.Err())
		s.signal()
		s.mu.Unlock()
		return nil, &localapi.TransportError{Endpoint: "/payment", Sent: true, Timeout: true, Err: ctx.Err()}
	}
}

// answer answers the n-th /payment (from 1).
func (s *scripted) answer(n int, tx *localapi.Transaction, err error) {
	s.mu.Lock()
	ch := s.payments[n-1]
	s.mu.Unlock()
	ch <- sentAnswer{tx, err}
}

func (s *scripted) Abort(ctx context.Context, req *localapi.AbortRequest) (*localapi.AbortResponse, error) {
	s.mu.Lock()
	i := min(s.nAborts, len(s.aborts)-1)
	s.nAborts++
	s.abortsAt = append(s.abortsAt, time.Now())
	f := s.aborts[i]
	s.signal()
	s.mu.Unlock()
	return f()
}

func (s *scripted) ReversalBody(ctx context.Context, body []byte) (*localapi.ReversalResponse, error) {
	return nil, &localapi.APIError{Endpoint: "/reversal", Message: "not here", Code: localapi.CodeUnknown}
}

func (s *scripted) Transactions(ctx context.Context, req *localapi.TransactionsRequest) (*localapi.TransactionList, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nHistory++
	s.signal()
	return &localapi.TransactionList{Count: len(s.history), Limit: req.Limit, Total: len(s.history), Transactions: s.history}, nil
}

func (s *scripted) counts() (payments, aborts, history int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.payments), s.nAborts, s.nHistory
}

// Answers to /abort, as the terminal gives them.
func abortOK() (*localapi.AbortResponse, error) {
	return &localapi.AbortResponse{Status: localapi.StatusOK, Raw: []byte(`{"status":"ok"}`)}, nil
}

func abortKO(msg string) func() (*localapi.AbortResponse, error) {
	return func() (*localapi.AbortResponse, error) {
		code, arg := localapi.Classify(msg)
		return nil, &localapi.APIError{Endpoint: "/abort", Message: msg, Code: code, Arg: arg}
	}
}

func abortRefused() (*localapi.AbortResponse, error) {
	return nil, &localapi.TransportError{Endpoint: "/abort", Err: errRefused}
}

func abortHTTP500() (*localapi.AbortResponse, error) {
	return nil, &localapi.HTTPError{Endpoint: "/abort", StatusCode: 500}
}

var errRefused = &net0Error{}

type net0Error struct{}

func (*net0Error) Error() string { return "connection refused" }

func txFor(id string, status string) *localapi.Transaction {
	tx := &localapi.Transaction{Status: status, TransactionID: "tx-" + id[len(id)-6:], Amount: 700, IdempotentUUID: id}
	tx.Raw, _ = json.Marshal(tx)
	return tx
}

// Each row of cancelProtocol, driven: the /abort answer, with the /payment
// still out or not, and what the driver does next. In every row, no
// /payment goes out after the Cancel unless the terminal has shown that it
// knows the attempt.
func TestCancelProtocolRows(t *testing.T) {
	const other = "01a20000-0000-7000-8000-000000000099"
	type row struct {
		name   string
		out    bool // the /payment still out when the answer comes
		aborts []func() (*localapi.AbortResponse, error)
		// then completes the scenario once the driver acted on the first
		// answer, and checks what it did.
		then func(t *testing.T, e *env, s *scripted, h *Handle)
		want journal.State
	}
	noResend := func(t *testing.T, s *scripted) {
		t.Helper()
		if p, _, _ := s.counts(); p != 1 {
			t.Fatalf("%d /payment requests: the cancelled attempt was sent again", p)
		}
	}
	rows := []row{
		{"ok, payment out: its ko answer confirms", true, list(abortOK), func(t *testing.T, e *env, s *scripted, h *Handle) {
			s.answer(1, txFor(h.UUID(), localapi.StatusKO), nil)
		}, journal.StateCancelled},
		{"ok, payment out: no answer within the grace", true, list(abortOK), func(t *testing.T, e *env, s *scripted, h *Handle) {
			noResend(t, s)
		}, journal.StateCancelled},
		{"ok, none out: cancelled", false, list(abortOK), func(t *testing.T, e *env, s *scripted, h *Handle) {
			noResend(t, s)
		}, journal.StateCancelled},
		{"not possible, payment out: its answer decides", true, list(abortKO(localapi.MsgAbortNotPossible)), func(t *testing.T, e *env, s *scripted, h *Handle) {
			s.answer(1, txFor(h.UUID(), localapi.StatusOK), nil)
		}, journal.StateApproved},
		{"not possible, none out: asked again, it replays", false, list(abortKO(localapi.MsgAbortNotPossible)), func(t *testing.T, e *env, s *scripted, h *Handle) {
			s.waitFor(t, e.ctx, "the resend", func(p, a, hi int) bool { return p == 2 })
			s.answer(2, txFor(h.UUID(), localapi.StatusOK), nil)
		}, journal.StateApproved},
		{"nothing, payment out: abort again", true, list(abortKO(localapi.MsgNothingToAbort), abortOK), func(t *testing.T, e *env, s *scripted, h *Handle) {
			s.waitFor(t, e.ctx, "a second abort", func(p, a, hi int) bool { return a >= 2 })
			s.answer(1, txFor(h.UUID(), localapi.StatusKO), nil)
		}, journal.StateCancelled},
		{"nothing, none out: the history decides", false, list(abortKO(localapi.MsgNothingToAbort)), func(t *testing.T, e *env, s *scripted, h *Handle) {
			s.waitFor(t, e.ctx, "the history", func(p, a, hi int) bool { return hi >= 1 })
			noResend(t, s)
		}, journal.StateCancelled},
		{"busy with another, payment out: abort again", true, list(abortKO(localapi.BusyMessage(other)), abortOK), func(t *testing.T, e *env, s *scripted, h *Handle) {
			s.waitFor(t, e.ctx, "a second abort", func(p, a, hi int) bool { return a >= 2 })
			s.answer(1, nil, &localapi.APIError{Endpoint: "/payment", Message: localapi.BusyMessage(other), Code: localapi.CodeBusy, Arg: other})
		}, journal.StateCancelled},
		{"busy with another, none out: the history decides", false, list(abortKO(localapi.BusyMessage(other))), func(t *testing.T, e *env, s *scripted, h *Handle) {
			s.waitFor(t, e.ctx, "the history", func(p, a, hi int) bool { return hi >= 1 })
			noResend(t, s)
		}, journal.StateCancelled},
		{"keypad payment, none out: the history decides", false, list(abortKO(localapi.MsgAbortNotAllowed)), func(t *testing.T, e *env, s *scripted, h *Handle) {
			noResend(t, s)
		}, journal.StateCancelled},
		// "Already in progress" naming this very attempt: the terminal may
		// name the uuid it was given, not the one it runs. Read like another
		// payment holding the terminal: nothing known, no resend.
		{"busy naming this one, payment out: abort again", true, nil, func(t *testing.T, e *env, s *scripted, h *Handle) {
			s.waitFor(t, e.ctx, "a second abort", func(p, a, hi int) bool { return a >= 2 })
			s.answer(1, txFor(h.UUID(), localapi.StatusKO), nil)
		}, journal.StateCancelled},
		{"busy naming this one, none out: the history decides", false, nil, func(t *testing.T, e *env, s *scripted, h *Handle) {
			s.waitFor(t, e.ctx, "the history", func(p, a, hi int) bool { return hi >= 1 })
			noResend(t, s)
		}, journal.StateCancelled},
		{"unreachable, payment out: abort again", true, list(abortRefused, abortKO(localapi.MsgAbortNotPossible)), func(t *testing.T, e *env, s *scripted, h *Handle) {
			s.waitFor(t, e.ctx, "a second abort", func(p, a, hi int) bool { return a >= 2 })
			s.answer(1, txFor(h.UUID(), localapi.StatusOK), nil)
		}, journal.StateApproved},
		{"unreachable, none out: abort again until it answers", false, list(abortRefused, abortRefused, abortKO(localapi.MsgNothingToAbort)), func(t *testing.T, e *env, s *scripted, h *Handle) {
			s.waitFor(t, e.ctx, "the history", func(p, a, hi int) bool { return a >= 3 && hi >= 1 })
			noResend(t, s)
		}, journal.StateCancelled},
		{"HTTP 500, payment out: abort again", true, list(abortHTTP500, abortOK), func(t *testing.T, e *env, s *scripted, h *Handle) {
			s.waitFor(t, e.ctx, "a second abort", func(p, a, hi int) bool { return a >= 2 })
			s.answer(1, txFor(h.UUID(), localapi.StatusKO), nil)
		}, journal.StateCancelled},
		{"HTTP 500, none out: abort again", false, list(abortHTTP500, abortKO(localapi.AbortInternalMessage("boom")), abortOK), func(t *testing.T, e *env, s *scripted, h *Handle) {
			s.waitFor(t, e.ctx, "a third abort", func(p, a, hi int) bool { return a >= 3 })
			noResend(t, s)
		}, journal.StateCancelled},
	}
	for _, tt := range rows {
		t.Run(tt.name, func(t *testing.T) {
			lim := testLimits
			lim.AbortGrace = 50 * time.Millisecond
			lim.SettleAfter = 0         // the history is complete at once (TestRuleCancelWaitsForACompleteHistory)
			lim.ResendPause = time.Hour // a resend waits: "none out" stays true until the test says
			if tt.out {
				lim.ResendPause = 5 * time.Millisecond
			}
			e, s, h := startScripted(t, lim)
			aborts := tt.aborts
			if aborts == nil { // the rows about this very attempt
				aborts = list(abortKO(localapi.BusyMessage(h.UUID())), abortOK)
			}
			s.setAborts(aborts)
			if !tt.out {
				// The first send fails before the terminal registers it: no
				// /payment is out when the customer cancels.
				s.answer(1, nil, &localapi.HTTPError{Endpoint: "/payment", StatusCode: 500})
				waitView(t, e, h, func(v View) bool { return v.SendCount == 1 && len(e.eventsOf(h.UUID())) >= 3 })
			}
			h.Cancel()
			s.waitFor(t, e.ctx, "the first abort", func(p, a, hi int) bool { return a >= 1 })
			tt.then(t, e, s, h)
			v := e.wait(h)
			if v.State != tt.want {
				t.Fatalf("state %s (%s), want %s", v.State, v.Message, tt.want)
			}
			if got := e.attempt(h.UUID()).State; got != tt.want {
				t.Fatalf("journal says %s, want %s", got, tt.want)
			}
		})
	}
}

func list(fs ...func() (*localapi.AbortResponse, error)) []func() (*localapi.AbortResponse, error) {
	return fs
}

// waitView waits until the attempt's view satisfies cond.
func waitView(t *testing.T, e *env, h *Handle, cond func(View) bool) {
	t.Helper()
	for !cond(h.View()) {
		select {
		case <-h.Done():
			if !cond(h.View()) {
				t.Fatalf("attempt ended as %+v", h.View())
			}
			return
		case <-e.ctx.Done():
			t.Fatalf("view never reached: %+v", h.View())
		case <-time.After(time.Millisecond):
		}
	}
}
