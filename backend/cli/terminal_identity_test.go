package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/device"
	"github.com/comptoir-pos/comptoir/backend/discovery"
	"github.com/comptoir-pos/comptoir/backend/fault"
	"github.com/comptoir-pos/comptoir/backend/internal/testenv"
	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/kiosk"
	"github.com/comptoir-pos/comptoir/backend/localapi"
	"github.com/comptoir-pos/comptoir/backend/payment"
	"github.com/comptoir-pos/comptoir/backend/staff"
	"github.com/comptoir-pos/comptoir/backend/staffapi"
	"github.com/comptoir-pos/comptoir/backend/terminalsim"
)

// plainTerminal is a Local API on plain HTTP that counts what it is asked.
func plainTerminal(t *testing.T) (url string, asked *atomic.Int32) {
	t.Helper()
	asked = &atomic.Int32{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		w.Write([]byte(`{"status":"ok"}`))
	}))
	t.Cleanup(srv.Close)
	return srv.URL + localapi.BasePath, asked
}

// adoptedOnHTTPS is a data directory whose journal adopted sim (HTTPS) by
// discovery, as a kiosk does: its certificate pinned. The journal stays
// open (locked), as under a running kiosk.
func adoptedOnHTTPS(t *testing.T, sim *terminalsim.Terminal) (dir string, db *journal.DB) {
	t.Helper()
	dir = t.TempDir()
	db, err := journal.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	pin, err := localapi.NormalizePin(sim.CertificateFingerprint())
	if err != nil {
		t.Fatal(err)
	}
	id := discovery.Identity{Instance: "Yavin X", Pin: pin, HTTPS: true}.Record(sim.URL(), "adopted", time.Now())
	if err := (identityStore{db: db}).SaveIdentity(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	return dir, db
}

// `comptoir ping` goes through the stored trust: plain HTTP is refused
// when the adopted terminal is bound to HTTPS, without a request; without
// --terminal it pings the adopted terminal with its pinned certificate;
// a device with another certificate fails. It reads the trust while the
// kiosk holds the journal.
func TestPingUsesTheStoredTrust(t *testing.T) {
	sim := httpsTerminal(t)
	dir, _ := adoptedOnHTTPS(t, sim)
	plain, asked := plainTerminal(t)
	t.Setenv("COMPTOIR_TERMINAL", "")
	t.Setenv("COMPTOIR_TERMINAL_PIN", "")

	var out, errOut bytes.Buffer
	if code := run([]string{"ping", "--data-dir", dir, "--terminal", plain}, &out, &errOut); code != 2 ||
		!strings.Contains(errOut.String(), ErrInsecureTerminal.Error()) || asked.Load() != 0 {
		t.Fatalf("plain HTTP to a terminal bound to HTTPS: exit %d, %q, %d requests", code, errOut.String(), asked.Load())
	}
	out.Reset()
	if code := run([]string{"ping", "--data-dir", dir}, &out, &errOut); code != 0 {
		t.Fatalf("ping of the adopted terminal: exit %d %s %s", code, out.String(), errOut.String())
	}
	var res pingResult
	if err := json.Unmarshal(out.Bytes(), &res); err != nil || !res.OK || res.Terminal != sim.URL() {
		t.Fatalf("ping printed %s (%v)", out.String(), err)
	}
	other := httpsTerminal(t)
	out.Reset()
	if code := run([]string{"ping", "--data-dir", dir, "--terminal", other.URL()}, &out, &errOut); code != 1 {
		t.Fatalf("a terminal with another certificate answered: exit %d %s", code, out.String())
	}
}

// `comptoir receipt --print` goes through the stored trust too.
func TestReceiptPrintRefusesPlainHTTPWhenHTTPSIsRequired(t *testing.T) {
	sim := startSim(t)
	dir := t.TempDir()
	var out, errOut bytes.Buffer
	if code := run([]string{"pay", "--terminal", sim.URL(), "--data-dir", dir, "--amount", "500", "--order", "P1"}, &out, &errOut); code != 0 {
		t.Fatalf("pay: %d %s", code, errOut.String())
	}
	if code := run([]string{"settings", "--data-dir", dir, "set", settingTerminalHTTPS, `"required"`}, &out, &errOut); code != 0 {
		t.Fatalf("settings: %d %s", code, errOut.String())
	}
	plain, asked := plainTerminal(t)
	errOut.Reset()
	if code := run([]string{"receipt", "--data-dir", dir, "--order", "P1", "--print", "--terminal", plain}, &out, &errOut); code != 2 ||
		!strings.Contains(errOut.String(), ErrInsecureTerminal.Error()) || asked.Load() != 0 {
		t.Fatalf("printed over plain HTTP to a terminal set up on HTTPS: exit %d, %q, %d requests", code, errOut.String(), asked.Load())
	}
}

// `comptoir discover` says what each device found is to the adopted
// terminal; --choose adopts a terminal offering HTTPS with its certificate
// pinned.
func TestDiscoverJudgesAndChoosePinsHTTPS(t *testing.T) {
	sim := httpsTerminal(t)
	opts := advertiseOptions(sim)
	if len(opts.Interfaces) != 1 {
		t.Skip("no loopback interface")
	}
	opts.Instance = "Yavin TLS " + sim.Config().Serial
	stop, err := sim.Advertise(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	dir := t.TempDir()
	var out, errOut bytes.Buffer
	args := []string{"discover", "--data-dir", dir, "--iface", opts.Interfaces[0].Name, "--simulators", "--timeout", "3s", "--choose", opts.Instance}
	if code := run(args, &out, &errOut); code != 0 {
		t.Skipf("mDNS on loopback does not answer here: exit %d %s", code, errOut.String())
	}
	out.Reset()
	if code := run([]string{"settings", "--data-dir", dir, "get", settingTerminalPin}, &out, &errOut); code != 0 ||
		strings.TrimSpace(out.String()) != `"`+strings.ToLower(strings.ReplaceAll(sim.CertificateFingerprint(), ":", ""))+`"` {
		t.Fatalf("pinned %q (exit %d)", out.String(), code)
	}
	out.Reset()
	if code := run([]string{"discover", "--data-dir", dir, "--iface", opts.Interfaces[0].Name, "--simulators", "--timeout", "2s"}, &out, &errOut); code != 0 {
		t.Fatalf("discover: exit %d %s", code, errOut.String())
	}
	var found []struct {
		Instance, BaseURL, Certificate, Standing string
	}
	if err := json.Unmarshal(out.Bytes(), &found); err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(found, func(f struct{ Instance, BaseURL, Certificate, Standing string }) bool {
		return f.Instance == opts.Instance && f.Standing == string(discovery.StandingAdopted) && f.Certificate == sim.CertificateFingerprint()
	}) {
		t.Fatalf("discover printed %s", out.String())
	}

	// Choosing another terminal binds the identity to it.
	second := httpsTerminal(t)
	opts2 := advertiseOptions(second)
	opts2.Instance = "Yavin TLS " + second.Config().Serial
	stop2, err := second.Advertise(t.Context(), opts2)
	if err != nil {
		t.Fatal(err)
	}
	defer stop2()
	args[len(args)-1] = opts2.Instance
	if code := run(args, &out, &errOut); code != 0 {
		t.Fatalf("choose the second: exit %d %s", code, errOut.String())
	}
	db, err := journal.Open(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	id, err := readIdentity(t.Context(), db, "")
	if err != nil || id.Instance != opts2.Instance || pinText(id.Pin) != second.CertificateFingerprint() || len(id.Addresses) != 1 || id.Addresses[0].Address != second.URL() {
		t.Fatalf("identity after choosing another: %+v, %v", id, err)
	}
}

// A device that answers under the adopted terminal's name from a new
// address is not used: the kiosk says the terminal is unreachable and
// staff see the device waiting; staff's confirmation (audited) makes it
// the terminal payments go to.
func TestStaffConfirmationMakesTheKioskUseTheNewDevice(t *testing.T) {
	ctx := context.Background()
	sim1 := startSim(t)
	lo, name, db, tr := adopted(t, sim1, "Yavin Confirm")
	source := kiosk.TrackerStatus(tr)

	sim1.Close()
	rogue := startSim(t)
	advertise(t, rogue, name, lo)
	testenv.Eventually(t, "the new device waiting for staff", func() bool {
		_, _ = tr.Ping(ctx, false) // the kiosk's calls
		p := tr.Status().Pending
		return p != nil && p.Address == rogue.URL()
	})
	if st := source.TerminalStatus(); st.State != kiosk.TerminalUnreachable {
		t.Fatalf("the kiosk sees %+v", st)
	}

	st, err := staff.New(staff.Config{Journal: db, Terminal: device.LocalClient(tr), Demo: true, Argon2: &staff.Argon2Params{Time: 1, Memory: 64, Threads: 1}})
	if err != nil {
		t.Fatal(err)
	}
	api := staffapi.New(staffapi.Config{Staff: st, Terminal: &terminalControl{link: &terminalLink{how: "discovery", instance: name, tracker: tr}, db: db}})
	call := func(name string, args ...any) staffapi.Result {
		t.Helper()
		raw := make([]json.RawMessage, len(args))
		for i, a := range args {
			raw[i], _ = json.Marshal(a)
		}
		r, err := api.Call(ctx, name, raw)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return r
	}
	r := call("Unlock", staff.DemoPIN)
	sid := r.Value.(staff.Session).ID
	panel := call("Terminal", sid, false).Value.(staffapi.TerminalPanel)
	if panel.Pending == nil || panel.Pending.Address != rogue.URL() || panel.Pending.Reason != "new_address" || len(panel.Known) != 1 {
		t.Fatalf("staff see %+v", panel.TerminalInfo)
	}
	if r := call("ConfirmTerminalDevice", sid, rogue.URL(), ""); !r.OK {
		t.Fatalf("confirm: %+v", r.Error)
	}
	if st := source.TerminalStatus(); st.State != kiosk.TerminalConnected || st.Address != rogue.URL() {
		t.Fatalf("after staff confirmed, the kiosk sees %+v", st)
	}
	o, err := payment.New(payment.Config{Journal: db, Terminal: tr, TerminalID: "mdns:" + name})
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	if _, err := o.Recover(ctx); err != nil {
		t.Fatal(err)
	}
	if err := db.CreateOrder(ctx, journal.Order{ID: "C1", Currency: "EUR", Total: 700}); err != nil {
		t.Fatal(err)
	}
	h, err := o.Start(ctx, payment.Request{OrderID: "C1", Amount: 700, Policy: journal.PolicyKiosk})
	if err != nil {
		t.Fatal(err)
	}
	<-h.Done()
	if v := h.View(); v.State != journal.StateApproved || len(rogue.ChargesFor(h.UUID())) != 1 {
		t.Fatalf("payment after the confirmation: %+v", v)
	}
	audit, err := db.Audit(ctx, journal.AuditQuery{})
	if err != nil {
		t.Fatal(err)
	}
	has := func(who, action, subject string) bool {
		return slices.ContainsFunc(audit, func(a journal.AuditRecord) bool {
			return strings.HasPrefix(a.Who, who) && a.Action == action && a.Subject == subject
		})
	}
	if !has("staff", "terminal_confirm", rogue.URL()) || !has("system:discovery", "terminal_address", rogue.URL()) {
		t.Fatalf("audit %+v", audit)
	}
}

// advertise announces sim as name on the loopback interface at 127.0.0.1.
func advertise(t *testing.T, sim *terminalsim.Terminal, name string, lo net.Interface) {
	t.Helper()
	advertiseAs(t, sim, terminalsim.AdvertiseOptions{Instance: name, Interfaces: []net.Interface{lo}, Loopback: true})
}

// A terminal found by discovery that offers HTTPS is pinned on first use,
// in the settings every command reads, and the panel does not take that
// for a change waiting for a restart; a device under its name with another
// certificate waits for staff.
func TestTheKioskPinsAnHTTPSTerminalOnFirstUse(t *testing.T) {
	ctx := context.Background()
	sim := httpsTerminal(t)
	lo, name, db, tr := adopted(t, sim, "Yavin Pinned")

	trust, err := loadTrust(ctx, commonFlags{}, db)
	if err != nil || !trust.https || pinText(trust.pin) != sim.CertificateFingerprint() {
		t.Fatalf("stored trust %+v, %v", trust, err)
	}
	c := &terminalControl{link: &terminalLink{how: "discovery", instance: name, tracker: tr, url: sim.URL()}, db: db}
	if info := c.Info(ctx); !info.HTTPS || info.Pin != sim.CertificateFingerprint() || info.RestartRequired {
		t.Fatalf("panel %+v", info)
	}
	audit, _ := db.Audit(ctx, journal.AuditQuery{Action: "terminal_pinned"})
	if len(audit) != 1 || audit[0].Subject != sim.CertificateFingerprint() {
		t.Fatalf("audit %+v", audit)
	}

	sim.Close()
	other := httpsTerminal(t)
	advertise(t, other, name, lo)
	testenv.Eventually(t, "the other certificate waiting for staff", func() bool {
		_, _ = tr.Ping(ctx, false)
		p := c.Info(ctx).Pending
		return p != nil && p.Address == other.URL()
	})
	if p := c.Info(ctx).Pending; p.Reason != "other_certificate" || p.Certificate != other.CertificateFingerprint() {
		t.Fatalf("pending %+v", p)
	}
	if err := c.ConfirmDevice(ctx, sim.URL(), other.CertificateFingerprint()); fault.CodeOf(err) != staff.ENOTFOUND {
		t.Fatalf("confirmed a device that is not waiting: %v", err)
	}
}

// A damaged identity is never taken for "none" (which would adopt whatever
// answers first): the kiosk does not start on it, staff mode does, and
// choosing the terminal again starts it afresh.
func TestADamagedIdentityIsNotBelieved(t *testing.T) {
	ctx := context.Background()
	db, err := journal.OpenMemory(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, raw := range []string{`{"instance":"Yavin A","addresses":[{"address":"ftp://10.0.0.5"}]}`, `{"instance":"Yavin A","rogue":true}`, `[1,2]`} {
		if err := db.SetSetting(ctx, settingTerminalIdentity, json.RawMessage(raw)); err != nil {
			t.Fatal(err)
		}
		_, _, err := discoverTerminal(ctx, db, time.Second, terminalTrust{}, "", true)
		if !errors.Is(err, ErrNoTerminal) || !strings.Contains(err.Error(), "damaged") {
			t.Fatalf("%s: %v", raw, err)
		}
	}
	c := &terminalControl{link: &terminalLink{how: "none"}, db: db, browse: func(context.Context) ([]discovery.Terminal, error) { return nil, nil }}
	if err := c.Choose(ctx, "Yavin B"); err != nil {
		t.Fatal(err)
	}
	if id, err := readIdentity(ctx, db, ""); err != nil || id.Instance != "Yavin B" || len(id.Addresses) != 0 {
		t.Fatalf("after choosing again: %+v, %v", id, err)
	}
}

// Staff's choice of another terminal for the next start is not undone by
// the terminal in use recording a new address meanwhile.
func TestTheRunningTerminalDoesNotUndoStaffsChoice(t *testing.T) {
	ctx := context.Background()
	db, err := journal.OpenMemory(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	store := identityStore{db: db}
	old := discovery.Identity{Instance: "Yavin A", Pin: strings.Repeat("ab", 32), HTTPS: true}.Record("https://10.0.0.5:16125/localapi/v4", "adopted", time.Now())
	if err := store.SaveIdentity(ctx, old); err != nil {
		t.Fatal(err)
	}
	c := &terminalControl{link: &terminalLink{how: "discovery", instance: "Yavin A"}, db: db}
	if err := c.Choose(ctx, "Yavin B"); err != nil {
		t.Fatal(err)
	}
	if err := store.SaveIdentity(ctx, old.Record("https://10.0.0.6:16125/localapi/v4", "certificate", time.Now())); err != nil {
		t.Fatal(err)
	}
	id, err := readIdentity(ctx, db, "")
	if err != nil || id.Instance != "Yavin B" || id.Pin != "" || !id.HTTPS || len(id.Addresses) != 0 {
		t.Fatalf("stored %+v, %v", id, err)
	}
}

// adopted advertises sim on the loopback interface under a fresh name
// starting with prefix, and returns that name, a fresh journal and a
// tracker with the trust every command reads, once it has adopted sim;
// all are closed when the test ends.
func adopted(t *testing.T, sim *terminalsim.Terminal, prefix string) (net.Interface, string, *journal.DB, *discovery.Tracker) {
	t.Helper()
	lo := testenv.Loopback(t)
	name := prefix + " " + time.Now().Format("150405.000000")
	advertise(t, sim, name, lo)
	db := testenv.Journal(t, "")
	tr, err := discovery.NewTracker(discovery.Config{
		Store: settingsStore{db}, Trust: identityStore{db: db}, Held: heldByOpenAttempts(db), ClientOptions: baseOptions(),
		Browse:          discovery.Options{Interfaces: []net.Interface{lo}, NameFilter: name, Port: -1, AcceptSimulated: true, Window: time.Second},
		ResolveInterval: 50 * time.Millisecond, SearchInterval: 100 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	testenv.Eventually(t, "adopted", func() bool { return tr.Status().Address == sim.URL() })
	return lo, name, db, tr
}
