//go:build bench

package kiosk

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/cloudsim"
	"github.com/comptoir-pos/comptoir/backend/device"
	"github.com/comptoir-pos/comptoir/backend/internal/testenv"
	"github.com/comptoir-pos/comptoir/backend/internal/testenv/paytest"
	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/localapi"
	"github.com/comptoir-pos/comptoir/backend/payment"
	"github.com/comptoir-pos/comptoir/backend/terminalsim"
)

// TestSoak is make bench's soak run: SOAK_N (default 10,000) consecutive
// payments through the kiosk Service, on a real journal (a file, WAL,
// synchronous=FULL) and a real orchestrator, against the simulated terminal
// over real HTTP on loopback, answering at once (its waits scaled to
// nanoseconds), with mixed customers scripted one by one: approve, decline,
// cancel on the terminal, and an approval whose HTTP answer is lost (the
// kiosk must resend the same uuid and learn it was charged). Then the
// journal and the terminal's ledger must agree exactly. It samples this
// process's RSS and Go heap over time for the plot: make bench runs the
// terminal in a process of its own (SOAK_SIM_URL) so that they are the
// kiosk's alone. SOAK_CHANNEL=cloud pays the same customers through the
// Cloud API channel instead (soakChannel).
//
// Built only with -tags bench; runs only when BENCH_OUT names a directory.
func TestSoak(t *testing.T) {
	out := testenv.BenchOut(t)
	n := 10000
	if v, err := strconv.Atoi(os.Getenv("SOAK_N")); err == nil && v > 0 {
		n = v
	}
	ctx := context.Background()
	rig := soakChannel(t)
	sim := rig.term
	dir := t.TempDir()
	db := testenv.Journal(t, dir)
	relay := NewRelay(nil)
	limits := paytest.Limits
	limits.ResendPause = time.Millisecond
	pc := payment.Config{Journal: db, Limits: limits, Emitter: relay}
	rig.attach(&pc)
	o, err := payment.New(pc)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	em := &phaseSignal{wake: make(chan struct{}, 1)}
	s, err := New(Config{
		Journal: db, Payments: o, Printer: rig.printer, Emitter: em, Relay: relay, DataDir: dir,
		Version: "soak", Logger: testLogger(t), Terminal: FixedTerminal(rig.name, rig.url),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	runCtx, stop := context.WithCancel(ctx)
	runDone := make(chan struct{})
	go func() { defer close(runDone); s.Run(runCtx) }()
	defer func() { stop(); <-runDone }()
	deadline := time.Now().Add(20 * time.Second)
	for !s.Terminal().Ready || s.Checkout().Phase != PhaseWelcome {
		if time.Now().After(deadline) {
			t.Fatalf("kiosk not ready: %+v %+v", s.Terminal(), s.Checkout())
		}
		time.Sleep(10 * time.Millisecond)
	}
	product := s.Catalog().Categories[0].Products[0].ID
	mustView := func(v CheckoutView, err error) CheckoutView {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		if v.Error != "" {
			t.Fatalf("intent refused: %s (phase %s)", v.Error, v.Phase)
		}
		return v
	}

	// Memory over time.
	type memSample struct {
		Payments int     `json:"payments"`
		Seconds  float64 `json:"seconds"`
		RSSKB    int64   `json:"rssKB"`
		HeapKB   int64   `json:"heapKB"` // live and not yet swept heap objects
	}
	var (
		memMu   sync.Mutex
		mem     []memSample
		done    int
		start   = time.Now()
		sampler = make(chan struct{})
	)
	sample := func() {
		ms := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		metrics.Read(ms)
		memMu.Lock()
		mem = append(mem, memSample{done, time.Since(start).Seconds(), selfRSS(), int64(ms[0].Value.Uint64() / 1024)})
		memMu.Unlock()
	}
	sample()
	go func() {
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-sampler:
				return
			case <-tick.C:
				sample()
			}
		}
	}()

	kinds := []struct {
		name string
		b    terminalsim.Behaviour
		want Phase
		w    int
	}{
		{"approve", terminalsim.Approve(), PhaseApproved, 70},
		{"decline", terminalsim.Decline(), PhaseDeclined, 10},
		{"cancel", terminalsim.CustomerCancels(), PhaseDeclined, 10},
		{"lost_answer", terminalsim.AnswerLostAfterCharge(), PhaseApproved, 10},
	}
	// The customers, all scripted before the first payment: the terminal
	// takes one behaviour from its queue per new payment (a resend of a
	// known uuid takes none).
	rng := rand.New(rand.NewPCG(1, 2))
	scripted := map[string]int{}
	seq := make([]int, n)
	script := make([]terminalsim.Behaviour, n)
	for i := range seq {
		r := rng.IntN(100)
		for j, c := range kinds {
			if r < c.w {
				seq[i] = j
				break
			}
			r -= c.w
		}
		script[i] = kinds[seq[i]].b
		scripted[kinds[seq[i]].name]++
	}
	sim.Script(t, script)
	phases := map[Phase]int{}
	wrong := []string{}
	uuids := map[string]string{} // attempt uuid -> scripted kind
	latency := make([]float64, 0, n)
	for i := 0; i < n; i++ {
		k := kinds[seq[i]]
		mustView(s.Start("fr"))
		mustView(s.ChooseDining(DiningTakeAway))
		mustView(s.AddItem(product, 1+i%3))
		t0 := time.Now()
		v := mustView(s.Pay(MethodCard))
		for v.Phase == PhasePaying || v.Phase == PhaseCanceling {
			select {
			case <-em.wake:
			case <-time.After(50 * time.Millisecond):
			}
			v = s.Checkout()
		}
		latency = append(latency, float64(time.Since(t0))/float64(time.Millisecond))
		phases[v.Phase]++
		if v.Payment != nil {
			uuids[v.Payment.AttemptUUID] = k.name
		}
		if v.Phase != k.want {
			wrong = append(wrong, fmt.Sprintf("payment %d (%s): phase %s", i, k.name, v.Phase))
		}
		switch v.Phase {
		case PhaseApproved:
			mustView(s.Finish())
		case PhaseUnknown:
			mustView(s.Release())
		default:
			mustView(s.CancelOrder())
		}
		memMu.Lock()
		done = i + 1
		memMu.Unlock()
	}
	elapsed := time.Since(start)
	close(sampler)
	runtime.GC()
	sample()
	// What stays live after 10,000 payments: a heap profile, summarised
	// by make bench (go tool pprof -top).
	if f, err := os.Create(filepath.Join(out, strings.TrimSuffix(rig.result, ".json")+"-heap.pprof")); err == nil {
		_ = pprof.WriteHeapProfile(f)
		f.Close()
	}

	// The journal and the ledger must agree exactly.
	attempts, err := db.ListAttempts(ctx, journal.AttemptFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var problems []string
	approved := map[string]journal.Attempt{}
	states := map[string]int{}
	for _, a := range attempts {
		states[string(a.State)]++
		if a.State == journal.StateApproved {
			approved[a.UUID] = a
		}
		if !a.State.Final() {
			problems = append(problems, "attempt "+a.UUID+" not final: "+string(a.State))
		}
	}
	debits := 0
	charged := map[string]bool{}
	for _, l := range rig.ledger(t) {
		if l.Kind != localapi.TypeDebit {
			problems = append(problems, "unexpected ledger entry: "+l.Kind+" "+l.TransactionID)
			continue
		}
		debits++
		if charged[l.IdempotentUUID] {
			problems = append(problems, "uuid charged twice: "+l.IdempotentUUID)
		}
		charged[l.IdempotentUUID] = true
		a, ok := approved[l.IdempotentUUID]
		switch {
		case !ok:
			problems = append(problems, "charge unknown to the journal as approved: "+l.IdempotentUUID)
		case a.TransactionID != l.TransactionID || a.Amount != l.Amount || a.OrderID != l.CartID:
			problems = append(problems, fmt.Sprintf("attempt %s differs: journal %s/%d/%s ledger %s/%d/%s",
				a.UUID, a.TransactionID, a.Amount, a.OrderID, l.TransactionID, l.Amount, l.CartID))
		}
	}
	paidOrders := 0
	for id, a := range approved {
		if !charged[id] {
			problems = append(problems, "approved in the journal, not in the ledger: "+id)
		}
		ord, err := db.Order(ctx, a.OrderID)
		if err != nil || ord.Status != journal.OrderPaid {
			problems = append(problems, fmt.Sprintf("order %s of an approved attempt: %s %v", a.OrderID, ord.Status, err))
		} else {
			paidOrders++
		}
	}
	if len(wrong) > 0 {
		problems = append(problems, wrong...)
	}
	agree := len(problems) == 0
	for i, p := range problems {
		if i == 20 {
			t.Errorf("... and %d more", len(problems)-20)
			break
		}
		t.Error(p)
	}
	var dbBytes int64
	for _, f := range []string{"", "-wal"} {
		if st, err := os.Stat(db.Path() + f); err == nil {
			dbBytes += st.Size()
		}
	}
	sort.Float64s(latency)
	res := map[string]any{
		"payments": n, "seconds": elapsed.Seconds(), "perSecond": float64(n) / elapsed.Seconds(),
		"scripted": scripted, "phases": phases, "journalStates": states, "attempts": len(attempts),
		"ledgerDebits": debits, "approvedAttempts": len(approved), "paidOrders": paidOrders,
		"agree": agree, "problems": problems, "memory": mem, "paymentMs": latency,
		"journalBytes": dbBytes, "distinctAttemptUUIDs": len(uuids), "terminalProcess": sim.remote, "channel": rig.name,
	}
	testenv.WriteSamples(t, rig.result, res)
	t.Logf("%d payments in %s (%.0f/s); ledger %d debits, journal %d approved; agree=%v",
		n, elapsed.Round(time.Millisecond), float64(n)/elapsed.Seconds(), debits, len(approved), agree)
}

// soakRig is the channel the soak pays through: the LAN (SOAK_CHANNEL
// unset or "local") or the provider's cloud ("cloud": the simulated cloud
// in this process, whose virtual terminal is the scripted one, polled
// every millisecond).
type soakRig struct {
	name, url string
	result    string // the results file
	term      *soakTerm
	printer   device.Printer
	attach    func(*payment.Config)
	// ledger is the terminal's ledger, its transaction ids those the
	// journal knows (the cloud's, on the cloud).
	ledger func(t *testing.T) []terminalsim.LedgerEntry
}

func soakChannel(t *testing.T) *soakRig {
	switch ch := os.Getenv("SOAK_CHANNEL"); ch {
	case "", "local":
		term := soakTerminal(t)
		client, err := localapi.NewClient(term.URL())
		if err != nil {
			t.Fatal(err)
		}
		return &soakRig{name: "sim", url: term.URL(), result: "soak.json", term: term, printer: device.LocalClient(client),
			attach: func(c *payment.Config) { c.Terminal, c.TerminalID = client, "sim" },
			ledger: term.Ledger}
	case "cloud":
		const serial = "SN-SOAK"
		cloud, client := testenv.Cloud(t, cloudsim.Config{Key: "sk_soak", Serials: []string{serial}, TimeScale: 1e-9, Terminal: soakTerminalConfig})
		sim, _ := cloud.Terminal(serial)
		term := &soakTerm{url: cloud.URL(), sim: sim}
		channel := payment.Cloud(client, serial, &localapi.Vendor{SoftwareName: "Comptoir", SoftwareVersion: "soak"}, time.Millisecond)
		return &soakRig{name: "cloud:" + serial, url: cloud.URL(), result: "soak-cloud.json", term: term,
			attach: func(c *payment.Config) { c.Channel, c.TerminalID = channel, "cloud:"+serial },
			ledger: func(t *testing.T) []terminalsim.LedgerEntry {
				ids := map[string]string{}
				for _, tx := range cloud.Transactions() {
					if tx.LocalID != "" {
						ids[tx.LocalID] = tx.TransactionID
					}
				}
				ledger := term.Ledger(t)
				for i := range ledger {
					ledger[i].TransactionID = ids[ledger[i].TransactionID]
				}
				return ledger
			}}
	default:
		t.Fatalf("SOAK_CHANNEL=%q: local or cloud", ch)
		return nil
	}
}

// soakTerm is the simulated terminal of the soak: in this process, or in
// its own (SOAK_SIM_URL, scripts/bench/simserver, driven by its control API)
// so that this process's memory is the kiosk's alone.
type soakTerm struct {
	remote bool
	url    string
	sim    *terminalsim.Terminal
}

// soakTerminalConfig answers at once: every wait scaled to nanoseconds,
// the customers scripted (no test amounts), nothing held for long.
var soakTerminalConfig = func() terminalsim.Config {
	long := 10000 * time.Hour
	return terminalsim.Config{TimeScale: 1e-9, NoTestAmounts: true,
		Timings: terminalsim.Timings{Screens: long, CardRead: long, RequestHold: long}}
}()

func soakTerminal(t *testing.T) *soakTerm {
	if u := os.Getenv("SOAK_SIM_URL"); u != "" {
		return &soakTerm{remote: true, url: u}
	}
	sim, _ := testenv.Terminal(t, soakTerminalConfig)
	return &soakTerm{url: sim.URL(), sim: sim}
}

func (s *soakTerm) URL() string { return s.url }

func (s *soakTerm) control(t *testing.T, method, path string, body, into any) {
	t.Helper()
	base := strings.TrimSuffix(s.url, "/localapi/v4")
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, base+path, rd)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("%s %s: HTTP %d %s", method, path, resp.StatusCode, b)
	}
	if into != nil {
		if err := json.NewDecoder(resp.Body).Decode(into); err != nil {
			t.Fatal(err)
		}
	}
}

func (s *soakTerm) Script(t *testing.T, b []terminalsim.Behaviour) {
	if !s.remote {
		s.sim.Script(b...)
		return
	}
	// In chunks: the control API reads at most 1 MB a request.
	for i := 0; i < len(b); i += 1000 {
		s.control(t, http.MethodPost, "/sim/script", map[string]any{"clear": i == 0, "behaviours": b[i:min(i+1000, len(b))]}, nil)
	}
}

func (s *soakTerm) Ledger(t *testing.T) []terminalsim.LedgerEntry {
	if !s.remote {
		return s.sim.Ledger()
	}
	var l []terminalsim.LedgerEntry
	s.control(t, http.MethodGet, "/sim/ledger", nil, &l)
	return l
}

// phaseSignal wakes the soak loop at every published checkout.
type phaseSignal struct{ wake chan struct{} }

func (p *phaseSignal) Emit(name string, data any) {
	if name == EventCheckout {
		select {
		case p.wake <- struct{}{}:
		default:
		}
	}
}

func selfRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmRSS:") {
			f := strings.Fields(l)
			v, _ := strconv.ParseInt(f[1], 10, 64)
			return v
		}
	}
	return 0
}
