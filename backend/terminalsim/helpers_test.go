package terminalsim

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/localapi"
)

// testScale runs the terminal 1000 times faster than real time: the
// handover takes 1.5 ms, a 60 s window 60 ms.
const testScale = 0.001

// newSim starts a terminal on 127.0.0.1 and returns it with a client. The
// request hold is raised to 2 h (7.2 s at test scale) so that no test hits it
// by accident; the test of the hold sets its own.
func newSim(t *testing.T, cfg Config) (*Terminal, *localapi.Client) {
	t.Helper()
	if cfg.TimeScale == 0 {
		cfg.TimeScale = testScale
	}
	if cfg.Timings.RequestHold == 0 {
		cfg.Timings.RequestHold = 2 * time.Hour
	}
	if cfg.Logger == nil && testing.Verbose() {
		cfg.Logger = slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	sim, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := sim.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sim.Close() })
	c, err := localapi.NewClient(sim.URL())
	if err != nil {
		t.Fatal(err)
	}
	return sim, c
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

type payResult struct {
	tx  *localapi.Transaction
	err error
}

// payAsync sends a payment in the background.
func payAsync(ctx context.Context, c *localapi.Client, req *localapi.PaymentRequest) <-chan payResult {
	ch := make(chan payResult, 1)
	go func() {
		tx, err := c.Payment(ctx, req)
		ch <- payResult{tx, err}
	}()
	return ch
}

func abortAsync(ctx context.Context, c *localapi.Client, id string) <-chan error {
	ch := make(chan error, 1)
	go func() {
		_, err := c.Abort(ctx, &localapi.AbortRequest{IdempotentUUID: id})
		ch <- err
	}()
	return ch
}

func wait[T any](t *testing.T, ctx context.Context, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-ctx.Done():
		t.Fatalf("timed out: %v", ctx.Err())
		panic("unreachable")
	}
}

func mustPhase(t *testing.T, ctx context.Context, sim *Terminal, id string, ph Phase) {
	t.Helper()
	if err := sim.WaitPhase(ctx, id, ph); err != nil {
		t.Fatalf("WaitPhase(%s, %s): %v", id, ph, err)
	}
}

func mustApproved(t *testing.T, r payResult) *localapi.Transaction {
	t.Helper()
	if r.err != nil {
		t.Fatalf("payment: %v", r.err)
	}
	if !r.tx.Approved() {
		t.Fatalf("payment not approved: %s", r.tx.Raw)
	}
	return r.tx
}

func mustDeclined(t *testing.T, r payResult) *localapi.Transaction {
	t.Helper()
	if r.err != nil {
		t.Fatalf("payment: %v", r.err)
	}
	if !r.tx.Declined() {
		t.Fatalf("payment not a ko without message: %s", r.tx.Raw)
	}
	return r.tx
}

func mustCode(t *testing.T, err error, code localapi.Code, message string) *localapi.APIError {
	t.Helper()
	var ae *localapi.APIError
	if !errors.As(err, &ae) {
		t.Fatalf("err = %v, want an API error %s", err, code)
	}
	if ae.Code != code || (message != "" && ae.Message != message) {
		t.Fatalf("API error %s %q, want %s %q", ae.Code, ae.Message, code, message)
	}
	return ae
}

// raw sends a request the client would refuse to send and returns the status
// and body.
func raw(t *testing.T, sim *Terminal, method, path, body string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(testCtx(t), method, sim.URL()+path, bytes.NewBufferString(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := localapi.NewHTTPClient().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, data
}

// rawJSON is raw for an HTTP 200 JSON answer, decoded into a map.
func rawJSON(t *testing.T, sim *Terminal, method, path, body string) map[string]any {
	t.Helper()
	code, data := raw(t, sim, method, path, body)
	if code != http.StatusOK {
		t.Fatalf("%s %s: HTTP %d %s", method, path, code, data)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("%s %s: %v: %s", method, path, err, data)
	}
	return m
}

func wantKO(t *testing.T, m map[string]any, message string) {
	t.Helper()
	if m["status"] != "ko" || m["message"] != message {
		t.Fatalf("answer %v, want ko %q", m, message)
	}
}

type rawResult struct {
	code int
	body []byte
	err  error
}

func (r rawResult) json(t *testing.T) map[string]any {
	t.Helper()
	if r.err != nil || r.code != http.StatusOK {
		t.Fatalf("HTTP %d %s %v", r.code, r.body, r.err)
	}
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("%v: %s", err, r.body)
	}
	return m
}

// rawAsync is raw in the background (it must not call t.Fatal there).
func rawAsync(ctx context.Context, sim *Terminal, method, path, body string) <-chan rawResult {
	ch := make(chan rawResult, 1)
	go func() {
		req, err := http.NewRequestWithContext(ctx, method, sim.URL()+path, bytes.NewBufferString(body))
		if err != nil {
			ch <- rawResult{err: err}
			return
		}
		resp, err := localapi.NewHTTPClient().Do(req)
		if err != nil {
			ch <- rawResult{err: err}
			return
		}
		defer resp.Body.Close()
		data, err := io.ReadAll(resp.Body)
		ch <- rawResult{resp.StatusCode, data, err}
	}()
	return ch
}
