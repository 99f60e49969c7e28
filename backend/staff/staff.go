// Package staff is what a member of staff does at a kiosk when something
// went wrong: unlock with a PIN, look at the journal and at the terminal's
// own history side by side, reverse or refund a payment, reprint or share a
// receipt, settle an attempt whose outcome is unknown, change settings and
// read the end-of-day report.
//
// The customer never reaches any of it: every operation takes the id of a
// session opened by Unlock with the staff PIN, and fails with ESESSION once
// the session has expired or been locked.
//
// Every action is written to the audit trail, with who did it (the session,
// as "staff:<first 8 characters of its id>"), what, when and the terminal's
// raw answer: on the attempt's own events when the action concerns a journal
// attempt (journal.AddNote, journal.Resolve), otherwise in the journal's
// append-only audit table (journal.AppendAudit, read back by Audit). Actions
// taken elsewhere in the app during a session go there too, through Record.
//
// Money rules carried over from the orchestrator: a reversal's amount is
// computed from the terminal's transaction (amount + giftAmount), never
// typed; a refund is a payment attempt of its own (its own uuid, journaled
// before it leaves, never more than was charged); a transport error once a
// request may have reached the terminal is "unknown, check the terminal's
// history", never "failed".
package staff

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/comptoir-pos/comptoir/backend/device"
	"github.com/comptoir-pos/comptoir/backend/fiscal"
	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/payment"
	"github.com/comptoir-pos/comptoir/backend/receipt"
	"github.com/comptoir-pos/comptoir/backend/reconcile"
)

// Config wires a Staff service.
type Config struct {
	Journal  *journal.DB
	Payments *payment.Orchestrator // refunds go through it; nil: Refund is refused
	// Links sends, cancels and captures payment links (the provider's
	// cloud); nil: not offered.
	Links *payment.Orchestrator
	// Refunds gives money back without the card, through the provider's
	// Webservices (refunds by API); nil: not offered.
	Refunds *payment.Orchestrator
	// Duplicate records a reprint of an order's receipt in the fiscal
	// journal and returns the copy's mentions (DUPLICATA n° k); nil: a
	// reprint is not recorded there.
	Duplicate func(ctx context.Context, orderID string) (*receipt.Fiscal, error)
	// Ledger keeps the fiscal records (tickets, closings); nil: the Z is
	// not offered.
	Ledger *fiscal.Ledger
	// Reconcile sets a day (yyyy-MM-dd, the kiosk's; "" today) of the
	// journal beside the terminal's history and the provider's record;
	// nil: not offered.
	Reconcile func(ctx context.Context, day string) (reconcile.Report, error)
	// Currency is the kiosk's currency when no setting names one (the
	// catalog's). Nil: the default.
	Currency func() string
	// Terminal prints, shares receipts and reads the history (whatever
	// channel carries them); reversals and refunds go through Payments.
	Terminal device.Terminal
	// Limits are shown on the terminal screen (the orchestrator's timeouts).
	// Zero: payment.DefaultLimits.
	Limits payment.Limits
	Now    func() time.Time // nil: time.Now
	Logger *slog.Logger     // nil: discard
	// SessionTTL is how long a session lasts without activity. Default 5 min.
	SessionTTL time.Duration
	// Demo accepts DemoPIN while no PIN has been set (the demo build says so
	// on screen). Never set it on a kiosk taking real payments.
	Demo bool
	// Location is the time zone of "a day" (today, the end-of-day report).
	// Nil: time.Local.
	Location *time.Location
	// Argon2 overrides the PIN hashing cost (tests use a cheap one). Nil:
	// DefaultArgon2. The parameters are stored with each hash, so changing
	// them never invalidates a PIN already set.
	Argon2 *Argon2Params
	// OnSettingsChanged is called after a setting was saved, so the kiosk
	// can reload its settings. Nil: nothing.
	OnSettingsChanged func(key string)
	// TerminalTimeout bounds one non-payment call to the terminal
	// (/reversal, /transactions, /print, /share-receipt, /ping). Default 30 s.
	TerminalTimeout time.Duration
}

// Staff is the staff service. Its methods are safe for concurrent use.
type Staff struct {
	cfg Config
	log *slog.Logger

	pinMu    sync.Mutex // PIN checks and the failure counter, one at a time
	mu       sync.Mutex
	sessions map[string]*session

	actMu sync.Mutex // one money action (reversal, resolution) at a time

	pageSize int // /transactions page size when reading a whole range; tests shrink it
}

// New returns a Staff service.
func New(cfg Config) (*Staff, error) {
	if cfg.Journal == nil || cfg.Terminal == nil {
		return nil, errors.New("staff: a journal and a terminal are required")
	}
	if cfg.Argon2 != nil {
		if err := cfg.Argon2.check(); err != nil {
			return nil, fmt.Errorf("staff: the PIN hash's cost: %w", err)
		}
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.SessionTTL <= 0 {
		cfg.SessionTTL = DefaultSessionTTL
	}
	if cfg.Location == nil {
		cfg.Location = time.Local
	}
	if cfg.Limits == (payment.Limits{}) {
		cfg.Limits = payment.DefaultLimits
	}
	if cfg.TerminalTimeout <= 0 {
		cfg.TerminalTimeout = 30 * time.Second
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return &Staff{cfg: cfg, log: log, sessions: map[string]*session{}, pageSize: device.MaxHistoryPage}, nil
}

func (s *Staff) now() time.Time { return s.cfg.Now() }

// terminalCtx bounds one call to the terminal.
func (s *Staff) terminalCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, s.cfg.TerminalTimeout)
}
