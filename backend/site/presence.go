package site

import (
	"context"
	"encoding/json"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Presence is a kiosk's heartbeat: that it is up, and what staff at the
// site or head office want to see of it at a glance.
type Presence struct {
	Kiosk      string `json:"kiosk"`
	Restaurant string `json:"restaurant"`
	At         int64  `json:"at"`       // ms since the epoch
	Terminal   string `json:"terminal"` // connected, unreachable, searching...
	Ready      bool   `json:"ready"`    // taking orders
	// NeedStaff is how many attempts have an unknown outcome.
	NeedStaff int    `json:"needStaff"`
	Version   string `json:"version"`
	// Menu is the version of head office's menu in force here; MenuError
	// why the last one was refused ("" when it was applied).
	Menu      uint64 `json:"menu,omitempty"`
	MenuError string `json:"menuError,omitempty"`
}

// PresenceEvery is how often a kiosk says it is up; one not heard from
// for three times as long is offline.
const PresenceEvery = 10 * time.Second

// RunPresence publishes report() every interval, and at once on a kick,
// until ctx ends. A heartbeat that cannot be sent is dropped: the next
// one says the same.
func RunPresence(ctx context.Context, js jetstream.JetStream, subj Subjects, interval time.Duration, report func() Presence, kick <-chan struct{}) {
	if interval <= 0 {
		interval = PresenceEvery
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		p := report()
		p.Restaurant, p.At = subj.Restaurant, time.Now().UnixMilli()
		if data, err := json.Marshal(p); err == nil && ValidToken(p.Kiosk) {
			_, _ = js.PublishAsync(subj.Presence(p.Kiosk), data)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-kick:
		}
	}
}
