package httpui

import (
	"encoding/json"
	"sync"
)

// Event is one published event, its data already JSON.
type Event struct {
	Name string
	Data json.RawMessage
}

// DefaultSubscriberBuffer is how many events a subscriber may lag behind
// before it is dropped: every event is a whole snapshot, so a dropped
// browser reconnects and is right again at once.
const DefaultSubscriberBuffer = 64

// Broadcaster fans the Service's events out to the connected browsers. It
// is the kiosk.Emitter of browser mode. It keeps the latest event of each
// name, so a new subscriber starts from the current state with nothing
// older to follow. Emit never blocks: a subscriber whose buffer is full is
// dropped (its channel closed).
type Broadcaster struct {
	mu     sync.Mutex
	subs   map[*subscriber]struct{}
	latest map[string]Event
	order  []string // names in first-seen order, for replay
	buffer int
}

type subscriber struct {
	ch     chan Event
	closed bool
}

// NewBroadcaster returns an empty Broadcaster.
func NewBroadcaster() *Broadcaster {
	return &Broadcaster{subs: map[*subscriber]struct{}{}, latest: map[string]Event{}, buffer: DefaultSubscriberBuffer}
}

// Emit implements kiosk.Emitter (and payment.Emitter, discovery.Emitter).
// Data that cannot be encoded as JSON is dropped.
func (b *Broadcaster) Emit(name string, data any) {
	raw, err := json.Marshal(data)
	if err != nil {
		return
	}
	ev := Event{Name: name, Data: raw}
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, seen := b.latest[name]; !seen {
		b.order = append(b.order, name)
	}
	b.latest[name] = ev
	for s := range b.subs {
		select {
		case s.ch <- ev:
		default:
			b.dropLocked(s)
		}
	}
}

// Subscribe returns the latest event of each name seen so far, and a
// channel of every event after them. cancel ends the subscription; the
// channel is closed when it ends or when the subscriber falls behind.
func (b *Broadcaster) Subscribe() (latest []Event, events <-chan Event, cancel func()) {
	s := &subscriber{ch: make(chan Event, b.buffer)}
	b.mu.Lock()
	for _, n := range b.order {
		latest = append(latest, b.latest[n])
	}
	b.subs[s] = struct{}{}
	b.mu.Unlock()
	return latest, s.ch, func() {
		b.mu.Lock()
		b.dropLocked(s)
		b.mu.Unlock()
	}
}

// Subscribers is how many subscribers are connected.
func (b *Broadcaster) Subscribers() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.subs)
}

func (b *Broadcaster) dropLocked(s *subscriber) {
	if s.closed {
		return
	}
	s.closed = true
	delete(b.subs, s)
	close(s.ch)
}
