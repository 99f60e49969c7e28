// Command wire measures Comptoir's own cost per payment in browser mode, on
// the wire: a real `comptoir serve` process, driven over its HTTP API exactly
// as the browser drives it (POST /api/<Intent>, the GET /api/events stream),
// in front of a simulated terminal answering at once.
//
// Between the kiosk and the simulated terminal sits a tiny reverse proxy on
// loopback that timestamps the /payment request when it arrives (the request
// is "on the wire") and the terminal's answer when its headers come back.
// Every timestamp is taken in this one process on the monotonic clock:
//
//	payToWire:    client starts POST /api/Pay  -> proxy receives POST /payment
//	answerToUI:   proxy has the terminal's answer -> the client has read the
//	              kiosk:checkout event whose phase is the outcome (SSE)
//
// It also samples the serve process's RSS and PSS from /proc: idle, and
// every few hundred payments.
//
//	go run ./scripts/bench/wire -bin build/bin/comptoir -n 2000 -out results/wire.json
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/comptoir-pos/comptoir/backend/terminalsim"
)

type memSample struct {
	Payments int     `json:"payments"`
	Seconds  float64 `json:"seconds"`
	RSSKB    int64   `json:"rssKB"`
	PSSKB    int64   `json:"pssKB"`
}

type result struct {
	Binary       string         `json:"binary"`
	Payments     int            `json:"payments"`
	Warmup       int            `json:"warmup"`
	Outcomes     map[string]int `json:"outcomes"`
	PayToWireMs  []float64      `json:"payToWireMs"`
	AnswerToUIMs []float64      `json:"answerToUIMs"`
	PayRTTMs     []float64      `json:"payIntentRttMs"` // POST /api/Pay round trip
	Memory       []memSample    `json:"memory"`
	IdleRSSKB    int64          `json:"idleRssKB"`
	IdlePSSKB    int64          `json:"idlePssKB"`
	AfterRSSKB   int64          `json:"afterRssKB"`
	AfterPSSKB   int64          `json:"afterPssKB"`
	WarmRSSKB    int64          `json:"warmRssKB"`    // after the warm-up payments
	ServeStartMs float64        `json:"serveStartMs"` // exec to the "Comptoir at" line
	// IdleByMapping is the idle RSS by what is mapped: the binary itself,
	// shared libraries, anonymous memory (heap, stacks), other.
	IdleByMapping map[string]int64 `json:"idleRssByMappingKB"`
	WallSeconds   float64          `json:"wallSeconds"`
}

func main() {
	bin := flag.String("bin", "build/bin/comptoir", "the comptoir binary (frontend embedded)")
	n := flag.Int("n", 2000, "payments to measure")
	warm := flag.Int("warmup", 50, "payments first, not counted in the percentiles")
	out := flag.String("out", "wire.json", "result file")
	var sets settingList
	flag.Var(&sets, "set", "KEY=JSON: a setting saved before serve starts (repeatable), to compare")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("wire: ")
	start := time.Now()

	sim := startTerminal()
	defer sim.Close()
	simURL, _ := url.Parse(sim.URL())
	px := startProxy(simURL)
	srv := startServe(*bin, px.terminal, sets)
	defer srv.stop()
	res := result{Binary: *bin, Warmup: *warm, Outcomes: map[string]int{}}
	res.ServeStartMs = srv.startMs

	// The event stream, as the browser's EventSource reads it.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	events := make(chan checkoutEvent, 1024)
	ready := make(chan struct{})
	go stream(ctx, srv.base+"api/events", events, ready)

	<-ready
	// Idle: settled, no payment yet.
	time.Sleep(3 * time.Second)
	runtime.GC()
	res.IdleRSSKB, res.IdlePSSKB = mem(srv.pid)
	res.IdleByMapping = byMapping(srv.pid)
	res.Memory = append(res.Memory, memSample{0, time.Since(start).Seconds(), res.IdleRSSKB, res.IdlePSSKB})

	product := firstProduct(srv.base)
	total := *warm + *n
	for i := 0; i < total; i++ {
		p := payOnce(srv.base, product, px, events, i)
		res.Outcomes[p.phase]++
		if i >= *warm && p.phase == "approved" {
			res.PayToWireMs = append(res.PayToWireMs, p.payToWireMs)
			res.AnswerToUIMs = append(res.AnswerToUIMs, p.answerToUIMs)
			res.PayRTTMs = append(res.PayRTTMs, p.payRTTMs)
		}
		if i+1 == *warm {
			res.WarmRSSKB, _ = mem(srv.pid)
		}
		if (i+1)%250 == 0 || i+1 == total {
			r, p := mem(srv.pid)
			res.Memory = append(res.Memory, memSample{i + 1, time.Since(start).Seconds(), r, p})
		}
	}
	res.Payments = total
	time.Sleep(2 * time.Second)
	res.AfterRSSKB, res.AfterPSSKB = mem(srv.pid)
	res.Memory = append(res.Memory, memSample{total, time.Since(start).Seconds(), res.AfterRSSKB, res.AfterPSSKB})
	res.WallSeconds = time.Since(start).Seconds()

	b, _ := json.MarshalIndent(res, "", " ")
	check(os.WriteFile(*out, b, 0o644))
	log.Printf("%d payments in %.1fs; pay->wire p50 %.2f ms, answer->UI p50 %.2f ms; RSS idle %d KB after %d KB",
		total, res.WallSeconds, pct(res.PayToWireMs, 50), pct(res.AnswerToUIMs, 50), res.IdleRSSKB, res.AfterRSSKB)
}

// startTerminal starts the simulated terminal, in process, answering at
// once: its waits are scaled to nanoseconds; the two 60 s windows are made
// very long so that they never race the customer's (scaled) 3 s, and so is
// the 15 min request hold (scaled, 0.9 ms: it would drop slow answers).
func startTerminal() *terminalsim.Terminal {
	sim, err := terminalsim.New(terminalsim.Config{TimeScale: 1e-9, NoTestAmounts: true,
		Timings: terminalsim.Timings{Screens: 10000 * time.Hour, CardRead: 10000 * time.Hour, RequestHold: 10000 * time.Hour}})
	check(err)
	check(sim.Start("127.0.0.1:0"))
	return sim
}

// wireProxy is the timestamping proxy between the kiosk and the terminal.
type wireProxy struct {
	mu        sync.Mutex
	wireAt    time.Time // last /payment request received
	answerAt  time.Time // last /payment answer received
	wireCount atomic.Int64
	terminal  string // the terminal's URL through the proxy
}

func startProxy(simURL *url.URL) *wireProxy {
	px := &wireProxy{}
	target := &url.URL{Scheme: simURL.Scheme, Host: simURL.Host}
	rp := httputil.NewSingleHostReverseProxy(target)
	// A new connection per request, as the kiosk's own client does: the
	// kiosk never reuses one for /payment.
	rp.Transport = &http.Transport{DisableKeepAlives: true}
	rp.ModifyResponse = func(r *http.Response) error {
		if r.Request.Method == http.MethodPost && strings.HasSuffix(r.Request.URL.Path, "/payment") {
			now := time.Now()
			px.mu.Lock()
			px.answerAt = now
			px.mu.Unlock()
		}
		return nil
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	check(err)
	go http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/payment") {
			now := time.Now()
			px.mu.Lock()
			px.wireAt = now
			px.mu.Unlock()
			px.wireCount.Add(1)
		}
		rp.ServeHTTP(w, r)
	}))
	px.terminal = "http://" + ln.Addr().String() + simURL.Path
	return px
}

// times are the last /payment request's arrival and its answer's.
func (px *wireProxy) times() (wire, answer time.Time) {
	px.mu.Lock()
	defer px.mu.Unlock()
	return px.wireAt, px.answerAt
}

// serve is a running `comptoir serve` on a fresh data directory.
type serve struct {
	cmd     *exec.Cmd
	dir     string
	base    string // its address, from its "Comptoir at" line
	pid     int
	startMs float64 // exec to the "Comptoir at" line
}

func startServe(bin, terminal string, sets settingList) *serve {
	dir, err := os.MkdirTemp("", "comptoir-bench-wire-")
	check(err)
	s := &serve{dir: dir}
	for _, kv := range sets {
		key, value, _ := strings.Cut(kv, "=")
		check(exec.Command(bin, "settings", "--data-dir", dir, "set", key, value).Run())
	}
	// The staff PIN, as an installer sets it: without one the kiosk takes no order.
	pin := exec.Command(bin, "pin", "--data-dir", dir)
	pin.Stdin = strings.NewReader("2468\n")
	check(pin.Run())
	s.cmd = exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--terminal", terminal, "--data-dir", dir)
	s.cmd.Stderr = io.Discard
	stdout, err := s.cmd.StdoutPipe()
	check(err)
	t0 := time.Now()
	check(s.cmd.Start())
	lineRe := regexp.MustCompile(`Comptoir at (http://\S+/)`)
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if m := lineRe.FindStringSubmatch(sc.Text()); m != nil {
			s.base = m[1]
			break
		}
	}
	if s.base == "" {
		log.Fatal("comptoir serve did not announce its address")
	}
	s.startMs = ms(time.Since(t0))
	go io.Copy(io.Discard, stdout)
	s.pid = s.cmd.Process.Pid
	return s
}

// stop ends the process (SIGTERM, then SIGKILL after 5 s) and removes its
// data directory.
func (s *serve) stop() {
	s.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		s.cmd.Process.Kill()
	}
	os.RemoveAll(s.dir)
}

// firstProduct is the id of the catalog's first product.
func firstProduct(base string) string {
	var cat struct {
		Categories []struct {
			Products []struct{ ID string } `json:"products"`
		} `json:"categories"`
	}
	check(intent(base, "Catalog", nil, &cat))
	return cat.Categories[0].Products[0].ID
}

// payment is one order's outcome and the timings of its legs.
type payment struct {
	phase        string
	payToWireMs  float64
	answerToUIMs float64
	payRTTMs     float64
}

// payOnce takes the i-th order from Start to Finish (or CancelOrder), as the
// browser does, timing Pay against the proxy's timestamps.
func payOnce(base, product string, px *wireProxy, events chan checkoutEvent, i int) payment {
	var v view
	check(intent(base, "Start", []any{"fr"}, &v))
	check(intent(base, "ChooseDining", []any{"eat_in"}, &v))
	check(intent(base, "AddItem", []any{product, 1}, &v))
	drain(events)
	before := px.wireCount.Load()
	tPay := time.Now()
	check(intent(base, "Pay", []any{"card"}, &v))
	tPayDone := time.Now()
	var outcome checkoutEvent
	for outcome = range events {
		if outcome.Phase == "approved" || outcome.Phase == "declined" || outcome.Phase == "failed" || outcome.Phase == "unknown" {
			break
		}
	}
	w, a := px.times()
	if px.wireCount.Load() != before+1 {
		log.Fatalf("payment %d: %d /payment requests, want 1", i, px.wireCount.Load()-before)
	}
	p := payment{phase: outcome.Phase, payToWireMs: ms(w.Sub(tPay)), answerToUIMs: ms(outcome.At.Sub(a)), payRTTMs: ms(tPayDone.Sub(tPay))}
	if outcome.Phase == "approved" || outcome.Phase == "unknown" {
		check(intent(base, "Finish", nil, &v))
	} else {
		check(intent(base, "CancelOrder", nil, &v))
	}
	return p
}

type view struct {
	Phase string `json:"phase"`
	Error string `json:"error"`
}

type checkoutEvent struct {
	Phase string
	At    time.Time
}

func drain(ch chan checkoutEvent) {
	for {
		select {
		case <-ch:
		default:
			return
		}
	}
}

// stream reads the server-sent events; every kiosk:checkout is sent on ch
// with the time its data line was read. ready is closed once the terminal
// is ready (recovery done, terminal connected).
func stream(ctx context.Context, u string, ch chan<- checkoutEvent, ready chan struct{}) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	r := bufio.NewReader(resp.Body)
	var name string
	isReady := false
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			if ctx.Err() == nil {
				log.Fatal("event stream: ", err)
			}
			return
		}
		at := time.Now()
		line = strings.TrimRight(line, "\n")
		switch {
		case strings.HasPrefix(line, "event: "):
			name = line[len("event: "):]
		case strings.HasPrefix(line, "data: "):
			data := line[len("data: "):]
			switch name {
			case "kiosk:checkout":
				var v view
				if json.Unmarshal([]byte(data), &v) == nil {
					ch <- checkoutEvent{v.Phase, at}
				}
			case "kiosk:terminal":
				var t struct {
					Ready bool   `json:"ready"`
					State string `json:"state"`
				}
				if json.Unmarshal([]byte(data), &t) == nil && t.Ready && t.State == "connected" && !isReady {
					isReady = true
					close(ready)
				}
			}
		}
	}
}

var client = &http.Client{Timeout: 30 * time.Second}

func intent(base, name string, args []any, into any) error {
	if args == nil {
		args = []any{}
	}
	body, _ := json.Marshal(args)
	resp, err := client.Post(base+"api/"+name, "application/json", bytes.NewReader(body))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: HTTP %d %s", name, resp.StatusCode, b)
	}
	if v, ok := into.(*view); ok {
		if err := json.Unmarshal(b, v); err != nil {
			return err
		}
		if v.Error != "" {
			return fmt.Errorf("%s refused: %s (phase %s)", name, v.Error, v.Phase)
		}
		return nil
	}
	return json.Unmarshal(b, into)
}

// mem reads a process's RSS (status) and PSS (smaps_rollup), in KB.
func mem(pid int) (rss, pss int64) {
	return procField(pid, "status", "VmRSS:"), procField(pid, "smaps_rollup", "Pss:")
}

// byMapping sums /proc/<pid>/smaps's Rss by kind of mapping.
func byMapping(pid int) map[string]int64 {
	out := map[string]int64{}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps", pid))
	if err != nil {
		return out
	}
	exe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
	kind := "other"
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) >= 5 && strings.Contains(f[0], "-") && !strings.HasSuffix(f[0], ":") {
			name := ""
			if len(f) >= 6 {
				name = f[5]
			}
			switch {
			case name == "" || name == "[heap]" || name == "[stack]":
				kind = "anonymous"
			case name == exe:
				kind = "binary"
			case strings.Contains(name, ".so"):
				kind = "shared libraries"
			default:
				kind = "other"
			}
			continue
		}
		if len(f) >= 2 && f[0] == "Rss:" {
			v, _ := strconv.ParseInt(f[1], 10, 64)
			out[kind] += v
		}
	}
	return out
}

func procField(pid int, file, key string) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/%s", pid, file))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, key) {
			f := strings.Fields(l)
			if len(f) >= 2 {
				v, _ := strconv.ParseInt(f[1], 10, 64)
				return v
			}
		}
	}
	return 0
}

func pct(s []float64, p float64) float64 {
	if len(s) == 0 {
		return 0
	}
	c := append([]float64(nil), s...)
	sort.Float64s(c)
	i := int(float64(len(c)-1) * p / 100)
	return c[i]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func check(err error) {
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Fatal(err)
	}
}

// settingList is the -set flags, each KEY=JSON.
type settingList []string

func (l *settingList) String() string { return strings.Join(*l, ",") }

func (l *settingList) Set(v string) error {
	if !strings.Contains(v, "=") {
		return fmt.Errorf("-set %q: want KEY=JSON", v)
	}
	*l = append(*l, v)
	return nil
}
