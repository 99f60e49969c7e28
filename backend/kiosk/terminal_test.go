package kiosk

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

func TestAWatchedTerminalIsUnreachableWhileItDoesNotAnswer(t *testing.T) {
	var down atomic.Bool
	pings := make(chan struct{}, 100)
	ping := func(context.Context) error {
		defer func() { pings <- struct{}{} }()
		if down.Load() {
			return errors.New("connection refused")
		}
		return nil
	}
	w := WatchTerminal("T", "http://10.0.0.5:16125/localapi/v4", ping, time.Millisecond)
	defer w.Close()
	// waitFor waits until a ping started after the change has been
	// recorded: the first ping after the drain may have started before
	// it; the second did not, and its verdict is recorded before the
	// third starts.
	waitFor := func(want TerminalState) TerminalStatus {
		t.Helper()
		for len(pings) > 0 {
			<-pings
		}
		for range 3 {
			<-pings
		}
		st := w.TerminalStatus()
		if st.State != want {
			t.Fatalf("state %s, want %s (%+v)", st.State, want, st)
		}
		return st
	}
	waitFor(TerminalConnected)
	down.Store(true)
	st := waitFor(TerminalUnreachable)
	if st.Since.IsZero() || st.Error != "connection refused" || st.Address == "" {
		t.Fatalf("unreachable: %+v", st)
	}
	// Since is the first silence, not the last.
	if again := waitFor(TerminalUnreachable); !again.Since.Equal(st.Since) {
		t.Fatalf("since moved: %v then %v", st.Since, again.Since)
	}
	down.Store(false)
	if st := waitFor(TerminalConnected); !st.Since.IsZero() || st.Error != "" {
		t.Fatalf("back: %+v", st)
	}
}
