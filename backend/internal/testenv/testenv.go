// Package testenv is the tests' environment, written once for every
// package above the simulators: a journal in a temporary folder, the
// simulated payment terminal and provider cloud on loopback at test speed,
// a clock the test sets, loopback addresses and certificates, and a poll
// for a state to come. Only tests import it (backend/cli/deps_test.go
// holds that), and the packages it stands on (journal, terminalsim,
// cloudsim) cannot use it in their own internal tests: that would be an
// import cycle.
package testenv

import (
	"context"
	"sync"
	"testing"
	"time"
)

// Deadline is how long a test waits for a state that should come, or for
// a call: long enough for a loaded 2-core machine (a restaurant's chain
// catching up included), short enough to fail a run that hangs.
const Deadline = time.Minute

// Context is a context for a test's calls, cancelled at its end, with a
// deadline so that a call that hangs fails the test rather than the run.
// It is not t.Context(): that one ends before the test's clean-ups run,
// and they may still need it.
func Context(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), Deadline)
	t.Cleanup(cancel)
	return ctx
}

// Eventually polls cond until it holds, and fails the test, naming what it
// waited for, when Deadline passes first.
func Eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(Deadline)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after %v, still not: %s", Deadline, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Clock is a time the test moves: its Now goes where a clock is injected
// (a Config's Now, journal.WithClock).
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock is a clock standing at at.
func NewClock(at time.Time) *Clock { return &Clock{t: at} }

func (c *Clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

// Set moves the clock to at, backwards too.
func (c *Clock) Set(at time.Time) { c.mu.Lock(); c.t = at; c.mu.Unlock() }

// Advance moves the clock on by d.
func (c *Clock) Advance(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }
