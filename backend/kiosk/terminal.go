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

// RefreshTerminal asks the terminal source again now (the discovery
// Tracker's events do this through the Relay).
func (s *Service) RefreshTerminal() {
	select {
	case s.termWake <- struct{}{}:
	default:
	}
}

func (s *Service) refreshTerminal() {
	st := s.cfg.Terminal.TerminalStatus()
	s.changeAvailability(func() { s.status = st })
}

// usableLocked reports whether an order may start, and why not.
func (s *Service) usableLocked() (ok bool, problem string) {
	if ok, problem := s.openLocked(); !ok {
		return ok, problem
	}
	return s.terminalUsableLocked()
}

// openLocked reports whether orders may be taken, whatever the terminal.
func (s *Service) openLocked() (ok bool, problem string) {
	switch {
	case s.hold != "":
		return false, s.hold
	case s.catalog == nil:
		msg := "no catalog"
		if s.catalogErr != nil {
			msg = s.catalogErr.Error()
		}
		return false, "The catalog cannot be used: " + msg
	case !s.ready:
		p := "Unfinished payments are being recovered: no order until they are."
		if s.recoverErr != "" {
			p = "Unfinished payments could not be recovered yet (" + s.recoverErr + "): no order until they are."
		}
		return false, p
	}
	return true, ""
}

// terminalUsableLocked reports whether the terminal can take a card.
func (s *Service) terminalUsableLocked() (ok bool, problem string) {
	switch s.status.State {
	case TerminalNone:
		return false, "No payment terminal is configured or found: staff must set one up."
	case TerminalChoose:
		return false, "Several payment terminals were found: staff must choose one."
	case TerminalSearching:
		return false, "Looking for the payment terminal."
	case TerminalUnreachable:
		since := ""
		if !s.status.Since.IsZero() {
			since = " since " + s.status.Since.Local().Format("15:04")
		}
		return false, "The payment terminal has not answered" + since + "."
	}
	return true, ""
}

// changeAvailability changes what the kiosk's availability depends on
// (change runs under the lock), then moves between welcome and
// unavailable and publishes the snapshots.
func (s *Service) changeAvailability(change func()) {
	s.mu.Lock()
	change()
	s.availabilityLocked()
	c, t := s.snapshotsLocked(false)
	s.mu.Unlock()
	s.publish(c, t)
}

// availabilityLocked moves between welcome and unavailable. A cart being
// built is dropped when the kiosk cannot take it; a payment is never
// touched. An unreachable terminal may come back: it blocks Pay, not the
// menu.
func (s *Service) availabilityLocked() {
	ok, _ := s.usableLocked()
	blocked := !ok && s.status.State != TerminalUnreachable
	// No way to pay for a while: no new order starts (one under way goes
	// on: the terminal may come back before its customer pays).
	noWay := s.noWayToPayLocked()
	switch {
	case blocked && (s.co.phase == PhaseWelcome || s.co.phase == PhaseDining || s.co.phase == PhaseOrdering):
		s.resetLocked(PhaseUnavailable)
	case noWay && s.co.phase == PhaseWelcome:
		s.resetLocked(PhaseUnavailable)
	case !blocked && !noWay && s.co.phase == PhaseUnavailable:
		s.resetLocked(PhaseWelcome)
	}
	s.term = s.terminalViewLocked()
}

// noWayToPayLocked: the terminal has been unreachable for the grace
// period and no payment link can stand in for it.
func (s *Service) noWayToPayLocked() bool {
	if s.status.State != TerminalUnreachable || s.cfg.Links != nil {
		return false
	}
	since := s.status.Since
	return !since.IsZero() && s.now().Sub(since) >= s.cfg.UnreachableGrace
}

func (s *Service) terminalViewLocked() TerminalView {
	st := s.status
	tv := TerminalView{State: st.State, Name: st.Name, Address: st.Address, Demo: s.cfg.Demo, Ready: s.ready}
	if tv.State == "" {
		tv.State = TerminalNone
	}
	if tv.State == TerminalUnreachable {
		tv.Since = st.Since
	}
	if ok, problem := s.usableLocked(); !ok {
		tv.Problem = problem
	}
	open, _ := s.openLocked()
	tv.CardPay, _ = s.terminalUsableLocked()
	tv.CardPay = tv.CardPay && open
	tv.PhonePay = open && s.cfg.Links != nil
	return tv
}
