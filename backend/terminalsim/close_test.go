package terminalsim

import (
	"context"
	"errors"
	"net/http/httptest"
	"runtime"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/localapi"
)

// goroutinesBack waits, boundedly, for the goroutine count to come back to
// at most n: net/http's connection goroutines end shortly after their
// connections close, not synchronously.
func goroutinesBack(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > n {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines, want at most %d:\n%s", runtime.NumGoroutine(), n, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestCloseEndsHeldRequests(t *testing.T) {
	before := runtime.NumGoroutine()
	sim, err := New(Config{TimeScale: testScale})
	if err != nil {
		t.Fatal(err)
	}
	if err := sim.Start(""); err != nil {
		t.Fatal(err)
	}
	c, _ := localapi.NewClient(sim.URL())
	ctx := testCtx(t)
	id, res := payIn(t, ctx, sim, c, Hold(), 100, PhaseBanking)
	attached := payAsync(ctx, c, &localapi.PaymentRequest{Amount: 100, IdempotentUUID: id})
	aborted := abortAsync(ctx, c, id)
	if err := sim.WaitFor(ctx, func(s State) bool { return s.Current != nil && s.Current.AbortsHeld == 1 && s.Current.Waiters == 2 }); err != nil {
		t.Fatal(err)
	}

	if err := sim.Close(); err != nil {
		t.Fatal(err)
	}
	for _, ch := range []<-chan payResult{res, attached} {
		r := wait(t, ctx, ch)
		var te *localapi.TransportError
		if !errors.As(r.err, &te) || te.Timeout {
			t.Errorf("held payment after Close: %v %v", r.tx, r.err)
		}
	}
	var te *localapi.TransportError
	if err := wait(t, ctx, aborted); !errors.As(err, &te) {
		t.Errorf("held abort after Close: %v", err)
	}
	if len(sim.Ledger()) != 0 {
		t.Error("charged by Close")
	}
	if err := sim.WaitPhase(ctx, id, PhaseDone); !errors.Is(err, ErrClosed) {
		t.Errorf("WaitPhase after Close: %v", err)
	}
	if err := sim.PresentCard(); !errors.Is(err, ErrClosed) {
		t.Errorf("PresentCard after Close: %v", err)
	}
	if err := sim.Start(""); !errors.Is(err, ErrClosed) {
		t.Errorf("Start after Close: %v", err)
	}
	if err := sim.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	goroutinesBack(t, before)
}

// With httptest, closing the terminal first releases held requests, so the
// server's Close (which waits for handlers) returns.
func TestHandlerWithHTTPTest(t *testing.T) {
	before := runtime.NumGoroutine()
	sim, err := New(Config{TimeScale: testScale})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(sim.Handler())
	c, _ := localapi.NewClient(srv.URL)
	ctx := testCtx(t)
	mustApproved(t, wait(t, ctx, payAsync(ctx, c, &localapi.PaymentRequest{Amount: 100})))
	sim.Script(Hold())
	res := payAsync(ctx, c, &localapi.PaymentRequest{Amount: 100})
	if err := sim.WaitPhase(ctx, "", PhaseBanking); err != nil {
		t.Fatal(err)
	}
	sim.Close()
	if r := wait(t, ctx, res); r.err == nil {
		t.Errorf("answered %s after Close", r.tx.Raw)
	}
	closed := make(chan struct{})
	go func() { srv.Close(); close(closed) }()
	wait(t, ctx, closed)
	// After Close the handler refuses new requests.
	if _, err := c.Ping(ctx, false); err == nil {
		t.Error("ping answered after Close")
	}
	goroutinesBack(t, before)
}

func TestListenAndServe(t *testing.T) {
	sim, err := New(Config{TimeScale: testScale})
	if err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t)
	lctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- sim.ListenAndServe(lctx, "127.0.0.1:0") }()
	if err := sim.WaitFor(ctx, func(s State) bool { return s.URL != "" }); err != nil {
		t.Fatal(err)
	}
	c, _ := localapi.NewClient(sim.URL())
	if _, err := c.Ping(ctx, false); err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := wait(t, ctx, done); err != nil {
		t.Errorf("ListenAndServe: %v", err)
	}
	if _, err := c.Ping(ctx, false); err == nil {
		t.Error("still serving")
	}
}
