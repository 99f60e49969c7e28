package discovery

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/comptoir-pos/comptoir/backend/localapi"
)

// EventStatus is the name of the event carrying a Status.
const EventStatus = "terminal:status"

// DefaultStoreKey is the Store key of the chosen instance name.
const DefaultStoreKey = "terminal.instance"

// Defaults of Config.
const (
	DefaultPingInterval    = 15 * time.Second
	DefaultSearchInterval  = 2 * time.Second
	DefaultResolveInterval = 10 * time.Second
)

// ErrNoTerminal is the cause of the *localapi.TransportError a Tracker
// returns while it has no terminal: nothing was sent.
var ErrNoTerminal = errors.New("discovery: no terminal chosen yet")

// Emitter publishes events; the desktop forwards them to the UI.
type Emitter interface {
	Emit(event string, data any)
}

// Store remembers the chosen instance name. The application backs it with
// the journal's settings table; MemoryStore serves tests.
type Store interface {
	Get(ctx context.Context, key string) (value string, ok bool, err error)
	Set(ctx context.Context, key, value string) error
}

// MemoryStore is a Store in memory. The zero value is ready.
type MemoryStore struct {
	mu sync.Mutex
	m  map[string]string
}

func (s *MemoryStore) Get(_ context.Context, key string) (string, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.m[key]
	return v, ok, nil
}

func (s *MemoryStore) Set(_ context.Context, key, value string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string]string{}
	}
	s.m[key] = value
	return nil
}

// State is where a Tracker stands.
type State string

const (
	StateSearching   State = "searching"   // no terminal yet; browsing
	StateChoose      State = "choose"      // several terminals, none chosen: staff pick one
	StateConnected   State = "connected"   // Instance at Address answers
	StateUnreachable State = "unreachable" // Instance stopped answering at Since
	StateManual      State = "manual"      // a fixed address; discovery is off
)

// Status is what the UI shows about the terminal.
type Status struct {
	State    State  `json:"state"`
	Instance string `json:"instance,omitempty"`
	// Address is the Local API base URL in use (or last in use).
	Address string `json:"address,omitempty"`
	// Since is when this state began (for unreachable: since when the
	// terminal has not answered); a new address while connected resets it.
	Since time.Time `json:"since"`
	// Candidates are the confirmed terminals to choose from (state choose,
	// or unreachable when others answer).
	Candidates []Terminal `json:"candidates,omitempty"`
	// Pending is a device that answers under the terminal's name with
	// another identity (a new address on plain HTTP, another certificate):
	// it is not used until staff confirm it. The state stays unreachable
	// meanwhile: the adopted terminal does not answer.
	Pending   *Candidate `json:"pending,omitempty"`
	LastError string     `json:"lastError,omitempty"`
}

func (s Status) equal(o Status) bool {
	if s.State != o.State || s.Instance != o.Instance || s.Address != o.Address ||
		!s.Since.Equal(o.Since) || s.LastError != o.LastError || len(s.Candidates) != len(o.Candidates) ||
		(s.Pending == nil) != (o.Pending == nil) || (s.Pending != nil && *s.Pending != *o.Pending) {
		return false
	}
	for i := range s.Candidates {
		if s.Candidates[i].Instance != o.Candidates[i].Instance || s.Candidates[i].BaseURL != o.Candidates[i].BaseURL {
			return false
		}
	}
	return true
}

// Config configures a Tracker.
type Config struct {
	// Browse configures every browse window and confirming ping.
	Browse Options
	// Manual is a terminal address typed by staff (a base URL or
	// host[:port]). It overrides discovery and is never re-resolved.
	Manual string
	// Store remembers the chosen instance; nil is a MemoryStore.
	Store    Store
	StoreKey string // default "terminal.instance"
	// Trust keeps the adopted terminal's identity (see Identity); nil is a
	// MemoryTrust.
	Trust TrustStore
	// Held says whether payments are open on the terminal named instance
	// (requests that may be out on it, or be sent again). While they are,
	// the Tracker never moves to another device: only the device in use,
	// proven by its certificate, is followed to a new address; otherwise
	// the calls keep going to the address in use. An error counts as
	// held. Nil: never held.
	Held    func(ctx context.Context, instance string) (bool, error)
	Emitter Emitter
	// PingInterval is how often the terminal in use is pinged. Default 15 s.
	PingInterval time.Duration
	// SearchInterval is the pause between browse windows while there is no
	// terminal in use. Default 2 s.
	SearchInterval time.Duration
	// ResolveInterval is the least time between two re-resolutions of the
	// remembered instance. Default 10 s.
	ResolveInterval time.Duration
	// ClientOptions are passed to every localapi.NewClient (the Tracker
	// adds the certificate check of an https:// address).
	ClientOptions []localapi.Option
	Logger        *slog.Logger     // nil: discard
	Now           func() time.Time // nil: time.Now
}

// finder browses one window; with instance set it stops once that instance
// is confirmed. Tests replace it to drive the Tracker without mDNS.
type finder func(ctx context.Context, opts Options, instance string) ([]Terminal, error)

// Tracker keeps the terminal in use: found by discovery or typed by hand,
// remembered by instance name, followed across address changes. It
// satisfies the payment orchestrator's Terminal interface. Safe for
// concurrent use.
type Tracker struct {
	cfg  Config
	log  *slog.Logger
	find finder

	// resolveMu makes re-resolution single-flight; it is taken before mu.
	resolveMu sync.Mutex
	// emitMu orders events as the changes happen; it is taken before mu.
	emitMu sync.Mutex

	mu          sync.Mutex
	status      Status
	instance    string // the chosen instance; "" while none
	client      *localapi.Client
	inUsePin    string // the certificate of the device in use; "" on plain HTTP
	identity    Identity
	pending     *Candidate
	manual      bool
	lastResolve time.Time

	wake    chan struct{}
	cancel  context.CancelFunc
	done    chan struct{}
	started bool
}

// NewTracker returns a Tracker; Start sets it going.
func NewTracker(cfg Config) (*Tracker, error) {
	if cfg.Store == nil {
		cfg.Store = &MemoryStore{}
	}
	if cfg.Trust == nil {
		cfg.Trust = &MemoryTrust{}
	}
	if cfg.StoreKey == "" {
		cfg.StoreKey = DefaultStoreKey
	}
	if cfg.PingInterval <= 0 {
		cfg.PingInterval = DefaultPingInterval
	}
	if cfg.SearchInterval <= 0 {
		cfg.SearchInterval = DefaultSearchInterval
	}
	if cfg.ResolveInterval <= 0 {
		cfg.ResolveInterval = DefaultResolveInterval
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	t := &Tracker{
		cfg:    cfg,
		log:    log,
		find:   browse,
		wake:   make(chan struct{}, 1),
		status: Status{State: StateSearching, Since: cfg.Now()},
	}
	if cfg.Manual != "" {
		c, err := localapi.NewClient(cfg.Manual, cfg.ClientOptions...)
		if err != nil {
			return nil, err
		}
		t.manual, t.client = true, c
		t.status = Status{State: StateManual, Address: c.BaseURL(), Since: cfg.Now()}
	}
	return t, nil
}

// Start reads the remembered instance, publishes the first status and runs
// the search and the periodic ping until ctx ends or Close.
func (t *Tracker) Start(ctx context.Context) error {
	t.mu.Lock()
	if t.started {
		t.mu.Unlock()
		return errors.New("discovery: tracker already started")
	}
	t.started = true
	t.mu.Unlock()

	name, _, err := t.cfg.Store.Get(ctx, t.cfg.StoreKey)
	if err != nil {
		return fmt.Errorf("discovery: read the chosen terminal: %w", err)
	}
	id, err := t.cfg.Trust.LoadIdentity(ctx)
	if err == nil {
		err = id.Validate()
	}
	if err != nil {
		return fmt.Errorf("discovery: read the adopted terminal's identity: %w", err)
	}
	name, id = reconcileChoice(name, id)
	t.publish(true, func(s *Status) { // the first status is always published
		t.identity = id
		if name != "" {
			t.instance = name
			if !t.manual {
				s.Instance = name
			}
		}
	})
	ctx, cancel := context.WithCancel(ctx)
	t.mu.Lock()
	t.cancel, t.done = cancel, make(chan struct{})
	t.mu.Unlock()
	go t.run(ctx)
	return nil
}

// Close stops the Tracker and waits for its goroutine. Calls in flight are
// the callers' and go on.
func (t *Tracker) Close() error {
	t.mu.Lock()
	cancel, done := t.cancel, t.done
	t.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
	return nil
}

// Status returns the current status.
func (t *Tracker) Status() Status {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.status
	s.Candidates = slices.Clone(s.Candidates)
	return s
}

// BaseURL is the address in use, or "".
func (t *Tracker) BaseURL() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.client == nil {
		return ""
	}
	return t.client.BaseURL()
}

// Choose picks a terminal by instance name and remembers it. Another name
// than the adopted one is another terminal: its identity starts afresh (the
// HTTPS requirement stays). A candidate of the last browse that is alone
// under that name is adopted at once; otherwise the name is searched for.
func (t *Tracker) Choose(ctx context.Context, instance string) error {
	instance = strings.TrimSpace(instance)
	if instance == "" {
		return errors.New("discovery: choose: empty instance name")
	}
	t.resolveMu.Lock()
	defer t.resolveMu.Unlock()
	t.mu.Lock()
	id := t.identity
	var match []Terminal
	for _, c := range t.status.Candidates {
		if strings.EqualFold(c.Instance, instance) {
			match = append(match, c)
		}
	}
	t.mu.Unlock()
	if !strings.EqualFold(id.Instance, instance) {
		id = Identity{Instance: instance, HTTPS: id.HTTPS || id.Pin != ""}
	}
	var adopt *Terminal
	if len(match) == 1 && id.Judge(match[0]).Usable() {
		adopt = &match[0]
		id = adoptInto(id, *adopt, t.cfg.Now())
	}
	if err := t.cfg.Store.Set(ctx, t.cfg.StoreKey, instance); err != nil {
		return fmt.Errorf("discovery: remember the chosen terminal: %w", err)
	}
	if err := t.cfg.Trust.SaveIdentity(ctx, id); err != nil {
		return fmt.Errorf("discovery: remember the chosen terminal: %w", err)
	}
	t.update(func(s *Status) {
		t.instance, t.identity, t.pending = instance, id, nil
		t.lastResolve = time.Time{} // a new choice is looked for at once
		if t.manual {
			return
		}
		if adopt != nil {
			t.connectLocked(s, *adopt)
			return
		}
		t.client, t.inUsePin = nil, ""
		*s = Status{State: StateSearching, Instance: instance, Since: t.cfg.Now()}
	})
	t.nudge()
	return nil
}

// SetManual switches to a fixed address, or back to discovery with "".
func (t *Tracker) SetManual(address string) error {
	var c *localapi.Client
	if address != "" {
		var err error
		if c, err = localapi.NewClient(address, t.cfg.ClientOptions...); err != nil {
			return err
		}
	}
	t.update(func(s *Status) {
		now := t.cfg.Now()
		if c != nil {
			t.manual, t.client, t.inUsePin, t.pending = true, c, "", nil
			*s = Status{State: StateManual, Address: c.BaseURL(), Since: now}
			return
		}
		if t.manual {
			t.manual, t.client, t.lastResolve = false, nil, time.Time{}
			*s = Status{State: StateSearching, Instance: t.instance, Since: now}
		}
	})
	t.nudge()
	return nil
}

// PaymentBody sends a /payment body to the terminal in use (see
// localapi.Client.PaymentBody).
func (t *Tracker) PaymentBody(ctx context.Context, body []byte) (*localapi.Transaction, error) {
	return call(t, ctx, "/payment", func(c *localapi.Client) (*localapi.Transaction, error) {
		return c.PaymentBody(ctx, body)
	})
}

// Abort asks the terminal in use to abort a payment.
func (t *Tracker) Abort(ctx context.Context, req *localapi.AbortRequest) (*localapi.AbortResponse, error) {
	return call(t, ctx, "/abort", func(c *localapi.Client) (*localapi.AbortResponse, error) {
		return c.Abort(ctx, req)
	})
}

// ReversalBody sends a /reversal body to the terminal in use (see
// localapi.Client.ReversalBody).
func (t *Tracker) ReversalBody(ctx context.Context, body []byte) (*localapi.ReversalResponse, error) {
	return call(t, ctx, "/reversal", func(c *localapi.Client) (*localapi.ReversalResponse, error) {
		return c.ReversalBody(ctx, body)
	})
}

// Transactions reads a page of the history of the terminal in use.
func (t *Tracker) Transactions(ctx context.Context, req *localapi.TransactionsRequest) (*localapi.TransactionList, error) {
	return call(t, ctx, "/transactions", func(c *localapi.Client) (*localapi.TransactionList, error) {
		return c.Transactions(ctx, req)
	})
}

// Print prints on the printer of the terminal in use.
func (t *Tracker) Print(ctx context.Context, req *localapi.PrintRequest) (*localapi.StatusResponse, error) {
	return call(t, ctx, "/print", func(c *localapi.Client) (*localapi.StatusResponse, error) {
		return c.Print(ctx, req)
	})
}

// ShareReceipt asks the terminal in use to send a receipt.
func (t *Tracker) ShareReceipt(ctx context.Context, req *localapi.ShareReceiptRequest) (*localapi.StatusResponse, error) {
	return call(t, ctx, "/share-receipt", func(c *localapi.Client) (*localapi.StatusResponse, error) {
		return c.ShareReceipt(ctx, req)
	})
}

// Ping pings the terminal in use.
func (t *Tracker) Ping(ctx context.Context, showMessage bool) (*localapi.PingResponse, error) {
	return call(t, ctx, "/ping", func(c *localapi.Client) (*localapi.PingResponse, error) {
		return c.Ping(ctx, showMessage)
	})
}

// call runs f on the client in use. Only a failure that certainly sent
// nothing is retried, once, and only on a new address.
func call[T any](t *Tracker, ctx context.Context, endpoint string, f func(*localapi.Client) (T, error)) (T, error) {
	t.mu.Lock()
	c := t.client
	t.mu.Unlock()
	if c == nil {
		var zero T
		return zero, &localapi.TransportError{Endpoint: endpoint, Err: ErrNoTerminal}
	}
	v, err := f(c)
	var te *localapi.TransportError
	if err == nil || !errors.As(err, &te) || te.Sent || te.Canceled || ctx.Err() != nil {
		return v, err
	}
	next := t.reresolve(ctx, c, err)
	if next == nil {
		return v, err
	}
	t.log.Info("terminal moved: retrying a request that was not sent", "endpoint", endpoint, "from", c.BaseURL(), "to", next.BaseURL())
	return f(next)
}

// update changes the status under the lock and publishes it if it changed,
// in order.
func (t *Tracker) update(change func(s *Status)) { t.publish(false, change) }

func (t *Tracker) publish(always bool, change func(s *Status)) {
	t.emitMu.Lock()
	defer t.emitMu.Unlock()
	t.mu.Lock()
	before := t.status
	s := t.status
	s.Candidates = slices.Clone(s.Candidates)
	change(&s)
	t.status = s
	changed := always || !s.equal(before)
	s.Candidates = slices.Clone(s.Candidates)
	t.mu.Unlock()
	if changed && t.cfg.Emitter != nil {
		t.cfg.Emitter.Emit(EventStatus, s)
	}
}

func (t *Tracker) nudge() {
	select {
	case t.wake <- struct{}{}:
	default:
	}
}

func (t *Tracker) run(ctx context.Context) {
	defer close(t.done)
	for {
		t.step(ctx)
		t.mu.Lock()
		wait := t.cfg.SearchInterval
		if t.manual || t.status.State == StateConnected {
			wait = t.cfg.PingInterval
		}
		t.mu.Unlock()
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case <-t.wake:
		case <-timer.C:
		}
		timer.Stop()
	}
}

// step is one turn of the background loop: ping the terminal in use, or
// look for one.
func (t *Tracker) step(ctx context.Context) {
	t.mu.Lock()
	manual, instance, c, state := t.manual, t.instance, t.client, t.status.State
	t.mu.Unlock()
	if ctx.Err() != nil {
		return
	}
	switch {
	case manual:
		_, err := c.Ping(ctx, false)
		if ctx.Err() != nil {
			return
		}
		t.update(func(s *Status) {
			if !t.manual {
				return
			}
			s.LastError = ""
			if err != nil {
				s.LastError = err.Error()
			}
		})
	case instance != "" && state == StateConnected && c != nil:
		_, err := c.Ping(ctx, false)
		if err == nil || ctx.Err() != nil {
			return
		}
		t.log.Info("terminal did not answer the periodic ping", "instance", instance, "err", err)
		t.reresolve(ctx, nil, err)
	case instance != "":
		t.reresolve(ctx, nil, nil)
	default:
		t.discover(ctx)
	}
}
