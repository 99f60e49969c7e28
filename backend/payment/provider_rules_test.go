package payment

import (
	"testing"
	"time"

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
	waitView(t, e, h, func(View) bool { return e.attempt(h.UUID()).ProviderStatus == "in_progress" })
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
type lasting struct{ *polling }

func (l lasting) Rules() ChannelRules {
	r := l.polling.Rules()
	r.Lifetime, r.LifetimeMargin = time.Hour, time.Hour
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
	e := channelEnv(t, lasting{p}, "links", lim)
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
	if _, _, _, lookups := p.counts(); lookups != 0 {
		t.Fatalf("looked for in a history %d times", lookups)
	}
	p.setPoll(func(int) Answer { return paid("link-1", 900) })
	if v := e.wait(h); v.State != journal.StateApproved {
		t.Fatalf("view %+v", v)
	}
}
