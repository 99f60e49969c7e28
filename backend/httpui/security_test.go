package httpui

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/fstest"
	"time"

	"github.com/comptoir-pos/comptoir/backend/kiosk"
	"github.com/comptoir-pos/comptoir/backend/staff"
	"github.com/comptoir-pos/comptoir/backend/staffapi"
	"github.com/comptoir-pos/comptoir/backend/terminalsim"
)

var testAssets = fstest.MapFS{"index.html": {Data: []byte("<!doctype html><title>Comptoir</title>")}}

// serve sends r to h as if from remote ("ip:port") and returns the answer.
func serve(h http.Handler, r *http.Request, remote string) *http.Response {
	r.RemoteAddr = remote
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	return rec.Result()
}

// The Host header must name this server: a loopback name, or one it was
// given. Every other name or literal, IPv4-mapped loopback included, is
// refused.
func TestHostMustBeLoopbackOrConfigured(t *testing.T) {
	loopbackOnly := New(Options{Assets: testAssets})
	configured := New(Options{Assets: testAssets, AllowedHosts: []string{"kiosk.lan", "192.168.1.10"}})
	for _, c := range []struct {
		host             string
		plain, withNames bool
	}{
		{"localhost:8080", true, true},
		{"LocalHost", true, true},
		{"127.0.0.1:8080", true, true},
		{"127.0.0.1", true, true},
		{"[::1]:8080", true, true},
		{"[::1]", true, true},
		{"kiosk.lan:8080", false, true},
		{"KIOSK.LAN", false, true},
		{"192.168.1.10:8080", false, true},
		{"[::ffff:7f00:1]", false, false},
		{"[::ffff:7f00:1]:8080", false, false},
		{"[::ffff:127.0.0.1]:8080", false, false},
		{"[0:0:0:0:0:0:0:1]:8080", false, false},
		{"127.0.0.2:8080", false, false},
		{"127.1:8080", false, false},
		{"2130706433", false, false},
		{"0x7f000001", false, false},
		{"0.0.0.0:8080", false, false},
		{"192.168.1.11:8080", false, false},
		{"::1", false, false},
		{"[fe80::1%25eth0]:8080", false, false},
		{"evil.example", false, false},
		{"localhost.evil.example", false, false},
		{"kiosk.lan.evil.example", false, false},
		{"", false, false},
	} {
		for _, h := range []struct {
			name string
			h    http.Handler
			want bool
		}{{"loopback only", loopbackOnly, c.plain}, {"with names", configured, c.withNames}} {
			r := httptest.NewRequest(http.MethodGet, "/", nil)
			r.Host = c.host
			resp := serve(h.h, r, "127.0.0.1:50000")
			if got := resp.StatusCode == http.StatusOK; got != h.want {
				t.Errorf("%s: Host %q: %d, want allowed=%v", h.name, c.host, resp.StatusCode, h.want)
			}
		}
	}
}

// On the LAN, with pairing on, a browser may name the PC by the address
// its connection reached, written the canonical way, and by nothing else.
func TestHostOnTheLANIsTheAddressReached(t *testing.T) {
	p := newPairing(t, t.TempDir(), nil)
	h := New(Options{Assets: testAssets, Pairing: p})
	local := &net.TCPAddr{IP: net.ParseIP("192.0.2.2"), Port: 8080}
	for host, want := range map[string]bool{
		"192.0.2.2:8080":          true,
		"192.0.2.2":               true,
		"192.0.2.3:8080":          false,
		"[::ffff:192.0.2.2]:8080": false,
		"[::ffff:c000:202]:8080":  false,
		"192.000.002.002:8080":    false,
		"kiosk.lan":               false,
	} {
		r := httptest.NewRequest(http.MethodGet, "/pair", nil)
		r = r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, net.Addr(local)))
		r.Host = host
		resp := serve(h, r, "192.0.2.50:40000")
		if got := resp.StatusCode == http.StatusOK; got != want {
			t.Errorf("Host %q: %d, want allowed=%v", host, resp.StatusCode, want)
		}
	}
}

// newPairing is a Pairing whose codes go to codes (nil: dropped).
func newPairing(t *testing.T, dir string, codes *codeLog, opts ...func(*PairingConfig)) *Pairing {
	t.Helper()
	cfg := PairingConfig{KeyFile: filepath.Join(dir, "pairing.key")}
	if codes != nil {
		cfg.OnCode = codes.add
	}
	for _, o := range opts {
		o(&cfg)
	}
	p, err := NewPairing(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

type codeLog struct {
	mu    sync.Mutex
	codes []string
}

func (c *codeLog) add(code string) { c.mu.Lock(); c.codes = append(c.codes, code); c.mu.Unlock() }

func (c *codeLog) last() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.codes[len(c.codes)-1]
}

const lanBrowser = "192.0.2.50:40000"

// lanRequest is a request as a browser on the LAN sends it to 127.0.0.1
// (the Host is one the handler accepts; the remote address is not the
// PC's).
func lanRequest(method, target, body string, cookies ...*http.Cookie) *http.Request {
	r := httptest.NewRequest(method, target, strings.NewReader(body))
	r.Host = "127.0.0.1"
	switch {
	case strings.HasPrefix(target, "/api/"):
		r.Header.Set("Content-Type", "application/json")
	case method == http.MethodPost:
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for _, c := range cookies {
		r.AddCookie(c)
	}
	return r
}

func decodeEnvelope(t *testing.T, resp *http.Response) staffapi.Result {
	t.Helper()
	var out staffapi.Result
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out
}

// Without pairing, nothing answers another machine: not staff Unlock, not
// an intent. The kiosk is unchanged.
func TestTheLANIsRefusedWithoutPairing(t *testing.T) {
	e := newEnv(t)
	for _, c := range []struct{ method, path, body string }{
		{http.MethodPost, "/api/staff/Unlock", `["1234"]`},
		{http.MethodPost, "/api/staff/Gate", `[]`},
		{http.MethodPost, "/api/Start", `["fr"]`},
		{http.MethodGet, "/api/events", ``},
		{http.MethodGet, "/", ``},
		{http.MethodGet, "/pair", ``},
	} {
		resp := serve(e.h, lanRequest(c.method, c.path, c.body), lanBrowser)
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(b), "--allow-lan") {
			t.Fatalf("%s %s from the LAN: %d %s", c.method, c.path, resp.StatusCode, b)
		}
	}
	if v := e.s.Checkout(); v.Phase != kiosk.PhaseWelcome {
		t.Fatalf("a refused request changed the checkout: %s", v.Phase)
	}
}

// With pairing on, a browser on the LAN needs the code shown on the PC
// before any staff call (Unlock first) or intent; the code pairs one
// browser; the PC itself needs none.
func TestStaffFromTheLANNeedsPairing(t *testing.T) {
	var codes codeLog
	p := newPairing(t, t.TempDir(), &codes)
	e := newEnv(t, func(o *Options) { o.Pairing = p })

	unlock := func(cookies ...*http.Cookie) *http.Response {
		return serve(e.h, lanRequest(http.MethodPost, "/api/staff/Unlock", `["1234"]`, cookies...), lanBrowser)
	}
	resp := unlock()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(b), "/pair") {
		t.Fatalf("Unlock from an unpaired browser: %d %s", resp.StatusCode, b)
	}
	if resp := serve(e.h, lanRequest(http.MethodPost, "/api/Start", `["fr"]`), lanBrowser); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("an intent from an unpaired browser: %d", resp.StatusCode)
	}
	if resp := serve(e.h, lanRequest(http.MethodGet, "/", ""), lanBrowser); resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/pair" {
		t.Fatalf("the app's page for an unpaired browser: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	if resp := serve(e.h, lanRequest(http.MethodGet, "/pair", ""), lanBrowser); resp.StatusCode != http.StatusOK {
		t.Fatalf("the pairing page: %d", resp.StatusCode)
	}
	// Wrong codes, a forged cookie: still refused.
	for _, wrong := range []string{"", "AAAA-AAAA-AAAA", codes.last() + "X", strings.Repeat("A", 5000)} {
		resp := serve(e.h, lanRequest(http.MethodPost, "/pair", url.Values{"code": {wrong}}.Encode()), lanBrowser)
		if resp.StatusCode == http.StatusSeeOther || len(resp.Cookies()) != 0 {
			t.Fatalf("code %.20q: %d %v", wrong, resp.StatusCode, resp.Cookies())
		}
	}
	forged := &http.Cookie{Name: pairingCookie, Value: strings.Repeat("A", 75)}
	if resp := unlock(forged); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("a forged cookie: %d", resp.StatusCode)
	}

	// The code shown on the PC, typed as a person would.
	code := codes.last()
	resp = serve(e.h, lanRequest(http.MethodPost, "/pair", url.Values{"code": {strings.ToLower(strings.ReplaceAll(code, "-", " "))}}.Encode()), lanBrowser)
	cookies := resp.Cookies()
	if resp.StatusCode != http.StatusSeeOther || len(cookies) != 1 {
		t.Fatalf("pairing: %d %v", resp.StatusCode, cookies)
	}
	c := cookies[0]
	if !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/" || c.MaxAge <= 0 {
		t.Fatalf("the pairing cookie: %+v", c)
	}
	resp = unlock(c)
	if env := decodeEnvelope(t, resp); resp.StatusCode != http.StatusOK || !env.OK {
		t.Fatalf("Unlock from the paired browser: %d %+v", resp.StatusCode, env.Error)
	}
	// A cookie whose signature's last character is changed, to any other,
	// is refused: that character carries bits a lenient decoder would drop.
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	for _, other := range alphabet {
		tampered := *c
		if rune(tampered.Value[len(tampered.Value)-1]) == other {
			continue
		}
		tampered.Value = tampered.Value[:len(tampered.Value)-1] + string(other)
		if resp := unlock(&tampered); resp.StatusCode != http.StatusForbidden {
			t.Fatalf("a cookie ending in %q for %q: %d", other, c.Value[len(c.Value)-1:], resp.StatusCode)
		}
	}
	// The code was spent; the next one is shown and works.
	if code == codes.last() {
		t.Fatal("no new code after a pairing")
	}
	if resp := serve(e.h, lanRequest(http.MethodGet, "/pair?code="+url.QueryEscape(code), ""), lanBrowser); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("a spent code: %d", resp.StatusCode)
	}
	if resp := serve(e.h, lanRequest(http.MethodGet, "/pair?code="+url.QueryEscape(codes.last()), ""), lanBrowser); resp.StatusCode != http.StatusSeeOther || len(resp.Cookies()) != 1 {
		t.Fatalf("the next code, by URL: %d", resp.StatusCode)
	}
	// The PC itself needs no pairing.
	r := lanRequest(http.MethodPost, "/api/staff/Gate", `[]`)
	if resp := serve(e.h, r, "127.0.0.1:40000"); resp.StatusCode != http.StatusOK {
		t.Fatalf("a staff call from the PC: %d", resp.StatusCode)
	}
}

// A paired browser stays paired across restarts (the key is kept), until
// the key is reset or the pairing is unused for PairingLifetime; a cookie
// a day old is renewed as it is used.
func TestPairingLastsAndCanBeReset(t *testing.T) {
	dir := t.TempDir()
	var codes codeLog
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	p := newPairing(t, dir, &codes, func(c *PairingConfig) { c.Now = clock })
	if !p.redeem(codes.last()) {
		t.Fatal("the code shown was refused")
	}
	cookie := p.cookie()
	req := func() *http.Request { return lanRequest(http.MethodGet, "/", "", cookie) }

	again := newPairing(t, dir, nil, func(c *PairingConfig) { c.Now = clock })
	if ok, renew := again.paired(req()); !ok || renew {
		t.Fatalf("after a restart: paired %v, renew %v", ok, renew)
	}
	now = now.Add(2 * pairingRenew)
	h := New(Options{Assets: testAssets, Pairing: again})
	resp := serve(h, req(), lanBrowser)
	if resp.StatusCode != http.StatusOK || len(resp.Cookies()) != 1 || resp.Cookies()[0].Value == cookie.Value {
		t.Fatalf("a day-old pairing is renewed: %d %v", resp.StatusCode, resp.Cookies())
	}
	now = now.Add(PairingLifetime)
	if ok, _ := again.paired(req()); ok {
		t.Fatal("a pairing unused for its lifetime still works")
	}
	now = now.Add(-PairingLifetime)
	reset := newPairing(t, dir, nil, func(c *PairingConfig) { c.Now = clock; c.Reset = true })
	if ok, _ := reset.paired(req()); ok {
		t.Fatal("a browser is still paired after the key was reset")
	}
	// A damaged key file is replaced, with a warning; nothing panics.
	if err := os.WriteFile(filepath.Join(dir, "pairing.key"), []byte("not a key"), 0o600); err != nil {
		t.Fatal(err)
	}
	if ok, _ := newPairing(t, dir, nil, func(c *PairingConfig) { c.Now = clock }).paired(req()); ok {
		t.Fatal("paired under a damaged key")
	}
	st, err := os.Stat(filepath.Join(dir, "pairing.key"))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("the key file: %v %v", st, err)
	}
}

// A body sent one byte at a time does not keep a request open: the
// server's read timeout cuts it off long before the body would be whole.
func TestASlowBodyIsCutOff(t *testing.T) {
	e := newEnv(t)
	srv := httptest.NewUnstartedServer(e.h)
	srv.Config = NewServer(e.h, Timeouts{ReadHeader: 300 * time.Millisecond, Read: 300 * time.Millisecond})
	srv.Start()
	defer srv.Close()
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	const bodyLen = 200 // at one byte per 100 ms: 20 s
	if _, err := fmt.Fprintf(conn, "POST /api/Start HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", bodyLen); err != nil {
		t.Fatal(err)
	}
	var sent atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range bodyLen {
			if _, err := conn.Write([]byte(" ")); err != nil {
				return
			}
			sent.Add(1)
			select {
			case <-time.After(100 * time.Millisecond):
			case <-t.Context().Done():
				return
			}
		}
	}()
	// The server answers an error or closes the connection; either way it
	// is over before the body is.
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err == nil {
		resp.Body.Close()
	}
	if n := sent.Load(); n >= bodyLen {
		t.Fatalf("the server waited for the whole slow body (%d bytes): %v", n, err)
	}
	if err == nil && resp.StatusCode == http.StatusOK {
		t.Fatal("a cut-off request was served")
	}
	conn.Close()
	<-done
	if v := e.s.Checkout(); v.Phase != kiosk.PhaseWelcome {
		t.Fatalf("the cut-off request changed the checkout: %s", v.Phase)
	}
}

// The server has every timeout, and the event stream outlives them.
func TestTimeoutsSpareTheEventStream(t *testing.T) {
	def := NewServer(http.NotFoundHandler(), Timeouts{})
	if def.ReadHeaderTimeout <= 0 || def.ReadTimeout <= 0 || def.WriteTimeout <= 0 || def.IdleTimeout <= 0 {
		t.Fatalf("timeouts: header %v read %v write %v idle %v", def.ReadHeaderTimeout, def.ReadTimeout, def.WriteTimeout, def.IdleTimeout)
	}
	e := newEnv(t)
	const short = 200 * time.Millisecond
	srv := httptest.NewUnstartedServer(e.h)
	srv.Config = NewServer(e.h, Timeouts{ReadHeader: short, Read: short, Write: short, Idle: short})
	srv.Start()
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL + "/api/events")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	until := time.Now().Add(10 * short)
	for time.Now().Before(until) {
		if !sc.Scan() {
			t.Fatalf("the event stream ended within the server's timeouts: %v", sc.Err())
		}
	}
	// And an intent after it still works on the same server.
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/api/Checkout", strings.NewReader("[]"))
	req.Header.Set("Content-Type", "application/json")
	r2, err := srv.Client().Do(req)
	if err != nil || r2.StatusCode != http.StatusOK {
		t.Fatalf("an intent beside the stream: %v %v", r2, err)
	}
	r2.Body.Close()
}

// 300 event streams: the first DefaultMaxEventStreams are served, the rest
// refused with 503, and a place freed is taken again.
func TestEventStreamsAreCapped(t *testing.T) {
	e := newEnv(t)
	tr := &http.Transport{MaxIdleConnsPerHost: -1}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	var open []*http.Response
	defer func() {
		for _, r := range open {
			r.Body.Close()
		}
	}()
	refused := 0
	for range 300 {
		resp, err := client.Get(e.srv.URL + "/api/events")
		if err != nil {
			t.Fatal(err)
		}
		switch resp.StatusCode {
		case http.StatusOK:
			open = append(open, resp)
		case http.StatusServiceUnavailable:
			var body map[string]string
			if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || !strings.Contains(body["error"], "too many event streams") {
				t.Fatalf("refusal: %v %v", body, err)
			}
			resp.Body.Close()
			refused++
		default:
			t.Fatalf("stream: %d", resp.StatusCode)
		}
	}
	if len(open) != DefaultMaxEventStreams || refused != 300-DefaultMaxEventStreams {
		t.Fatalf("%d streams open, %d refused", len(open), refused)
	}
	open[0].Body.Close()
	open = open[1:]
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := client.Get(e.srv.URL + "/api/events")
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode == http.StatusOK {
			open = append(open, resp)
			break
		}
		resp.Body.Close()
		if time.Now().After(deadline) {
			t.Fatal("a closed stream's place was never freed")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// The security headers, the content security policy first.
func TestSecurityHeaders(t *testing.T) {
	e := newEnv(t)
	for _, path := range []string{"/", "/assets/index-abc12.js", "/api/nothing"} {
		resp, err := e.srv.Client().Get(e.srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		csp := resp.Header.Get("Content-Security-Policy")
		for _, want := range []string{"default-src 'self'", "frame-ancestors 'none'", "object-src 'none'", "base-uri 'none'"} {
			if !strings.Contains(csp, want) {
				t.Fatalf("%s: CSP %q lacks %q", path, csp, want)
			}
		}
		if strings.Contains(csp, "unsafe-") || strings.Contains(csp, "*") {
			t.Fatalf("%s: CSP %q allows too much", path, csp)
		}
		for k, v := range map[string]string{"X-Content-Type-Options": "nosniff", "X-Frame-Options": "DENY", "Referrer-Policy": "no-referrer"} {
			if resp.Header.Get(k) != v {
				t.Fatalf("%s: %s %q", path, k, resp.Header.Get(k))
			}
		}
	}
}

// A staff call that waits for the terminal (a refund the customer's card
// must confirm) is answered even when it takes longer than the server's
// write timeout.
func TestAStaffCallOutlivesTheWriteTimeout(t *testing.T) {
	e := newEnv(t)
	const short = 200 * time.Millisecond
	srv := httptest.NewUnstartedServer(e.h)
	srv.Config = NewServer(e.h, Timeouts{Write: short})
	srv.Start()
	defer srv.Close()
	call := func(name, body string) (*http.Response, error) {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/api/"+name, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		return srv.Client().Do(req)
	}
	e.checkout("Start", `["en"]`)
	e.checkout("ChooseDining", `["take_away"]`)
	e.checkout("AddItem", `["croissant", 1]`)
	v := e.checkout("Pay", `["card"]`)
	waitPhase(t, e.s, kiosk.PhaseApproved)
	_, r, raw := e.staffCall("Unlock", `["1234"]`)
	var sess staff.Session
	if !r.OK || json.Unmarshal(raw, &sess) != nil {
		t.Fatalf("unlock: %+v", r.Error)
	}
	e.sim.Script(terminalsim.Hold())
	start := time.Now()
	type answer struct {
		resp *http.Response
		err  error
	}
	done := make(chan answer, 1)
	go func() {
		resp, err := call("staff/Refund", fmt.Sprintf(`[%q, %q, %d]`, sess.ID, v.OrderID, v.Total))
		done <- answer{resp, err}
	}()
	// The refund waits on the terminal until well past the write timeout,
	// then the card is presented.
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, held := e.sim.Current(); held && time.Since(start) > 5*short {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the refund never reached the terminal")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := e.sim.PresentCard(); err != nil {
		t.Fatal(err)
	}
	a := <-done
	if a.err != nil {
		t.Fatalf("the refund's answer was cut: %v", a.err)
	}
	defer a.resp.Body.Close()
	if env := decodeEnvelope(t, a.resp); a.resp.StatusCode != http.StatusOK || !env.OK {
		t.Fatalf("refund: %d %+v", a.resp.StatusCode, env.Error)
	}
}
