package terminalsim

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/comptoir-pos/comptoir/backend/escpos"
	"github.com/comptoir-pos/comptoir/backend/localapi"
)

// Errors of the Go API.
var (
	ErrClosed    = errors.New("terminalsim: terminal closed")
	ErrNoPayment = errors.New("terminalsim: no payment in progress")
	ErrWrongStep = errors.New("terminalsim: the payment is not at a step where this action applies")
)

// Phase is the step a payment is at. Phases only move forward, in this
// order; a payment may skip Screens.
type Phase string

// Payment phases.
const (
	PhaseScreens   Phase = "screens"   // optional screens (tip): abortable
	PhasePreparing Phase = "preparing" // before the handover: abortable
	PhaseBanking   Phase = "banking"   // banking screen, card read: no longer abortable
	PhaseDone      Phase = "done"      // decided; the terminal is free
)

func (p Phase) rank() int {
	switch p {
	case PhaseScreens:
		return 1
	case PhasePreparing:
		return 2
	case PhaseBanking:
		return 3
	case PhaseDone:
		return 4
	}
	return 0
}

// Terminal is a simulated payment terminal. Its methods are safe for
// concurrent use.
type Terminal struct {
	cfg     Config
	log     *slog.Logger
	mux     *http.ServeMux
	closing chan struct{}
	wg      sync.WaitGroup // payment goroutines, handlers, the server

	mu        sync.Mutex
	closed    bool
	changed   chan struct{} // closed and replaced at every state change
	offset    time.Duration
	tips      bool
	paper     bool
	script    []Behaviour
	def       Behaviour
	revErrs   []string
	revAns    []Answer // how the next reversals' answers travel
	abortAns  []Answer // how the next aborts' answers travel
	current   *payment
	payments  map[string]*payment // by uuid, the latest with that uuid
	known     map[string]*known   // the idempotency store, by uuid
	txs       []*txRecord         // history, oldest first
	byID      map[string]*txRecord
	checkouts map[string]string // checkoutExternalId of ok transactions -> transactionId
	ledger    []LedgerEntry
	printed   []Ticket
	dropped   int
	shares    []Share
	greetings int
	// histFault and histServed: see SetHistoryFault and HistoryServed.
	histFault  HistoryFault
	histServed HistoryServed

	srv     *http.Server
	ln      net.Listener
	cert    *x509.Certificate // with Config.TLS
	tlsCert tls.Certificate
	adverts []func()
}

// known is a decided transaction, replayed verbatim to a resend.
type known struct {
	body []byte
	at   time.Time
}

// txRecord is a transaction in the terminal's history.
type txRecord struct {
	id, kind, status string // kind: debit, refund, reversal
	amount, gift     int64
	uuid, cartID     string
	reference        string
	customer         *localapi.Customer
	scheme, issuer   string
	at               time.Time
	reversedBy       string
	initial          string // of a reversal
}

// LedgerEntry is a money movement: an approved debit (amount + giftAmount),
// a refund or a reversal. It is recorded when the money moves, whatever
// becomes of the HTTP answer.
type LedgerEntry struct {
	Time                 time.Time `json:"time"` // terminal clock
	Kind                 string    `json:"kind"` // debit, refund or reversal
	TransactionID        string    `json:"transactionId"`
	InitialTransactionID string    `json:"initialTransactionId,omitempty"` // a reversal's original
	IdempotentUUID       string    `json:"idempotentUuid,omitempty"`
	CartID               string    `json:"cartId,omitempty"`
	Amount               int64     `json:"amount"`
	GiftAmount           int64     `json:"giftAmount"`
	Total                int64     `json:"total"` // amount + giftAmount
	// Net is the customer's side: +Total for a debit, -Total for a refund or
	// a reversal.
	Net      int64  `json:"net"`
	Currency string `json:"currencyCode"`
	// Answer is how the /payment answer was delivered (normal, lost, late,
	// http500); empty for reversals.
	Answer string `json:"answer,omitempty"`
	Keypad bool   `json:"keypad,omitempty"` // started on the terminal's keypad
	// TaxBreakdown is the VAT the payment's receiptTicket declared.
	TaxBreakdown []localapi.Tax `json:"taxBreakdown,omitempty"`
}

// Ticket is something the terminal printed.
type Ticket struct {
	Time   time.Time `json:"time"`
	Source string    `json:"source"` // print, payment (receiptTicket) or share (medium print)
	Format string    `json:"format"` // text or escpos
	Data   string    `json:"data"`   // as received (hex for escpos)
	Text   string    `json:"text"`   // what a reader sees
	// Lines is the decoded ESC/POS, for previews.
	Lines []escpos.Line `json:"lines,omitempty"`
	Error string        `json:"error,omitempty"` // an ESC/POS decoding error
}

// Share is a receipt shared by /share-receipt.
type Share struct {
	Time          time.Time `json:"time"`
	TransactionID string    `json:"transactionId"`
	Medium        string    `json:"medium"`
	Text          string    `json:"text"`
}

// New returns a simulated terminal. It serves nothing until Start,
// ListenAndServe or an http.Server given Handler.
func New(cfg Config) (*Terminal, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	t := &Terminal{
		cfg:     cfg,
		log:     cfg.Logger,
		closing: make(chan struct{}),
		changed: make(chan struct{}),
	}
	t.resetLocked()
	t.mux = t.routes()
	return t, nil
}

// resetLocked puts the terminal back to its configured state.
func (t *Terminal) resetLocked() {
	t.offset = 0
	t.tips = t.cfg.TipsEnabled
	t.paper = true
	t.script = nil
	t.def = Approve()
	if t.cfg.Default != nil {
		t.def = *t.cfg.Default
	}
	t.revErrs = nil
	t.revAns = nil
	t.abortAns = nil
	t.payments = map[string]*payment{}
	t.known = map[string]*known{}
	t.txs = nil
	t.byID = map[string]*txRecord{}
	t.checkouts = map[string]string{}
	t.ledger = nil
	t.printed = nil
	t.dropped = 0
	t.shares = nil
	t.greetings = 0
	t.histFault = HistoryFault{}
	t.histServed = HistoryServed{}
}

// Config returns the configuration in force, defaults filled in.
func (t *Terminal) Config() Config { return t.cfg }

// scaled converts a real-time duration to the simulator's time.
func (t *Terminal) scaled(d time.Duration) time.Duration {
	return time.Duration(float64(d) * t.cfg.TimeScale)
}

// locked runs f holding the terminal's lock.
func (t *Terminal) locked(f func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	f()
}

func (t *Terminal) broadcastLocked() {
	close(t.changed)
	t.changed = make(chan struct{})
}

func (t *Terminal) nowLocked() time.Time { return t.cfg.Now().Add(t.offset).UTC() }

// Now is the terminal's clock.
func (t *Terminal) Now() time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.nowLocked()
}

// Advance moves the terminal's clock forward by d (backward if negative).
// Timers already running are not affected: they run on scaled real time.
func (t *Terminal) Advance(d time.Duration) {
	t.locked(func() {
		t.offset += d
		t.broadcastLocked()
	})
}

// SetClock sets the terminal's clock to now.
func (t *Terminal) SetClock(now time.Time) {
	t.locked(func() {
		t.offset = now.Sub(t.cfg.Now())
		t.broadcastLocked()
	})
}

// Script queues behaviours for the next payments started through the Local
// API, one each, in order. They take precedence over the test amounts.
func (t *Terminal) Script(b ...Behaviour) {
	t.locked(func() {
		t.script = append(t.script, b...)
		t.broadcastLocked()
	})
}

// ClearScript empties the queue of scripted behaviours.
func (t *Terminal) ClearScript() { t.locked(func() { t.script = nil }) }

// SetDefault sets the behaviour of payments with nothing scripted and no test
// amount.
func (t *Terminal) SetDefault(b Behaviour) { t.locked(func() { t.def = b }) }

// SetTipsEnabled changes the terminal's own tip setting.
func (t *Terminal) SetTipsEnabled(on bool) { t.locked(func() { t.tips = on }) }

// SetPaper puts paper in the printer (true) or runs it out (false). Without
// paper /print still answers ok but nothing is printed.
func (t *Terminal) SetPaper(ok bool) { t.locked(func() { t.paper = ok }) }

// FailNextReversal makes the next reversal that would succeed answer ko with
// message instead (for example localapi.MsgReversalNoGateway). Calls queue.
func (t *Terminal) FailNextReversal(message string) {
	t.locked(func() { t.revErrs = append(t.revErrs, message) })
}

// FailNextReversalAnswers makes the next reversals' answers travel as given,
// one each, in order: AnswerLost (the reversal is made, the connection is
// closed without an answer), AnswerHTTP500 (made, answered HTTP 500 with no
// body), AnswerHTTP500NotStarted (HTTP 500 at once, nothing made),
// AnswerNormal. A reversal the terminal refuses is refused as usual.
func (t *Terminal) FailNextReversalAnswers(answers ...Answer) error {
	if err := checkAnswers(answers); err != nil {
		return err
	}
	t.locked(func() { t.revAns = append(t.revAns, answers...) })
	return nil
}

// FailNextAbortAnswers makes the next aborts' answers travel as given, one
// each, in order: AnswerHTTP500NotStarted (HTTP 500 at once, nothing
// aborted), AnswerHTTP500 (acted on, answered HTTP 500 with no body),
// AnswerLost (acted on, the connection closed without an answer),
// AnswerNormal.
func (t *Terminal) FailNextAbortAnswers(answers ...Answer) error {
	if err := checkAnswers(answers); err != nil {
		return err
	}
	t.locked(func() { t.abortAns = append(t.abortAns, answers...) })
	return nil
}

func checkAnswers(answers []Answer) error {
	for _, a := range answers {
		switch a {
		case AnswerNormal, AnswerLost, AnswerHTTP500, AnswerHTTP500NotStarted:
		default:
			return fmt.Errorf("terminalsim: answer %q does not apply here", a)
		}
	}
	return nil
}

// nextAnswerLocked takes the first of a queue of answers, AnswerNormal when
// it is empty.
func nextAnswerLocked(q *[]Answer) Answer {
	if len(*q) == 0 {
		return AnswerNormal
	}
	a := (*q)[0]
	*q = slices.Delete(*q, 0, 1)
	return a
}

// pickBehaviourLocked takes the next scripted behaviour, else the amount's,
// else the default.
func (t *Terminal) pickBehaviourLocked(amount int64) (Behaviour, string) {
	if len(t.script) > 0 {
		b := t.script[0]
		t.script = slices.Delete(t.script, 0, 1)
		return b, "script"
	}
	if !t.cfg.NoTestAmounts {
		if b, ok := BehaviourForAmount(amount); ok {
			return b, "amount"
		}
	}
	return t.def, "default"
}

// Ledger returns a copy of the money movements, oldest first.
func (t *Terminal) Ledger() []LedgerEntry {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.ledger)
}

// ChargesFor returns the debits recorded for an idempotentUuid: more than one
// would be a double charge.
func (t *Terminal) ChargesFor(uuid string) []LedgerEntry {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []LedgerEntry
	for _, e := range t.ledger {
		if e.Kind == localapi.TypeDebit && e.IdempotentUUID == uuid {
			out = append(out, e)
		}
	}
	return out
}

// Printed returns a copy of what the printer printed, oldest first.
func (t *Terminal) Printed() []Ticket {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.printed)
}

// Shares returns a copy of the receipts shared, oldest first.
func (t *Terminal) Shares() []Share {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.shares)
}

// Transaction returns the decided transaction of an idempotentUuid as the
// terminal would replay it.
func (t *Terminal) Transaction(uuid string) (*localapi.Transaction, bool) {
	t.mu.Lock()
	k := t.known[uuid]
	t.mu.Unlock()
	if k == nil {
		return nil, false
	}
	tx, err := decodeTransaction(k.body)
	return tx, err == nil
}

// PaymentInfo describes a payment in progress.
type PaymentInfo struct {
	IdempotentUUID  string    `json:"idempotentUuid"`
	Amount          int64     `json:"amount"`
	GiftAmount      int64     `json:"giftAmount"`
	TransactionType string    `json:"transactionType"`
	CartID          string    `json:"cartId,omitempty"`
	Phase           Phase     `json:"phase"`
	Screens         bool      `json:"screens"`
	Keypad          bool      `json:"keypad,omitempty"`
	AbortRequested  bool      `json:"abortRequested,omitempty"` // before the handover: it stops the payment
	AbortsHeld      int       `json:"abortsHeld,omitempty"`     // after the handover: held until the end
	Waiters         int       `json:"waiters"`                  // /payment requests waiting for its answer
	Behaviour       Behaviour `json:"behaviour"`
	BehaviourFrom   string    `json:"behaviourFrom"` // script, amount, default or keypad
	StartedAt       time.Time `json:"startedAt"`
}

// State is a snapshot of the terminal.
type State struct {
	Serial       string       `json:"serial"`
	URL          string       `json:"url,omitempty"` // the Local API base URL once listening
	Now          time.Time    `json:"now"`
	TimeScale    float64      `json:"timeScale"`
	CurrencyCode string       `json:"currencyCode"`
	TipsEnabled  bool         `json:"tipsEnabled"`
	Paper        bool         `json:"paper"`
	Current      *PaymentInfo `json:"current,omitempty"`
	Script       []Behaviour  `json:"script"`
	Default      Behaviour    `json:"default"`
	Transactions int          `json:"transactions"` // in the history
	Ledger       int          `json:"ledger"`       // entries
	Printed      int          `json:"printed"`
	Dropped      int          `json:"dropped"` // prints lost for lack of paper
	Shares       int          `json:"shares"`
	Greetings    int          `json:"greetings"` // pings with showMessage=true
	TestAmounts  bool         `json:"testAmounts"`
}

// State returns a snapshot of the terminal.
func (t *Terminal) State() State {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.stateLocked()
}

func (t *Terminal) stateLocked() State {
	s := State{
		Serial: t.cfg.Serial, Now: t.nowLocked(), TimeScale: t.cfg.TimeScale,
		CurrencyCode: t.cfg.CurrencyCode, TipsEnabled: t.tips, Paper: t.paper,
		Script: slices.Clone(t.script), Default: t.def,
		Transactions: len(t.txs), Ledger: len(t.ledger), Printed: len(t.printed),
		Dropped: t.dropped, Shares: len(t.shares), Greetings: t.greetings,
		TestAmounts: !t.cfg.NoTestAmounts, URL: t.urlLocked(),
	}
	if s.Script == nil {
		s.Script = []Behaviour{}
	}
	if p := t.current; p != nil {
		s.Current = p.infoLocked()
	}
	return s
}

// Current describes the payment in progress, if any.
func (t *Terminal) Current() (PaymentInfo, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.current == nil {
		return PaymentInfo{}, false
	}
	return *t.current.infoLocked(), true
}

// WaitPhase waits until the payment with idempotentUuid uuid has reached
// phase (or a later one). An empty uuid means the payment in progress, or the
// next one to start. It fails if the payment ended without reaching phase
// (an abort before the handover never reaches PhaseBanking).
func (t *Terminal) WaitPhase(ctx context.Context, uuid string, phase Phase) error {
	for {
		t.mu.Lock()
		p := t.current
		if uuid != "" {
			p = t.payments[uuid]
		}
		if p != nil {
			if p.reached&(1<<phase.rank()) != 0 {
				t.mu.Unlock()
				return nil
			}
			if p.phase == PhaseDone {
				t.mu.Unlock()
				return fmt.Errorf("terminalsim: payment %s ended without reaching %s", p.uuid, phase)
			}
		}
		ch, closed := t.changed, t.closed
		t.mu.Unlock()
		if closed {
			return ErrClosed
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// WaitFor waits until cond holds on the terminal's state. cond is evaluated
// now and after every change (a phase, a payment, a print, a held abort...).
func (t *Terminal) WaitFor(ctx context.Context, cond func(State) bool) error {
	for {
		t.mu.Lock()
		s, ch, closed := t.stateLocked(), t.changed, t.closed
		t.mu.Unlock()
		switch {
		case cond(s):
			return nil
		case closed:
			return ErrClosed
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// WaitIdle waits until no payment is in progress.
func (t *Terminal) WaitIdle(ctx context.Context) error {
	return t.WaitFor(ctx, func(s State) bool { return s.Current == nil })
}

// Reset ends the payment in progress (ko), then forgets every transaction,
// the ledger, the printer's and shares' logs and the script, and puts the
// clock and the settings back to the configuration.
func (t *Terminal) Reset() {
	t.mu.Lock()
	p := t.current
	if p != nil && !p.killed {
		p.killed = true
		close(p.killCh)
	}
	t.mu.Unlock()
	if p != nil {
		select {
		case <-p.done:
		case <-t.closing:
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.resetLocked()
	t.broadcastLocked()
	t.log.Info("terminal reset")
}

// track counts a handler so that Close waits for it, and refuses new ones
// once closed.
func (t *Terminal) track(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.mu.Lock()
		if t.closed {
			t.mu.Unlock()
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		t.wg.Add(1)
		t.mu.Unlock()
		defer t.wg.Done()
		h.ServeHTTP(w, r)
	})
}

// Handler serves the Local API under /localapi/v4/ and the control API under
// /sim/. With an httptest.Server, Close the Terminal before the server: held
// requests end only then.
func (t *Terminal) Handler() http.Handler { return t.mux }

// Start listens on addr ("127.0.0.1:0" when empty) and serves in the
// background until Close.
func (t *Terminal) Start(addr string) error {
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: t.mux, ReadHeaderTimeout: 10 * time.Second}
	t.mu.Lock()
	switch {
	case t.closed:
		t.mu.Unlock()
		ln.Close()
		return ErrClosed
	case t.srv != nil:
		t.mu.Unlock()
		ln.Close()
		return errors.New("terminalsim: already started")
	}
	if t.cfg.TLS {
		cert, err := t.certificate()
		if err != nil {
			t.mu.Unlock()
			ln.Close()
			return err
		}
		t.cert, t.tlsCert = cert.Leaf, cert
		ln = tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
	}
	t.srv, t.ln = srv, ln
	t.wg.Add(1)
	t.broadcastLocked()
	t.mu.Unlock()
	go func() {
		defer t.wg.Done()
		_ = srv.Serve(ln)
	}()
	t.log.Info("simulated terminal listening", "url", t.URL(), "serial", t.cfg.Serial, "certificate", t.CertificateFingerprint())
	return nil
}

// CertificateFingerprint is the SHA-256 fingerprint of the certificate the
// terminal serves HTTPS with (Config.TLS), as a terminal would show it for
// staff to pin; "" on plain HTTP.
func (t *Terminal) CertificateFingerprint() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.cert == nil {
		return ""
	}
	return localapi.Fingerprint(t.cert.Raw)
}

// TLSCertificate is the certificate the terminal serves HTTPS with, to
// serve the same terminal at another address (Config.Certificate); false
// on plain HTTP or before Start.
func (t *Terminal) TLSCertificate() (tls.Certificate, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.tlsCert, t.cert != nil
}

func (t *Terminal) certificate() (tls.Certificate, error) {
	if c := t.cfg.Certificate; c != nil {
		leaf := c.Leaf
		if leaf == nil && len(c.Certificate) > 0 {
			var err error
			if leaf, err = x509.ParseCertificate(c.Certificate[0]); err != nil {
				return tls.Certificate{}, err
			}
		}
		if leaf == nil {
			return tls.Certificate{}, errors.New("terminalsim: Config.Certificate holds no certificate")
		}
		out := *c
		out.Leaf = leaf
		return out, nil
	}
	return selfSigned(t.cfg.Serial)
}

// selfSigned makes the certificate of a terminal that has retrieved none
// from an authority: self-signed, for the loopback and the terminal's name.
func selfSigned(serial string) (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: "Simulated terminal " + serial, Organization: []string{"Comptoir simulator"}},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(365 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, err
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, nil
}

// ListenAndServe serves on addr until ctx is done, then closes the terminal.
func (t *Terminal) ListenAndServe(ctx context.Context, addr string) error {
	if err := t.Start(addr); err != nil {
		return err
	}
	select {
	case <-ctx.Done():
	case <-t.closing:
	}
	return t.Close()
}

// Addr is the listening address after Start, else nil.
func (t *Terminal) Addr() net.Addr {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ln == nil {
		return nil
	}
	return t.ln.Addr()
}

// URL is the Local API base URL after Start ("http://127.0.0.1:port/localapi/v4"),
// else "". An unspecified listening address is reported as 127.0.0.1.
func (t *Terminal) URL() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.urlLocked()
}

func (t *Terminal) urlLocked() string {
	if t.ln == nil {
		return ""
	}
	a, ok := t.ln.Addr().(*net.TCPAddr)
	if !ok {
		return ""
	}
	host := a.IP.String()
	if a.IP.IsUnspecified() {
		host = "127.0.0.1"
	}
	scheme := "http"
	if t.cfg.TLS {
		scheme = "https"
	}
	return scheme + "://" + net.JoinHostPort(host, fmt.Sprint(a.Port)) + localapi.BasePath
}

// Close stops the terminal: held requests end without an answer (their
// connections are closed), payments in progress stop where they are, the
// listener and the mDNS advertisements close. It waits for every goroutine
// the terminal started (the zeroconf library's own announcer may linger a
// few seconds).
func (t *Terminal) Close() error {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil
	}
	t.closed = true
	close(t.closing)
	t.broadcastLocked()
	srv, adverts := t.srv, t.adverts
	t.adverts = nil
	t.mu.Unlock()
	for _, stop := range adverts {
		stop()
	}
	var err error
	if srv != nil {
		err = srv.Close()
	}
	t.wg.Wait()
	t.log.Info("simulated terminal closed")
	return err
}
