package payment

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/localapi"
	"github.com/comptoir-pos/comptoir/backend/terminalsim"
)

// The cancel protocol's guards: one cancel on its way at a time, its
// backoff kept, nothing sent while the terminal's own answer is awaited,
// and a definite cancel answer heard even after the request-open limit.

// held is an /abort answer the terminal holds until the test releases it.
func held(release <-chan struct{}, answer func() (*localapi.AbortResponse, error)) func() (*localapi.AbortResponse, error) {
	return func() (*localapi.AbortResponse, error) {
		<-release
		return answer()
	}
}

// eventSaying waits until the attempt's journal has an event whose detail
// contains text.
func (e *env) eventSaying(h *Handle, text string) {
	e.t.Helper()
	for {
		for _, ev := range e.eventsOf(h.UUID()) {
			if strings.Contains(ev.Detail, text) {
				return
			}
		}
		select {
		case <-e.ctx.Done():
			e.t.Fatalf("no event saying %q: %+v", text, e.eventsOf(h.UUID()))
		case <-time.After(time.Millisecond):
		}
	}
}

// The request-open limit ends while the customer's cancel is on its way:
// the terminal's answer to it is awaited, and when it says it stopped the
// payment (with no /payment out any more), the attempt is cancelled, not
// left unknown for staff.
func TestRuleACancelOnItsWayIsHeardBeforeTheLimitEndsTheAttempt(t *testing.T) {
	lim := testLimits
	lim.RequestOpen = 300 * time.Millisecond // the /payment's own timeout is cut to it
	e, s, h := startScripted(t, lim)
	release := make(chan struct{})
	defer func() {
		select {
		case <-release:
		default:
			close(release)
		}
	}()
	s.setAborts(list(held(release, abortOK)))
	h.Cancel()
	s.waitFor(t, e.ctx, "the abort", func(p, a, hi int) bool { return a == 1 })
	// The /payment ends at the limit, unanswered: nothing may be sent
	// again (the terminal never showed it knows the attempt), the cancel
	// is out.
	e.eventSaying(h, "client timeout")
	close(release)
	if v := e.wait(h); v.State != journal.StateCancelled {
		t.Fatalf("state %s (%s): the terminal said it stopped the payment", v.State, v.Message)
	}
	if _, a, _ := s.counts(); a != 1 {
		t.Fatalf("%d /abort requests: one was on its way", a)
	}
}

// After an /abort answer that asks for another one (nothing runs while the
// /payment is out), the next /abort waits its backoff, even when the
// /payment's answer comes meanwhile and nothing may be sent again.
func TestRuleTheNextCancelWaitsItsBackoff(t *testing.T) {
	lim := testLimits
	lim.AbortRetryPause, lim.AbortRetryMax = 400*time.Millisecond, 400*time.Millisecond
	e, s, h := startScripted(t, lim)
	s.setAborts(list(abortKO(localapi.MsgNothingToAbort), abortOK))
	h.Cancel()
	waitView(t, e, h, func(v View) bool { return v.Abort == AbortNothing })
	s.answer(1, nil, &localapi.HTTPError{Endpoint: "/payment", StatusCode: 500})
	if v := e.wait(h); v.State != journal.StateCancelled {
		t.Fatalf("state %s (%s)", v.State, v.Message)
	}
	s.mu.Lock()
	at := append([]time.Time(nil), s.abortsAt...)
	s.mu.Unlock()
	if len(at) != 2 {
		t.Fatalf("%d /abort requests, want 2", len(at))
	}
	if gap := at[1].Sub(at[0]); gap < lim.AbortRetryPause {
		t.Fatalf("the second /abort went %s after the first: its backoff is %s", gap, lim.AbortRetryPause)
	}
}

// Once the terminal said it stopped the payment while the /payment was
// out, only that /payment's answer or the end of the grace decide: an
// unusable /payment answer meanwhile sends no other /abort.
func TestRuleAfterTheTerminalStoppedItNoOtherCancelIsSent(t *testing.T) {
	lim := testLimits
	lim.AbortGrace = 200 * time.Millisecond
	e, s, h := startScripted(t, lim)
	s.setAborts(list(abortOK))
	h.Cancel()
	waitView(t, e, h, func(v View) bool { return v.Abort == AbortOK })
	s.answer(1, nil, &localapi.HTTPError{Endpoint: "/payment", StatusCode: 500})
	if v := e.wait(h); v.State != journal.StateCancelled {
		t.Fatalf("state %s (%s)", v.State, v.Message)
	}
	if p, a, _ := s.counts(); p != 1 || a != 1 {
		t.Fatalf("%d /payment and %d /abort requests, want one of each", p, a)
	}
}

// When the grace after the terminal's "stopped" ends without the
// /payment's answer, that request is closed then, not left open on the
// terminal until its client timeout.
func TestRuleWhenTheGraceEndsTheRequestStillOutIsClosed(t *testing.T) {
	lim := testLimits
	lim.AbortGrace = 50 * time.Millisecond
	lim.KioskTimeout = time.Minute
	e, s, h := startScripted(t, lim)
	s.setAborts(list(abortOK))
	h.Cancel()
	if v := e.wait(h); v.State != journal.StateCancelled {
		t.Fatalf("state %s (%s)", v.State, v.Message)
	}
	for {
		s.mu.Lock()
		ends, ch := append([]error(nil), s.ends...), s.changed
		s.mu.Unlock()
		if len(ends) > 0 {
			if ends[0] != context.Canceled {
				t.Fatalf("the /payment ended with %v, want closed by Comptoir", ends[0])
			}
			return
		}
		select {
		case <-ch:
		case <-e.ctx.Done():
			t.Fatal("the /payment still out after the grace was never closed")
		}
	}
}

// levelLog records the orchestrator's log lines from a level up.
type levelLog struct {
	min   slog.Level
	mu    sync.Mutex
	lines []string
}

func (l *levelLog) Enabled(context.Context, slog.Level) bool { return true }
func (l *levelLog) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l *levelLog) WithGroup(string) slog.Handler            { return l }
func (l *levelLog) Handle(_ context.Context, r slog.Record) error {
	if r.Level >= l.min {
		l.mu.Lock()
		l.lines = append(l.lines, r.Message)
		l.mu.Unlock()
	}
	return nil
}

func (l *levelLog) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.lines...)
}

// An error in the log is for the maintainer to act on: when nothing
// failed (an answer that changes nothing, the cancel's answers, a
// reversal), the log has none, and no view says that something
// was not recorded.
func TestRuleNothingIsLoggedAsAnErrorWhenNothingFailed(t *testing.T) {
	logged := &levelLog{min: slog.LevelError}
	lim := testLimits
	e := newEnv(t, lim)
	e.log = slog.New(logged)
	e.restartOn(e.client, lim)
	e.recover()
	// An answer that changes nothing, then the approval.
	e.order("L1", 500)
	e.sim.Script(terminalsim.HTTP500Charged())
	v := e.wait(e.start(Request{OrderID: "L1", Amount: 500, Policy: journal.PolicyKiosk}))
	if v.State != journal.StateApproved {
		t.Fatalf("debit %+v", v)
	}
	// A reversal of it.
	rv := e.reverse(v.UUID)
	if rv.State != journal.StateApproved || strings.Contains(rv.Message, "not recorded") {
		t.Fatalf("reversal %+v", rv)
	}
	// The customer's cancel and the terminal's answers to it.
	s := newScripted()
	e.restartOn(s, lim)
	e.recover()
	s.setAborts(list(abortKO(localapi.MsgNothingToAbort), abortOK))
	h := e.kiosk("L2", 700)
	s.waitFor(t, e.ctx, "the /payment", func(p, a, hi int) bool { return p == 1 })
	h.Cancel()
	s.waitFor(t, e.ctx, "a second abort", func(p, a, hi int) bool { return a >= 2 })
	s.answer(1, txFor(h.UUID(), localapi.StatusKO), nil)
	if v := e.wait(h); v.State != journal.StateCancelled || strings.Contains(v.Message, "not recorded") {
		t.Fatalf("cancelled debit %+v", v)
	}
	if lines := logged.all(); len(lines) > 0 {
		t.Fatalf("errors logged while nothing failed: %q", lines)
	}
}

// holdingCancels is a link provider whose cancels are held until the test
// releases them, and counted.
type holdingCancels struct {
	LinkAPI
	release chan struct{}
	mu      sync.Mutex
	n       int
}

func (h *holdingCancels) CancelLink(ctx context.Context, cartID string) (string, error) {
	h.mu.Lock()
	h.n++
	h.mu.Unlock()
	<-h.release
	return h.LinkAPI.CancelLink(ctx, cartID)
}

func (h *holdingCancels) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.n
}

// One cancel on its way at a time: a link whose lifetime ends while the
// customer's cancel is still out is not cancelled a second time beside it
// (the first answer would be lost). Why it was cancelled is journaled.
func TestRuleOneCancelOnItsWayAtATime(t *testing.T) {
	e := newLinkEnv(t, LinkOptions{Lifetime: 150 * time.Millisecond, Margin: 50 * time.Millisecond})
	link := e.channel.(*linkChannel)
	api := &holdingCancels{LinkAPI: link.api, release: make(chan struct{}, 1)}
	defer close(api.release)
	opts := link.opts
	e.channel = Link(api, opts)
	e.restartOn(nil, testLimits)
	h, _ := e.startLink("K7", 900)
	h.Cancel()
	e.eventSaying(h, "cancelled by Comptoir") // the lifetime ended, the customer's cancel still out
	api.release <- struct{}{}                 // its answer: the cart is cancelled
	if v := e.wait(h); v.State != journal.StateCancelled {
		t.Fatalf("view %+v", v)
	}
	if n := api.count(); n != 1 {
		t.Fatalf("%d cancels out at once", n)
	}
}

// diedWithItsCancelOut is a process that died while the customer's cancel
// of its kiosk debit was out (the terminal held it): the journal says
// "abort requested", and nothing runs.
func diedWithItsCancelOut(t *testing.T) (*env, *Handle, Limits) {
	t.Helper()
	lim := testLimits
	lim.ResendPause = time.Hour
	e, s, h := startScripted(t, lim)
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	s.setAborts(list(held(release, abortOK)))
	h.Cancel()
	waitView(t, e, h, func(v View) bool { return v.State == journal.StateAbortRequested })
	e.close()
	return e, h, lim
}

// A cancel resumed after a restart shows "cancelling" while it is on its
// way, as the customer's own did.
func TestRuleAResumedCancelShowsCancelling(t *testing.T) {
	e, h, lim := diedWithItsCancelOut(t)

	s2 := newScripted()
	again := make(chan struct{})
	s2.setAborts(list(held(again, abortOK)))
	e.open(s2, lim)
	recovered := make(chan error, 1)
	go func() { _, err := e.o.Recover(e.ctx); recovered <- err }()
	s2.waitFor(t, e.ctx, "the resumed abort", func(p, a, hi int) bool { return a == 1 })
	resumed, ok := e.o.Active(h.UUID())
	if !ok {
		t.Fatal("the resumed attempt is not active")
	}
	if v := resumed.View(); v.Abort != AbortPending {
		t.Fatalf("the resumed cancel shows %q, want %q", v.Abort, AbortPending)
	}
	close(again)
	if err := <-recovered; err != nil {
		t.Fatal(err)
	}
	if st := e.attempt(h.UUID()).State; st != journal.StateCancelled {
		t.Fatalf("resumed attempt ended %s", st)
	}
}

// A cancel the terminal never answers (unreachable) is asked again at its
// backoff, but not past the request-open limit: then the attempt is
// unknown, for staff, not cancelled for ever in a loop.
func TestRuleTheCancelIsAskedAgainOnlyUntilTheRequestOpenLimit(t *testing.T) {
	lim := testLimits
	lim.RequestOpen = 300 * time.Millisecond
	lim.ResendPause = time.Hour // nothing out when the customer cancels
	e, s, h := startScripted(t, lim)
	s.setAborts(list(abortRefused))
	s.answer(1, nil, &localapi.HTTPError{Endpoint: "/payment", StatusCode: 500})
	e.eventSaying(h, "no usable answer")
	h.Cancel()
	v := e.wait(h)
	if v.State != journal.StateUnknown || !strings.Contains(v.Message, "request-open limit") {
		t.Fatalf("state %s (%s), want unknown at the request-open limit", v.State, v.Message)
	}
	if p, a, _ := s.counts(); p != 1 || a < 2 {
		t.Fatalf("%d /payment and %d /abort requests", p, a)
	}
}

// On a channel that polls, the polls go on while the customer's cancel
// cannot be delivered: the provider's own outcome (here an approval) is
// learnt, not left unknown until the cancel gets through.
func TestRuleThePollsGoOnWhileTheCancelCannotBeDelivered(t *testing.T) {
	p := &polling{send: func(int) Answer { return ack("cloud-7") }}
	p.cancel = func(int) CancelAnswer {
		return CancelAnswer{Outcome: CancelNotSent, Message: "connection refused"}
	}
	p.poll = func(int) Answer {
		if _, _, c, _ := p.counts(); c >= 3 {
			return paid("cloud-7", 900)
		}
		return Answer{Outcome: OutcomePending, ProviderStatus: "pending"}
	}
	e := pollingEnv(t, p, testLimits)
	h := e.kiosk("C7", 900)
	for {
		if _, polls, _, _ := p.counts(); polls >= 2 {
			break
		}
		select {
		case <-e.ctx.Done():
			t.Fatal("never polled")
		case <-time.After(time.Millisecond):
		}
	}
	h.Cancel()
	v := e.wait(h)
	if v.State != journal.StateApproved || !v.ChargedDespiteCancel {
		t.Fatalf("state %s (%s): the provider approved it", v.State, v.Message)
	}
}

// A cancel resumed after a restart that cannot reach the terminal leaves
// the attempt open, as it was, for the next recovery: the terminal may
// still run it, and nobody guesses.
func TestRuleAResumedCancelThatCannotReachTheTerminalStaysOpen(t *testing.T) {
	e, h, lim := diedWithItsCancelOut(t)

	s2 := newScripted()
	s2.setAborts(list(abortRefused))
	e.open(s2, lim)
	if _, err := e.o.Recover(e.ctx); !errors.Is(err, ErrTerminalUnreachable) {
		t.Fatalf("recovery: %v, want the terminal unreachable", err)
	}
	if st := e.attempt(h.UUID()).State; st != journal.StateAbortRequested {
		t.Fatalf("the attempt is %s, want left open with its cancel pending", st)
	}
	if p, _, _ := s2.counts(); p != 0 {
		t.Fatalf("%d /payment requests after the restart", p)
	}
}

// One search of the history at a time: a cancel answered "nothing runs"
// while a search is out waits for that search, not a second one beside it
// (whose answer would replace the first's).
func TestRuleOneSearchOfTheHistoryAtATime(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	p := &polling{
		send: func(int) Answer { return ack("cloud-8") },
		poll: func(int) Answer { return Answer{Outcome: OutcomePending, ProviderStatus: "pending"} },
		cancel: func(int) CancelAnswer {
			return CancelAnswer{Outcome: CancelNothingRuns, Message: "nothing to abort"}
		},
		lookup: func(int) (Match, error) {
			<-release
			return Match{Verdict: InHistory, Candidates: 1, Charge: Charge{TransactionID: "cloud-8", Amount: 900}}, nil
		},
	}
	lim := testLimits
	lim.KioskTimeout = 100 * time.Millisecond // overdue soon: the history is searched
	e := pollingEnv(t, p, lim)
	h := e.kiosk("C8", 900)
	for {
		if _, _, _, n := p.counts(); n == 1 {
			break
		}
		select {
		case <-e.ctx.Done():
			t.Fatal("the history was never searched")
		case <-time.After(time.Millisecond):
		}
	}
	h.Cancel()
	waitView(t, e, h, func(v View) bool { return v.Abort == AbortNothing })
	release <- struct{}{}
	if v := e.wait(h); v.State != journal.StateCancelled {
		t.Fatalf("state %s (%s)", v.State, v.Message)
	}
	if _, _, _, n := p.counts(); n != 1 {
		t.Fatalf("%d searches of the history, want the one that was out", n)
	}
}

// cancelOnPrepared is an Emitter that asks the cancel of an attempt as
// soon as it is shown prepared, which is before its driver runs.
type cancelOnPrepared struct{ o **Orchestrator }

func (c cancelOnPrepared) Emit(event string, data any) {
	if v, ok := data.(View); ok && event == EventAttempt && v.State == journal.StatePrepared && *c.o != nil {
		(*c.o).Cancel(v.UUID)
	}
}

// A cancel that comes after the attempt is journaled and before its
// request leaves sends nothing: the attempt ends cancelled, never sent,
// and the terminal charges nothing.
func TestRuleACancelBeforeTheRequestLeavesSendsNothing(t *testing.T) {
	e := newEnv(t, testLimits)
	db := e.reopen()
	var o *Orchestrator
	o, err := New(Config{Journal: db, Terminal: e.client, TerminalID: "sim", Limits: testLimits, Emitter: cancelOnPrepared{&o},
		Vendor: &localapi.Vendor{SoftwareName: "Comptoir", SoftwareVersion: "test"}})
	if err != nil {
		t.Fatal(err)
	}
	e.o = o
	e.recover()
	e.order("C1", 500)
	h, err := o.Start(e.ctx, Request{OrderID: "C1", Amount: 500, Policy: journal.PolicyKiosk})
	if err != nil {
		t.Fatal(err)
	}
	<-h.Done()
	a := e.attempt(h.UUID())
	if a.State != journal.StateCancelled || a.SendCount != 0 || !strings.Contains(lastDetail(e, h.UUID()), "before the request was sent") {
		t.Fatalf("attempt %+v", a)
	}
	if charges := e.sim.ChargesFor(h.UUID()); len(charges) != 0 {
		t.Fatalf("the terminal charged %+v", charges)
	}
}

func lastDetail(e *env, id string) string {
	evs := e.eventsOf(id)
	return evs[len(evs)-1].Detail
}
