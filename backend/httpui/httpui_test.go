package httpui

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/comptoir-pos/comptoir/backend/device"
	"github.com/comptoir-pos/comptoir/backend/internal/testenv"
	"github.com/comptoir-pos/comptoir/backend/kiosk"
	"github.com/comptoir-pos/comptoir/backend/payment"
	"github.com/comptoir-pos/comptoir/backend/staff"
	"github.com/comptoir-pos/comptoir/backend/staffapi"
	"github.com/comptoir-pos/comptoir/backend/terminalsim"
)

// contractIntents are the intents of kiosk/intents.go.
var contractIntents = []string{
	"Info", "Catalog", "Checkout", "Terminal", "Start", "ChooseDining", "SetLanguage", "AddItem", "AddWithChoices", "SetChoices", "SetQuantity",
	"Pay", "Cancel", "Retry", "PayRestByCard", "PrintLink", "CancelOrder", "ChooseReceipt", "Finish", "Abandon",
}

type env struct {
	t   *testing.T
	s   *kiosk.Service
	sim *terminalsim.Terminal
	b   *Broadcaster
	h   http.Handler
	srv *httptest.Server
}

// newEnv wires the whole browser mode as `comptoir serve` does: journal,
// terminal, orchestrator (with a Relay), Broadcaster, Service, handler.
// Each opts changes the handler's Options.
func newEnv(t *testing.T, opts ...func(*Options)) *env {
	t.Helper()
	sim, client := testenv.Terminal(t, testenv.Scripted)
	ctx, cancel := context.WithCancel(context.Background())
	db := testenv.Journal(t, "")
	relay := kiosk.NewRelay(nil)
	lim := payment.DefaultLimits
	lim.KioskTimeout, lim.CounterTimeout, lim.RefundTimeout, lim.ResendPause = 2*time.Second, 2*time.Second, 2*time.Second, 5*time.Millisecond
	o, err := payment.New(payment.Config{Journal: db, Terminal: client, TerminalID: "sim", Limits: lim, Emitter: relay})
	if err != nil {
		t.Fatal(err)
	}
	b := NewBroadcaster()
	s, err := kiosk.New(kiosk.Config{
		Journal: db, Payments: o, Printer: device.LocalClient(client), Emitter: b, Relay: relay, Version: "test",
		Terminal:     kiosk.FixedTerminal("sim", sim.URL()),
		PollInterval: 10 * time.Millisecond, TerminalInterval: 10 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { defer close(done); s.Run(ctx) }()
	assets := fstest.MapFS{
		"index.html":            {Data: []byte("<!doctype html><title>Comptoir</title>")},
		"assets/index-abc12.js": {Data: []byte("console.log(1)")},
		"favicon.svg":           {Data: []byte("<svg/>")},
	}
	st, err := staff.New(staff.Config{Journal: db, Payments: o, Terminal: device.LocalClient(client), Demo: true,
		Argon2: &staff.Argon2Params{Time: 1, Memory: 64, Threads: 1}})
	if err != nil {
		t.Fatal(err)
	}
	api := staffapi.New(staffapi.Config{Staff: st, Kiosk: s})
	opt := Options{Service: s, Staff: api, Events: b, Assets: assets, Heartbeat: 50 * time.Millisecond}
	for _, o := range opts {
		o(&opt)
	}
	h := New(opt)
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
		cancel()
		<-done
		sim.Close()
		s.Close()
		o.Close()
		db.Close()
	})
	deadline := time.Now().Add(10 * time.Second)
	// Ready: the terminal answers, and the welcome screen is up (the
	// checkout leaves "unavailable" just after the terminal is ready).
	// The broadcaster's latest checkout too: the kiosk publishes its
	// snapshot just after it changes, and a new event stream starts with
	// what the broadcaster has.
	for !s.Terminal().Ready || s.Checkout().Phase != kiosk.PhaseWelcome || broadcastPhase(b) != kiosk.PhaseWelcome {
		if time.Now().After(deadline) {
			t.Fatalf("never ready: %s (broadcast %s)", s.Checkout().Phase, broadcastPhase(b))
		}
		time.Sleep(5 * time.Millisecond)
	}
	return &env{t: t, s: s, sim: sim, b: b, h: h, srv: srv}
}

func (e *env) post(name, body string, hdr ...string) (*http.Response, []byte) {
	e.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, e.srv.URL+"/api/"+name, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := e.srv.Client().Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

func (e *env) checkout(name, body string) kiosk.CheckoutView {
	e.t.Helper()
	resp, b := e.post(name, body)
	if resp.StatusCode != http.StatusOK {
		e.t.Fatalf("%s: %d %s", name, resp.StatusCode, b)
	}
	var v kiosk.CheckoutView
	if err := json.Unmarshal(b, &v); err != nil {
		e.t.Fatalf("%s: %v: %s", name, err, b)
	}
	return v
}

func TestEveryIntentIsServed(t *testing.T) {
	got := Intents()
	slices.Sort(got)
	want := slices.Clone(contractIntents)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("intents served %v, contract %v", got, want)
	}
	e := newEnv(t)
	// The payment waits for the card until Cancel ends it (a scripted
	// decline could end it before Cancel comes, refusing Cancel).
	e.sim.Script(terminalsim.HoldBeforeHandover())
	// A walk through every intent, over HTTP.
	for _, c := range []struct{ name, args, phase, errKey string }{
		{"Info", ``, "", ""},
		{"Catalog", `[]`, "", ""},
		{"Terminal", `[]`, "", ""},
		{"Checkout", `[]`, "welcome", ""},
		{"Start", `["en"]`, "dining", ""},
		{"ChooseDining", `["somewhere"]`, "dining", kiosk.ErrDining},
		{"ChooseDining", `["take_away"]`, "ordering", ""},
		{"SetLanguage", `["es"]`, "ordering", ""},
		{"AddItem", `["croissant", 2]`, "ordering", ""},
		{"SetQuantity", `["croissant", 1]`, "ordering", ""},
		{"Pay", `["card"]`, "paying", ""},
		{"Cancel", `[]`, "", ""},
	} {
		resp, b := e.post(c.name, c.args)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d %s", c.name, resp.StatusCode, b)
		}
		var v kiosk.CheckoutView
		_ = json.Unmarshal(b, &v)
		if c.phase != "" && string(v.Phase) != c.phase || v.Error != c.errKey {
			t.Fatalf("%s: %s", c.name, b)
		}
	}
	waitPhase(t, e.s, kiosk.PhaseDeclined)
	e.sim.Script(terminalsim.Decline())
	e.checkout("Retry", `[]`)
	waitPhase(t, e.s, kiosk.PhaseDeclined)
	e.checkout("PayRestByCard", `[]`)
	waitPhase(t, e.s, kiosk.PhaseApproved)
	if v := e.checkout("ChooseReceipt", `["none"]`); v.Receipt == nil || v.Receipt.Status != "done" {
		t.Fatalf("ChooseReceipt: %+v", v.Receipt)
	}
	if v := e.checkout("Finish", `[]`); v.Phase != kiosk.PhaseWelcome {
		t.Fatalf("Finish: %s", v.Phase)
	}
	e.checkout("Start", `["fr"]`)
	if v := e.checkout("Abandon", `[]`); v.Phase != kiosk.PhaseWelcome {
		t.Fatalf("Abandon: %s", v.Phase)
	}
	// CancelOrder refused outside declined/failed: still 200, with the key.
	if v := e.checkout("CancelOrder", `[]`); v.Error != kiosk.ErrWrongPhase {
		t.Fatalf("CancelOrder: %+v", v)
	}
	// PrintLink refused when no payment link is shown.
	if v := e.checkout("PrintLink", `[]`); v.Error != kiosk.ErrWrongPhase {
		t.Fatalf("PrintLink: %+v", v)
	}
	var info kiosk.InfoView
	_, b := e.post("Info", `[]`)
	if err := json.Unmarshal(b, &info); err != nil || info.Version != "test" || len(info.Languages) != 3 {
		t.Fatalf("Info: %s", b)
	}
}

func waitPhase(t *testing.T, s *kiosk.Service, p kiosk.Phase) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for s.Checkout().Phase != p {
		if time.Now().After(deadline) {
			t.Fatalf("phase %s, want %s", s.Checkout().Phase, p)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestRefusedRequests(t *testing.T) {
	e := newEnv(t)
	for _, c := range []struct {
		name, path, body string
		hdr              []string
		code             int
	}{
		{"unknown intent", "Explode", `[]`, nil, http.StatusNotFound},
		{"bad JSON", "Start", `["fr"`, nil, http.StatusBadRequest},
		{"not an array", "Start", `{"language":"fr"}`, nil, http.StatusBadRequest},
		{"missing argument", "AddItem", `["croissant"]`, nil, http.StatusBadRequest},
		{"wrong type", "AddItem", `["croissant", "two"]`, nil, http.StatusBadRequest},
		{"too many arguments", "Cancel", `[1]`, nil, http.StatusBadRequest},
		{"cross-origin", "Start", `["fr"]`, []string{"Origin", "http://evil.example"}, http.StatusForbidden},
		{"cross-site fetch", "Start", `["fr"]`, []string{"Sec-Fetch-Site", "cross-site"}, http.StatusForbidden},
		{"form post", "Start", `["fr"]`, []string{"Content-Type", "application/x-www-form-urlencoded"}, http.StatusUnsupportedMediaType},
		{"text post", "Start", `["fr"]`, []string{"Content-Type", "text/plain"}, http.StatusUnsupportedMediaType},
		{"rebound host", "Start", `["fr"]`, []string{"Host", "evil.example"}, http.StatusForbidden},
	} {
		t.Run(c.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodPost, e.srv.URL+"/api/"+c.path, strings.NewReader(c.body))
			req.Header.Set("Content-Type", "application/json")
			for i := 0; i+1 < len(c.hdr); i += 2 {
				if c.hdr[i] == "Host" {
					req.Host = c.hdr[i+1]
					continue
				}
				req.Header.Set(c.hdr[i], c.hdr[i+1])
			}
			resp, err := e.srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var body map[string]string
			if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || body["error"] == "" {
				t.Fatalf("error body: %v %v", body, err)
			}
			if resp.StatusCode != c.code {
				t.Fatalf("status %d, want %d (%s)", resp.StatusCode, c.code, body["error"])
			}
		})
	}
	if v := e.s.Checkout(); v.Phase != kiosk.PhaseWelcome {
		t.Fatalf("a refused request changed the checkout: %s", v.Phase)
	}
	// Same origin is fine.
	resp, b := e.post("Start", `["fr"]`, "Origin", e.srv.URL)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("same-origin: %d %s", resp.StatusCode, b)
	}
}

// sseReader reads server-sent events.
type sseReader struct {
	t  *testing.T
	sc *bufio.Scanner
}

func (r *sseReader) next() (name string, data []byte) {
	r.t.Helper()
	for r.sc.Scan() {
		line := r.sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			data = []byte(strings.TrimPrefix(line, "data: "))
		case line == "" && name != "":
			return name, data
		}
	}
	r.t.Fatalf("stream ended: %v", r.sc.Err())
	return "", nil
}

func TestEventsInOrder(t *testing.T) {
	e := newEnv(t)
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, e.srv.URL+"/api/events", nil)
	resp, err := e.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	r := &sseReader{t: t, sc: bufio.NewScanner(resp.Body)}
	got := map[string]bool{}
	for range 2 {
		name, data := r.next()
		got[name] = true
		if name == kiosk.EventCheckout {
			var v kiosk.CheckoutView
			if err := json.Unmarshal(data, &v); err != nil || v.Phase != kiosk.PhaseWelcome {
				t.Fatalf("first checkout %s", data)
			}
		}
	}
	if !got[kiosk.EventCheckout] || !got[kiosk.EventTerminal] {
		t.Fatalf("first events %v", got)
	}
	e.checkout("Start", `["en"]`)
	e.checkout("ChooseDining", `["eat_in"]`)
	e.checkout("AddItem", `["croissant", 1]`)
	e.checkout("AddItem", `["espresso", 2]`)
	for {
		name, data := r.next()
		if name != kiosk.EventCheckout {
			continue
		}
		var v kiosk.CheckoutView
		if err := json.Unmarshal(data, &v); err != nil || v.Phase != kiosk.PhaseDining {
			t.Fatalf("after Start: %s", data)
		}
		break
	}
	want := []int{0, 1, 2} // lines after each intent
	for _, n := range want {
		var v kiosk.CheckoutView
		for {
			name, data := r.next()
			if name != kiosk.EventCheckout {
				continue
			}
			if err := json.Unmarshal(data, &v); err != nil {
				t.Fatal(err)
			}
			break
		}
		if v.Phase != kiosk.PhaseOrdering || len(v.Lines) != n || v.Language != "en" {
			t.Fatalf("event %d: phase %s, %d lines", n, v.Phase, len(v.Lines))
		}
	}
	// Heartbeats keep the stream alive.
	deadline := time.Now().Add(5 * time.Second)
	for r.sc.Scan() {
		if r.sc.Text() == ": heartbeat" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no heartbeat")
		}
	}
	// The client leaves: the subscription ends.
	cancel()
	deadline = time.Now().Add(5 * time.Second)
	for e.b.Subscribers() != 0 {
		if time.Now().After(deadline) {
			t.Fatal("subscriber not released after disconnect")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestSlowSubscriberIsDropped(t *testing.T) {
	b := NewBroadcaster()
	_, slow, cancelSlow := b.Subscribe()
	defer cancelSlow()
	_, fast, cancelFast := b.Subscribe()
	defer cancelFast()
	go func() {
		for range fast {
		}
	}()
	for i := range DefaultSubscriberBuffer + 10 {
		b.Emit("kiosk:checkout", map[string]int{"n": i}) // never blocks
	}
	n := 0
	for range slow {
		n++
	}
	if n != DefaultSubscriberBuffer {
		t.Fatalf("the slow subscriber got %d events before being dropped", n)
	}
	latest, _, cancel := b.Subscribe()
	defer cancel()
	if len(latest) != 1 || string(latest[0].Data) != `{"n":73}` {
		t.Fatalf("latest %v", latest)
	}
}

func TestAssets(t *testing.T) {
	e := newEnv(t)
	for _, c := range []struct {
		path, want, cache string
		code              int
	}{
		{"/", "<!doctype html>", "no-cache", 200},
		{"/menu/viennoiseries", "<!doctype html>", "no-cache", 200},
		{"/assets/index-abc12.js", "console.log", "immutable", 200},
		{"/favicon.svg", "<svg/>", "no-cache", 200},
		{"/assets/missing-123.js", "", "", 404},
		{"/api/nothing", `"error"`, "", 404},
	} {
		resp, err := e.srv.Client().Get(e.srv.URL + c.path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.code || !strings.Contains(string(b), c.want) || !strings.Contains(resp.Header.Get("Cache-Control"), c.cache) {
			t.Fatalf("%s: %d %q cache %q", c.path, resp.StatusCode, b, resp.Header.Get("Cache-Control"))
		}
	}
}

// staffCall posts a staff call and decodes its envelope.
func (e *env) staffCall(name, body string) (int, staffapi.Result, json.RawMessage) {
	e.t.Helper()
	resp, b := e.post("staff/"+name, body)
	var env struct {
		staffapi.Result
		Value json.RawMessage `json:"value"`
	}
	if resp.StatusCode == http.StatusOK {
		if err := json.Unmarshal(b, &env); err != nil {
			e.t.Fatalf("staff %s: %v: %s", name, err, b)
		}
	}
	return resp.StatusCode, env.Result, env.Value
}

func TestStaffCalls(t *testing.T) {
	e := newEnv(t)
	if code, _, _ := e.staffCall("Nope", "[]"); code != http.StatusNotFound {
		t.Fatalf("unknown staff call: %d", code)
	}
	if code, _, _ := e.staffCall("Unlock", `[1234]`); code != http.StatusBadRequest {
		t.Fatalf("a number for the PIN: %d", code)
	}
	code, r, _ := e.staffCall("CloseCheckout", `["guess"]`)
	if code != http.StatusOK || r.OK || r.Error == nil || r.Error.Code != staff.ESESSION {
		t.Fatalf("a call without a session: %d %+v", code, r.Error)
	}
	if resp, _ := e.post("staff/Gate", "[]", "Origin", "http://evil.example"); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("a cross-origin staff call: %d", resp.StatusCode)
	}

	_, r, raw := e.staffCall("Unlock", `["1234"]`)
	var sess staff.Session
	if !r.OK || json.Unmarshal(raw, &sess) != nil || sess.ID == "" || !sess.DemoPIN {
		t.Fatalf("unlock with the demo PIN: %+v %s", r.Error, raw)
	}
	// Staff close a customer screen: the kiosk goes back to welcome.
	e.checkout("Start", `["en"]`)
	_, r, raw = e.staffCall("CloseCheckout", `["`+sess.ID+`"]`)
	var v kiosk.CheckoutView
	if !r.OK || json.Unmarshal(raw, &v) != nil || v.Phase != kiosk.PhaseWelcome || e.s.Checkout().Phase != kiosk.PhaseWelcome {
		t.Fatalf("close checkout: %+v %s", r.Error, raw)
	}
	e.staffCall("Lock", `["`+sess.ID+`"]`)
	if _, r, _ := e.staffCall("Settings", `["`+sess.ID+`"]`); r.OK || r.Error.Code != staff.ESESSION {
		t.Fatalf("a call after Lock: %+v", r.Error)
	}
}

// broadcastPhase is the phase of the latest checkout the broadcaster holds.
func broadcastPhase(b *Broadcaster) kiosk.Phase {
	latest, _, cancel := b.Subscribe()
	cancel()
	for _, ev := range latest {
		if ev.Name != kiosk.EventCheckout {
			continue
		}
		var v kiosk.CheckoutView
		if json.Unmarshal(ev.Data, &v) == nil {
			return v.Phase
		}
	}
	return ""
}
