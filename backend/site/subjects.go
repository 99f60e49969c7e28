package site

import (
	"fmt"
	"strings"
	"time"
)

// Stream names and limits.
const (
	StreamOrders   = "ORDERS"
	StreamPresence = "PRESENCE"
	// DuplicateWindow is how long the stream remembers a Nats-Msg-Id. A
	// row is published again only when the process stopped between the
	// stream's acknowledgement and the mark in the journal, so seconds
	// apart; a day also covers a journal restored from the morning's
	// backup.
	DuplicateWindow = 24 * time.Hour
	// DefaultMaxAge is how long the site keeps what it was told: a
	// kitchen screen catches up from the start of the day, and head office
	// may be cut for days.
	DefaultMaxAge = 30 * 24 * time.Hour
)

// Headers the publisher sets besides Nats-Msg-Id.
const (
	HeaderKiosk = "Comptoir-Kiosk"
	HeaderSeq   = "Comptoir-Seq" // the outbox row's order in its journal
)

// ValidToken reports whether s can stand as one subject token (a
// restaurant, a kiosk, a station): letters, digits, '-' and '_', 1 to 32.
func ValidToken(s string) bool {
	if s == "" || len(s) > 32 {
		return false
	}
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
		default:
			return false
		}
	}
	return true
}

// Subjects are a restaurant's subjects.
type Subjects struct{ Restaurant string }

// NewSubjects checks the restaurant's name.
func NewSubjects(restaurant string) (Subjects, error) {
	if !ValidToken(restaurant) {
		return Subjects{}, fmt.Errorf("restaurant %q: letters, digits, '-' and '_' only, at most 32", restaurant)
	}
	return Subjects{Restaurant: restaurant}, nil
}

func (s Subjects) root() string { return "comptoir." + s.Restaurant }

// Fact is the subject of a kiosk's outbox row of kind (journal.Outbox...).
func (s Subjects) Fact(kiosk, kind string) string { return s.root() + ".k." + kiosk + "." + kind }

// Facts matches every kiosk's facts.
func (s Subjects) Facts() string { return s.root() + ".k.>" }

// Bump is the subject of a kitchen station's bumps.
func (s Subjects) Bump(station string) string { return s.root() + ".kitchen." + station + ".bump" }

// Bumps matches every station's bumps.
func (s Subjects) Bumps() string { return s.root() + ".kitchen.>" }

// Presence is the subject of a kiosk's heartbeat.
func (s Subjects) Presence(kiosk string) string { return s.root() + ".presence." + kiosk }

// Presences matches every kiosk's heartbeat.
func (s Subjects) Presences() string { return s.root() + ".presence.*" }

// KioskOf returns the kiosk of a fact's subject and the fact's kind.
func (s Subjects) KioskOf(subject string) (kiosk, kind string, ok bool) {
	rest, found := strings.CutPrefix(subject, s.root()+".k.")
	if !found {
		return "", "", false
	}
	kiosk, kind, ok = strings.Cut(rest, ".")
	return kiosk, kind, ok && kiosk != "" && kind != ""
}
