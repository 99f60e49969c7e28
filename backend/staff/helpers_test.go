package staff

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/cloudapi"
	"github.com/comptoir-pos/comptoir/backend/cloudsim"
	"github.com/comptoir-pos/comptoir/backend/device"
	"github.com/comptoir-pos/comptoir/backend/internal/testenv"
	"github.com/comptoir-pos/comptoir/backend/internal/testenv/paytest"
	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/localapi"
	"github.com/comptoir-pos/comptoir/backend/payment"
	"github.com/comptoir-pos/comptoir/backend/terminalsim"
)

// testLimits are the money-safety rules at test speed.
var testLimits = paytest.Limits

// cheap keeps the PIN hash fast under -race; production uses DefaultArgon2.
var cheap = &Argon2Params{Time: 1, Memory: 64, Threads: 1}

// env is the staff service on a real journal (temp dir) and a real
// orchestrator, against a simulated terminal over real HTTP.
type env struct {
	t      *testing.T
	ctx    context.Context
	sim    *terminalsim.Terminal
	client *localapi.Client
	dir    string
	db     *journal.DB
	o      *payment.Orchestrator
	clock  *testenv.Clock
	st     *Staff
	cfg    Config
	orders int
	cloud  *cloudsim.Cloud // withLinks
	links  *payment.Orchestrator
}

type option func(*env, *Config)

// cloudSerial is withLinks' cloud's terminal, for charges made on it.
const cloudSerial = "SN-STAFF"

func withDemo() option { return func(_ *env, c *Config) { c.Demo = true } }

func withLimits(l payment.Limits) option { return func(e *env, _ *Config) { e.newOrchestrator(l) } }

// withLinks sends payment links through a simulated cloud, whose carts
// are read every poll; api wraps the cloud's client (nil: none).
func withLinks(poll time.Duration, api func(*cloudapi.Client) payment.LinkAPI) option {
	return func(e *env, c *Config) {
		e.cloud, e.links = paytest.Links(e.t, e.db, paytest.LinkConfig{PollEvery: poll, API: api,
			Cloud:  cloudsim.Config{Key: "sk_staff_links", Serials: []string{cloudSerial}, Terminal: testenv.Scripted},
			Beside: []journal.Channel{journal.ChannelLocal}})
		if _, err := e.links.Recover(e.ctx); err != nil {
			e.t.Fatal(err)
		}
		c.Links = e.links
	}
}

func newSim(t *testing.T) (*terminalsim.Terminal, *localapi.Client) {
	return testenv.Terminal(t, testenv.Scripted)
}

func newEnv(t *testing.T, opts ...option) *env {
	t.Helper()
	sim, client := newSim(t)
	e := &env{t: t, ctx: testenv.Context(t), sim: sim, client: client, dir: t.TempDir(), clock: testenv.NewClock(time.Now())}
	e.db = testenv.Journal(t, e.dir)
	e.cfg = Config{Journal: e.db, Terminal: device.LocalClient(client), Now: e.clock.Now, Argon2: cheap}
	for _, o := range opts {
		o(e, &e.cfg)
	}
	if e.o == nil {
		e.newOrchestrator(testLimits)
	}
	e.cfg.Payments = e.o
	e.restart()
	return e
}

func (e *env) newOrchestrator(l payment.Limits) { e.newOrchestratorOn(e.client, "sim", l) }

func (e *env) newOrchestratorOn(term payment.Terminal, id string, l payment.Limits) {
	if e.o != nil {
		e.o.Close()
	}
	o, err := payment.New(payment.Config{Journal: e.db, Terminal: term, TerminalID: id, Limits: l,
		OtherChannels: []journal.Channel{journal.ChannelLink}})
	if err != nil {
		e.t.Fatal(err)
	}
	if _, err := o.Recover(e.ctx); err != nil {
		e.t.Fatal(err)
	}
	e.o = o
	e.cfg.Limits = l
	e.t.Cleanup(o.Close)
}

// restart builds a new Staff on the same journal, as a process restart does.
func (e *env) restart() {
	st, err := New(e.cfg)
	if err != nil {
		e.t.Fatal(err)
	}
	e.st = st
}

// unlock opens a session at the customer screen, with a fresh PIN.
func (e *env) unlock() Session {
	e.t.Helper()
	return e.unlockAt(OriginScreen)
}

// unlockAt is unlock with the PIN typed at origin o.
func (e *env) unlockAt(o Origin) Session {
	e.t.Helper()
	if ok, _ := e.st.HasPIN(e.ctx); !ok {
		if err := e.st.SetPIN(e.ctx, "2468"); err != nil {
			e.t.Fatal(err)
		}
	}
	s, err := e.st.UnlockFrom(e.ctx, o, "2468")
	if err != nil {
		e.t.Fatal(err)
	}
	return s
}

// order records an order the way the kiosk does, lines in Data.
func (e *env) order(total int64) string {
	e.t.Helper()
	e.orders++
	id := fmt.Sprintf("%s-%03d", time.Now().Format("20060102"), e.orders)
	data, _ := json.Marshal(map[string]any{
		"number": fmt.Sprint(e.orders), "language": "fr", "method": "card",
		"lines": []map[string]any{{"id": "l1", "productId": "p1", "name": map[string]string{"fr": "Menu", "en": "Meal"},
			"qty": 1, "unitPrice": total, "total": total, "vatRate": 1000}},
	})
	if err := e.db.CreateOrder(e.ctx, journal.Order{ID: id, Currency: "EUR", Total: total, Data: data}); err != nil {
		e.t.Fatal(err)
	}
	return id
}

// pay pays an order in full and expects the outcome.
func (e *env) pay(orderID string, amount int64, policy journal.Policy, want journal.State) payment.View {
	e.t.Helper()
	v, err := e.o.Pay(e.ctx, payment.Request{OrderID: orderID, Amount: amount, Policy: policy})
	if err != nil {
		e.t.Fatal(err)
	}
	if v.State != want {
		e.t.Fatalf("payment of %s: %s (%s), want %s", orderID, v.State, v.Message, want)
	}
	return v
}

func (e *env) events(uuid string) []journal.Event {
	e.t.Helper()
	evs, err := e.db.Events(e.ctx, uuid)
	if err != nil {
		e.t.Fatal(err)
	}
	return evs
}

func (e *env) lastEvent(uuid string) journal.Event {
	evs := e.events(uuid)
	return evs[len(evs)-1]
}

func (e *env) reversals() []terminalsim.LedgerEntry {
	return slices.DeleteFunc(e.sim.Ledger(), func(l terminalsim.LedgerEntry) bool { return l.Kind != "reversal" })
}

func wantCode(t *testing.T, err error, code string) *Error {
	t.Helper()
	var se *Error
	if !errors.As(err, &se) || se.From != "" {
		t.Fatalf("error %v (%T), want an error worded for staff with code %s", err, err, code)
	}
	if se.Code != code {
		t.Fatalf("error code %s (%s), want %s", se.Code, se.Message, code)
	}
	return se
}

// fakeReversal wraps a real client and answers /reversal and, when given,
// /transactions itself.
type fakeReversal struct {
	*localapi.Client
	reversal     func(ctx context.Context, req *localapi.ReversalRequest) (*localapi.ReversalResponse, error)
	transactions func(ctx context.Context, req *localapi.TransactionsRequest) (*localapi.TransactionList, error)
}

func (f *fakeReversal) ReversalBody(ctx context.Context, body []byte) (*localapi.ReversalResponse, error) {
	var req localapi.ReversalRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, &localapi.ValidationError{Field: "body", Reason: err.Error()}
	}
	return f.reversal(ctx, &req)
}

func (f *fakeReversal) Transactions(ctx context.Context, req *localapi.TransactionsRequest) (*localapi.TransactionList, error) {
	if f.transactions != nil {
		return f.transactions(ctx, req)
	}
	return f.Client.Transactions(ctx, req)
}
