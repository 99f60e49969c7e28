package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/internal/testenv"
	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/staff"
	"github.com/comptoir-pos/comptoir/backend/terminalsim"
)

func TestPingDemo(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run([]string{"ping", "--demo"}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	var res pingResult
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatalf("output is not JSON: %q", out.String())
	}
	if !res.OK || !strings.HasSuffix(res.Terminal, "/localapi/v4") {
		t.Errorf("result = %+v", res)
	}
}

func TestPingUnreachable(t *testing.T) {
	var out, errOut bytes.Buffer
	t.Setenv("COMPTOIR_TERMINAL", "")
	if code := run([]string{"ping", "--terminal", "127.0.0.1:1", "--timeout", "2s"}, &out, &errOut); code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	var res pingResult
	if err := json.Unmarshal(out.Bytes(), &res); err != nil || res.OK || res.Kind != "transport" {
		t.Errorf("result = %+v (%v)", res, err)
	}
}

func TestPingWithoutTerminalIsAUsageError(t *testing.T) {
	t.Setenv("COMPTOIR_TERMINAL", "")
	var out, errOut bytes.Buffer
	if code := run([]string{"ping"}, &out, &errOut); code != 2 || !strings.Contains(errOut.String(), "--terminal") {
		t.Errorf("exit %d, stderr %q", code, errOut.String())
	}
}

func TestUnknownCommand(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run([]string{"frobnicate"}, &out, &errOut); code != 2 || !strings.Contains(errOut.String(), "frobnicate") {
		t.Errorf("exit %d, stderr %q", code, errOut.String())
	}
}

func TestSimulatorServesUntilCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	go func() {
		done <- cmdSimulator(ctx, []string{"--addr", "127.0.0.1:0", "--timescale", "0.01"}, pw, io.Discard)
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	url := regexp.MustCompile(`http://\S+/localapi/v4`).FindString(line)
	if url == "" {
		t.Fatalf("no URL in %q", line)
	}
	go io.Copy(io.Discard, pr)
	var out, errOut bytes.Buffer
	if code := run([]string{"ping", "--terminal", url}, &out, &errOut); code != 0 {
		t.Fatalf("ping the simulator: exit %d %s %s", code, out.String(), errOut.String())
	}
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("simulator exit %d", code)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the simulator did not stop")
	}
}

func TestSimulatorRejectsBadTimescale(t *testing.T) {
	var errOut bytes.Buffer
	if code := cmdSimulator(context.Background(), []string{"--timescale", "0"}, io.Discard, &errOut); code != 2 {
		t.Errorf("exit %d", code)
	}
}

// advertised advertises sim by mDNS as the command line does, until the
// end of the test, and returns how.
func advertised(t *testing.T, sim *terminalsim.Terminal) terminalsim.AdvertiseOptions {
	t.Helper()
	opts := advertiseOptions(sim)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	stop, err := sim.Advertise(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return opts
}

func startSim(t *testing.T) *terminalsim.Terminal {
	sim, _ := testenv.Terminal(t, terminalsim.Config{})
	return sim
}

func TestPayThenAttempts(t *testing.T) {
	sim := startSim(t)
	dir := t.TempDir()
	var out, errOut bytes.Buffer
	if code := run([]string{"pay", "--terminal", sim.URL(), "--data-dir", dir, "--amount", "1250", "--order", "A1"}, &out, &errOut); code != 0 {
		t.Fatalf("pay: exit %d %s %s", code, out.String(), errOut.String())
	}
	var res payResult
	if err := json.Unmarshal(out.Bytes(), &res); err != nil || res.Status != "approved" || res.Order != "A1" || res.IdempotentUUID == "" || !res.OrderPaid {
		t.Fatalf("pay printed %s (%v)", out.String(), err)
	}
	if len(sim.ChargesFor(res.IdempotentUUID)) != 1 {
		t.Errorf("the terminal has no charge for %s", res.IdempotentUUID)
	}
	// A declined amount (cents 51) exits 1 and says declined.
	out.Reset()
	if code := run([]string{"pay", "--terminal", sim.URL(), "--data-dir", dir, "--amount", "951"}, &out, &errOut); code != 1 || !strings.Contains(out.String(), `"declined"`) {
		t.Fatalf("declined pay: exit %d %s", code, out.String())
	}
	out.Reset()
	if code := run([]string{"attempts", "--data-dir", dir}, &out, &errOut); code != 0 {
		t.Fatalf("attempts: exit %d %s", code, errOut.String())
	}
	var rows []attemptRow
	if err := json.Unmarshal(out.Bytes(), &rows); err != nil || len(rows) != 2 || rows[1].IdempotentUUID != res.IdempotentUUID || rows[1].State != "approved" {
		t.Fatalf("attempts printed %s (%v)", out.String(), err)
	}
	out.Reset()
	if code := run([]string{"recover", "--terminal", sim.URL(), "--data-dir", dir}, &out, &errOut); code != 0 || strings.TrimSpace(out.String()) != "[]" {
		t.Fatalf("recover with nothing open: exit %d %q", code, out.String())
	}
}

// A terminal that approves something else than asked (1 cent, another
// currency, a refund for a debit) makes `pay` exit 4 with the flag and the
// order unpaid; the order's currency is the configured one.
func TestPayApprovedForSomethingElseIsNotPaid(t *testing.T) {
	sim := startSim(t)
	dir := t.TempDir()
	var out, errOut bytes.Buffer
	if code := run([]string{"settings", "--data-dir", dir, "set", "kiosk.currency", `"EUR"`}, &out, &errOut); code != 0 {
		t.Fatalf("settings: exit %d %s", code, errOut.String())
	}
	for _, m := range []terminalsim.Misreport{{Amount: 1}, {Currency: "CHF"}, {Type: "refund"}} {
		out.Reset()
		sim.Script(terminalsim.Approve().After(0).Misreporting(m))
		code := run([]string{"pay", "--terminal", sim.URL(), "--data-dir", dir, "--amount", "160"}, &out, &errOut)
		var res payResult
		if err := json.Unmarshal(out.Bytes(), &res); err != nil || code != 4 || res.Status != "approved" || res.Flag == "" || res.OrderPaid {
			t.Fatalf("pay approved as %+v: exit %d, printed %s (%v)", m, code, out.String(), err)
		}
	}
	out.Reset()
	if code := run([]string{"settings", "--data-dir", dir, "set", "kiosk.currency", `"CHF"`}, &out, &errOut); code != 0 {
		t.Fatalf("settings: exit %d %s", code, errOut.String())
	}
	out.Reset()
	// The simulator's profile is EUR: an order in CHF answered in EUR is flagged.
	code := run([]string{"pay", "--terminal", sim.URL(), "--data-dir", dir, "--amount", "100"}, &out, &errOut)
	var res payResult
	if err := json.Unmarshal(out.Bytes(), &res); err != nil || code != 4 || !strings.Contains(res.Flag, "EUR") {
		t.Fatalf("a CHF order answered in EUR: exit %d, printed %s (%v)", code, out.String(), err)
	}
}

func TestDiscoverFindsALoopbackSimulator(t *testing.T) {
	sim := startSim(t)
	opts := advertised(t, sim)
	if !opts.Loopback || len(opts.Interfaces) != 1 {
		t.Fatalf("a simulator on 127.0.0.1 is advertised with %+v", opts)
	}
	var out, errOut bytes.Buffer
	if code := run([]string{"discover", "--iface", opts.Interfaces[0].Name, "--simulators", "--timeout", "2s"}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d %s", code, errOut.String())
	}
	var found []struct {
		Instance  string `json:"instance"`
		BaseURL   string `json:"baseUrl"`
		Confirmed bool   `json:"confirmed"`
	}
	if err := json.Unmarshal(out.Bytes(), &found); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	for _, f := range found {
		if f.Instance == sim.Config().InstanceName && f.Confirmed && f.BaseURL == sim.URL() {
			return
		}
	}
	t.Errorf("%s not found: %s", sim.Config().InstanceName, out.String())
}

func TestVersionShowsTheStamp(t *testing.T) {
	old := [3]string{version, commit, buildTime}
	defer func() { version, commit, buildTime = old[0], old[1], old[2] }()
	version, commit, buildTime = "v1.2.3", "abc1234", "2026-11-22T10:00:00Z"
	var out bytes.Buffer
	if code := run([]string{"--version"}, &out, io.Discard); code != 0 || strings.TrimSpace(out.String()) != "comptoir v1.2.3 (abc1234, built 2026-11-22T10:00:00Z)" {
		t.Errorf("exit %d, %q", code, out.String())
	}
}

func TestSettings(t *testing.T) {
	dir := t.TempDir()
	var out, errOut bytes.Buffer
	if code := run([]string{"settings", "--data-dir", dir, "set", "kiosk.idle_seconds", "30"}, &out, &errOut); code != 0 {
		t.Fatalf("set: %d %s", code, errOut.String())
	}
	if code := run([]string{"settings", "--data-dir", dir, "set", "kiosk.default_language", "en"}, &out, &errOut); code != 2 {
		t.Errorf("a value that is not JSON was accepted")
	}
	out.Reset()
	if code := run([]string{"settings", "--data-dir", dir, "get", "kiosk.idle_seconds"}, &out, &errOut); code != 0 || strings.TrimSpace(out.String()) != "30" {
		t.Errorf("get: %d %q", code, out.String())
	}
}

func TestReceiptOfAnOrderPaidAtTheCommandLine(t *testing.T) {
	sim := startSim(t)
	dir := t.TempDir()
	var out, errOut bytes.Buffer
	// An order paid by `comptoir pay` has no lines: its receipt is the
	// amount, the payment and the card ticket.
	if code := run([]string{"pay", "--terminal", sim.URL(), "--data-dir", dir, "--amount", "500", "--order", "P1"}, &out, &errOut); code != 0 {
		t.Fatalf("pay: %d %s", code, errOut.String())
	}
	var res payResult
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	errOut.Reset()
	if code := run([]string{"receipt", "--data-dir", dir, "--order", "P1"}, &out, &errOut); code != 0 ||
		!strings.Contains(out.String(), res.TransactionID) || !strings.Contains(strings.ReplaceAll(out.String(), ",", "."), "5.00") {
		t.Errorf("receipt of a command-line order: exit %d %q %q", code, out.String(), errOut.String())
	}
	if code := run([]string{"receipt", "--data-dir", dir}, &out, &errOut); code != 2 {
		t.Errorf("receipt without --order: exit %d", code)
	}
}

func TestDemoFindsItsSimulatorByMDNS(t *testing.T) {
	sim, _ := testenv.Terminal(t, terminalsim.Config{})
	link := demoByDiscovery(context.Background(), sim)
	if link == nil {
		t.Fatal("the demo simulator was not found by mDNS on loopback")
	}
	defer link.stop()
	if link.url != sim.URL() || link.id != "demo" {
		t.Errorf("link %s (%s), simulator %s", link.url, link.id, sim.URL())
	}
	if _, err := link.term.PaymentBody(context.Background(), []byte(`{"amount":100,"idempotentUuid":"0193b1c2-0000-7000-8000-0000000000d1"}`)); err != nil {
		t.Errorf("a payment through the tracker: %v", err)
	}
}

func TestDiscoverChooseRemembersTheName(t *testing.T) {
	sim := startSim(t)
	opts := advertised(t, sim)
	dir := t.TempDir()
	name := sim.Config().InstanceName
	var out, errOut bytes.Buffer
	args := []string{"discover", "--data-dir", dir, "--iface", opts.Interfaces[0].Name, "--simulators", "--timeout", "3s", "--choose", strings.ToLower(name)}
	if code := run(args, &out, &errOut); code != 0 {
		t.Fatalf("exit %d %s", code, errOut.String())
	}
	out.Reset()
	if code := run([]string{"settings", "--data-dir", dir, "get", "terminal.instance"}, &out, &errOut); code != 0 || strings.TrimSpace(out.String()) != `"`+name+`"` {
		t.Errorf("remembered %q (exit %d)", out.String(), code)
	}
	args[len(args)-1] = "Yavin Nobody"
	if code := run(args, &out, &errOut); code != 1 {
		t.Errorf("an instance that does not answer was accepted: exit %d", code)
	}
}

func TestPinSetsTheStaffPIN(t *testing.T) {
	dir := t.TempDir()
	pin := func(input string) (int, string) {
		stdin = strings.NewReader(input)
		defer func() { stdin = os.Stdin }()
		var out, errOut bytes.Buffer
		code := run([]string{"pin", "--data-dir", dir}, &out, &errOut)
		return code, out.String() + errOut.String()
	}
	if code, msg := pin("12\n"); code != 2 || !strings.Contains(msg, "4 to 8 digits") {
		t.Fatalf("a short PIN: exit %d, %q", code, msg)
	}
	if code, msg := pin(""); code != 2 || !strings.Contains(msg, "standard input") {
		t.Fatalf("no PIN: exit %d, %q", code, msg)
	}
	if code, msg := pin("4829\n"); code != 0 {
		t.Fatalf("exit %d, %q", code, msg)
	}
	withStaff(t, dir, func(ctx context.Context, _ *journal.DB, st *staff.Staff) {
		if _, err := st.Unlock(ctx, "4829"); err != nil {
			t.Fatalf("the PIN set from the command line does not unlock: %v", err)
		}
	})

	// The audit trail says both, newest first.
	var out, errOut bytes.Buffer
	if code := run([]string{"audit", "--data-dir", dir}, &out, &errOut); code != 0 {
		t.Fatalf("audit: exit %d: %s", code, errOut.String())
	}
	var lines []struct{ Who, Action string }
	if err := json.Unmarshal(out.Bytes(), &lines); err != nil || len(lines) < 2 ||
		lines[0].Action != "unlock" || lines[1].Action != "pin_reset" || lines[1].Who != "command line" {
		t.Fatalf("audit %s (%v)", out.String(), err)
	}
}

// Money goes back from the command line too: a refund, then a reversal
// refused because it would give back more than was taken, then, on
// another order, a reversal of the whole debit.
func TestRefundAndReverseAtTheCommandLine(t *testing.T) {
	sim := startSim(t)
	dir := t.TempDir()
	args := func(a ...string) []string { return append(a, "--terminal", sim.URL(), "--data-dir", dir) }
	var out, errOut bytes.Buffer
	for _, o := range []string{"G1", "G2"} {
		if code := run(args("pay", "--amount", "1000", "--order", o), &out, &errOut); code != 0 {
			t.Fatalf("pay %s: exit %d %s", o, code, errOut.String())
		}
	}
	out.Reset()
	if code := run(args("refund", "--order", "G1", "--amount", "300"), &out, &errOut); code != 0 {
		t.Fatalf("refund: exit %d %s %s", code, out.String(), errOut.String())
	}
	var r giveBackResult
	if err := json.Unmarshal(out.Bytes(), &r); err != nil || r.Kind != "refund" || r.Status != "approved" || r.Givable != 700 {
		t.Fatalf("refund printed %s (%v)", out.String(), err)
	}
	errOut.Reset()
	if code := run(args("reverse", "--order", "G1"), &out, &errOut); code != 1 || !strings.Contains(errOut.String(), "given back 700 at most") {
		t.Fatalf("reversal after a refund: exit %d %q", code, errOut.String())
	}
	out.Reset()
	if code := run(args("reverse", "--order", "G2"), &out, &errOut); code != 0 {
		t.Fatalf("reverse: exit %d %s", code, errOut.String())
	}
	if err := json.Unmarshal(out.Bytes(), &r); err != nil || r.Kind != "reversal" || r.Status != "approved" || r.Amount != 1000 || r.Givable != 0 || r.InitialTransactionID == "" {
		t.Fatalf("reverse printed %s (%v)", out.String(), err)
	}
	if code := run(args("reverse"), &out, &errOut); code != 2 {
		t.Fatalf("reverse without --order or --attempt: exit %d", code)
	}
}

// run is the command line as a build without a window runs it.
func run(args []string, stdout, stderr io.Writer) int {
	return Run(args, stdout, stderr, Program{})
}

// The desktop path hands the parsed flags to the window, and a build
// without one says so rather than open nothing.
func TestDesktopPathHandsOverTheFlags(t *testing.T) {
	var got *Desktop
	code := Run([]string{"--demo", "--windowed"}, io.Discard, io.Discard, Program{Desktop: func(d *Desktop) error { got = d; return nil }})
	if code != 0 || got == nil || !got.Demo() || !got.Windowed() || got.Frameless() {
		t.Fatalf("exit %d, desktop %+v", code, got)
	}
	var errOut strings.Builder
	if code := run([]string{"--demo"}, io.Discard, &errOut); code != 2 || !strings.Contains(errOut.String(), "no desktop window") {
		t.Fatalf("a build without a window: exit %d %q", code, errOut.String())
	}
}

// A demo keeps its data apart from a real installation's, unless a data
// directory is given.
func TestDemoKeepsItsOwnDataDirectory(t *testing.T) {
	home := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", home)
	t.Setenv("HOME", home)
	real, err := commonFlags{}.resolveDataDir()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []commonFlags{{demo: true}, {demoCloud: true}} {
		demo, err := c.resolveDataDir()
		if err != nil || demo == real || !strings.HasPrefix(demo, home) {
			t.Fatalf("demo data dir %q (real %q), %v", demo, real, err)
		}
	}
	if got, _ := (commonFlags{demo: true, dataDir: home + "/x"}).resolveDataDir(); got != home+"/x" {
		t.Fatalf("an explicit data dir: %q", got)
	}
}
