package payment

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/journal"
)

// polling is a channel that answers a send with an acknowledgement and
// the outcome only to polls, as the provider's cloud does: the driver's
// rules for such a channel, without a cloud.
type polling struct {
	mu      sync.Mutex
	sends   int
	polls   int
	cancels int
	lookups int
	send    func(n int) Answer
	poll    func(n int) Answer
	cancel  func(n int) CancelAnswer
	lookup  func(n int) (Match, error)
}

func (p *polling) Name() journal.Channel { return journal.ChannelCloud }

func (p *polling) Rules() ChannelRules {
	return ChannelRules{PollEvery: 5 * time.Millisecond}
}

func (p *polling) Body(a NewAttempt) ([]byte, error) {
	return json.Marshal(map[string]any{"idempotentUuid": a.UUID, "amount": a.Request.Amount, "cartId": a.Request.OrderID})
}

func (p *polling) Send(ctx context.Context, a journal.Attempt) Answer {
	p.mu.Lock()
	p.sends++
	n := p.sends
	p.mu.Unlock()
	return p.send(n)
}

func (p *polling) Follow(ctx context.Context, a journal.Attempt) Answer {
	p.mu.Lock()
	p.polls++
	n, poll := p.polls, p.poll
	p.mu.Unlock()
	return poll(n)
}

// setPoll changes the answers to polls (a test's process restart).
func (p *polling) setPoll(f func(int) Answer) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.poll = f
}

func (p *polling) Cancel(ctx context.Context, a journal.Attempt) CancelAnswer {
	p.mu.Lock()
	p.cancels++
	n := p.cancels
	p.mu.Unlock()
	if p.cancel == nil {
		return CancelAnswer{Outcome: CancelDelivered}
	}
	return p.cancel(n)
}

func (p *polling) Lookup(ctx context.Context, a journal.Attempt, since time.Time, held Holder) (Match, error) {
	p.mu.Lock()
	p.lookups++
	n := p.lookups
	p.mu.Unlock()
	if p.lookup == nil {
		return Match{}, nil
	}
	return p.lookup(n)
}

func (p *polling) ReversalBody(debit journal.Attempt) ([]byte, error) {
	return json.Marshal(map[string]any{"amount": debit.Total(), "initialTransactionId": debit.TransactionID})
}

func (p *polling) Reverse(ctx context.Context, a journal.Attempt) Answer {
	return Answer{Outcome: OutcomeCharged, Charge: &Charge{TransactionID: "rv-" + a.InitialTransactionID, Amount: a.Amount, Approved: true}}
}

func (p *polling) counts() (sends, polls, cancels, lookups int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.sends, p.polls, p.cancels, p.lookups
}

func ack(id string) Answer {
	return Answer{Outcome: OutcomePending, Known: true, ProviderID: id, ProviderStatus: "accepted"}
}

func paid(id string, amount int64) Answer {
	return Answer{Outcome: OutcomeCharged, Known: true, Charge: &Charge{TransactionID: id, Amount: amount, Approved: true}}
}

func pollingEnv(t *testing.T, p *polling, lim Limits) *env {
	t.Helper()
	return channelEnv(t, p, "SN-1", lim)
}

// A channel that acknowledges and is polled: the attempt is sent once, its
// acknowledgement's id journaled, then polled until the outcome.
func TestPollingChannelSendsOnceAndPolls(t *testing.T) {
	p := &polling{
		send: func(int) Answer { return ack("cloud-1") },
		poll: func(n int) Answer {
			if n < 3 {
				return Answer{Outcome: OutcomePending, ProviderStatus: "pending"}
			}
			return paid("cloud-1", 900)
		},
	}
	e := pollingEnv(t, p, testLimits)
	v := e.wait(e.kiosk("C1", 900))
	if v.State != journal.StateApproved || v.TransactionID != "cloud-1" {
		t.Fatalf("view %+v", v)
	}
	if s, polls, _, _ := p.counts(); s != 1 || polls != 3 {
		t.Fatalf("%d sends, %d polls", s, polls)
	}
	a := e.attempt(v.UUID)
	if a.Channel != journal.ChannelCloud || a.ProviderID != "cloud-1" || a.SendCount != 1 {
		t.Fatalf("journal %+v", a)
	}
}

// The acknowledgement is lost: the attempt is never sent blindly again; the
// provider's history finds it (here running, then charged).
func TestPollingChannelLostAcknowledgement(t *testing.T) {
	p := &polling{
		send: func(int) Answer { return Answer{Outcome: OutcomeTimeout, Message: "timeout"} },
		poll: func(int) Answer { return paid("cloud-7", 500) },
		lookup: func(int) (Match, error) {
			return Match{Verdict: InHistory, Pending: true, Charge: Charge{TransactionID: "cloud-7"}}, nil
		},
	}
	approvedByTheHistory(t, p, testLimits, "L1", 500)
}

// approvedByTheHistory pays a kiosk order through p and checks that the
// history decided it: approved as cloud-7, sent once, the history read.
func approvedByTheHistory(t *testing.T, p *polling, lim Limits, order string, amount int64) {
	t.Helper()
	e := pollingEnv(t, p, lim)
	v := e.wait(e.kiosk(order, amount))
	if v.State != journal.StateApproved || v.TransactionID != "cloud-7" {
		t.Fatalf("view %+v", v)
	}
	if s, _, _, lookups := p.counts(); s != 1 || lookups < 1 {
		t.Fatalf("%d sends, %d lookups", s, lookups)
	}
}

// A lost acknowledgement that the history never shows: not charged, but
// only once the history is complete for it.
func TestPollingChannelLostAcknowledgementNeverCharged(t *testing.T) {
	lim := testLimits
	lim.SettleAfter = 50 * time.Millisecond
	p := &polling{send: func(int) Answer { return Answer{Outcome: OutcomeIndefinite, Message: "HTTP 502"} }}
	e := pollingEnv(t, p, lim)
	e.order("N1", 500)
	start := time.Now()
	v := e.wait(e.start(Request{OrderID: "N1", Amount: 500, Policy: journal.PolicyKiosk}))
	if v.State != journal.StateFailed {
		t.Fatalf("view %+v", v)
	}
	if time.Since(start) < lim.SettleAfter {
		t.Fatal("decided before the history was complete")
	}
	// One search or more: on a loaded machine the first may already come
	// after the history is complete.
	if s, _, _, lookups := p.counts(); s != 1 || lookups < 1 {
		t.Fatalf("%d sends, %d lookups", s, lookups)
	}
}

// The customer cancels: the cancel is delivered, polls go on, and the
// payment's own outcome decides (here: charged, and said so).
func TestPollingChannelCancelKeepsPolling(t *testing.T) {
	release := make(chan struct{})
	p := &polling{
		send: func(int) Answer { return ack("cloud-9") },
		poll: func(n int) Answer {
			select {
			case <-release:
				return paid("cloud-9", 700)
			default:
				return Answer{Outcome: OutcomePending, ProviderStatus: "pending"}
			}
		},
	}
	e := pollingEnv(t, p, testLimits)
	h := e.kiosk("X1", 700)
	waitView(t, e, h, func(v View) bool { return e.attempt(h.UUID()).ProviderID != "" })
	h.Cancel()
	waitView(t, e, h, func(v View) bool { return v.Abort == AbortDelivered })
	close(release)
	v := e.wait(h)
	if v.State != journal.StateApproved || !v.ChargedDespiteCancel {
		t.Fatalf("view %+v", v)
	}
	if s, _, cancels, _ := p.counts(); s != 1 || cancels != 1 {
		t.Fatalf("%d sends, %d cancels", s, cancels)
	}
}

// The provider says the action expired undelivered (an offline terminal):
// failed at once, nothing charged.
func TestPollingChannelExpired(t *testing.T) {
	p := &polling{
		send: func(int) Answer { return ack("cloud-3") },
		poll: func(int) Answer { return Answer{Outcome: OutcomeExpired, Message: "expired"} },
	}
	e := pollingEnv(t, p, testLimits)
	v := e.wait(e.kiosk("E1", 300))
	if v.State != journal.StateFailed {
		t.Fatalf("view %+v", v)
	}
}

// Recovery of a polling attempt asks how it stands; it is never sent again.
func TestPollingChannelRecoveryPolls(t *testing.T) {
	hold := make(chan struct{})
	p := &polling{
		send: func(int) Answer { return ack("cloud-5") },
		poll: func(n int) Answer {
			<-hold // the process dies while it polls
			return Answer{Outcome: OutcomePending}
		},
	}
	e := pollingEnv(t, p, testLimits)
	h := e.kiosk("R1", 400)
	waitView(t, e, h, func(View) bool { _, polls, _, _ := p.counts(); return polls >= 1 })
	close(hold)
	p.setPoll(func(int) Answer { return paid("cloud-5", 400) })
	db := e.reopen()
	o, err := New(Config{Journal: db, Channel: p, TerminalID: "SN-1", Limits: testLimits})
	if err != nil {
		t.Fatal(err)
	}
	e.o = o
	views := e.recover()
	if len(views) != 1 || views[0].State != journal.StateApproved {
		t.Fatalf("recovered %+v", views)
	}
	if s, _, _, _ := p.counts(); s != 1 {
		t.Fatalf("sent %d times", s)
	}
}

// Polled past the client timeout with no outcome: the history decides.
// Here it lists the transaction as charged, so the attempt is approved,
// though every poll still said pending.
func TestPollingChannelOverdueDecidedByHistory(t *testing.T) {
	lim := testLimits
	lim.KioskTimeout = 50 * time.Millisecond
	p := &polling{
		send: func(int) Answer { return ack("cloud-7") },
		poll: func(int) Answer { return Answer{Outcome: OutcomePending, ProviderStatus: "pending"} },
		lookup: func(int) (Match, error) {
			return Match{Verdict: InHistory, Candidates: 1, Charge: Charge{TransactionID: "cloud-7", Amount: 600, Approved: true}}, nil
		},
	}
	approvedByTheHistory(t, p, lim, "D1", 600)
}
