package kiosk

import (
	"sync"

	"github.com/comptoir-pos/comptoir/backend/discovery"
	"github.com/comptoir-pos/comptoir/backend/payment"
)

// Relay forwards the orchestrator's (and the discovery Tracker's) events to
// a Service created after them, and to Next, if set. Events before the
// Service is bound are only forwarded to Next: the Service reads the
// attempt's state itself.
type Relay struct {
	Next Emitter

	mu sync.Mutex
	s  *Service
}

// NewRelay returns a Relay forwarding to next (nil: none).
func NewRelay(next Emitter) *Relay { return &Relay{Next: next} }

func (r *Relay) bind(s *Service) {
	r.mu.Lock()
	r.s = s
	r.mu.Unlock()
}

// Emit implements payment.Emitter and discovery.Emitter.
func (r *Relay) Emit(event string, data any) {
	r.mu.Lock()
	s := r.s
	r.mu.Unlock()
	if s != nil {
		s.onEvent(event, data)
	}
	if r.Next != nil {
		r.Next.Emit(event, data)
	}
}

// PaymentEmitter is an emitter to give the orchestrator when the Service
// exists first; otherwise use a Relay.
func (s *Service) PaymentEmitter() payment.Emitter { return emitterFunc(s.onEvent) }

type emitterFunc func(string, any)

func (f emitterFunc) Emit(event string, data any) { f(event, data) }

func (s *Service) onEvent(event string, data any) {
	switch event {
	case payment.EventAttempt:
		v, ok := data.(payment.View)
		if !ok {
			return
		}
		s.mu.Lock()
		if a := s.co.att; a != nil && a.uuid == v.UUID {
			poke(a.wake)
		}
		s.mu.Unlock()
	case discovery.EventStatus:
		s.RefreshTerminal()
	}
}

func poke(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}
