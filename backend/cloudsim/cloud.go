package cloudsim

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/comptoir-pos/comptoir/backend/terminalsim"
)

// Limits of the specification, at real-time scale.
const (
	// NotificationValidity is how long a cloud action waits for an offline
	// terminal before it expires.
	NotificationValidity = 5 * time.Second
)

// DefaultWebhookRetries is the specification's schedule of webhook
// retries after a failed delivery; after the last the webhook is
// deactivated.
var DefaultWebhookRetries = []time.Duration{time.Minute, 10 * time.Minute, time.Hour, 8 * time.Hour}

// Config configures a simulated cloud. The zero value is one company whose
// key is "sim-key", in real time, with no terminal and no webhook.
type Config struct {
	// Key is the company's API key (Bearer on v5, Service-Secret on v4).
	Key string
	// Serials are the company's terminals, created at New, online.
	Serials []string
	// Terminal is the configuration of each virtual terminal (its Serial
	// is set from Serials); TimeScale and Logger default to the cloud's.
	Terminal terminalsim.Config
	// TimeScale multiplies the cloud's waits: the 5 s validity and the
	// webhook's retry schedule. 1 (or 0) is real time.
	TimeScale float64
	// WebhookURL receives each finished transaction; empty: none.
	WebhookURL string
	// WebhookRetries overrides DefaultWebhookRetries (before TimeScale).
	WebhookRetries []time.Duration
	// Logger receives what the cloud does; nil discards.
	Logger *slog.Logger
	// Now is the cloud's clock; nil is time.Now.
	Now func() time.Time
	// LAN: each virtual terminal also serves its own Local API on
	// loopback (LANURL), as a real one does on the shop's LAN.
	LAN bool
}

// Cloud is a simulated provider cloud.
type Cloud struct {
	cfg Config
	log *slog.Logger
	mux *http.ServeMux

	ctx    context.Context // ends at Close: deliveries stop
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu        sync.Mutex
	terminals map[string]*vterm
	txs       map[string]*txn // by the cloud's transaction id
	order     []*txn          // in creation order
	faults    faults
	webhook   webhookState
	changed   chan struct{}    // closed and replaced on every change
	carts     map[string]*cart // payment links, by cart_id
	cartOrder []*cart
	checkouts map[string]bool // checkout_external_ids claimed
	// refunds by API: by the refund's id, the refund of each original,
	// and the scripted outcomes of the next ones.
	refunds      map[string]*RefundView
	refundedBy   map[string]string
	refundScript []string
	refundHold   *refundHold
	// refuseCapture: the issuer refuses the next capture.
	refuseCapture bool
	// seen: the terminals' transactions already joined to the company's
	// (serial/terminal id); claims: the reversals the cloud asked a
	// terminal for (serial/original's terminal id), before they are made.
	seen     map[string]bool
	claims   map[string]bool
	lans     map[string]*lanLink // each terminal's own Local API on the LAN
	requests requestLog
	srv      *http.Server
	ln       net.Listener
	closed   bool
}

// vterm is a virtual terminal: the terminal simulator and whether it can
// be reached.
type vterm struct {
	serial string
	sim    *terminalsim.Terminal
	online bool
}

// New returns a simulated cloud with the configured terminals. It serves
// nothing until Start or an http.Server given Handler.
func New(cfg Config) (*Cloud, error) {
	if cfg.Key == "" {
		cfg.Key = "sim-key"
	}
	if cfg.TimeScale <= 0 {
		cfg.TimeScale = 1
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.WebhookRetries == nil {
		cfg.WebhookRetries = DefaultWebhookRetries
	}
	ctx, cancel := context.WithCancel(context.Background())
	c := &Cloud{
		cfg: cfg, log: cfg.Logger, ctx: ctx, cancel: cancel,
		terminals: map[string]*vterm{}, txs: map[string]*txn{}, carts: map[string]*cart{}, checkouts: map[string]bool{},
		refunds: map[string]*RefundView{}, refundedBy: map[string]string{},
		changed: make(chan struct{}), seen: map[string]bool{}, claims: map[string]bool{},
		lans: map[string]*lanLink{},
	}
	c.webhook.url = cfg.WebhookURL
	for _, s := range cfg.Serials {
		if _, err := c.AddTerminal(s); err != nil {
			c.Close()
			return nil, err
		}
	}
	c.mux = c.routes()
	return c, nil
}

// Key is the company's API key.
func (c *Cloud) Key() string { return c.cfg.Key }

// AddTerminal adds an online virtual terminal to the company, or returns
// the one with this serial number.
func (c *Cloud) AddTerminal(serial string) (*terminalsim.Terminal, error) {
	serial = strings.TrimSpace(serial)
	if serial == "" {
		return nil, errors.New("cloudsim: a terminal needs a serial number")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, errors.New("cloudsim: closed")
	}
	if vt := c.terminals[serial]; vt != nil {
		return vt.sim, nil
	}
	tc := c.cfg.Terminal
	tc.Serial = serial
	if tc.TimeScale == 0 {
		tc.TimeScale = c.cfg.TimeScale
	}
	if tc.Logger == nil {
		tc.Logger = c.log.With("serial", serial)
	}
	sim, err := terminalsim.New(tc)
	if err != nil {
		return nil, fmt.Errorf("cloudsim: terminal %s: %w", serial, err)
	}
	if c.cfg.LAN {
		if _, err := c.serveLANLocked(serial, sim, ""); err != nil {
			sim.Close()
			return nil, err
		}
	}
	c.terminals[serial] = &vterm{serial: serial, sim: sim, online: true}
	c.broadcastLocked()
	return sim, nil
}

// Terminal is the virtual terminal with this serial number: drive its
// customer (PresentCard, ChooseTip, Decline...) and read its ledger.
func (c *Cloud) Terminal(serial string) (*terminalsim.Terminal, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	vt := c.terminals[serial]
	if vt == nil {
		return nil, false
	}
	return vt.sim, true
}

// SetOnline connects or disconnects a terminal from the cloud: actions for
// an offline terminal wait NotificationValidity, then expire.
func (c *Cloud) SetOnline(serial string, online bool) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	vt := c.terminals[serial]
	if vt == nil {
		return fmt.Errorf("cloudsim: no terminal %q", serial)
	}
	vt.online = online
	c.broadcastLocked()
	c.log.Info("terminal connectivity", "serial", serial, "online", online)
	return nil
}

func (c *Cloud) broadcastLocked() {
	close(c.changed)
	c.changed = make(chan struct{})
}

func (c *Cloud) scaled(d time.Duration) time.Duration {
	return time.Duration(float64(d) * c.cfg.TimeScale)
}

// reach waits until the terminal is online, at most the notification's
// validity: false means the action expired.
func (c *Cloud) reach(serial string) (*vterm, bool) {
	deadline := time.NewTimer(c.scaled(NotificationValidity))
	defer deadline.Stop()
	for {
		c.mu.Lock()
		vt, changed := c.terminals[serial], c.changed
		online := vt != nil && vt.online
		c.mu.Unlock()
		if online {
			return vt, true
		}
		select {
		case <-changed:
		case <-deadline.C:
			return nil, false
		case <-c.ctx.Done():
			return nil, false
		}
	}
}

// WaitFor blocks until cond holds on the cloud's transactions (called
// after every change) or ctx ends.
func (c *Cloud) WaitFor(ctx context.Context, cond func([]Transaction) bool) error {
	for {
		c.mu.Lock()
		txs, changed := c.transactionsLocked(), c.changed
		c.mu.Unlock()
		if cond(txs) {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// newID is a cloud transaction id.
func newID(prefix string) string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// Handler serves the Cloud API and the control API under /sim/.
func (c *Cloud) Handler() http.Handler { return c.mux }

// Start listens on addr ("127.0.0.1:0" when empty) and serves in the
// background until Close.
func (c *Cloud) Start(addr string) error {
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("cloudsim: %w", err)
	}
	srv := &http.Server{Handler: c.mux, ReadHeaderTimeout: 10 * time.Second}
	c.mu.Lock()
	if c.closed || c.srv != nil {
		c.mu.Unlock()
		ln.Close()
		return errors.New("cloudsim: closed or already serving")
	}
	c.srv, c.ln = srv, ln
	c.mu.Unlock()
	go func() { _ = srv.Serve(ln) }()
	c.log.Info("simulated cloud listening", "url", c.URL())
	return nil
}

// URL is the cloud's base URL once listening, or "".
func (c *Cloud) URL() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ln == nil {
		return ""
	}
	return "http://" + c.ln.Addr().String()
}

// Serials lists the company's terminals.
func (c *Cloud) Serials() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]string, 0, len(c.terminals))
	for s := range c.terminals {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

// Close stops serving, the deliveries and the webhook retries, and closes
// every virtual terminal.
func (c *Cloud) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	srv := c.srv
	terms := make([]*vterm, 0, len(c.terminals))
	for _, vt := range c.terminals {
		terms = append(terms, vt)
	}
	lans := c.lans
	c.lans = map[string]*lanLink{}
	c.broadcastLocked()
	c.mu.Unlock()
	c.cancel()
	for _, l := range lans {
		l.close()
	}
	for _, vt := range terms {
		_ = vt.sim.Close()
	}
	var err error
	if srv != nil {
		err = srv.Close()
	}
	c.wg.Wait()
	return err
}
