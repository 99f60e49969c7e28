package cli

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/comptoir-pos/comptoir/backend/cloudapi"
	"github.com/comptoir-pos/comptoir/backend/cloudsim"
	"github.com/comptoir-pos/comptoir/backend/internal/testenv"
	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/kiosk"
	"github.com/comptoir-pos/comptoir/backend/payment"
	"github.com/comptoir-pos/comptoir/backend/staffapi"
	"github.com/comptoir-pos/comptoir/backend/terminalsim"
)

// lanAndCloud is a simulated cloud whose terminal is also on the LAN.
func lanAndCloud(t *testing.T, key, serial string) *cloudsim.Cloud {
	t.Helper()
	approve := terminalsim.Approve()
	cloud, _ := testenv.Cloud(t, cloudsim.Config{Key: key, Serials: []string{serial}, TimeScale: 0.01, LAN: true,
		Terminal: terminalsim.Config{TimeScale: 0.01, NoTestAmounts: true, Default: &approve}})
	return cloud
}

// attemptsOf reads `comptoir attempts`.
func attemptsOf(t *testing.T, dir string) []attemptRow {
	t.Helper()
	var out, errOut bytes.Buffer
	if code := run([]string{"attempts", "--data-dir", dir}, &out, &errOut); code != 0 {
		t.Fatalf("attempts: %s", errOut.String())
	}
	var rows []attemptRow
	if err := json.Unmarshal(out.Bytes(), &rows); err != nil {
		t.Fatal(err)
	}
	return rows
}

// `comptoir pay --terminal URL --cloud URL --serial SN`: the LAN first,
// the cloud behind it. With the terminal up on the LAN the payment goes
// over the LAN; with the LAN down it goes through the cloud, once; the
// same from the saved settings with only --terminal. Every approval over
// the LAN is in the provider's record (the Webservices are set up).
func TestPayOverTheLANWithTheCloudBehind(t *testing.T) {
	const key, serial = "sk_both_ways", "SN-BOTH"
	cloud := lanAndCloud(t, key, serial)
	dir := t.TempDir()
	t.Setenv(envCloudKey, key)
	lan := cloud.LANURL(serial)
	pay := func(order string, args ...string) payResult {
		t.Helper()
		var out, errOut bytes.Buffer
		all := append([]string{"pay", "--data-dir", dir, "--amount", "990", "--order", order}, args...)
		if code := run(all, &out, &errOut); code != 0 {
			t.Fatalf("pay %s: exit %d %s %s", order, code, out.String(), errOut.String())
		}
		var res payResult
		if err := json.Unmarshal(out.Bytes(), &res); err != nil || res.Status != journal.StateApproved || !res.OrderPaid {
			t.Fatalf("pay %s printed %s (%v)", order, out.String(), err)
		}
		return res
	}
	flags := []string{"--terminal", lan, "--cloud", cloud.URL(), "--serial", serial}
	up := pay("up", flags...)
	if err := cloud.SetLAN(serial, false); err != nil {
		t.Fatal(err)
	}
	down := pay("down", flags...)
	if up.Channel != journal.ChannelLocal || down.Channel != journal.ChannelCloud {
		t.Fatalf("LAN up went %q, LAN down went %q", up.Channel, down.Channel)
	}
	sim, _ := cloud.Terminal(serial)
	if n := len(sim.ChargesFor(down.IdempotentUUID)); n != 1 {
		t.Fatalf("the payment through the cloud charged %d times", n)
	}
	// The same from the settings: only --terminal on the command line.
	var out, errOut bytes.Buffer
	for _, kv := range [][2]string{{settingChannel, `"both"`}, {settingCloudURL, `"` + cloud.URL() + `"`}, {settingCloudSerial, `"` + serial + `"`}} {
		if code := run([]string{"settings", "--data-dir", dir, "set", kv[0], kv[1]}, &out, &errOut); code != 0 {
			t.Fatalf("settings: %s", errOut.String())
		}
	}
	if saved := pay("saved-down", "--terminal", lan); saved.Channel != journal.ChannelCloud {
		t.Fatalf("saved, LAN down: went %q", saved.Channel)
	}
	if err := cloud.SetLAN(serial, true); err != nil {
		t.Fatal(err)
	}
	if saved := pay("saved-up", "--terminal", lan); saved.Channel != journal.ChannelLocal {
		t.Fatalf("saved, LAN up: went %q", saved.Channel)
	}
	rows := attemptsOf(t, dir)
	terminals := map[string]bool{}
	for _, r := range rows {
		terminals[r.Terminal] = true
		if r.Channel == journal.ChannelLocal && r.Witness != journal.WitnessConfirmed {
			t.Fatalf("an approval over the LAN not confirmed by the provider's record: %+v", r)
		}
	}
	if len(rows) != 4 || len(terminals) != 1 {
		t.Fatalf("%d attempts on terminals %v: want four, journaled as one terminal", len(rows), terminals)
	}
	if len(sim.Ledger()) != 4 {
		t.Fatalf("%d charges on the terminal for four payments", len(sim.Ledger()))
	}
}

// A device on the LAN that answers "ok" in the terminal's place is no
// payment: with the Webservices set up, `comptoir pay` says the order is
// not paid and needs staff (exit 4), and the journal agrees.
func TestPayApprovedByARogueOnTheLANIsNotPaid(t *testing.T) {
	const key, serial = "sk_rogue", "SN-REAL"
	cloud := lanAndCloud(t, key, serial)
	rogue, _ := testenv.Terminal(t, terminalsim.Config{TimeScale: 0.01, NoTestAmounts: true})
	dir := t.TempDir()
	t.Setenv(envCloudKey, key)
	var out, errOut bytes.Buffer
	for _, kv := range [][2]string{{settingCloudURL, `"` + cloud.URL() + `"`}, {settingWitnessWait, "1"}} {
		if code := run([]string{"settings", "--data-dir", dir, "set", kv[0], kv[1]}, &out, &errOut); code != 0 {
			t.Fatalf("settings: %s", errOut.String())
		}
	}
	out.Reset()
	code := run([]string{"pay", "--data-dir", dir, "--terminal", rogue.URL(), "--amount", "1300", "--order", "R1"}, &out, &errOut)
	var res payResult
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatalf("pay printed %s: %v (%s)", out.String(), err, errOut.String())
	}
	if code != 4 || res.OrderPaid || !strings.Contains(res.Flag, "does not show") {
		t.Fatalf("a rogue's approval: exit %d %+v", code, res)
	}
	db, err := journal.Open(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if o, _ := db.Order(t.Context(), "R1"); o.Status != journal.OrderNeedsAttention {
		t.Fatalf("the order is %s", o.Status)
	}
}

// The kiosk on a terminal reached both ways: it takes orders while either
// way answers, and the payment says which way it went.
func TestTheKioskShowsWhichWayAPaymentWent(t *testing.T) {
	const key, serial = "sk_kiosk_both", "SN-KB"
	cloud := lanAndCloud(t, key, serial)
	t.Setenv(envCloudKey, key)
	stack, err := startKiosk(t.Context(), commonFlags{terminal: cloud.LANURL(serial), cloudURL: cloud.URL(), serial: serial, bothWays: true,
		dataDir: t.TempDir()}, payment.DefaultLimits, kiosk.NewRelay(nil), warnLogger(io.Discard))
	if err != nil {
		t.Fatal(err)
	}
	defer stack.Close()
	openKiosk(t, stack)
	kioskPays(t, stack, kiosk.PhaseApproved)
	if p := stack.Svc.Checkout().Payment; p == nil || p.AttemptUUID == "" || p.ThroughCloud {
		t.Fatalf("LAN up: %+v", p)
	}
	stack.Svc.Finish()
	if err := cloud.SetLAN(serial, false); err != nil {
		t.Fatal(err)
	}
	kioskPays(t, stack, kiosk.PhaseApproved)
	if p := stack.Svc.Checkout().Payment; p == nil || !p.ThroughCloud {
		t.Fatalf("LAN down: %+v", p)
	}
}

// Staff choose the LAN first with the cloud behind it: saved as the
// channel "both", shown as such, and the next start reaches the terminal
// both ways, from its saved address, with no flag.
func TestStaffChooseTheLANFirstWithTheCloudBehind(t *testing.T) {
	ctx := t.Context()
	const key = "sk_staff_both"
	c := newControl(t, &terminalLink{how: "address", url: "http://10.0.0.5:16125/localapi/v4"})
	if err := (settingsStore{c.db}).Set(ctx, settingTerminalAddress, "http://10.0.0.5:16125/localapi/v4"); err != nil {
		t.Fatal(err)
	}
	if err := c.SetCloud(ctx, staffapi.CloudChoice{On: true, URL: "https://cloud.example.test", Serial: "SN-9", Key: key, LANFirst: true}); err != nil {
		t.Fatal(err)
	}
	if info := c.Info(ctx); info.Channel != channelBoth || !info.RestartRequired || info.Source != "address" || !info.Cloud.On || !info.Cloud.LANFirst {
		t.Fatalf("after choosing both ways: %+v", info)
	}
	flags := commonFlags{}
	if err := cloudFromSettings(ctx, &flags, c.db); err != nil || !flags.bothWays || flags.serial != "SN-9" {
		t.Fatalf("from settings: %+v %v", flags, err)
	}
	// Running both ways, the same choice asks for no restart.
	c.link.how = "address+cloud"
	if info := c.Info(ctx); info.RestartRequired || info.Source != "address" {
		t.Fatalf("in use: %+v", info)
	}
	// --cloud alone, without --terminal, is the cloud alone.
	alone := commonFlags{cloudURL: "https://cloud.example.test", serial: "SN-9"}
	if err := cloudFromSettings(ctx, &alone, c.db); err != nil || alone.bothWays {
		t.Fatalf("--cloud alone: %+v", alone)
	}
}

// `comptoir refund` reads what the provider gave back outside Comptoir
// first: after 5.00 given back in the back office, a 9.90 order is given
// back 4.90 at most, and the refund made elsewhere is in the journal.
func TestRefundCommandSeesMoneyGivenBackElsewhere(t *testing.T) {
	const key, serial = "sk_elsewhere", "SN-EW"
	cloud := lanAndCloud(t, key, serial)
	dir := t.TempDir()
	t.Setenv(envCloudKey, key)
	flags := []string{"--data-dir", dir, "--cloud", cloud.URL(), "--serial", serial}
	var out, errOut bytes.Buffer
	if code := run(append([]string{"pay", "--amount", "990", "--order", "E1"}, flags...), &out, &errOut); code != 0 {
		t.Fatalf("pay: %s %s", out.String(), errOut.String())
	}
	var paid payResult
	if err := json.Unmarshal(out.Bytes(), &paid); err != nil {
		t.Fatal(err)
	}
	ws, err := cloudapi.NewWebservices(cloudapi.DefaultWebservicesURL(cloud.URL()), key)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(cloudapi.RefundRequest{Amount: 500, UserEmail: "manager@shop.example",
		Vendor: cloudapi.RefundVendor{SoftwareName: "Back office", SoftwareVersion: "1"}})
	if _, err := ws.Refund(t.Context(), paid.TransactionID, body); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	errOut.Reset()
	if code := run(append([]string{"refund", "--order", "E1", "--amount", "990"}, flags...), &out, &errOut); code == 0 ||
		!strings.Contains(errOut.String(), "490 at most") {
		t.Fatalf("refund of the whole order: exit %d %s %s", code, out.String(), errOut.String())
	}
	sim, _ := cloud.Terminal(serial)
	for _, l := range sim.Ledger() {
		if l.Kind != "debit" {
			t.Fatalf("the terminal gave money back: %+v", l)
		}
	}
	rows := attemptsOf(t, dir)
	if len(rows) != 2 || rows[0].Kind != journal.KindRefund || rows[0].Amount != 500 || rows[0].State != journal.StateApproved {
		t.Fatalf("the journal %+v", rows)
	}
}
