package payment

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/internal/testenv"
	"github.com/comptoir-pos/comptoir/backend/journal"
)

// The provider's word is journaled whichever part of it comes: an
// acknowledgement naming only the provider's id, then a poll naming only a
// new status.
func TestRuleTheProvidersWordIsJournaledWhicheverPartComes(t *testing.T) {
	p := &polling{
		send: func(int) Answer { return Answer{Outcome: OutcomePending, Known: true, ProviderID: "cloud-1"} },
		poll: func(int) Answer { return Answer{Outcome: OutcomePending} },
	}
	e := pollingEnv(t, p, testLimits)
	h := e.kiosk("P1", 900)
	waitView(t, e, h, func(View) bool { return e.attempt(h.UUID()).ProviderID == "cloud-1" })
	p.setPoll(func(int) Answer { return Answer{Outcome: OutcomePending, ProviderStatus: "in_progress"} })
	// The status journaled, then said in the journal's words.
	said := func() bool {
		for _, ev := range e.eventsOf(h.UUID()) {
			if strings.Contains(ev.Detail, "in progress (in_progress)") {
				return true
			}
		}
		return false
	}
	waitView(t, e, h, func(View) bool { return e.attempt(h.UUID()).ProviderStatus == "in_progress" && said() })
	if a := e.attempt(h.UUID()); a.ProviderID != "cloud-1" {
		t.Fatalf("a status alone changed the provider's id: %+v", a)
	}
	p.setPoll(func(int) Answer { return paid("cloud-1", 900) })
	if v := e.wait(h); v.State != journal.StateApproved {
		t.Fatalf("view %+v", v)
	}
}

// lasting is a polled channel whose provider keeps an attempt for a
// lifetime (a payment link): polled until it ends or its lifetime is over.
type lasting struct {
	*polling
	life, margin time.Duration
}

func (l lasting) Rules() ChannelRules {
	r := l.polling.Rules()
	r.Lifetime, r.LifetimeMargin = l.life, l.margin
	return r
}

// An attempt the provider keeps for a lifetime (a payment link) is polled
// past its client timeout, never looked for in a history: the provider
// has it, under an id that does not expire.
func TestRuleAnAttemptKeptForALifetimeIsPolledPastItsClientTimeout(t *testing.T) {
	p := &polling{
		send: func(int) Answer { return ack("link-1") },
		poll: func(int) Answer { return Answer{Outcome: OutcomePending, ProviderStatus: "pending"} },
	}
	lim := testLimits
	lim.KioskTimeout = 50 * time.Millisecond
	e := channelEnv(t, lasting{p, time.Hour, time.Hour}, "links", lim)
	h := e.kiosk("P2", 900)
	sent := time.Now()
	var pollsThen int
	waitView(t, e, h, func(View) bool {
		_, polls, _, _ := p.counts()
		if pollsThen == 0 && time.Since(sent) > 4*lim.KioskTimeout {
			pollsThen = polls
		}
		return pollsThen > 0 && polls >= pollsThen+3
	})
	if _, _, cancels, lookups := p.counts(); lookups != 0 || cancels != 0 {
		t.Fatalf("looked for in a history %d times, cancelled %d times before its lifetime", lookups, cancels)
	}
	p.setPoll(func(int) Answer { return paid("link-1", 900) })
	if v := e.wait(h); v.State != journal.StateApproved {
		t.Fatalf("view %+v", v)
	}
}

// Once its lifetime and the margin past it are over, an attempt the
// provider keeps is cancelled by Comptoir, which says after how long; the
// provider's answer to the cancel decides.
func TestRuleAnAttemptKeptPastItsLifetimeIsCancelledSayingWhen(t *testing.T) {
	p := &polling{
		send: func(int) Answer { return ack("link-2") },
		poll: func(int) Answer { return Answer{Outcome: OutcomePending, ProviderStatus: "pending"} },
	}
	e := channelEnv(t, lasting{p, 100 * time.Millisecond, 200 * time.Millisecond}, "links", testLimits)
	h := e.kiosk("P3", 900)
	waitView(t, e, h, func(View) bool { _, _, cancels, _ := p.counts(); return cancels > 0 })
	a := e.attempt(h.UUID())
	if since := time.Since(a.FirstSentAt); since < 300*time.Millisecond {
		t.Fatalf("cancelled %s after its first send, before its lifetime and margin (300ms)", since)
	}
	found := false
	for _, ev := range e.eventsOf(h.UUID()) {
		found = found || strings.Contains(ev.Detail, "still open 300ms after its first send")
	}
	if !found {
		t.Fatalf("the cancel does not say after how long: %+v", e.eventsOf(h.UUID()))
	}
	p.setPoll(func(int) Answer { return Answer{Outcome: OutcomeEnded, Known: true, Message: "cancelled"} })
	if v := e.wait(h); v.State != journal.StateCancelled {
		t.Fatalf("view %+v", v)
	}
}

// A cancel asked again waits AbortRetryPause, doubled at each try, up to
// AbortRetryMax.
func TestRuleACancelIsAskedAgainAfterADoublingPauseUpToItsMost(t *testing.T) {
	lim := testLimits
	lim.AbortRetryPause, lim.AbortRetryMax = 20*time.Millisecond, 200*time.Millisecond
	d := &driver{o: &Orchestrator{cfg: Config{Limits: lim}}}
	for aborts, want := range []time.Duration{1: 20, 2: 40, 3: 80, 4: 160, 5: 200, 6: 200, 9: 200} {
		if aborts == 0 || want == 0 {
			continue
		}
		d.aborts = aborts
		if got := d.abortBackoff(); got != want*time.Millisecond {
			t.Fatalf("after %d cancels: %s, want %s", aborts, got, want*time.Millisecond)
		}
	}
}

// An orchestrator needs a journal, a way to the provider (a channel, or a
// terminal for the LAN's) and the terminal's id: without one of them it is
// refused, never half made.
func TestRuleAnOrchestratorNeedsAJournalAChannelAndATerminalID(t *testing.T) {
	db := testenv.Journal(t, "")
	term := &fakeTerminal{}
	ch := &polling{}
	for _, tc := range []struct {
		name string
		cfg  Config
		ok   bool
	}{
		{"a terminal", Config{Journal: db, Terminal: term, TerminalID: "sim"}, true},
		{"a channel", Config{Journal: db, Channel: ch, TerminalID: "SN-1"}, true},
		{"no journal", Config{Terminal: term, TerminalID: "sim"}, false},
		{"no channel nor terminal", Config{Journal: db, TerminalID: "sim"}, false},
		{"no terminal id", Config{Journal: db, Terminal: term}, false},
		{"no terminal id for a channel", Config{Journal: db, Channel: ch}, false},
	} {
		o, err := New(tc.cfg)
		if (err == nil) != tc.ok || (o != nil) != tc.ok {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if o != nil {
			o.Close()
		}
	}
}

// concurrent is a polled channel that runs one attempt per order at once
// (as payment links do), each under a terminal name of its own.
type concurrent struct{ *polling }

func (c concurrent) Rules() ChannelRules {
	r := c.polling.Rules()
	r.Concurrent = true
	return r
}

// An orchestrator drives (and recovers) only its own terminal's attempts:
// its id, or on a concurrent channel a name below it; never another's.
func TestRuleAnOrchestratorOwnsOnlyItsTerminalsAttempts(t *testing.T) {
	db := testenv.Journal(t, "")
	for _, tc := range []struct {
		ch       Channel
		terminal string
		owns     map[string]bool
	}{
		{&polling{}, "SN-1", map[string]bool{"SN-1": true, "SN-1/O1": false, "SN-2": false, "links/O1": false}},
		{concurrent{&polling{}}, "links", map[string]bool{"links": true, "links/O1": true, "linksX/O1": false, "SN-1": false, "sim": false}},
	} {
		o, err := New(Config{Journal: db, Channel: tc.ch, TerminalID: tc.terminal, Limits: testLimits})
		if err != nil {
			t.Fatal(err)
		}
		for terminal, want := range tc.owns {
			if got := o.owns(journal.Attempt{Terminal: terminal}); got != want {
				t.Fatalf("the orchestrator of %s owns %s: %v, want %v", tc.terminal, terminal, got, want)
			}
		}
		o.Close()
	}
}

// Start takes a positive amount and a tip that is not negative, and
// journals nothing otherwise; before a refund (not a debit) it reads the
// money given back elsewhere, and sends nothing when that cannot be read.
func TestRuleStartTakesAPositiveAmountAndReadsGivenBackBeforeARefund(t *testing.T) {
	db := testenv.Journal(t, "")
	checks := 0
	p := &polling{send: func(int) Answer { return ack("cloud-1") }, poll: func(int) Answer { return Answer{Outcome: OutcomePending} }}
	o, err := New(Config{Journal: db, Channel: p, TerminalID: "SN-1", Limits: testLimits,
		GivenBackCheck: func(context.Context, string) error { checks++; return errors.New("the provider cannot be reached") }})
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	ctx := t.Context()
	if _, err := o.Recover(ctx); err != nil {
		t.Fatal(err)
	}
	if err := db.CreateOrder(ctx, journal.Order{ID: "S1", Currency: "EUR", Total: 500, CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	for _, req := range []Request{
		{OrderID: "S1", Amount: 0, Policy: journal.PolicyKiosk},
		{OrderID: "S1", Amount: -500, Policy: journal.PolicyKiosk},
		{OrderID: "S1", Amount: 500, GiftAmount: -1, Policy: journal.PolicyKiosk},
	} {
		if _, err := o.Start(ctx, req); err == nil || !strings.Contains(err.Error(), "amount must be positive and giftAmount not negative") {
			t.Fatalf("%+v: %v", req, err)
		}
	}
	if atts, _ := db.AttemptsForOrder(ctx, "S1"); len(atts) != 0 {
		t.Fatalf("journaled %+v", atts)
	}
	h, err := o.Start(ctx, Request{OrderID: "S1", Amount: 1, Policy: journal.PolicyKiosk})
	if err != nil || checks != 0 {
		t.Fatalf("a debit of 0.01: %v (%d reads of money given back elsewhere)", err, checks)
	}
	h.Cancel()
	if _, err := o.Start(ctx, Request{OrderID: "S1", Amount: 1, Policy: journal.PolicyRefund}); err == nil || checks != 1 ||
		!strings.Contains(err.Error(), "nothing was sent") {
		t.Fatalf("a refund with the provider unreachable: %v (%d reads)", err, checks)
	}
}

// Limits that would break a rule are refused: each pause, margin and
// interval may be zero but never negative.
func TestRuleNoLimitIsNegative(t *testing.T) {
	if err := testLimits.Validate(); err != nil {
		t.Fatal(err)
	}
	for name, set := range map[string]func(*Limits){
		"resend pause":       func(l *Limits) { l.ResendPause = -1 },
		"abort grace":        func(l *Limits) { l.AbortGrace = -1 },
		"abort retry pause":  func(l *Limits) { l.AbortRetryPause = -1 },
		"abort retry max":    func(l *Limits) { l.AbortRetryMax = -1 },
		"idempotency margin": func(l *Limits) { l.IdempotencyMargin = -1 },
		"history skew":       func(l *Limits) { l.HistorySkew = -1 },
		"settle after":       func(l *Limits) { l.SettleAfter = -1 },
		"unknown check":      func(l *Limits) { l.UnknownCheck = -1 },
	} {
		l := testLimits
		set(&l)
		if err := l.Validate(); err == nil {
			t.Fatalf("a negative %s was taken", name)
		}
	}
	zero := testLimits
	zero.ResendPause, zero.AbortGrace, zero.AbortRetryPause, zero.AbortRetryMax, zero.IdempotencyMargin = 0, 0, 0, 0, 0
	zero.HistorySkew, zero.SettleAfter, zero.UnknownCheck = 0, 0, 0
	if err := zero.Validate(); err != nil {
		t.Fatalf("pauses, margins and intervals of zero: %v", err)
	}
}

// A uuid is never resent once the terminal may have forgotten it: the
// request-open limit, a client timeout and the margin together must be
// shorter than the idempotency window (equal is refused).
func TestRuleTheRequestOpenLimitEndsBeforeTheIdempotencyWindow(t *testing.T) {
	l := testLimits
	l.KioskTimeout, l.CounterTimeout, l.RefundTimeout = time.Second, 3*time.Second, 2*time.Second
	l.RequestOpen, l.IdempotencyMargin = 10*time.Second, 5*time.Second
	l.Idempotency = 18 * time.Second // 10 + 3 (the longest) + 5
	if err := l.Validate(); err == nil {
		t.Fatal("a window just as long as the limit, the longest timeout and the margin was taken")
	}
	l.Idempotency += time.Nanosecond
	if err := l.Validate(); err != nil {
		t.Fatalf("a window longer by a nanosecond: %v", err)
	}
}

// Recovery passes over the attempts another orchestrator drives (another
// channel's) and goes on to resume its own.
func TestRuleRecoveryResumesItsOwnAttemptsPastOthers(t *testing.T) {
	db := testenv.Journal(t, "")
	ctx := t.Context()
	for i, a := range []journal.Attempt{
		{UUID: "01a20000-0000-7000-8000-0000000000a1", OrderID: "R1", Channel: journal.ChannelLink, Terminal: "links/R1"},
		{UUID: "01a20000-0000-7000-8000-0000000000a2", OrderID: "R2", Channel: journal.ChannelCloud, Terminal: "SN-1"},
	} {
		if err := db.CreateOrder(ctx, journal.Order{ID: a.OrderID, Currency: "EUR", Total: 900, CreatedAt: time.Now()}); err != nil {
			t.Fatal(err)
		}
		a.Kind, a.Amount, a.Policy = journal.KindDebit, 900, journal.PolicyKiosk
		a.RequestBody = []byte(`{"n":` + string(rune('0'+i)) + `}`)
		if _, err := db.PrepareAttempt(ctx, a); err != nil {
			t.Fatal(err)
		}
		if _, err := db.MarkSent(ctx, a.UUID); err != nil {
			t.Fatal(err)
		}
		if _, err := db.SetProvider(ctx, a.UUID, "prov-"+a.OrderID, "accepted", nil, "acknowledged"); err != nil {
			t.Fatal(err)
		}
	}
	p := &polling{send: func(int) Answer { return paid("cloud-1", 900) }, poll: func(int) Answer { return paid("cloud-1", 900) }}
	o, err := New(Config{Journal: db, Channel: p, TerminalID: "SN-1", Limits: testLimits, OtherChannels: []journal.Channel{journal.ChannelLink}})
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	if _, err := o.Recover(ctx); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, "its own attempt resumed", func() bool {
		a, err := db.Attempt(ctx, "01a20000-0000-7000-8000-0000000000a2")
		return err == nil && a.State == journal.StateApproved
	})
	if a, _ := db.Attempt(ctx, "01a20000-0000-7000-8000-0000000000a1"); a.State != journal.StateSent {
		t.Fatalf("another orchestrator's attempt was touched: %+v", a)
	}
}

// reversing is a polled channel whose reversals answer reverse(n) and
// whose history answers lookup.
type reversing struct {
	*polling
	reverse func(n int) Answer
	n       int
}

func (r *reversing) Reverse(context.Context, journal.Attempt) Answer {
	r.polling.mu.Lock()
	r.n++
	n := r.n
	r.polling.mu.Unlock()
	return r.reverse(n)
}

// approvedDebit journals an approved debit of 900 under transaction D1 for
// a new order, and returns its uuid.
func approvedDebit(t *testing.T, db *journal.DB, order string) string {
	t.Helper()
	ctx := t.Context()
	id := "01a20000-0000-7000-8000-0000000000d1"
	if err := db.CreateOrder(ctx, journal.Order{ID: order, Currency: "EUR", Total: 900, CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.PrepareAttempt(ctx, journal.Attempt{UUID: id, OrderID: order, Kind: journal.KindDebit, Channel: journal.ChannelCloud,
		Amount: 900, Policy: journal.PolicyKiosk, Terminal: "SN-1", RequestBody: []byte(`{"amount":900}`)}); err != nil {
		t.Fatal(err)
	}
	db.MarkSent(ctx, id)
	if _, err := db.Transition(ctx, id, journal.StateSent, journal.StateApproved, journal.TransitionInfo{TransactionID: "D1",
		Charged: &journal.Charge{Amount: 900}}); err != nil {
		t.Fatal(err)
	}
	return id
}

// A reversal the provider answers with its transaction is approved under
// it (the history is not asked); refused at its first request it failed;
// refused on a resend it says nothing of the earlier request, which may
// have reversed the debit: the history decides.
func TestRuleAReversalRefusedOnAResendIsSettledFromTheHistory(t *testing.T) {
	other := func(int) (Match, error) {
		return Match{Verdict: InHistory, Charge: Charge{TransactionID: "rv-history", Amount: 900, Approved: true}}, nil
	}
	for _, tc := range []struct {
		name    string
		reverse Answer
		resend  bool
		state   journal.State
		tx      string
	}{
		{"answered with its transaction", Answer{Outcome: OutcomeCharged, Charge: &Charge{TransactionID: "rv-1", Amount: 900, Approved: true}}, false, journal.StateApproved, "rv-1"},
		{"refused at its first request", Answer{Outcome: OutcomeRefused, Message: "refused"}, false, journal.StateFailed, ""},
		{"refused on a resend", Answer{Outcome: OutcomeRefused, Message: "refused"}, true, journal.StateApproved, "rv-history"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := testenv.Journal(t, "")
			ctx := t.Context()
			debit := approvedDebit(t, db, "V1")
			ch := &reversing{polling: &polling{lookup: other}, reverse: func(int) Answer { return tc.reverse }}
			if tc.resend { // sent before a stop: the next request is a resend
				rid := "01a20000-0000-7000-8000-0000000000e1"
				if _, err := db.PrepareAttempt(ctx, journal.Attempt{UUID: rid, OrderID: "V1", Kind: journal.KindReversal, Channel: journal.ChannelCloud,
					Amount: 900, Policy: journal.PolicyReversal, Terminal: "SN-1", InitialTransactionID: "D1",
					RequestBody: []byte(`{"amount":900,"initialTransactionId":"D1"}`)}); err != nil {
					t.Fatal(err)
				}
				db.MarkSent(ctx, rid)
			}
			o, err := New(Config{Journal: db, Channel: ch, TerminalID: "SN-1", Limits: testLimits})
			if err != nil {
				t.Fatal(err)
			}
			defer o.Close()
			views, err := o.Recover(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var v View
			if tc.resend {
				if len(views) != 1 {
					t.Fatalf("recovered %+v", views)
				}
				v = views[0]
			} else if v, err = o.Reverse(ctx, debit); err != nil {
				t.Fatal(err)
			}
			if v.State != tc.state || v.TransactionID != tc.tx {
				t.Fatalf("reversal %+v", v)
			}
			// Approved gives back the whole debit, in the journal and on
			// the screen; failed gives back nothing and says why.
			a, err := db.Attempt(ctx, v.UUID)
			whole := tc.state == journal.StateApproved
			if err != nil || (whole && (a.Paid() != 900 || v.ChargedAmount != 900)) || (!whole && (a.Charged || v.ChargedAmount != 0 || a.Error == "")) {
				t.Fatalf("reversal %+v, journal %+v (%v)", v, a, err)
			}
		})
	}
}
