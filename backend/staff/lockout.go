package staff

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// Origin is where a PIN is typed. Wrong PINs are counted, and the pad
// locked, per origin: anyone at the customer screen can find the hidden
// corner and lock it, but that lockout never keeps staff out of another
// origin (the desktop window's keyboard shortcut, a browser). The transport
// decides the origin, never what the request says of itself: the desktop
// binding knows it is the desktop, browser mode knows it is a browser.
type Origin string

const (
	// OriginScreen: the PIN pad opened from the customer screen (its hidden
	// corner), where anyone at the kiosk can tap.
	OriginScreen Origin = "screen"
	// OriginDesktop: the desktop window's staff shortcut (Ctrl+Alt+S), a
	// keyboard at the kiosk PC itself.
	OriginDesktop Origin = "desktop"
	// OriginBrowser: browser mode's staff shortcut, from a browser.
	OriginBrowser Origin = "browser"
)

// Origins are every origin, in the order the audit trail lists them.
var Origins = []Origin{OriginScreen, OriginDesktop, OriginBrowser}

func (o Origin) valid() bool {
	switch o {
	case OriginScreen, OriginDesktop, OriginBrowser:
		return true
	}
	return false
}

// place names an origin in the audit trail's sentences.
func (o Origin) place() string {
	switch o {
	case OriginDesktop:
		return "the desktop's staff shortcut"
	case OriginBrowser:
		return "a browser"
	}
	return "the customer screen"
}

// failureRecord counts one origin's wrong PINs in a row.
type failureRecord struct {
	Count       int       `json:"count"`
	LockedUntil time.Time `json:"lockedUntil,omitzero"`
	Last        time.Time `json:"last,omitzero"`
}

// failures are the failure records by origin; an origin without one has
// no wrong PIN to its name.
type failures map[Origin]failureRecord

// readFailures reads every origin's record. Older builds kept one record
// for everyone: it is read as every origin's. A damaged record counts as
// every origin locked at its maximum rather than as zero: resetting it
// would be a way around the lockout (comptoir pin, or a recovery code,
// clears it).
func (s *Staff) readFailures(ctx context.Context) (failures, error) {
	fs := failures{}
	raw, ok, err := s.cfg.Journal.Setting(ctx, SettingPINFailures)
	if err != nil {
		return nil, journalErr(err, "Reading the PIN lockout")
	}
	if !ok {
		return fs, nil
	}
	locked := func() failures {
		for _, o := range Origins {
			fs[o] = failureRecord{Count: 99, LockedUntil: s.now().Add(MaxLockout)}
		}
		return fs
	}
	var top map[string]json.RawMessage
	if json.Unmarshal(raw, &top) != nil {
		return locked(), nil
	}
	if _, old := top["count"]; old {
		var f failureRecord
		if json.Unmarshal(raw, &f) != nil {
			return locked(), nil
		}
		for _, o := range Origins {
			fs[o] = f
		}
		return fs, nil
	}
	for _, o := range Origins {
		v, ok := top[string(o)]
		if !ok {
			continue
		}
		var f failureRecord
		if json.Unmarshal(v, &f) != nil {
			return locked(), nil
		}
		fs[o] = f
	}
	return fs, nil
}

func (s *Staff) writeFailures(ctx context.Context, fs failures) error {
	raw, _ := json.Marshal(fs)
	if err := s.cfg.Journal.SetSetting(ctx, SettingPINFailures, raw); err != nil {
		return journalErr(err, "Recording the PIN attempt")
	}
	return nil
}

// lockoutFor is how long the pad locks after count wrong PINs in a row.
func lockoutFor(count int) time.Duration {
	if count < MaxPINFailures {
		return 0
	}
	d := FirstLockout
	for i := MaxPINFailures; i < count; i++ {
		d *= 2
		if d >= MaxLockout {
			return MaxLockout
		}
	}
	return d
}

func lockedOut(retry time.Duration) *Error {
	secs := int((retry + time.Second - 1) / time.Second)
	wait := fmt.Sprintf("%d seconds", secs)
	if secs >= 120 {
		wait = fmt.Sprintf("%d minutes", (secs+59)/60)
	}
	return &Error{Code: ELOCKEDOUT, RetryAfter: retry, Message: "Too many wrong PINs: the PIN pad is locked here for " + wait +
		". A recovery code, or `comptoir pin --clear-lockout` on this PC, lifts the lock."}
}

// wrongPIN counts a wrong PIN from origin (fs is the records read under
// pinMu) and locks that origin's pad once there are too many in a row;
// every lockout is written to the audit trail. Unlock and ChangePIN share
// the count: a session left open must not be a way to guess the PIN.
func (s *Staff) wrongPIN(ctx context.Context, fs failures, origin Origin, who, action string) error {
	now := s.now()
	f := fs[origin]
	f.Count++
	f.Last = now.UTC()
	lock := lockoutFor(f.Count)
	if lock > 0 {
		f.LockedUntil = now.Add(lock).UTC()
	}
	fs[origin] = f
	if err := s.writeFailures(ctx, fs); err != nil {
		return err
	}
	s.audit(ctx, who, action, string(origin), fmt.Sprintf("wrong staff PIN at %s (%d in a row)", origin.place(), f.Count), nil)
	s.log.Warn("staff: wrong PIN", "origin", origin, "inARow", f.Count, "lockedFor", lock)
	if lock > 0 {
		s.audit(ctx, "system", ActionLockout, string(origin),
			fmt.Sprintf("PIN pad at %s locked for %s after %d wrong PINs in a row (until %s)", origin.place(), lock, f.Count, f.LockedUntil.Format(time.RFC3339)), nil)
		return lockedOut(lock)
	}
	left := MaxPINFailures - f.Count
	return errorf(EWRONGPIN, "Wrong PIN. %d more wrong PIN(s) and the pad locks.", left)
}

// Audit trail actions of the lockout.
const (
	ActionLockout        = "pin_lockout"     // an origin's pad locked
	ActionLockoutCleared = "lockout_cleared" // every lockout lifted (comptoir pin, a recovery code)
)

// ClearLockouts lifts every origin's lockout and forgets their wrong
// PINs, leaving the PIN as it is: for whoever has the machine itself
// (`comptoir pin --clear-lockout`). who names the caller in the audit
// trail.
func (s *Staff) ClearLockouts(ctx context.Context, who string) error {
	s.pinMu.Lock()
	defer s.pinMu.Unlock()
	if err := s.writeFailures(ctx, failures{}); err != nil {
		return err
	}
	s.audit(ctx, who, ActionLockoutCleared, "", "every PIN pad lockout lifted from outside staff mode", nil)
	return nil
}
