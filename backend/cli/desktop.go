package cli

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"

	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/kiosk"
	"github.com/comptoir-pos/comptoir/backend/payment"
	"github.com/comptoir-pos/comptoir/backend/settings"
)

// Desktop is what the desktop window (the main package's Wails binding)
// gets from the command line: its flags, and the kiosk and staff mode to
// start once the window exists.
type Desktop struct {
	flags commonFlags
}

// Demo: the built-in simulated terminal, no real payments.
func (d *Desktop) Demo() bool { return d.flags.isDemo() }

// Terminal is the terminal's address given on the command line, "" when
// it is found by discovery.
func (d *Desktop) Terminal() string { return d.flags.terminal }

// Windowed: an ordinary window even in kiosk mode.
func (d *Desktop) Windowed() bool { return d.flags.windowed }

// Version is the build's version.
func (d *Desktop) Version() string { return version }

// StartKiosk opens the journal, finds the terminal, recovers and starts
// the kiosk service and staff mode; the kiosk's snapshots go to em.
// ErrNoTerminal or ErrSeveralTerminals: StartStaffOnly still lets staff
// choose one.
func (d *Desktop) StartKiosk(ctx context.Context, em kiosk.Emitter, logger *slog.Logger) (*Stack, error) {
	return startKiosk(ctx, d.flags, payment.DefaultLimits, em, logger)
}

// StartStaffOnly starts staff mode alone, on the journal, for a kiosk that
// cannot start for want of a terminal.
func (d *Desktop) StartStaffOnly(ctx context.Context, logger *slog.Logger) (*Stack, error) {
	return startStaffOnly(ctx, d.flags, logger)
}

// Logger is the JSON log in the data directory (rotated), or stderr alone
// when there is no data directory.
func (d *Desktop) Logger(stderr io.Writer) (*slog.Logger, io.Closer) {
	dir, err := d.flags.resolveDataDir()
	if err != nil {
		return slog.New(slog.NewJSONHandler(stderr, nil)), io.NopCloser(nil)
	}
	return kioskLogger(dir, stderr)
}

// Frameless: a self-service kiosk has no title bar to close or move its
// window. Wails fixes the frame when the window is made, before the
// journal is open, so the mode is peeked at (without the data directory's
// lock). An unreadable mode is the default, kiosk; --windowed keeps the
// frame.
func (d *Desktop) Frameless() bool {
	if d.flags.windowed {
		return false
	}
	mode := settings.DefaultMode
	if dir, err := d.flags.resolveDataDir(); err == nil {
		raw, ok, err := journal.PeekSetting(context.Background(), dir, settings.SettingMode)
		var m string
		if err == nil && ok && json.Unmarshal(raw, &m) == nil {
			mode = m
		}
	}
	return mode != "counter"
}

// CloseAllowed says whether the window may close: always when staff chose
// Quit; never while a payment is out; in kiosk mode only by staff (unless
// --windowed); otherwise like any window.
func (d *Desktop) CloseAllowed(quitting, running bool, mode string, phase kiosk.Phase) bool {
	return closeAllowed(quitting, running, mode, d.flags.windowed, phase)
}

// closeAllowed says whether the window may close: always after staff's
// Quit or when the kiosk is not running; never in kiosk mode otherwise;
// in counter mode (a staff PC) or windowed (someone's desktop) unless a
// payment is out on the terminal.
func closeAllowed(quitting, running bool, mode string, windowed bool, phase kiosk.Phase) bool {
	switch {
	case quitting || !running:
		return true
	case mode == "kiosk" && !windowed:
		return false
	}
	return phase != kiosk.PhasePaying && phase != kiosk.PhaseCanceling
}
