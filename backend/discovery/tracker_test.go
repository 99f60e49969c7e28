package discovery

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/internal/testenv"
	"github.com/comptoir-pos/comptoir/backend/localapi"
)

// fakeFinder stands for mDNS in the Tracker's logic tests.
type fakeFinder struct {
	mu    sync.Mutex
	found []Terminal
	calls []string // the instance asked for, "" for a full browse
}

func (f *fakeFinder) set(ts ...Terminal) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.found = ts
}

func (f *fakeFinder) find(ctx context.Context, _ Options, instance string) ([]Terminal, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, instance)
	return slices.Clone(f.found), nil
}

func (f *fakeFinder) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.calls)
}

func confirmed(name, baseURL string) Terminal {
	return Terminal{Instance: name, BaseURL: baseURL, Confirmed: true, Ping: PingResult{OK: true}}
}

// pinned is a terminal found on HTTPS presenting the certificate pin.
func pinned(name, baseURL, pin string) Terminal {
	t := confirmed(name, baseURL)
	t.Fingerprint = pin
	return t
}

// newTracker starts a Tracker over f, with a fast search and no periodic
// ping unless cfg says otherwise.
func newTracker(t *testing.T, cfg Config, f *fakeFinder) *Tracker {
	t.Helper()
	if cfg.PingInterval == 0 {
		cfg.PingInterval = time.Hour
	}
	if cfg.SearchInterval == 0 {
		cfg.SearchInterval = 20 * time.Millisecond
	}
	tr, err := NewTracker(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if f != nil {
		tr.find = f.find
	}
	if err := tr.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	return tr
}

// terminalServer is an httptest Local API answering /ping; pay handles
// /payment.
func terminalServer(t *testing.T, pay http.HandlerFunc) (*httptest.Server, string) {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /localapi/v4/ping", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"status":"ok"}`))
	})
	mux.HandleFunc("POST /localapi/v4/payment", pay)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv, srv.URL + localapi.BasePath
}

// tlsTerminalServer is terminalServer on HTTPS; every such server
// presents the same certificate (httptest's), whose fingerprint is pin.
func tlsTerminalServer(t *testing.T, pay http.HandlerFunc) (srv *httptest.Server, url, pin string) {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /localapi/v4/ping", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"status":"ok"}`))
	})
	mux.HandleFunc("POST /localapi/v4/payment", pay)
	srv = httptest.NewTLSServer(mux)
	t.Cleanup(srv.Close)
	sum := sha256.Sum256(srv.Certificate().Raw)
	return srv, srv.URL + localapi.BasePath, hex.EncodeToString(sum[:])
}

func approve(n *atomic.Int32) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		w.Write([]byte(`{"status":"ok","amount":1250,"transactionId":"T1"}`))
	}
}

func deadURL(t *testing.T) string {
	return "http://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(testenv.FreePort(t))) + localapi.BasePath
}

func TestTrackerWithoutTerminal(t *testing.T) {
	f := &fakeFinder{}
	tr := newTracker(t, Config{}, f)
	_, err := tr.PaymentBody(t.Context(), body("0190f5a4-7c1e-7000-8000-0000000000a1"))
	var te *localapi.TransportError
	if !errors.As(err, &te) || te.Sent || !errors.Is(err, ErrNoTerminal) {
		t.Errorf("no terminal yet: %v", err)
	}
	if s := tr.Status(); s.State != StateSearching {
		t.Errorf("status %+v", s)
	}
}

func TestTrackerTakesTheOnlyTerminal(t *testing.T) {
	var paid atomic.Int32
	_, url := terminalServer(t, approve(&paid))
	f := &fakeFinder{}
	f.set(confirmed("Yavin A", url), Terminal{Instance: "Yavin Dead", BaseURL: deadURL(t)})
	store := &MemoryStore{}
	rec := &recorder{}
	tr := newTracker(t, Config{Store: store, Emitter: rec}, f)
	testenv.Eventually(t, "connected", func() bool { return tr.Status().State == StateConnected })
	if s := tr.Status(); s.Instance != "Yavin A" || s.Address != url || tr.BaseURL() != url {
		t.Errorf("status %+v", s)
	}
	// The name is remembered right after the connection is announced.
	testenv.Eventually(t, "remembered", func() bool {
		v, _, _ := store.Get(t.Context(), DefaultStoreKey)
		return v == "Yavin A"
	})
	if tx, err := tr.PaymentBody(t.Context(), body("0190f5a4-7c1e-7000-8000-0000000000a2")); err != nil || !tx.Approved() || paid.Load() != 1 {
		t.Errorf("payment: %+v, %v", tx, err)
	}
	if got := rec.states(); !slices.Equal(got, []string{"searching", "connected " + url}) {
		t.Errorf("statuses %q", got)
	}
}

func TestTrackerChooseAmongSeveral(t *testing.T) {
	var paidA, paidB atomic.Int32
	_, urlA := terminalServer(t, approve(&paidA))
	_, urlB := terminalServer(t, approve(&paidB))
	f := &fakeFinder{}
	f.set(confirmed("Yavin A", urlA), confirmed("Yavin B", urlB))
	store := &MemoryStore{}
	rec := &recorder{}
	tr := newTracker(t, Config{Store: store, Emitter: rec}, f)

	testenv.Eventually(t, "choose", func() bool { return tr.Status().State == StateChoose })
	s := tr.Status()
	if len(s.Candidates) != 2 || s.Candidates[0].Instance != "Yavin A" || s.Candidates[1].Instance != "Yavin B" {
		t.Errorf("candidates %+v", s.Candidates)
	}
	if _, ok, _ := store.Get(t.Context(), DefaultStoreKey); ok {
		t.Error("a terminal was remembered before staff chose")
	}
	if err := tr.Choose(t.Context(), "yavin b"); err != nil {
		t.Fatal(err)
	}
	if s := tr.Status(); s.State != StateConnected || s.Instance != "Yavin B" || s.Address != urlB || len(s.Candidates) != 0 {
		t.Errorf("after Choose: %+v", s)
	}
	if v, _, _ := store.Get(t.Context(), DefaultStoreKey); v != "yavin b" {
		t.Errorf("remembered %q", v)
	}
	if _, err := tr.PaymentBody(t.Context(), body("0190f5a4-7c1e-7000-8000-0000000000b1")); err != nil || paidB.Load() != 1 || paidA.Load() != 0 {
		t.Errorf("payment went to the wrong terminal: %v (A %d, B %d)", err, paidA.Load(), paidB.Load())
	}
	if got := rec.states(); !slices.Equal(got, []string{"searching", "choose", "connected " + urlB}) {
		t.Errorf("statuses %q", got)
	}
	tr.Close()

	// The next start finds the remembered one by name, among several.
	f2 := &fakeFinder{}
	f2.set(confirmed("Yavin A", urlA), confirmed("Yavin B", urlB))
	tr2 := newTracker(t, Config{Store: store}, f2)
	testenv.Eventually(t, "connected to the remembered terminal", func() bool {
		s := tr2.Status()
		return s.State == StateConnected && s.Instance == "Yavin B" && s.Address == urlB
	})
	f2.mu.Lock()
	defer f2.mu.Unlock()
	if len(f2.calls) == 0 || !strings.EqualFold(f2.calls[0], "Yavin B") {
		t.Errorf("looked for %q, want the remembered name", f2.calls)
	}
}

// A request that was not sent (connection refused) is retried once on the
// terminal's new address when its pinned certificate proves it is the
// same terminal, even while a payment is open on it; re-resolution is
// rate-limited.
func TestTrackerRetriesUnsentOnNewAddress(t *testing.T) {
	var paid atomic.Int32
	_, newURL, pin := tlsTerminalServer(t, approve(&paid))
	oldSrv, oldURL, _ := tlsTerminalServer(t, approve(&paid))
	f := &fakeFinder{}
	f.set(pinned("Yavin A", oldURL, pin))
	rec := &recorder{}
	trust := &MemoryTrust{}
	held := func(context.Context, string) (bool, error) { return true, nil }
	tr := newTracker(t, Config{Emitter: rec, Trust: trust, Held: held, ResolveInterval: time.Hour}, f)
	testenv.Eventually(t, "connected", func() bool { return tr.Status().Address == oldURL })
	calls := f.count()

	oldSrv.Close() // DHCP gave the terminal another address
	f.set(pinned("Yavin A", newURL, pin))
	tx, err := tr.PaymentBody(t.Context(), body("0190f5a4-7c1e-7000-8000-0000000000c1"))
	if err != nil || !tx.Approved() || paid.Load() != 1 {
		t.Fatalf("payment after the move: %+v, %v (paid %d)", tx, err, paid.Load())
	}
	if s := tr.Status(); s.State != StateConnected || s.Address != newURL || s.Instance != "Yavin A" {
		t.Errorf("status %+v", s)
	}
	if n := f.count() - calls; n != 1 {
		t.Errorf("%d re-resolutions, want 1", n)
	}
	id, _ := trust.LoadIdentity(t.Context())
	if id.Pin != pin || !id.Knows(oldURL) || !id.Knows(newURL) || id.Addresses[1].By != "certificate" {
		t.Errorf("identity %+v", id)
	}

	// Gone again, and too soon to look: the error comes back untouched.
	f.set()
	tr.mu.Lock()
	tr.client, _ = localapi.NewClient(deadURL(t))
	tr.mu.Unlock()
	_, err = tr.Abort(t.Context(), &localapi.AbortRequest{IdempotentUUID: "0190f5a4-7c1e-7000-8000-0000000000c1"})
	var te *localapi.TransportError
	if !errors.As(err, &te) || te.Sent {
		t.Errorf("abort on a dead address: %v", err)
	}
	if n := f.count() - calls; n != 1 {
		t.Errorf("re-resolution not rate-limited: %d", n)
	}
	if s := tr.Status(); s.State != StateUnreachable || s.LastError == "" {
		t.Errorf("status %+v", s)
	}
	if got := rec.states(); !slices.Equal(got, []string{"searching", "connected " + oldURL, "connected " + newURL, "unreachable"}) {
		t.Errorf("statuses %q", got)
	}
}

// A request that reached the terminal is never retried here: only the
// orchestrator may resend, with the same uuid.
func TestTrackerNeverRetriesASentRequest(t *testing.T) {
	var requests atomic.Int32
	_, url := terminalServer(t, func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		_, _ = r.Body.Read(make([]byte, 4096))
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			conn.Close() // read the request, then hang up without an answer
		}
	})
	f := &fakeFinder{}
	f.set(confirmed("Yavin A", url))
	tr := newTracker(t, Config{ResolveInterval: time.Millisecond}, f)
	testenv.Eventually(t, "connected", func() bool { return tr.Status().State == StateConnected })
	calls := f.count()

	_, err := tr.PaymentBody(t.Context(), body("0190f5a4-7c1e-7000-8000-0000000000d1"))
	var te *localapi.TransportError
	if !errors.As(err, &te) || !te.Sent {
		t.Fatalf("want a transport error after sending, got %v", err)
	}
	if n := requests.Load(); n != 1 {
		t.Errorf("%d requests reached the terminal, want exactly 1", n)
	}
	if n := f.count() - calls; n != 0 {
		t.Errorf("%d re-resolutions after a sent request", n)
	}
	if s := tr.Status(); s.State != StateConnected || s.Address != url {
		t.Errorf("status %+v", s)
	}
}

func TestTrackerManualNeverReresolves(t *testing.T) {
	f := &fakeFinder{}
	f.set(confirmed("Yavin A", "http://127.0.0.1:1/localapi/v4"))
	dead := deadURL(t)
	rec := &recorder{}
	tr := newTracker(t, Config{Manual: dead, Emitter: rec, PingInterval: 20 * time.Millisecond, ResolveInterval: time.Millisecond}, f)

	_, err := tr.PaymentBody(t.Context(), body("0190f5a4-7c1e-7000-8000-0000000000e1"))
	var te *localapi.TransportError
	if !errors.As(err, &te) || te.Sent {
		t.Errorf("manual dead address: %v", err)
	}
	testenv.Eventually(t, "the periodic ping to report the failure", func() bool { return tr.Status().LastError != "" })
	if err := tr.Choose(t.Context(), "Yavin A"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // several ping periods
	if n := f.count(); n != 0 {
		t.Errorf("manual mode browsed %d times", n)
	}
	if s := tr.Status(); s.State != StateManual || s.Address != dead || tr.BaseURL() != dead {
		t.Errorf("status %+v", s)
	}

	// Back to discovery: the chosen instance is looked for at once.
	if err := tr.SetManual(""); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, "connected by discovery", func() bool { return tr.Status().State == StateConnected })
	if got := rec.states(); got[0] != "manual" || got[len(got)-1] != "connected http://127.0.0.1:1/localapi/v4" {
		t.Errorf("statuses %q", got)
	}
}

func TestTrackerBadManualAddress(t *testing.T) {
	if _, err := NewTracker(Config{Manual: "ftp://terminal"}); err == nil {
		t.Error("accepted an ftp:// address")
	}
}

// The terminal is stopped and comes back under the same instance name on
// another port, with the certificate pinned when it was adopted: a payment
// reaches it there, by a real mDNS re-resolution.
func TestTrackerFollowsSimulatorToNewAddress(t *testing.T) {
	u, name, sim1 := onLoopback(t, true)
	cert := certOf(t, sim1)
	rec := &recorder{}
	tr := newTracker(t, Config{Browse: loOptions(t, u), Emitter: rec, ResolveInterval: 100 * time.Millisecond, SearchInterval: 200 * time.Millisecond}, nil)
	testenv.Eventually(t, "connected to the first simulator", func() bool {
		return tr.Status().Address == sim1.URL()
	})
	oldURL := sim1.URL()

	sim1.Close()
	sim2 := newTLSSim(t, name, cert)
	advertiseSim(t, sim2)
	if sim2.URL() == oldURL {
		t.Fatal("same address twice")
	}
	const id = "0190f5a4-7c1e-7000-8000-0000000000f1"
	var tx *localapi.Transaction
	var err error
	// The first call re-resolves; should mDNS miss the new advertisement in
	// that window, the orchestrator would ask again: so does the test.
	testenv.Eventually(t, "a payment to reach the new address", func() bool {
		tx, err = tr.PaymentBody(ctxFor(t, 15*time.Second), body(id))
		return err == nil
	})
	if !tx.Approved() || tx.IdempotentUUID != id {
		t.Errorf("transaction %+v", tx)
	}
	if charges := sim2.ChargesFor(id); len(charges) != 1 || charges[0].Amount != 1250 {
		t.Errorf("new simulator's ledger: %+v", charges)
	}
	if s := tr.Status(); s.State != StateConnected || s.Instance != name || s.Address != sim2.URL() {
		t.Errorf("status %+v", s)
	}
	got := rec.states()
	if got[0] != "searching" || got[1] != "connected "+oldURL || got[len(got)-1] != "connected "+sim2.URL() {
		t.Errorf("statuses %q", got)
	}
}

// The periodic ping notices the terminal is gone, the status says since
// when, and the terminal is found again when it comes back elsewhere with
// its certificate.
func TestTrackerPeriodicPingFindsTerminalAgain(t *testing.T) {
	u, name, sim1 := onLoopback(t, true)
	cert := certOf(t, sim1)
	store := &MemoryStore{}
	_ = store.Set(t.Context(), DefaultStoreKey, strings.ToUpper(name)) // remembered from a previous run
	rec := &recorder{}
	opts := loOptions(t, u)
	opts.Window = time.Second
	tr := newTracker(t, Config{Browse: opts, Store: store, Emitter: rec, PingInterval: 100 * time.Millisecond,
		ResolveInterval: 100 * time.Millisecond, SearchInterval: 100 * time.Millisecond}, nil)
	testenv.Eventually(t, "connected", func() bool { return tr.Status().Address == sim1.URL() })
	oldURL := sim1.URL()

	sim1.Close()
	testenv.Eventually(t, "unreachable", func() bool { return tr.Status().State == StateUnreachable })
	s := tr.Status()
	if s.Instance != name || s.Since.IsZero() || s.LastError == "" || s.Address != oldURL {
		t.Errorf("unreachable status %+v", s)
	}
	// Calls while it is gone fail without having been sent.
	var te *localapi.TransportError
	if _, err := tr.Ping(t.Context(), false); !errors.As(err, &te) || te.Sent {
		t.Errorf("ping while gone: %v", err)
	}

	sim2 := newTLSSim(t, name, cert)
	advertiseSim(t, sim2)
	testenv.Eventually(t, "connected at the new address", func() bool { return tr.Status().Address == sim2.URL() })
	if _, err := tr.Ping(t.Context(), false); err != nil {
		t.Errorf("ping after the move: %v", err)
	}
	want := []string{"searching", "connected " + oldURL, "unreachable", "connected " + sim2.URL()}
	if got := rec.states(); !slices.Equal(got, want) {
		t.Errorf("statuses\n got %q\nwant %q", got, want)
	}
	var last time.Time
	for _, e := range rec.all() {
		if e.Since.Before(last) {
			t.Errorf("status Since went back: %+v", e)
		}
		last = e.Since
	}
	if v, _, _ := store.Get(t.Context(), DefaultStoreKey); v != strings.ToUpper(name) {
		t.Errorf("store %q", v)
	}
}

// Close ends a browse in progress and waits for the Tracker's goroutine.
func TestTrackerCloseDuringBrowse(t *testing.T) {
	opts := loOptions(t, "nothing-"+tag())
	opts.Window = time.Minute
	tr, err := NewTracker(Config{Browse: opts})
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // the first window is open
	closed := make(chan struct{})
	go func() { tr.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not end the browse window")
	}
	if err := tr.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// The terminal (plain HTTP) stops, and another device announces the same
// name on another port: it is heard by a real mDNS re-resolution, held for
// staff and never paid on; staff's confirmation makes it the terminal.
func TestTrackerHoldsARogueWithTheSameNameForStaff(t *testing.T) {
	u, name, sim1 := onLoopback(t, false)
	tr := newTracker(t, Config{Browse: loOptions(t, u), ResolveInterval: 100 * time.Millisecond, SearchInterval: 200 * time.Millisecond}, nil)
	testenv.Eventually(t, "connected to the first simulator", func() bool { return tr.Status().Address == sim1.URL() })

	sim1.Close()
	rogue := newSim(t, name)
	advertiseSim(t, rogue)
	const id = "0190f5a4-7c1e-7000-8000-0000000000f2"
	testenv.Eventually(t, "the rogue held for staff", func() bool {
		_, err := tr.PaymentBody(ctxFor(t, 15*time.Second), body(id)) // the orchestrator's resends
		if err == nil {
			t.Fatal("a payment went through")
		}
		p := tr.Status().Pending
		return p != nil && p.Address == rogue.URL()
	})
	if n := len(rogue.Ledger()); n != 0 {
		t.Fatalf("the rogue took %d payments", n)
	}
	if s := tr.Status(); s.State != StateUnreachable || s.Address != sim1.URL() {
		t.Fatalf("status %+v", s)
	}

	if err := tr.Confirm(t.Context(), rogue.URL(), ""); err != nil {
		t.Fatal(err)
	}
	tx, err := tr.PaymentBody(ctxFor(t, 15*time.Second), body(id))
	if err != nil || !tx.Approved() || len(rogue.ChargesFor(id)) != 1 {
		t.Fatalf("payment after staff confirmed: %+v, %v", tx, err)
	}
}
