package kiosk

import (
	"context"
	"sync"
	"time"

	"github.com/comptoir-pos/comptoir/backend/discovery"
)

// TerminalStatus is what the kiosk needs to know about the terminal.
type TerminalStatus struct {
	State   TerminalState
	Name    string // mDNS instance name, or the address
	Address string // Local API base URL
	Since   time.Time
	Error   string // the last error, for staff
}

// TerminalSource tells the terminal's status. It is asked often: it must
// answer from memory, never from the network.
type TerminalSource interface {
	TerminalStatus() TerminalStatus
}

// TerminalFunc adapts a function to a TerminalSource.
type TerminalFunc func() TerminalStatus

func (f TerminalFunc) TerminalStatus() TerminalStatus { return f() }

// FixedTerminal is a terminal at a fixed address (--terminal, --demo): always
// connected as far as the kiosk knows; an unreachable terminal shows as a
// failed payment, not charged.
func FixedTerminal(name, address string) TerminalSource {
	return TerminalFunc(func() TerminalStatus {
		return TerminalStatus{State: TerminalConnected, Name: name, Address: address}
	})
}

// TrackerStatus follows a discovery.Tracker (or anything with its Status).
func TrackerStatus(t interface{ Status() discovery.Status }) TerminalSource {
	return TerminalFunc(func() TerminalStatus { return FromDiscovery(t.Status()) })
}

// FromDiscovery converts a discovery status.
func FromDiscovery(s discovery.Status) TerminalStatus {
	st := TerminalStatus{Name: s.Instance, Address: s.Address, Since: s.Since, Error: s.LastError}
	switch s.State {
	case discovery.StateConnected, discovery.StateManual:
		st.State = TerminalConnected
	case discovery.StateUnreachable:
		st.State = TerminalUnreachable
	case discovery.StateChoose:
		st.State = TerminalChoose
	case discovery.StateSearching:
		st.State = TerminalSearching
	default:
		st.State = TerminalNone
	}
	if st.Name == "" {
		st.Name = s.Address
	}
	return st
}

// WatchedTerminal is a terminal at a fixed address, pinged in the
// background: connected while it answers, unreachable (since its first
// silence) while it does not, so the kiosk says so before a customer pays
// rather than after. Its status answers from memory.
type WatchedTerminal struct {
	mu     sync.Mutex
	st     TerminalStatus
	cancel context.CancelFunc
	done   chan struct{}
}

// WatchTerminal pings the terminal now and then every `every` until Close.
// Until the first answer it counts as connected, as a fixed address always
// did: a terminal is not taken for absent before it was asked.
func WatchTerminal(name, address string, ping func(context.Context) error, every time.Duration) *WatchedTerminal {
	ctx, cancel := context.WithCancel(context.Background())
	w := &WatchedTerminal{st: TerminalStatus{State: TerminalConnected, Name: name, Address: address}, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(w.done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			pctx, stop := context.WithTimeout(ctx, min(every, 3*time.Second))
			err := ping(pctx)
			stop()
			if ctx.Err() != nil {
				return
			}
			w.record(err)
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return w
}

func (w *WatchedTerminal) record(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err == nil {
		w.st.State, w.st.Since, w.st.Error = TerminalConnected, time.Time{}, ""
		return
	}
	if w.st.State != TerminalUnreachable {
		w.st.State, w.st.Since = TerminalUnreachable, time.Now()
	}
	w.st.Error = err.Error()
}

// TerminalStatus is the last ping's verdict.
func (w *WatchedTerminal) TerminalStatus() TerminalStatus {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.st
}

// Close stops the pings and waits for the last one.
func (w *WatchedTerminal) Close() {
	w.cancel()
	<-w.done
}
