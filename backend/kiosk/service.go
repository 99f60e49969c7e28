package kiosk

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/comptoir-pos/comptoir/backend/device"
	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/payment"
	"github.com/comptoir-pos/comptoir/backend/receipt"
	"github.com/comptoir-pos/comptoir/backend/settings"
)

// Message keys of refused intents (CheckoutView.Error); the UI translates them.
const (
	ErrCartEmpty           = "error.cart_empty"
	ErrUnknownProduct      = "error.unknown_product"
	ErrWrongPhase          = "error.wrong_phase"
	ErrTerminalUnavailable = "error.terminal_unavailable"
	ErrAmount              = "error.amount"
	ErrDining              = "error.dining"  // neither eat in nor take away
	ErrChoices             = "error.choices" // the product's options are missing or do not fit
	// ErrQuantity: a line's quantity outside 1 to MaxQty.
	ErrQuantity = "error.quantity"
	// ErrOrderLimit: the cart would pass MaxLines lines or MaxOrderTotal.
	ErrOrderLimit = "error.order_limit"
	// ErrPartlyPaid: CancelOrder after a part (the meal voucher) was charged:
	// the customer must pay the rest or call staff, never be told "cancelled".
	ErrPartlyPaid = "error.partly_paid"
	// ErrJournal: the order could not be recorded; nothing was sent.
	ErrJournal = "error.journal"
	// ErrPrinter: nothing could be printed (no printer, or it refused).
	ErrPrinter = "error.printer"
)

// Estimates of the terminal's windows, for the UI's countdown only: the
// terminal decides. Attempt start + handover + card read (+ the optional
// screens in counter mode).
const (
	DeadlineHandover = 1500 * time.Millisecond
	DeadlineCardRead = 60 * time.Second
	DeadlineScreens  = 60 * time.Second
)

// Default intervals.
const (
	DefaultPollInterval     = 250 * time.Millisecond // the attempt in progress, whatever the events say
	DefaultTerminalInterval = time.Second            // the terminal source
	DefaultRecoverRetry     = 5 * time.Second        // recovery after an unreachable terminal
	// DefaultUnreachableGrace: a terminal unreachable this long, with no
	// other way to pay, closes the welcome screen to new orders (a blip of
	// a few seconds does not).
	DefaultUnreachableGrace = 15 * time.Second
	DefaultLinkScreen       = 5 * time.Minute // a payment link's QR code on screen
	receiptTimeout          = 30 * time.Second
	// shareTimeout bounds a receipt sent by e-mail or SMS: the terminal
	// prompts the customer for the address or number, which takes a while.
	shareTimeout = 125 * time.Second
)

// Config wires a Service.
type Config struct {
	Journal  *journal.DB
	Payments *payment.Orchestrator
	// Links pays orders with payment links on the customer's phone; nil:
	// not offered.
	Links *payment.Orchestrator
	// LinkScreen is how long the kiosk shows a payment link's QR code
	// before it cancels the link (nothing paid, nothing printed) or goes
	// back to welcome leaving it to run (printed). 0: DefaultLinkScreen.
	LinkScreen time.Duration
	// Printer prints order tickets and receipts and shares receipts; nil:
	// receipts fail with a message, the order ticket is not printed.
	Printer device.Printer
	// Sales records a paid order's sale ticket in the fiscal journal (once)
	// and returns the mentions its receipt prints; nil: none printed.
	Sales func(ctx context.Context, orderID string) (*receipt.Fiscal, error)
	// Duplicate records a reprint of an order's receipt in the fiscal
	// journal and returns the mentions of the copy (DUPLICATA n° k, k
	// counting the reprints of its ticket, staff's included), as staff
	// mode's reprints do; nil: a customer's second print is refused.
	Duplicate func(ctx context.Context, orderID string) (*receipt.Fiscal, error)
	Terminal  TerminalSource // nil: FixedTerminal("", "")
	Emitter   Emitter        // nil: no events
	// Relay, when set, is bound to the Service: pass the same Relay as the
	// orchestrator's (and the discovery Tracker's) Emitter, built before.
	Relay   *Relay
	DataDir string // where catalog.json is read
	Demo    bool
	Version string
	Now     func() time.Time
	Logger  *slog.Logger

	PollInterval     time.Duration
	TerminalInterval time.Duration
	RecoverRetry     time.Duration
	UnreachableGrace time.Duration
}

// Service is the kiosk's application service. Safe for concurrent use: one
// mutex guards the state and is never held while the terminal is called.
type Service struct {
	cfg    Config
	log    *slog.Logger
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	termWake chan struct{}
	seqMu    sync.Mutex // the daily order number

	emitMu       sync.Mutex
	emittedCheck uint64
	emittedTerm  uint64

	mu         sync.Mutex
	settings   settings.Settings
	catalog    *Catalog
	catalogErr error
	status     TerminalStatus
	ready      bool
	recoverErr string
	hold       string // why orders are held (Hold), "" when they are not
	term       TerminalView
	lastTerm   TerminalView // the last published
	lastCheck  CheckoutView
	termSeq    uint64
	checkSeq   uint64
	co         checkout
	started    time.Time // the date of the embedded pictures
	sized      *sizedCache
}

// New returns a Service. It reads the settings and the catalog; an invalid
// catalog leaves the kiosk unavailable (never a demo menu in a real shop),
// with the error in TerminalView.Problem. Call Run to recover unfinished
// payments and follow the terminal.
func New(cfg Config) (*Service, error) {
	if cfg.Journal == nil || cfg.Payments == nil {
		return nil, errors.New("kiosk: a journal and a payment orchestrator are required")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Terminal == nil {
		cfg.Terminal = FixedTerminal("", "")
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = DefaultPollInterval
	}
	if cfg.TerminalInterval <= 0 {
		cfg.TerminalInterval = DefaultTerminalInterval
	}
	if cfg.UnreachableGrace <= 0 {
		cfg.UnreachableGrace = DefaultUnreachableGrace
	}
	if cfg.RecoverRetry <= 0 {
		cfg.RecoverRetry = DefaultRecoverRetry
	}
	if cfg.LinkScreen <= 0 {
		cfg.LinkScreen = DefaultLinkScreen
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	s := &Service{cfg: cfg, log: log, termWake: make(chan struct{}, 1), started: time.Now(), sized: newSizedCache()}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	ctx, cancel := context.WithTimeout(s.ctx, 10*time.Second)
	defer cancel()
	st, err := settings.LoadSettings(ctx, cfg.Journal, log)
	if err != nil {
		return nil, fmt.Errorf("kiosk: settings: %w", err)
	}
	s.settings = st
	s.catalog, s.catalogErr = LoadCatalog(cfg.DataDir)
	if s.catalogErr != nil {
		log.Error("catalog refused: the kiosk takes no orders", "err", s.catalogErr)
	}
	s.status = cfg.Terminal.TerminalStatus()
	s.co = checkout{phase: PhaseWelcome, language: st.DefaultLanguage}
	s.term = s.terminalViewLocked()
	s.availabilityLocked()
	if cfg.Relay != nil {
		cfg.Relay.bind(s)
	}
	return s, nil
}

// Close stops the Service's goroutines (attempts stay with the orchestrator).
func (s *Service) Close() {
	s.cancel()
	s.wg.Wait()
}

// Run recovers unfinished payments (retrying while the terminal cannot be
// reached) and follows the terminal's status until ctx ends. No order is
// taken before recovery is complete.
func (s *Service) Run(ctx context.Context) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-s.ctx.Done():
			cancel()
		case <-ctx.Done():
		}
	}()
	done := make(chan struct{})
	go func() { defer close(done); s.recoverLoop(ctx) }()
	defer func() { <-done }()
	tick := time.NewTicker(s.cfg.TerminalInterval)
	defer tick.Stop()
	for {
		s.refreshTerminal()
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-s.termWake:
		}
	}
}

// settleLeft closes an order no screen follows any more (recovery left it
// behind, the customer long gone; or its payment link ended away from the
// screen), once none of its attempts is still open: cancelled when nothing
// was charged, needs_attention when a part was (a meal-voucher part and no
// card part after it): nobody else would ever look at either. why says
// what left it.
func (s *Service) settleLeft(ctx context.Context, orderID, why string) {
	ord, err := s.cfg.Journal.Order(ctx, orderID)
	if err != nil || ord.Status != journal.OrderOpen {
		return // paid, closed, or staff's to settle
	}
	atts, err := s.cfg.Journal.AttemptsForOrder(ctx, orderID)
	if err != nil {
		return
	}
	for _, a := range atts {
		if a.State.Open() {
			return // still being resolved
		}
	}
	if err := s.cfg.Journal.CloseOrder(ctx, orderID, why+": the customer gone"); err != nil {
		s.log.Error("settle a recovered order", "order", orderID, "err", err)
		return
	}
	s.log.Warn("order closed: "+why, "order", orderID)
}

func (s *Service) recoverLoop(ctx context.Context) {
	for {
		views, err := s.cfg.Payments.Recover(ctx)
		if s.cfg.Links != nil && err == nil {
			// Links recover without waiting for their customers.
			var more []payment.View
			more, err = s.cfg.Links.Recover(ctx)
			views = append(views, more...)
		}
		for _, v := range views {
			s.log.Warn("recovered an unfinished attempt", "uuid", v.UUID, "order", v.OrderID, "state", v.State, "message", v.Message)
			if s.linkAway(v) {
				continue
			}
			s.settleLeft(ctx, v.OrderID, "recovered after a stop")
		}
		s.changeAvailability(func() {
			if err == nil {
				s.ready, s.recoverErr = true, ""
			} else {
				s.recoverErr = err.Error()
				s.log.Warn("recovery incomplete: no new order until it is", "err", err)
			}
		})
		if err == nil {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(s.cfg.RecoverRetry):
		}
	}
}

// Hold keeps the kiosk from taking orders, for reason (a sentence for
// staff, shown on the unavailable screen), until Hold(""). An order already
// started goes on.
func (s *Service) Hold(reason string) {
	s.changeAvailability(func() { s.hold = reason })
}

// Reload reads the settings and the catalog again. An invalid catalog is
// refused and the previous one stays; the error names the line and field.
func (s *Service) Reload() error {
	st, serr := settings.LoadSettings(s.ctx, s.cfg.Journal, s.log)
	cat, cerr := LoadCatalog(s.cfg.DataDir)
	s.mu.Lock()
	if serr == nil {
		s.settings = st
	}
	if cerr == nil {
		s.catalog, s.catalogErr = cat, nil
	} else if s.catalog == nil {
		s.catalogErr = cerr
	}
	s.availabilityLocked()
	c, t := s.snapshotsLocked(false)
	s.mu.Unlock()
	s.publish(c, t)
	if cerr != nil {
		s.log.Error("catalog refused: the previous one stays", "err", cerr)
		return cerr
	}
	return serr
}

// Settings returns the settings in force.
func (s *Service) Settings() settings.Settings {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.settings
}

func (s *Service) now() time.Time { return s.cfg.Now() }

// --- intents that need no terminal ---
