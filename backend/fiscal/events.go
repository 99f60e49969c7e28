package fiscal

import (
	"context"
	"encoding/json"
	"fmt"
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

// Start records the kiosk's start, and before it what changed since the
// last record: another software version (an update), a clock now behind
// the last record's time (moved back).
func (l *Ledger) Start(ctx context.Context, detail string) error {
	var lastSoftware string
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
	err := l.eachRecord(ctx, journal.FiscalEvent, func(r journal.FiscalRecord) error {
		var e Event
		if json.Unmarshal(r.Payload, &e) == nil && e.Type == EventStart {
			lastSoftware = e.Software
		}
		return nil
	})
	if err != nil {
		return err
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

// Event records a technical event.
func (l *Ledger) Event(ctx context.Context, typ, who, detail string) (journal.FiscalRecord, error) {
	tips := map[string]int64{}
	if typ == EventStart || typ == EventStop {
		for _, kind := range journal.FiscalKinds {
			n, err := l.db.FiscalTip(ctx, kind)
			if err != nil {
				return journal.FiscalRecord{}, err
			}
			tips[kind] = n
		}
	}
	rec, _, err := l.append(ctx, journal.FiscalEvent, "", func(seq int64, at time.Time) (any, error) {
		e := Event{Number: seq, Type: typ, At: at, Kiosk: l.Kiosk, Software: l.Software, Who: who, Detail: detail}
		if len(tips) > 0 {
			e.Tips = tips
		}
		return e, nil
	})
	return rec, err
}
