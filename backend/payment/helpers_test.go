package payment

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/cloudapi"
	"github.com/comptoir-pos/comptoir/backend/cloudsim"
	"github.com/comptoir-pos/comptoir/backend/internal/testenv"
	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/localapi"
	"github.com/comptoir-pos/comptoir/backend/terminalsim"
)

// testLimits are the specification's rules at test speed.
var testLimits = Limits{
	KioskTimeout:   2 * time.Second,
	CounterTimeout: 2 * time.Second,
	RefundTimeout:  2 * time.Second,
	RequestOpen:    10 * time.Second,
	Idempotency:    time.Hour,
	ResendPause:    5 * time.Millisecond,
	AbortGrace:     time.Second,

	IdempotencyMargin: time.Minute,
	AbortRetryPause:   20 * time.Millisecond,
	AbortRetryMax:     200 * time.Millisecond,
	HistorySkew:       time.Minute,
	SettleAfter:       time.Minute,
}

// env is an orchestrator on a journal in a temp dir, against a simulated
// terminal over real HTTP.
type env struct {
	t      *testing.T
	ctx    context.Context
	sim    *terminalsim.Terminal
	client *localapi.Client // the LAN channel's (nil on the cloud)
	// cloud and channel are the cloud channel's: the simulated provider
	// cloud in front of sim, and the channel every open uses.
	cloud   *cloudsim.Cloud
	channel Channel
	// terminalID names the terminal of channel (default "cloud:SN-1").
	terminalID string
	dir        string
	db         *journal.DB
	o          *Orchestrator
	events     *recorder
	log        *slog.Logger // the orchestrator's at the next open (nil: discarded)
}

func newEnv(t *testing.T, limits Limits) *env {
	t.Helper()
	sim, client := testenv.Terminal(t, testenv.Scripted)
	e := &env{t: t, ctx: testenv.Context(t), sim: sim, client: client, dir: t.TempDir()}
	e.open(client, limits)
	return e
}

// The channels every channel-agnostic rule is tested on.
var testChannels = []string{"local", "cloud"}

const cloudSerial = "SN-1"

// eachChannel runs test on a fresh env of each channel: the terminal on
// the LAN, and the same simulated terminal behind the simulated provider
// cloud. The terminal (e.sim) is the truth on both.
func eachChannel(t *testing.T, limits Limits, test func(t *testing.T, e *env)) {
	for _, ch := range testChannels {
		t.Run(ch, func(t *testing.T) { test(t, newEnvOn(t, ch, limits)) })
	}
}

func newEnvOn(t *testing.T, channel string, limits Limits) *env {
	t.Helper()
	if channel == "local" {
		return newEnv(t, limits)
	}
	cloud, client := startCloud(t, "sk_test_env")
	sim, _ := cloud.Terminal(cloudSerial)
	e := &env{t: t, ctx: testenv.Context(t), sim: sim, cloud: cloud, dir: t.TempDir(),
		channel: Cloud(client, cloudSerial, &localapi.Vendor{SoftwareName: "Comptoir", SoftwareVersion: "test"}, 5*time.Millisecond)}
	e.open(nil, limits)
	return e
}

// startCloud starts a simulated provider cloud with one virtual terminal
// (cloudSerial), at test speed, and a client of it.
func startCloud(t *testing.T, key string) (*cloudsim.Cloud, *cloudapi.Client) {
	return testenv.Cloud(t, cloudsim.Config{Key: key, Serials: []string{cloudSerial}, Terminal: testenv.Scripted})
}

// abortBeforeHandover is the cancel's answer before the handover: the
// terminal's ok on the LAN; on the cloud only that it reached the
// terminal (the payment's own ko then says it stopped).
func (e *env) abortBeforeHandover() AbortAnswer {
	if e.cloud != nil {
		return AbortDelivered
	}
	return AbortOK
}

// open (re)opens the journal and a new orchestrator on it, as a restart does.
// reopen closes the orchestrator and the journal, and opens the journal
// again (e.db), for a test that builds its own orchestrator on it.
func (e *env) reopen() *journal.DB {
	e.t.Helper()
	e.close()
	db, err := journal.Open(e.ctx, e.dir)
	if err != nil {
		e.t.Fatal(err)
	}
	e.db = db
	return db
}

func (e *env) open(term Terminal, limits Limits) {
	e.t.Helper()
	db, err := journal.Open(e.ctx, e.dir)
	if err != nil {
		e.t.Fatal(err)
	}
	e.db = db
	e.events = &recorder{}
	cfg := Config{Journal: db, Terminal: term, TerminalID: "sim", Limits: limits, Emitter: e.events, Logger: e.log,
		Vendor: &localapi.Vendor{SoftwareName: "Comptoir", SoftwareVersion: "test"}}
	if e.channel != nil {
		cfg.Terminal, cfg.Channel, cfg.TerminalID = nil, e.channel, "cloud:"+cloudSerial
		// Refunds by API are the Webservices' orchestrator's.
		cfg.OtherChannels = []journal.Channel{journal.ChannelWebservices}
		if e.terminalID != "" {
			cfg.TerminalID = e.terminalID
		}
	}
	o, err := New(cfg)
	if err != nil {
		e.t.Fatal(err)
	}
	e.o = o
	e.t.Cleanup(e.close)
}

// close stops the orchestrator and the journal, like a process exit.
func (e *env) close() {
	if e.o != nil {
		e.o.Close()
		e.o = nil
	}
	if e.db != nil {
		e.db.Close()
		e.db = nil
	}
}

func (e *env) recover() []View {
	e.t.Helper()
	views, err := e.o.Recover(e.ctx)
	if err != nil {
		e.t.Fatalf("recover: %v", err)
	}
	return views
}

func (e *env) order(id string, total int64) {
	e.t.Helper()
	if err := e.db.CreateOrder(e.ctx, journal.Order{ID: id, Currency: "EUR", Total: total}); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) start(req Request) *Handle {
	e.t.Helper()
	h, err := e.o.Start(e.ctx, req)
	if err != nil {
		e.t.Fatalf("start: %v", err)
	}
	return h
}

func (e *env) wait(h *Handle) View {
	e.t.Helper()
	select {
	case <-h.Done():
	case <-e.ctx.Done():
		e.t.Fatalf("attempt %s never finished: %+v", h.UUID(), h.View())
	}
	return h.View()
}

func (e *env) attempt(id string) journal.Attempt {
	e.t.Helper()
	a, err := e.db.Attempt(e.ctx, id)
	if err != nil {
		e.t.Fatal(err)
	}
	return a
}

func (e *env) orderStatus(id string) journal.OrderStatus {
	e.t.Helper()
	o, err := e.db.Order(e.ctx, id)
	if err != nil {
		e.t.Fatal(err)
	}
	return o.Status
}

// charges is the simulator's ledger of debits for one uuid.
func (e *env) charges(id string) int { return len(e.sim.ChargesFor(id)) }

func (e *env) eventsOf(id string) []journal.Event {
	e.t.Helper()
	evs, err := e.db.Events(e.ctx, id)
	if err != nil {
		e.t.Fatal(err)
	}
	return evs
}

func bodyOf(t *testing.T, a journal.Attempt) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(a.RequestBody, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// recorder is an Emitter that keeps every view.
type recorder struct {
	mu    sync.Mutex
	views []View
	wake  chan struct{} // closed at the next view
}

func (r *recorder) Emit(event string, data any) {
	if event != EventAttempt {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.views = append(r.views, data.(View))
	if r.wake != nil {
		close(r.wake)
		r.wake = nil
	}
}

// changed is closed at the next view emitted.
func (r *recorder) changed() <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.wake == nil {
		r.wake = make(chan struct{})
	}
	return r.wake
}

func (r *recorder) all() []View {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]View(nil), r.views...)
}

// fakeTerminal is a Terminal of function fields, for answers the simulator
// would never give. A nil field answers as a terminal with nothing to say:
// no history, "Nothing to abort", a reversal not found.
type fakeTerminal struct {
	payment      func(ctx context.Context, body []byte) (*localapi.Transaction, error)
	abort        func(ctx context.Context, req *localapi.AbortRequest) (*localapi.AbortResponse, error)
	reversal     func(ctx context.Context, body []byte) (*localapi.ReversalResponse, error)
	transactions func(ctx context.Context, req *localapi.TransactionsRequest) (*localapi.TransactionList, error)
}

func (f *fakeTerminal) PaymentBody(ctx context.Context, body []byte) (*localapi.Transaction, error) {
	return f.payment(ctx, body)
}

func (f *fakeTerminal) Abort(ctx context.Context, req *localapi.AbortRequest) (*localapi.AbortResponse, error) {
	if f.abort == nil {
		return nil, &localapi.APIError{Endpoint: "/abort", Message: localapi.MsgNothingToAbort, Code: localapi.CodeNothingToAbort}
	}
	return f.abort(ctx, req)
}

func (f *fakeTerminal) ReversalBody(ctx context.Context, body []byte) (*localapi.ReversalResponse, error) {
	if f.reversal == nil {
		return nil, &localapi.APIError{Endpoint: "/reversal", Message: localapi.ReversalNotFoundMessage("?"), Code: localapi.CodeReversalNotFound}
	}
	return f.reversal(ctx, body)
}

func (f *fakeTerminal) Transactions(ctx context.Context, req *localapi.TransactionsRequest) (*localapi.TransactionList, error) {
	if f.transactions == nil {
		return &localapi.TransactionList{Transactions: []localapi.HistoryEntry{}}, nil
	}
	return f.transactions(ctx, req)
}
