package fiscal

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/comptoir-pos/comptoir/backend/journal"
)

// Technical events.
const (
	EventStart    = "start"
	EventStop     = "stop"
	EventSetting  = "setting"   // a setting changed (its key; never a secret's value)
	EventBroken   = "broken"    // Verify found a chain broken
	EventRecovery = "recovered" // unfinished attempts resumed after a stop
	// EventDuplicate: a receipt reprinted (Ticket, Copy).
	EventDuplicate = "duplicate"
	EventUpdate    = "update" // the software changed version since the last start
	EventClock     = "clock"  // the clock is behind the last record: it was moved back
	EventPIN       = "pin"    // the staff PIN set, changed or reset
)

// ClockJump is how far the wall clock may move apart from the time
// elapsed before the move is recorded as a clock event (forward or back).
const ClockJump = 5 * time.Minute

// EventRefused: a paid order whose ticket the ledger refuses to sign (a
// line out of bounds); the order waits for staff.
const EventRefused = "refused"

// Start records the kiosk's start, and before it what changed since the
// last record: a run that ended without a stop, or payment attempts left
// unfinished (a recovery); another software version (an update); a clock
// now behind the last record's time (moved back). It reads the chains'
// last records, never the journal from its start.
func (l *Ledger) Start(ctx context.Context, detail string) error {
	var lastAt time.Time
	for _, kind := range journal.FiscalKinds {
		r, ok, err := l.db.FiscalLast(ctx, kind)
		if err != nil {
			return err
		}
		if ok && r.At.After(lastAt) {
			lastAt = r.At
		}
	}
	var lastSoftware, lastType string
	err := l.rd.backward(ctx, journal.FiscalEvent, func(r journal.FiscalRecord) (bool, error) {
		var e Event
		if json.Unmarshal(r.Payload, &e) != nil {
			return true, nil
		}
		if lastType == "" {
			lastType = e.Type
		}
		if e.Type == EventStart {
			lastSoftware = e.Software
		}
		return e.Type != EventStart, nil
	})
	if err != nil {
		return err
	}
	var why []string
	if lastType != "" && lastType != EventStop {
		why = append(why, "the last run ended without a stop (its last event: "+lastType+")")
	}
	if l.PendingAtStart > 0 {
		why = append(why, fmt.Sprintf("%d unfinished payment attempts found, resumed before taking orders", l.PendingAtStart))
	}
	if len(why) > 0 {
		if _, err := l.Event(ctx, EventRecovery, "", strings.Join(why, "; ")); err != nil {
			return err
		}
	}
	if now := l.db.Now(); !lastAt.IsZero() && now.Before(lastAt) {
		if _, err := l.Event(ctx, EventClock, "", fmt.Sprintf("the clock reads %s, before the last record's %s", now.UTC().Format(time.RFC3339), lastAt.UTC().Format(time.RFC3339))); err != nil {
			return err
		}
	}
	if lastSoftware != "" && lastSoftware != l.Software {
		if _, err := l.Event(ctx, EventUpdate, "", "from "+lastSoftware+" to "+l.Software); err != nil {
			return err
		}
	}
	_, err = l.Event(ctx, EventStart, "", detail)
	return err
}

// ClockWatch notices the wall clock moving apart from the time elapsed
// while the kiosk runs: someone setting it forward (or back).
type ClockWatch struct {
	wall    time.Time
	elapsed time.Duration
	set     bool
}

// Observe takes the wall clock's reading and the time elapsed since a
// fixed point (a monotonic clock), and returns how far the wall clock
// moved beyond the time elapsed since the last reading, when that is more
// than ClockJump (0 otherwise).
func (w *ClockWatch) Observe(wall time.Time, elapsed time.Duration) time.Duration {
	prevWall, prevElapsed, set := w.wall, w.elapsed, w.set
	w.wall, w.elapsed, w.set = wall, elapsed, true
	if !set {
		return 0
	}
	jump := wall.Sub(prevWall) - (elapsed - prevElapsed)
	if jump > ClockJump || jump < -ClockJump {
		return jump
	}
	return 0
}

// ClockMoved records a clock moved while the kiosk ran.
func (l *Ledger) ClockMoved(ctx context.Context, jump time.Duration, now time.Time) error {
	dir := "forward"
	if jump < 0 {
		dir, jump = "back", -jump
	}
	_, err := l.Event(ctx, EventClock, "", fmt.Sprintf("the clock moved %s by %s while the kiosk ran: it reads %s", dir, jump.Round(time.Second), now.UTC().Format(time.RFC3339)))
	return err
}

// Event is a recorded technical event.
type Event struct {
	Number   int64     `json:"number"`
	Type     string    `json:"type"`
	At       time.Time `json:"at"`
	Kiosk    string    `json:"kiosk"`
	Software string    `json:"software"`
	Who      string    `json:"who,omitempty"`
	Detail   string    `json:"detail,omitempty"`
	// Ticket and Copy: a duplicate's ticket and its copy number.
	Ticket int64 `json:"ticket,omitempty"`
	Copy   int   `json:"copy,omitempty"`
	// Tips are the last number of each chain when the event was recorded:
	// a start says how far the chains went, so that records removed from
	// their end while the kiosk was stopped show.
	Tips map[string]int64 `json:"tips,omitempty"`
}

// Event records a technical event, with how far each chain went.
func (l *Ledger) Event(ctx context.Context, typ, who, detail string) (journal.FiscalRecord, error) {
	rec, _, err := l.event(ctx, "", Event{Type: typ, Who: who, Detail: detail})
	return rec, err
}

// event records e (once for a source, when source is not empty).
func (l *Ledger) event(ctx context.Context, source string, e Event) (journal.FiscalRecord, bool, error) {
	tips := map[string]int64{}
	for _, kind := range journal.FiscalKinds {
		n, err := l.db.FiscalTip(ctx, kind)
		if err != nil {
			return journal.FiscalRecord{}, false, err
		}
		if n > 0 {
			tips[kind] = n
		}
	}
	return l.append(ctx, journal.FiscalEvent, source, func(seq int64, at time.Time) (any, error) {
		e.Number, e.At, e.Kiosk, e.Software = seq, at, l.Kiosk, l.Software
		if len(tips) > 0 {
			e.Tips = tips
		}
		return e, nil
	})
}
