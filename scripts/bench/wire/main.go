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
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("wire: ")
	start := time.Now()

	// The simulated terminal, in process, answering at once: its waits are
	// scaled to nanoseconds; the two 60 s windows are made very long so
	// that they never race the customer's (scaled) 3 s, and so is the 15 min
	// request hold (scaled, 0.9 ms: it would drop slow answers).
	sim, err := terminalsim.New(terminalsim.Config{TimeScale: 1e-9, NoTestAmounts: true,
		Timings: terminalsim.Timings{Screens: 10000 * time.Hour, CardRead: 10000 * time.Hour, RequestHold: 10000 * time.Hour}})
	check(err)
	check(sim.Start("127.0.0.1:0"))
	defer sim.Close()
	simURL, _ := url.Parse(sim.URL())

	// The timestamping proxy.
	var (
		mu        sync.Mutex
		wireAt    time.Time // last /payment request received
		answerAt  time.Time // last /payment answer received
		wireCount atomic.Int64
	)
	target := &url.URL{Scheme: simURL.Scheme, Host: simURL.Host}
	rp := httputil.NewSingleHostReverseProxy(target)
	// A new connection per request, as the kiosk's own client does: the
	// kiosk never reuses one for /payment.
	rp.Transport = &http.Transport{DisableKeepAlives: true}
	rp.ModifyResponse = func(r *http.Response) error {
		if r.Request.Method == http.MethodPost && strings.HasSuffix(r.Request.URL.Path, "/payment") {
			now := time.Now()
			mu.Lock()
			answerAt = now
			mu.Unlock()
		}
		return nil
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	check(err)
	go http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/payment") {
			now := time.Now()
			mu.Lock()
			wireAt = now
			mu.Unlock()
			wireCount.Add(1)
		}
		rp.ServeHTTP(w, r)
	}))
	terminal := "http://" + ln.Addr().String() + simURL.Path

	// comptoir serve on a fresh data directory.
	dir, err := os.MkdirTemp("", "comptoir-bench-wire-")
	check(err)
	defer os.RemoveAll(dir)
	// The staff PIN, as an installer sets it: without one the kiosk takes no order.
	pin := exec.Command(*bin, "pin", "--data-dir", dir)
	pin.Stdin = strings.NewReader("2468\n")
	check(pin.Run())
	cmd := exec.Command(*bin, "serve", "--addr", "127.0.0.1:0", "--terminal", terminal, "--data-dir", dir)
	cmd.Stderr = io.Discard
	stdout, err := cmd.StdoutPipe()
	check(err)
	t0 := time.Now()
	check(cmd.Start())
	defer func() {
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
		}
	}()
	lineRe := regexp.MustCompile(`Comptoir at (http://\S+/)`)
	sc := bufio.NewScanner(stdout)
	var base string
	for sc.Scan() {
		if m := lineRe.FindStringSubmatch(sc.Text()); m != nil {
			base = m[1]
			break
		}
	}
	if base == "" {
		log.Fatal("comptoir serve did not announce its address")
	}
	res := result{Binary: *bin, Warmup: *warm, Outcomes: map[string]int{}}
	res.ServeStartMs = ms(time.Since(t0))
	go io.Copy(io.Discard, stdout)
	pid := cmd.Process.Pid

	// The event stream, as the browser's EventSource reads it.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	events := make(chan checkoutEvent, 1024)
	ready := make(chan struct{})
	go stream(ctx, base+"api/events", events, ready)

	<-ready
	// Idle: settled, no payment yet.
	time.Sleep(3 * time.Second)
	runtime.GC()
	res.IdleRSSKB, res.IdlePSSKB = mem(pid)
	res.IdleByMapping = byMapping(pid)
	res.Memory = append(res.Memory, memSample{0, time.Since(start).Seconds(), res.IdleRSSKB, res.IdlePSSKB})

	var cat struct {
		Categories []struct {
			Products []struct{ ID string } `json:"products"`
		} `json:"categories"`
	}
	check(intent(base, "Catalog", nil, &cat))
	product := cat.Categories[0].Products[0].ID

	total := *warm + *n
	for i := 0; i < total; i++ {
		var v view
		check(intent(base, "Start", []any{"fr"}, &v))
		check(intent(base, "ChooseDining", []any{"eat_in"}, &v))
		check(intent(base, "AddItem", []any{product, 1}, &v))
		drain(events)
		before := wireCount.Load()
		tPay := time.Now()
		check(intent(base, "Pay", []any{"card"}, &v))
		tPayDone := time.Now()
		var outcome checkoutEvent
		for outcome = range events {
			if outcome.Phase == "approved" || outcome.Phase == "declined" || outcome.Phase == "failed" || outcome.Phase == "unknown" {
				break
			}
		}
		res.Outcomes[outcome.Phase]++
		mu.Lock()
		w, a := wireAt, answerAt
		mu.Unlock()
		if wireCount.Load() != before+1 {
			log.Fatalf("payment %d: %d /payment requests, want 1", i, wireCount.Load()-before)
		}
		if i >= *warm && outcome.Phase == "approved" {
			res.PayToWireMs = append(res.PayToWireMs, ms(w.Sub(tPay)))
			res.AnswerToUIMs = append(res.AnswerToUIMs, ms(outcome.At.Sub(a)))
			res.PayRTTMs = append(res.PayRTTMs, ms(tPayDone.Sub(tPay)))
		}
		if outcome.Phase == "approved" || outcome.Phase == "unknown" {
			check(intent(base, "Finish", nil, &v))
		} else {
			check(intent(base, "CancelOrder", nil, &v))
		}
		if i+1 == *warm {
			res.WarmRSSKB, _ = mem(pid)
		}
		if (i+1)%250 == 0 || i+1 == total {
			r, p := mem(pid)
			res.Memory = append(res.Memory, memSample{i + 1, time.Since(start).Seconds(), r, p})
		}
	}
	res.Payments = total
	time.Sleep(2 * time.Second)
	res.AfterRSSKB, res.AfterPSSKB = mem(pid)
	res.Memory = append(res.Memory, memSample{total, time.Since(start).Seconds(), res.AfterRSSKB, res.AfterPSSKB})
	res.WallSeconds = time.Since(start).Seconds()

	b, _ := json.MarshalIndent(res, "", " ")
	check(os.WriteFile(*out, b, 0o644))
	log.Printf("%d payments in %.1fs; pay->wire p50 %.2f ms, answer->UI p50 %.2f ms; RSS idle %d KB after %d KB",
		total, res.WallSeconds, pct(res.PayToWireMs, 50), pct(res.AnswerToUIMs, 50), res.IdleRSSKB, res.AfterRSSKB)
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
