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
// Money goes back the same way: some rounds run `comptoir refund` (part or
// all of a paid order, the card presented, with the same customer
// behaviours) or `comptoir reverse` (the whole debit; the simulated
// terminal sometimes loses or fails the answer, before or after the
// reversal) on orders already paid, and are killed or cancelled at random
// too. At the end every order has given back no more than it took, every
// refund and reversal on the terminal is known to the journal as approved,
// and nothing is left open.
//
// The whole run is made on each channel (table-driven): the terminal on
// the LAN, and the same simulated terminal behind the simulated provider
// cloud (backend/cloudsim), where acknowledgements are also lost at random
// and reversal answers are lost or failed by the cloud; and the terminal
// reached both ways, the LAN first and the cloud behind it, with the LAN
// cut and mended at random moments all along (so that attempts run, are
// killed and are recovered on each way, some cut off mid-request), the
// provider's record witnessing every approval over the LAN.
//
// Beyond the totals, each attempt answers for itself (agree_test.go): its
// journal outcome is what the terminal did for it (approved here, made
// there once, for the same amounts, tip and transaction; declined,
// cancelled or failed here, nothing made there) and, for what the cloud
// started, what the cloud recorded (nothing left pending at the provider).
//
// CRASHTEST_KILLS sets how many SIGKILLs each run must reach (default 12, the
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
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/cloudsim"
	"github.com/comptoir-pos/comptoir/backend/fault"
	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/terminalsim"
)

// crashChannel is how the binary reaches the terminal: the Local API, or
// the provider's Cloud API in front of the same simulated terminal. The
// rest of the test is the same for both.
type crashChannel struct {
	name string
	// start runs the terminal (and the cloud) in this process: it returns
	// the terminal whose ledger is the truth, the flags and environment
	// that reach it, and how to fail the next reversal's answer.
	start func(t *testing.T) crashTerminal
}

type crashTerminal struct {
	sim   *terminalsim.Terminal
	flags []string
	env   []string
	// failNextReversal makes the next reversal's answer lost (0), HTTP 500
	// once made (1) or HTTP 500 before it is made (2).
	failNextReversal func(how int)
	// failNextPayment, when set, loses the next payment's answer on the
	// way back (the channel's own fault, on top of the test amounts').
	failNextPayment func()
	// ledger is the terminal's ledger with the ids the journal knows.
	ledger func() []terminalsim.LedgerEntry
	// record, behind the cloud, is the cloud's record of its transactions.
	record func() []cloudsim.Transaction
	// settle, when set, ends what the channel does on its own (the LAN
	// cut and mended) before the last recovery.
	settle func()
}

// A reversal answered after 200 ms (20 s at this scale) leaves room for
// kills while it is out.
var crashTerminalConfig = terminalsim.Config{TimeScale: 0.01, Timings: terminalsim.Timings{Reversal: 20 * time.Second}}

var crashChannels = []crashChannel{
	{name: "local", start: func(t *testing.T) crashTerminal {
		sim, err := terminalsim.New(crashTerminalConfig)
		if err != nil {
			t.Fatal(err)
		}
		if err := sim.Start("127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { sim.Close() })
		answers := []terminalsim.Answer{terminalsim.AnswerLost, terminalsim.AnswerHTTP500, terminalsim.AnswerHTTP500NotStarted}
		return crashTerminal{
			sim: sim, flags: []string{"--terminal", sim.URL()},
			failNextReversal: func(how int) { sim.FailNextReversalAnswers(answers[how]) },
			ledger:           sim.Ledger,
		}
	}},
	{name: "cloud", start: func(t *testing.T) crashTerminal {
		const key, serial = "sk_crash_test", "SN-CRASH"
		cloud, err := cloudsim.New(cloudsim.Config{Key: key, Serials: []string{serial}, TimeScale: 0.01, Terminal: crashTerminalConfig})
		if err != nil {
			t.Fatal(err)
		}
		if err := cloud.Start(""); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cloud.Close() })
		return cloudCrashTerminal(t, cloud, serial, key, []string{"--cloud", cloud.URL(), "--serial", serial})
	}},
	{name: "lan+cloud", start: func(t *testing.T) crashTerminal {
		const key, serial = "sk_crash_both", "SN-BOTH"
		cloud, err := cloudsim.New(cloudsim.Config{Key: key, Serials: []string{serial}, TimeScale: 0.01, LAN: true, Terminal: crashTerminalConfig})
		if err != nil {
			t.Fatal(err)
		}
		if err := cloud.Start(""); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cloud.Close() })
		term := cloudCrashTerminal(t, cloud, serial, key, []string{"--terminal", cloud.LANURL(serial), "--cloud", cloud.URL(), "--serial", serial})
		term.settle = cutTheLAN(t, cloud, serial)
		return term
	}},
}

// cloudCrashTerminal is the simulated cloud's terminal, reached with
// these flags: the cloud's faults, and its ledger with the ids the journal
// holds (the cloud's own for what the cloud started, the terminal's for
// what it made over the LAN).
func cloudCrashTerminal(t *testing.T, cloud *cloudsim.Cloud, serial, key string, flags []string) crashTerminal {
	sim, _ := cloud.Terminal(serial)
	faults := []cloudsim.Fault{
		{Path: cloudsim.PathReversal, After: true},
		{Path: cloudsim.PathReversal, After: true, Status: 500},
		{Path: cloudsim.PathReversal, Status: 500},
	}
	return crashTerminal{
		sim: sim, flags: flags,
		env:              []string{"COMPTOIR_CLOUD_KEY=" + key},
		failNextReversal: func(how int) { _ = cloud.Inject(faults[how]) },
		failNextPayment:  cloud.LoseNextAck,
		record:           cloud.Transactions,
		ledger: func() []terminalsim.LedgerEntry {
			// The journal knows the cloud's ids of what the cloud
			// started; the terminal's are their localId.
			ids := map[string]string{}
			for _, tx := range cloud.Transactions() {
				if tx.LocalID != "" && tx.Via != cloudsim.ViaTerminal {
					ids[tx.LocalID] = tx.TransactionID
				}
			}
			ledger := sim.Ledger()
			for i := range ledger {
				if id, ok := ids[ledger[i].TransactionID]; ok {
					ledger[i].TransactionID = id
				}
				if id, ok := ids[ledger[i].InitialTransactionID]; ok {
					ledger[i].InitialTransactionID = id
				}
			}
			return ledger
		},
	}
}

// cutTheLAN cuts the terminal's LAN and mends it at random moments (up
// most of the time, down for up to 1.5 s) until the returned settle,
// which leaves it up.
func cutTheLAN(t *testing.T, cloud *cloudsim.Cloud, serial string) (settle func()) {
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 2))
		for up := true; ; up = !up {
			pause := time.Duration(500+rng.IntN(2500)) * time.Millisecond
			if !up {
				pause = time.Duration(100+rng.IntN(1400)) * time.Millisecond
			}
			if err := cloud.SetLAN(serial, up); err != nil {
				t.Error(err)
				return
			}
			select {
			case <-stop:
				_ = cloud.SetLAN(serial, true)
				return
			case <-time.After(pause):
			}
		}
	}()
	var once sync.Once
	settle = func() { once.Do(func() { close(stop); <-done }) }
	t.Cleanup(settle)
	return settle
}

func TestKillNineDuringPayments(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and kills the real binary")
	}
	bin := buildBinary(t)
	for _, ch := range crashChannels {
		t.Run(ch.name, func(t *testing.T) { killNine(t, bin, ch.start(t)) })
	}
}

// buildBinary builds the real comptoir binary for the test.
func buildBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "comptoir")
	build := exec.Command("go", "build", "-o", bin, "../..")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	return bin
}

func killNine(t *testing.T, bin string, term crashTerminal) {
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
	sim := term.sim
	data := filepath.Join(tmp, "data")
	common := append(term.flags, "--data-dir", data,
		"--client-timeout", "300ms", "--request-open", "20s", "--resend-pause", "10ms",
		// A kill between journaling a cloud send and the request leaving
		// leaves an attempt that no history ever shows: it is settled as
		// not charged once the history is complete, which must come
		// before the request-open limit would make it unknown.
		"--settle-after", "3s")

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
	// paid lists the orders paid so far: where money may go back.
	var paid []string
	// midAttempt counts the kills that left an attempt open in the journal:
	// the ones recovery has to resolve; midGiveBack those that left a refund
	// or a reversal open.
	var killed, midAttempt, midGiveBack, interrupted, finished, rounds, refunds, reversals int
	midWay := map[journal.Channel]int{} // kills with an attempt open, by its way
	deadline := time.Now().Add(20 * time.Minute)
	for killed < kills {
		if time.Now().After(deadline) {
			t.Fatalf("only %d kills before the deadline", killed)
		}
		rounds++
		args := []string{"pay", "--order", order, "--amount", strconv.FormatInt(amount, 10)}
		switch r := rng.IntN(10); {
		case len(paid) > 0 && r < 2: // a refund of part or all of a paid order
			refunds++
			back := int64(100*(1+rng.IntN(10))) + cents[rng.IntN(len(cents))]
			args = []string{"refund", "--order", paid[rng.IntN(len(paid))], "--amount", strconv.FormatInt(back, 10)}
		case len(paid) > 0 && r < 4: // a reversal of a paid order's debit
			reversals++
			if how := rng.IntN(4); how < 3 {
				term.failNextReversal(how)
			}
			args = []string{"reverse", "--order", paid[rng.IntN(len(paid))]}
		default:
			if orderRounds++; orderRounds > 4 || settled(t, data, order) {
				if settled(t, data, order) {
					paid = append(paid, order)
				}
				nextOrder()
				args[2], args[4] = order, strconv.FormatInt(amount, 10)
			}
		}
		if args[0] == "pay" && term.failNextPayment != nil && rng.IntN(5) == 0 {
			term.failNextPayment()
		}
		cmd := exec.Command(bin, append(args, common...)...)
		cmd.Env = append(os.Environ(), term.env...)
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
				open, giving := openAttempts(t, data, midWay)
				midAttempt, midGiveBack = midAttempt+open, midGiveBack+giving
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
					open, giving := openAttempts(t, data, midWay)
					midAttempt, midGiveBack = midAttempt+open, midGiveBack+giving
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
	if term.settle != nil {
		term.settle()
	}
	if err := sim.WaitIdle(context.Background()); err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ {
		rec := exec.Command(bin, append([]string{"recover"}, common...)...)
		rec.Env = append(os.Environ(), term.env...)
		out, err := rec.CombinedOutput()
		if err == nil {
			break
		}
		if i == 5 {
			t.Fatalf("recover: %v\n%s", err, out)
		}
	}
	t.Logf("%d rounds (%d refunds, %d reversals): %d killed (%d with an attempt open, %d of them giving back), %d interrupted, %d finished, %d orders",
		rounds, refunds, reversals, killed, midAttempt, midGiveBack, interrupted, finished, orderN)
	if midAttempt == 0 {
		t.Error("no kill landed while an attempt was open: recovery was never exercised")
	}
	t.Logf("kills with an attempt open, by way: %v", midWay)
	if term.settle != nil && kills >= 50 && (midWay[journal.ChannelLocal] == 0 || midWay[journal.ChannelCloud] == 0) {
		t.Errorf("kills with an attempt open on each way: %v, want both", midWay)
	}
	var record []cloudsim.Transaction
	if term.record != nil {
		record = term.record()
	}
	compare(t, data, term.ledger(), record)
}

// openAttempts is 1 when the journal has an unresolved attempt, else 0;
// giving is 1 when that attempt is a refund or a reversal. Each is counted
// by its way in byWay.
func openAttempts(t *testing.T, dir string, byWay map[journal.Channel]int) (open, giving int) {
	t.Helper()
	db, err := journal.Open(context.Background(), dir)
	if fault.CodeOf(err) == fault.EINVALID || os.IsNotExist(err) {
		return 0, 0
	}
	if err != nil {
		t.Fatalf("open the journal after a kill: %v", err)
	}
	defer db.Close()
	atts, err := db.OpenAttempts(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range atts {
		open = 1
		byWay[a.Channel]++
		if a.Kind.GivesBack() {
			giving = 1
		}
	}
	return open, giving
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
	if fault.CodeOf(err) == fault.ENOTFOUND {
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	return o.Status == journal.OrderPaid || o.Status == journal.OrderNeedsAttention
}

// compare checks that every charge is known to the journal as approved for
// its order, no order is charged twice, no approval is invented and nothing
// is left unresolved; and that each attempt's outcome is what the terminal
// (and the cloud, behind it) did for it (eachAttemptAgrees).
func compare(t *testing.T, dir string, ledger []terminalsim.LedgerEntry, record []cloudsim.Transaction) {
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
		if a.Kind == journal.KindDebit && a.State == journal.StateApproved && charged[a.UUID] != 1 {
			t.Errorf("attempt %s approved in the journal, %d charges on the terminal", a.UUID, charged[a.UUID])
		}
	}

	// Money given back: never more than taken, on the terminal and in the
	// journal; every refund and reversal the terminal made is an approved
	// attempt of the journal, and the journal approved none it did not make.
	taken, given := map[string]int64{}, map[string]int64{}
	byTx := map[string]journal.Attempt{}
	for _, a := range atts {
		if a.TransactionID != "" {
			byTx[a.TransactionID] = a
		}
	}
	made := map[string]bool{}
	for _, l := range ledger {
		switch l.Kind {
		case "debit":
			taken[l.CartID] += l.Total
			continue
		case "refund":
			a, ok := byUUID[l.IdempotentUUID]
			if !ok || a.State != journal.StateApproved || a.Kind != journal.KindRefund {
				t.Errorf("refund %s (%d, order %s) is not an approved refund of the journal: %+v", l.IdempotentUUID, l.Total, l.CartID, a)
			}
			made[l.IdempotentUUID] = true
		case "reversal":
			a, ok := byTx[l.TransactionID]
			if !ok || a.State != journal.StateApproved || a.Kind != journal.KindReversal || a.InitialTransactionID != l.InitialTransactionID {
				t.Errorf("reversal %s of %s (order %s) is not an approved reversal of the journal: %+v", l.TransactionID, l.InitialTransactionID, l.CartID, a)
			}
			made[a.UUID] = true
		}
		given[l.CartID] += -l.Net
	}
	for order, back := range given {
		if back > taken[order] {
			t.Errorf("order %s: the terminal gave back %d of the %d it took", order, back, taken[order])
		}
	}
	orders := map[string]bool{}
	for _, a := range atts {
		orders[a.OrderID] = true
		if a.Kind.GivesBack() && a.State == journal.StateApproved && !made[a.UUID] {
			t.Errorf("%s %s of order %s approved in the journal, not made on the terminal", a.Kind, a.UUID, a.OrderID)
		}
	}
	var givenBack int
	for order := range orders {
		m, err := db.OrderMoney(ctx, order)
		if err != nil {
			t.Fatal(err)
		}
		if m.GivenBack() > m.Taken() {
			t.Errorf("order %s: the journal gave back %d of the %d it took", order, m.GivenBack(), m.Taken())
		}
		if m.Refunded+m.Reversed > 0 {
			givenBack++
		}
	}
	eachAttemptAgrees(t, atts, ledger, record)
	t.Logf("journal: %d attempts %v; terminal: %d charges; %d orders gave money back", len(atts), states, len(charged), givenBack)
}
