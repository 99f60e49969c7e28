package kiosk

import (
	"cmp"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/cloudsim"
	"github.com/comptoir-pos/comptoir/backend/device"
	"github.com/comptoir-pos/comptoir/backend/internal/testenv"
	"github.com/comptoir-pos/comptoir/backend/internal/testenv/paytest"
	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/localapi"
	"github.com/comptoir-pos/comptoir/backend/payment"
	"github.com/comptoir-pos/comptoir/backend/receipt"
	"github.com/comptoir-pos/comptoir/backend/terminalsim"
)

// recorder is an Emitter keeping every event.
type recorder struct {
	mu     sync.Mutex
	events []event
}

type event struct {
	name string
	data any
}

func (r *recorder) Emit(name string, data any) {
	r.mu.Lock()
	r.events = append(r.events, event{name, data})
	r.mu.Unlock()
}

func (r *recorder) checkouts() []CheckoutView {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []CheckoutView
	for _, e := range r.events {
		if v, ok := e.data.(CheckoutView); ok && e.name == EventCheckout {
			out = append(out, v)
		}
	}
	return out
}

// fakeLocal is the terminal's Local API client, with answers to
// /share-receipt of the test's choosing when share is set.
type fakeLocal struct {
	*localapi.Client
	share func(ctx context.Context, req *localapi.ShareReceiptRequest) (*localapi.StatusResponse, error)
	print func(ctx context.Context, req *localapi.PrintRequest) (*localapi.StatusResponse, error)
}

func (p *fakeLocal) Print(ctx context.Context, req *localapi.PrintRequest) (*localapi.StatusResponse, error) {
	if p.print != nil {
		return p.print(ctx, req)
	}
	return p.Client.Print(ctx, req)
}

func (p *fakeLocal) ShareReceipt(ctx context.Context, req *localapi.ShareReceiptRequest) (*localapi.StatusResponse, error) {
	if p.share != nil {
		return p.share(ctx, req)
	}
	return p.Client.ShareReceipt(ctx, req)
}

// env is a Service on a real journal and orchestrator, against the
// simulated terminal over real HTTP.
type env struct {
	t       *testing.T
	ctx     context.Context
	sim     *terminalsim.Terminal
	db      *journal.DB
	o       *payment.Orchestrator
	s       *Service
	events  *recorder
	printer *fakeLocal
	dir     string
	// cloud and links: the simulated provider cloud and the payment links'
	// orchestrator (withLinks).
	cloud *cloudsim.Cloud
	links *payment.Orchestrator
	state atomic.Value // TerminalState of the source
	since atomic.Value // time.Time: unreachable since, zero when not set
}

type envOption func(*envConfig)

type envConfig struct {
	logger  *slog.Logger // testLogger when nil
	limits  payment.Limits
	catalog string
	before  func(dir string, db *journal.DB)
	sim     func(*terminalsim.Terminal)
	// hook wraps the orchestrator's emitter; release lets held events go at
	// cleanup. With a hook the kiosk does not poll: it learns of an outcome
	// by the event.
	hook    func(payment.Emitter) payment.Emitter
	release func()
	// links: payment links through a simulated cloud, shown linkScreen.
	links      bool
	linkScreen time.Duration
	// sales and duplicate: the fiscal journal's (Config.Sales, Duplicate).
	sales, duplicate func(context.Context, string) (*receipt.Fiscal, error)
}

// withFiscal records sales and copies of receipts with these.
func withFiscal(sales, duplicate func(context.Context, string) (*receipt.Fiscal, error)) envOption {
	return func(c *envConfig) { c.sales, c.duplicate = sales, duplicate }
}

// withLinks offers paying by phone, through a simulated provider cloud.
func withLinks(screen time.Duration) envOption {
	return func(c *envConfig) { c.links, c.linkScreen = true, screen }
}

func withLimits(l payment.Limits) envOption { return func(c *envConfig) { c.limits = l } }
func withCatalog(json string) envOption     { return func(c *envConfig) { c.catalog = json } }
func withSetup(f func(dir string, db *journal.DB)) envOption {
	return func(c *envConfig) { c.before = f }
}

// withHook passes the orchestrator's events through hook (see envConfig).
func withHook(hook func(payment.Emitter) payment.Emitter, release func()) envOption {
	return func(c *envConfig) { c.hook, c.release = hook, release }
}

// withSim scripts the simulator before the Service starts (and recovers).
func withSim(f func(*terminalsim.Terminal)) envOption { return func(c *envConfig) { c.sim = f } }

// withLogger gives the Service this logger.
func withLogger(l *slog.Logger) envOption { return func(c *envConfig) { c.logger = l } }

func newEnv(t *testing.T, opts ...envOption) *env {
	t.Helper()
	cfg := envConfig{limits: paytest.Limits}
	for _, o := range opts {
		o(&cfg)
	}
	sim, client := testenv.Terminal(t, testenv.Scripted)
	e := &env{t: t, ctx: testenv.Context(t), sim: sim, dir: t.TempDir(), events: &recorder{}}
	e.state.Store(TerminalConnected)
	if cfg.catalog != "" {
		if err := os.WriteFile(filepath.Join(e.dir, CatalogFile), []byte(cfg.catalog), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	db := testenv.Journal(t, e.dir)
	e.db = db
	if cfg.before != nil {
		cfg.before(e.dir, db)
	}
	if cfg.sim != nil {
		cfg.sim(sim)
	}
	// The orchestrator exists before the Service: the Relay binds them.
	relay := NewRelay(nil)
	var emitter payment.Emitter = relay
	poll := 20 * time.Millisecond
	if cfg.hook != nil {
		emitter, poll = cfg.hook(relay), time.Hour
	}
	var others []journal.Channel
	if cfg.links {
		others = []journal.Channel{journal.ChannelLink}
	}
	o, err := payment.New(payment.Config{Journal: db, Terminal: client, TerminalID: "sim", Limits: cfg.limits, Emitter: emitter,
		OtherChannels: others})
	if err != nil {
		t.Fatal(err)
	}
	e.o = o
	if cfg.links {
		e.cloud, e.links = paytest.Links(t, db, paytest.LinkConfig{Cloud: cloudsim.Config{Key: "sk_kiosk_links"}, Limits: cfg.limits, Emitter: emitter,
			Beside: []journal.Channel{journal.ChannelLocal}})
	}
	e.printer = &fakeLocal{Client: client}
	s, err := New(Config{
		Journal: db, Payments: o, Links: e.links, LinkScreen: cfg.linkScreen,
		Printer: device.LocalClient(e.printer), Emitter: e.events, Relay: relay, DataDir: e.dir,
		Sales: cfg.sales, Duplicate: cfg.duplicate,
		Version: "test", Logger: cmp.Or(cfg.logger, testLogger(t)),
		Terminal: TerminalFunc(func() TerminalStatus {
			since, _ := e.since.Load().(time.Time)
			return TerminalStatus{State: e.state.Load().(TerminalState), Name: "sim", Address: sim.URL(), Since: since}
		}),
		PollInterval: poll, TerminalInterval: 20 * time.Millisecond, RecoverRetry: 20 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	e.s = s
	runCtx, stop := context.WithCancel(e.ctx)
	runDone := make(chan struct{})
	go func() { defer close(runDone); s.Run(runCtx) }()
	t.Cleanup(func() {
		if cfg.release != nil {
			cfg.release()
		}
		stop()
		<-runDone
		sim.Close() // first: held requests end
		s.Close()
		o.Close()
		if e.links != nil {
			e.links.Close()
			e.cloud.Close()
		}
		db.Close()
	})
	e.waitFor("ready", func(CheckoutView) bool { return s.Terminal().Ready })
	return e
}

// waitFor polls the checkout until cond holds.
func (e *env) waitFor(what string, cond func(CheckoutView) bool) CheckoutView {
	e.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		v := e.s.Checkout()
		if cond(v) {
			return v
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("timed out waiting for %s; checkout: %+v payment: %+v", what, v, v.Payment)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (e *env) waitPhase(p Phase) CheckoutView {
	e.t.Helper()
	return e.waitFor("phase "+string(p), func(v CheckoutView) bool { return v.Phase == p })
}

// must fails the test on an error or a refused intent.
func (e *env) must(v CheckoutView, err error) CheckoutView {
	e.t.Helper()
	if err != nil {
		e.t.Fatal(err)
	}
	if v.Error != "" {
		e.t.Fatalf("intent refused: %s (phase %s)", v.Error, v.Phase)
	}
	return v
}

// cart starts an order and adds product/qty pairs.
func (e *env) cart(items ...any) CheckoutView {
	e.t.Helper()
	e.must(e.s.Start("fr"))
	v := e.must(e.s.ChooseDining(DiningEatIn))
	for i := 0; i < len(items); i += 2 {
		v = e.must(e.s.AddItem(items[i].(string), items[i+1].(int)))
	}
	return v
}

func (e *env) debits() []terminalsim.LedgerEntry {
	return slices.DeleteFunc(e.sim.Ledger(), func(l terminalsim.LedgerEntry) bool { return l.Kind != localapi.TypeDebit })
}

func (e *env) printedFrom(source string) []terminalsim.Ticket {
	return slices.DeleteFunc(e.sim.Printed(), func(tk terminalsim.Ticket) bool { return tk.Source != source })
}

func (e *env) waitSim(phase terminalsim.Phase) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(e.ctx, 10*time.Second)
	defer cancel()
	if err := e.sim.WaitPhase(ctx, "", phase); err != nil {
		e.t.Fatalf("terminal phase %s: %v", phase, err)
	}
}

func (e *env) order(id string) journal.Order {
	e.t.Helper()
	o, err := e.db.Order(e.ctx, id)
	if err != nil {
		e.t.Fatal(err)
	}
	return o
}
