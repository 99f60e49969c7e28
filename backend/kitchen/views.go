package kitchen

import (
	"sort"
	"time"
)

// OrdersView is what a kitchen screen shows (GET /api/kitchen/orders).
type OrdersView struct {
	Station string `json:"station"` // "" for the expeditor, who sees every station
	// Stations are the stations there are, for the screen's chooser.
	Stations []string `json:"stations"`
	Version  uint64   `json:"version"`
	Now      int64    `json:"now"` // ms since the epoch, the server's clock
	// Orders are the tickets to prepare, oldest payment first, with the
	// station's lines only.
	Orders []Ticket `json:"orders"`
	// Recent are the tickets this station bumped last, newest first: a
	// recall puts one back.
	Recent []Ticket `json:"recent"`
	// AllDay is how many of each item are still to make, most first.
	AllDay []AllDay `json:"allDay"`
	// A ticket's age turns to warn, then late, after these many seconds.
	WarnAfter int `json:"warnAfter"`
	LateAfter int `json:"lateAfter"`
	// Online: the screen follows the stream now (false while the site is
	// unreachable: what it shows may be behind).
	Online bool `json:"online"`
}

// AllDay is an item still to make, all tickets together.
type AllDay struct {
	Product string            `json:"product"`
	Name    map[string]string `json:"name"`
	Qty     int               `json:"qty"`
}

// BoardView is what the order-ready board shows (GET /api/board).
type BoardView struct {
	Version   uint64   `json:"version"`
	Preparing []string `json:"preparing"` // numbers, oldest first
	Ready     []string `json:"ready"`     // numbers, newest ready first
	Chime     bool     `json:"chime"`
	Online    bool     `json:"online"`
}

// recentMax is how many bumped tickets a screen can recall.
const recentMax = 8

// ordersView builds a station's view at now.
func (s *state) ordersView(station string, stations map[string][]string, now time.Time) OrdersView {
	v := OrdersView{Station: station, Version: s.version, Now: now.UnixMilli(), Orders: []Ticket{}, Recent: []Ticket{}, AllDay: []AllDay{}}
	for name := range stations {
		v.Stations = append(v.Stations, name)
	}
	sort.Strings(v.Stations)
	counts := map[string]*AllDay{}
	var bumped []Ticket
	for _, key := range s.order {
		t := s.tickets[key]
		if !t.CollectedAt.IsZero() && station == "" {
			continue
		}
		mine := *t
		mine.Lines = nil
		open := false
		for _, l := range t.Lines {
			if !onStation(l.Category, station, stations) {
				continue
			}
			mine.Lines = append(mine.Lines, l)
			if !l.Ready {
				open = true
				if t.Void == "" {
					c := counts[l.Product]
					if c == nil {
						c = &AllDay{Product: l.Product, Name: l.Name}
						counts[l.Product] = c
					}
					c.Qty += l.Qty
				}
			}
		}
		switch {
		case len(mine.Lines) == 0:
		case open:
			v.Orders = append(v.Orders, mine)
		case !t.bumped.IsZero():
			bumped = append(bumped, mine)
		}
	}
	sort.SliceStable(bumped, func(i, j int) bool { return s.tickets[bumped[i].Key].bumped.After(s.tickets[bumped[j].Key].bumped) })
	if len(bumped) > recentMax {
		bumped = bumped[:recentMax]
	}
	v.Recent = append(v.Recent, bumped...)
	for _, c := range counts {
		v.AllDay = append(v.AllDay, *c)
	}
	sort.Slice(v.AllDay, func(i, j int) bool {
		if v.AllDay[i].Qty != v.AllDay[j].Qty {
			return v.AllDay[i].Qty > v.AllDay[j].Qty
		}
		return v.AllDay[i].Product < v.AllDay[j].Product
	})
	return v
}

// boardView builds the board at now: a number is preparing until every
// line is ready, then ready until collected or readyFor has passed.
func (s *state) boardView(now time.Time, readyFor time.Duration) BoardView {
	v := BoardView{Version: s.version, Preparing: []string{}, Ready: []string{}}
	var ready []*Ticket
	for _, key := range s.order {
		t := s.tickets[key]
		switch {
		case t.Void != "" || !t.CollectedAt.IsZero():
		case !t.Ready():
			v.Preparing = append(v.Preparing, t.Number)
		case now.Sub(t.ReadyAt) < readyFor:
			ready = append(ready, t)
		}
	}
	sort.SliceStable(ready, func(i, j int) bool { return ready[i].ReadyAt.After(ready[j].ReadyAt) })
	for _, t := range ready {
		v.Ready = append(v.Ready, t.Number)
	}
	return v
}
