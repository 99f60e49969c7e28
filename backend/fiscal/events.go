package fiscal

import (
	"context"
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
)

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
