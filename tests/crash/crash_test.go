// Package crash kills the real comptoir binary with SIGKILL at random moments
// of many payments against a simulated terminal that outlives it, then
// compares the terminal's ledger of charges with the journal.
//
// Method: the simulator runs in this test process (it survives every kill);
// each round runs `comptoir pay` on the current order, with an amount whose
// cents pick the simulated customer (approve, decline, lost answer, late
// answer, HTTP 500 before or after the charge, slow customer, cancel on the
// terminal...), and either lets it finish, kills it with SIGKILL after a
// random delay, or presses Ctrl-C (SIGINT, the customer's cancel) and then
// kills it if it has not finished. Every start of `comptoir pay` first
// recovers what the previous, killed, process left open. An order is paid
// at most once: the next round keeps paying the same order until the journal
// says it is paid, which is when a double charge would show.
//
// CRASHTEST_KILLS sets how many SIGKILLs the run must reach (default 12, the
// short version run by scripts/test; `make crashtest` asks for 200).
package crash

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/terminalsim"
)

func TestKillNineDuringPayments(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and kills the real binary")
	}
	kills := 12
	if s := os.Getenv("CRASHTEST_KILLS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("CRASHTEST_KILLS=%q", s)
		}
		kills = n
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("CRASHTEST_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("seed %d (CRASHTEST_SEED to replay), %d kills", seed, kills)
	rng := rand.New(rand.NewPCG(seed, 1))

	tmp := t.TempDir()
	bin := filepath.Join(tmp, "comptoir")
	build := exec.Command("go", "build", "-o", bin, "../..")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}

	sim, err := terminalsim.New(terminalsim.Config{TimeScale: 0.01})
	if err != nil {
		t.Fatal(err)
	}
	if err := sim.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	defer sim.Close()
	data := filepath.Join(tmp, "data")
	common := []string{"--terminal", sim.URL(), "--data-dir", data,
		"--client-timeout", "300ms", "--request-open", "20s", "--resend-pause", "10ms"}

	// Cents that pick the simulated customer (terminalsim's test amounts),
	// and 00 for a plain approval. 58 (HTTP 500 on every send, nothing
	// charged) is left out: it rightly ends unknown after the request-open
	// limit, which backend/payment tests on its own.
	cents := []int64{0, 0, 0, 51, 52, 53, 54, 55, 56, 57, 59}
	// An order keeps its amount for every round: it is paid in one charge
	// or not at all. A customer gives up after a few rounds.
	var (
		orderN, orderRounds int
		order               string
		amount              int64
	)
	nextOrder := func() {
		orderN++
		order, orderRounds = fmt.Sprintf("crash-%04d", orderN), 0
		amount = int64(100*(1+rng.IntN(30))) + cents[rng.IntN(len(cents))]
	}
	nextOrder()
	// midAttempt counts the kills that left an attempt open in the journal:
	// the ones recovery has to resolve.
	var killed, midAttempt, interrupted, finished, rounds int
	deadline := time.Now().Add(20 * time.Minute)
	for killed < kills {
		if time.Now().After(deadline) {
			t.Fatalf("only %d kills before the deadline", killed)
		}
		rounds++
		if orderRounds++; orderRounds > 4 || settled(t, data, order) {
			nextOrder()
		}
		cmd := exec.Command(bin, append([]string{"pay", "--order", order, "--amount", strconv.FormatInt(amount, 10)}, common...)...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		delay := time.Duration(rng.IntN(400)) * time.Millisecond
		switch r := rng.IntN(10); {
		case r < 6: // SIGKILL at a random moment
			select {
			case <-done:
				finished++
			case <-time.After(delay):
				cmd.Process.Signal(syscall.SIGKILL)
				<-done
				killed++
				midAttempt += openAttempts(t, data)
			}
		case r < 8: // the customer's cancel, then SIGKILL if it lingers
			select {
			case <-done:
				finished++
			case <-time.After(delay):
				cmd.Process.Signal(syscall.SIGINT)
				interrupted++
				select {
				case <-done:
				case <-time.After(time.Duration(rng.IntN(300)) * time.Millisecond):
					cmd.Process.Signal(syscall.SIGKILL)
					<-done
					killed++
					midAttempt += openAttempts(t, data)
				}
			}
		default: // left alone
			select {
			case <-done:
				finished++
			case <-time.After(30 * time.Second):
				cmd.Process.Signal(syscall.SIGKILL)
				t.Fatalf("a payment ran for 30 s:\n%s", stderr.String())
			}
		}
	}

	// Let the terminal finish what is in progress, then recover until done.
	if err := sim.WaitIdle(context.Background()); err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ {
		out, err := exec.Command(bin, append([]string{"recover"}, common...)...).CombinedOutput()
		if err == nil {
			break
		}
		if i == 5 {
			t.Fatalf("recover: %v\n%s", err, out)
		}
	}
	t.Logf("%d rounds: %d killed (%d with an attempt open), %d interrupted, %d finished, %d orders",
		rounds, killed, midAttempt, interrupted, finished, orderN)
	if midAttempt == 0 {
		t.Error("no kill landed while an attempt was open: recovery was never exercised")
	}
	compare(t, data, sim.Ledger())
}

// openAttempts is 1 when the journal has an unresolved attempt, else 0.
func openAttempts(t *testing.T, dir string) int {
	t.Helper()
	db, err := journal.Open(context.Background(), dir)
	if journal.ErrorCode(err) == journal.EINVALID || os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		t.Fatalf("open the journal after a kill: %v", err)
	}
	defer db.Close()
	open, err := db.OpenAttempts(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(open) > 0 {
		return 1
	}
	return 0
}

// settled reports whether the order takes no more debits: paid, or waiting
// for staff.
func settled(t *testing.T, dir, order string) bool {
	t.Helper()
	db, err := journal.Open(context.Background(), dir)
	if err != nil {
		t.Fatalf("open the journal between runs: %v", err)
	}
	defer db.Close()
	o, err := db.Order(context.Background(), order)
	if journal.ErrorCode(err) == journal.ENOTFOUND {
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	return o.Status == journal.OrderPaid || o.Status == journal.OrderNeedsAttention
}

// compare checks that every charge is known to the journal as approved for
// its order, no order is charged twice, no approval is invented and nothing
// is left unresolved.
func compare(t *testing.T, dir string, ledger []terminalsim.LedgerEntry) {
	ctx := context.Background()
	db, err := journal.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	atts, err := db.ListAttempts(ctx, journal.AttemptFilter{})
	if err != nil {
		t.Fatal(err)
	}
	byUUID := map[string]journal.Attempt{}
	states := map[journal.State]int{}
	for _, a := range atts {
		byUUID[a.UUID] = a
		states[a.State]++
		if a.State.Open() {
			t.Errorf("attempt %s of %s left %s", a.UUID, a.OrderID, a.State)
		}
		if a.State == journal.StateUnknown {
			t.Errorf("attempt %s of %s is unknown: %s", a.UUID, a.OrderID, a.Error)
			evs, _ := db.Events(ctx, a.UUID)
			for _, ev := range evs {
				t.Logf("  %s %s %s→%s %s %s", ev.At.Format("15:04:05.000"), ev.Kind, ev.From, ev.To, ev.Detail, ev.RawResponse)
			}
		}
	}
	charged := map[string]int{}
	perOrder := map[string][]string{}
	for _, l := range ledger {
		if l.Kind != "debit" {
			continue
		}
		charged[l.IdempotentUUID]++
		perOrder[l.CartID] = append(perOrder[l.CartID], l.IdempotentUUID)
		a, ok := byUUID[l.IdempotentUUID]
		switch {
		case !ok:
			t.Errorf("charge %s (%d, order %s) unknown to the journal", l.IdempotentUUID, l.Total, l.CartID)
		case a.State != journal.StateApproved:
			t.Errorf("charge %s (order %s) is %s in the journal", l.IdempotentUUID, l.CartID, a.State)
		case a.OrderID != l.CartID || a.TransactionID != l.TransactionID:
			t.Errorf("charge %s: journal says order %s transaction %s, terminal %s %s", l.IdempotentUUID, a.OrderID, a.TransactionID, l.CartID, l.TransactionID)
		}
	}
	for order, uuids := range perOrder {
		if len(uuids) > 1 {
			t.Errorf("order %s charged %d times: %v", order, len(uuids), uuids)
		}
	}
	for _, a := range atts {
		if a.State == journal.StateApproved && charged[a.UUID] != 1 {
			t.Errorf("attempt %s approved in the journal, %d charges on the terminal", a.UUID, charged[a.UUID])
		}
	}
	t.Logf("journal: %d attempts %v; terminal: %d charges", len(atts), states, len(charged))
}
