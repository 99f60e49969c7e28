// Package kitchen is the kitchen screen and the order-ready board of a
// restaurant: a view folded from the restaurant's stream (backend/site),
// the orders paid at every kiosk and the bumps of every kitchen screen, in
// the stream's order. Every screen folds the same stream, so screens
// agree; a screen that reconnects resumes after the last message it
// applied, and a screen that starts replays the day: none shows an order
// twice or misses one.
package kitchen

import (
	"encoding/json"
	"slices"
	"sort"
	"time"

	"github.com/comptoir-pos/comptoir/backend/journal"
)

// Bump actions.
const (
	ActionReady   = "ready"   // a line, or the whole order (Line -1), is ready
	ActionRecall  = "recall"  // back on the screen: not ready after all
	ActionCollect = "collect" // the customer took it: off the board
)

// Bump is one action of a kitchen screen, as the stream carries it.
type Bump struct {
	Key     string `json:"key"`  // the ticket's key
	Line    int    `json:"line"` // the line's index, -1 for every line (of Station)
	Action  string `json:"action"`
	Station string `json:"station"` // the screen's station; "" for the expeditor
	At      int64  `json:"at"`      // ms since the epoch
}

// Line is one line of a ticket.
type Line struct {
	Index    int               `json:"index"`
	Product  string            `json:"product"`
	Name     map[string]string `json:"name"`
	Qty      int               `json:"qty"`
	Choices  []string          `json:"choices,omitempty"` // the choices' names, in the kitchen's language
	Category string            `json:"category,omitempty"`
	Ready    bool              `json:"ready"`
}

// Ticket is one paid order in the kitchen.
type Ticket struct {
	Key     string    `json:"key"` // kiosk/orderId: unique in the restaurant
	OrderID string    `json:"orderId"`
	Number  string    `json:"number"`
	Kiosk   string    `json:"kiosk"`
	Dining  string    `json:"dining,omitempty"` // eat_in or take_away
	Notes   string    `json:"notes,omitempty"`
	PaidAt  time.Time `json:"paidAt"`
	Lines   []Line    `json:"lines"`
	// ReadyAt is when its last line was bumped ready; zero while not.
	ReadyAt     time.Time `json:"readyAt,omitzero"`
	CollectedAt time.Time `json:"collectedAt,omitzero"`
	// Void says why it is struck through: cancelled or money given back
	// after it reached the kitchen; "" while it stands.
	Void string `json:"void,omitempty"`
	// Seq is the stream's sequence of its payment: the kitchen's order.
	Seq uint64 `json:"seq"`
	// bumped is when a screen last bumped any of it, for the recall list.
	bumped time.Time
}

// Ready says every line is ready.
func (t *Ticket) Ready() bool { return !t.ReadyAt.IsZero() }

// orderData is what the kiosk writes in a journal order's data: only
// what the kitchen reads of it.
type orderData struct {
	Number string `json:"number"`
	Dining string `json:"dining"`
	Notes  string `json:"notes"`
	Lines  []struct {
		ProductID string            `json:"productId"`
		Name      map[string]string `json:"name"`
		Qty       int               `json:"qty"`
		Choices   []struct {
			Name map[string]string `json:"name"`
		} `json:"choices"`
	} `json:"lines"`
}

// maxLines bounds what one ticket may hold: a fact is checked before it
// is believed, even from the restaurant's own stream.
const maxLines = 200

// state is the fold of the stream. Not safe for concurrent use: Kitchen
// guards it.
type state struct {
	tickets  map[string]*Ticket
	order    []string // keys in payment order
	category func(product string) string
	lang     string
	lastSeq  uint64
	version  uint64
}

func newState(category func(string) string, lang string) *state {
	if category == nil {
		category = func(string) string { return "" }
	}
	return &state{tickets: map[string]*Ticket{}, category: category, lang: lang}
}

// applyFact folds a kiosk's fact. A second payment fact of the same order
// (it needed staff, then was accepted) changes nothing.
func (s *state) applyFact(seq uint64, kiosk, kind string, data []byte) bool {
	switch kind {
	case journal.OutboxPaid:
		var f journal.OrderFact
		if json.Unmarshal(data, &f) != nil || f.OrderID == "" {
			return false
		}
		key := kiosk + "/" + f.OrderID
		if _, seen := s.tickets[key]; seen {
			return false
		}
		t := s.ticket(key, kiosk, f)
		if t == nil {
			return false
		}
		t.Seq = seq
		s.tickets[key] = t
		s.order = append(s.order, key)
		return true
	case journal.OutboxCancelled, journal.OutboxGiveBack:
		var f struct {
			OrderID string `json:"orderId"`
		}
		if json.Unmarshal(data, &f) != nil {
			return false
		}
		t := s.tickets[kiosk+"/"+f.OrderID]
		if t == nil || t.Void != "" {
			return false
		}
		t.Void = map[string]string{journal.OutboxCancelled: "cancelled", journal.OutboxGiveBack: "refunded"}[kind]
		return true
	}
	return false
}

func (s *state) ticket(key, kiosk string, f journal.OrderFact) *Ticket {
	var d orderData
	if len(f.Data) > 0 && json.Unmarshal(f.Data, &d) != nil {
		return nil
	}
	if len(d.Lines) > maxLines {
		d.Lines = d.Lines[:maxLines]
	}
	t := &Ticket{Key: key, OrderID: f.OrderID, Number: d.Number, Kiosk: kiosk, Dining: d.Dining, Notes: d.Notes,
		PaidAt: time.UnixMilli(f.At)}
	if t.Number == "" {
		t.Number = f.OrderID
	}
	for i, l := range d.Lines {
		line := Line{Index: i, Product: l.ProductID, Name: l.Name, Qty: l.Qty, Category: s.category(l.ProductID)}
		for _, c := range l.Choices {
			line.Choices = append(line.Choices, pick(c.Name, s.lang))
		}
		t.Lines = append(t.Lines, line)
	}
	return t
}

// pick is a name in lang, else in French, else any.
func pick(name map[string]string, lang string) string {
	if v := name[lang]; v != "" {
		return v
	}
	if v := name["fr"]; v != "" {
		return v
	}
	keys := make([]string, 0, len(name))
	for k := range name {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if len(keys) == 0 {
		return ""
	}
	return name[keys[0]]
}

// applyBump folds a screen's bump; the stations' categories say which
// lines a station's whole-ticket bump covers.
func (s *state) applyBump(b Bump, stations map[string][]string) bool {
	t := s.tickets[b.Key]
	if t == nil {
		return false
	}
	at := time.UnixMilli(b.At)
	switch b.Action {
	case ActionReady, ActionRecall:
		ready := b.Action == ActionReady
		changed := false
		for i := range t.Lines {
			l := &t.Lines[i]
			if (b.Line == i || (b.Line < 0 && onStation(l.Category, b.Station, stations))) && l.Ready != ready {
				l.Ready, changed = ready, true
			}
		}
		if !changed {
			return false
		}
		t.bumped = at
		all := len(t.Lines) > 0 && !slices.ContainsFunc(t.Lines, func(l Line) bool { return !l.Ready })
		switch {
		case all && t.ReadyAt.IsZero():
			t.ReadyAt = at
		case !all:
			t.ReadyAt, t.CollectedAt = time.Time{}, time.Time{}
		}
		return true
	case ActionCollect:
		if !t.CollectedAt.IsZero() {
			return false
		}
		t.CollectedAt = at
		return true
	}
	return false
}

// onStation says whether a line of category is a station's: the
// expeditor ("") has every line; a station, the lines of its categories.
func onStation(category, station string, stations map[string][]string) bool {
	if station == "" {
		return true
	}
	return slices.Contains(stations[station], category)
}
