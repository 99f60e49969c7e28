package cli

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/comptoir-pos/comptoir/backend/discovery"
	"github.com/comptoir-pos/comptoir/backend/fault"
	"github.com/comptoir-pos/comptoir/backend/internal/testenv"
	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/kiosk"
	"github.com/comptoir-pos/comptoir/backend/payment"
	"github.com/comptoir-pos/comptoir/backend/settings"
	"github.com/comptoir-pos/comptoir/backend/staff"
	"github.com/comptoir-pos/comptoir/backend/staffapi"
)

func newControl(t *testing.T, link *terminalLink) *terminalControl {
	t.Helper()
	db, err := journal.OpenMemory(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return &terminalControl{link: link, db: db}
}

func TestManualAddressSavedOnlyWhenATerminalAnswers(t *testing.T) {
	ctx := context.Background()
	c := newControl(t, &terminalLink{how: "discovery", instance: "Yavin A", url: "http://10.0.0.5:16125/localapi/v4"})
	c.ping = func(context.Context, string) error { return errors.New("connection refused") }
	err := c.SetAddress(ctx, "10.0.0.9:16125")
	if fault.CodeOf(err) != staff.ETERMINAL {
		t.Fatalf("an address where nothing answers: %v", err)
	}
	if c.saved(ctx).Address != "" {
		t.Fatal("an address where nothing answers was saved")
	}
	if err := c.SetAddress(ctx, "http://"); fault.CodeOf(err) != staff.EINVALID {
		t.Fatalf("not an address: %v", err)
	}

	var pinged string
	c.ping = func(_ context.Context, a string) error { pinged = a; return nil }
	if err := c.SetAddress(ctx, "10.0.0.9:16125"); err != nil {
		t.Fatal(err)
	}
	info := c.Info(ctx)
	if info.Saved.Address != pinged || pinged == "" || !info.RestartRequired {
		t.Fatalf("saved %+v, pinged %q", info, pinged)
	}

	// Choosing a discovered terminal goes back to discovery: the manual
	// address is forgotten.
	if err := c.Choose(ctx, "Yavin A"); err != nil {
		t.Fatal(err)
	}
	if info := c.Info(ctx); info.Saved.Address != "" || info.Saved.Instance != "Yavin A" || info.RestartRequired {
		t.Fatalf("after choosing the terminal in use: %+v", info)
	}
	if err := c.Choose(ctx, "Yavin B"); err != nil {
		t.Fatal(err)
	}
	if !c.Info(ctx).RestartRequired {
		t.Fatal("another terminal saved, yet no restart required")
	}
	if err := c.Choose(ctx, "  "); fault.CodeOf(err) != staff.EINVALID {
		t.Fatalf("empty choice: %v", err)
	}
}

// TestSavedAddressIsUsedAtStart: the next start uses the address staff
// saved instead of discovery.
func TestSavedAddressIsUsedAtStart(t *testing.T) {
	ctx := context.Background()
	db, err := journal.OpenMemory(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := (settingsStore{db}).Set(ctx, settingTerminalAddress, "http://127.0.0.1:16125/localapi/v4"); err != nil {
		t.Fatal(err)
	}
	link, err := openTerminal(ctx, commonFlags{}, db, false)
	if err != nil {
		t.Fatal(err)
	}
	defer link.stop()
	if link.how != "address" || link.url != "http://127.0.0.1:16125/localapi/v4" || link.tracker != nil {
		t.Fatalf("link %+v", link)
	}
}

func TestCloseAllowed(t *testing.T) {
	for _, c := range []struct {
		quitting, running bool
		mode              string
		windowed          bool
		phase             kiosk.Phase
		want              bool
	}{
		{false, true, "kiosk", false, kiosk.PhaseWelcome, false},
		{false, true, "kiosk", false, kiosk.PhaseOrdering, false},
		{true, true, "kiosk", false, kiosk.PhasePaying, true},
		{false, false, "", false, "", true},
		{false, true, "counter", false, kiosk.PhaseWelcome, true},
		{false, true, "counter", false, kiosk.PhasePaying, false},
		{false, true, "counter", false, kiosk.PhaseCanceling, false},
		{false, true, "kiosk", true, kiosk.PhaseWelcome, true},
		{false, true, "kiosk", true, kiosk.PhasePaying, false},
	} {
		if got := closeAllowed(c.quitting, c.running, c.mode, c.windowed, c.phase); got != c.want {
			t.Errorf("closeAllowed(%v, %v, %q, %v, %q) = %v, want %v", c.quitting, c.running, c.mode, c.windowed, c.phase, got, c.want)
		}
	}
}

// TestNoTerminalListsWhatTheNetworkOffers: staff mode without a kiosk
// lists the confirmed terminals found, and a choice asks for a restart.
func TestNoTerminalListsWhatTheNetworkOffers(t *testing.T) {
	ctx := context.Background()
	c := newControl(t, &terminalLink{how: "none"})
	c.browse = func(context.Context) ([]discovery.Terminal, error) {
		return []discovery.Terminal{
			{Instance: "Yavin A", BaseURL: "http://10.0.0.5:16125/localapi/v4", Confirmed: true},
			{Instance: "Printer", BaseURL: "http://10.0.0.7:80/localapi/v4"},
			{Instance: "Yavin B", BaseURL: "http://10.0.0.6:16125/localapi/v4", Confirmed: true},
		}, nil
	}
	info := c.Info(ctx)
	if len(info.Candidates) != 2 || info.Candidates[1].Instance != "Yavin B" || info.RestartRequired {
		t.Fatalf("info %+v", info)
	}
	if err := c.Choose(ctx, "Yavin B"); err != nil {
		t.Fatal(err)
	}
	if info := c.Info(ctx); !info.RestartRequired || info.Saved.Instance != "Yavin B" {
		t.Fatalf("after the choice: %+v", info)
	}
}

func TestStartsFramelessUnlessCounterOrWindowed(t *testing.T) {
	dir := t.TempDir()
	flags := commonFlags{dataDir: dir}
	if !(&Desktop{flags: flags}).Frameless() {
		t.Fatal("a fresh install is a kiosk: frameless")
	}
	db, err := journal.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.SetSetting(context.Background(), settings.SettingMode, []byte(`"counter"`)); err != nil {
		t.Fatal(err)
	}
	// Read while the journal is open elsewhere (it holds the lock).
	if (&Desktop{flags: flags}).Frameless() {
		t.Fatal("counter mode must keep its frame")
	}
	if err := db.SetSetting(context.Background(), settings.SettingMode, []byte(`"kiosk"`)); err != nil {
		t.Fatal(err)
	}
	if !(&Desktop{flags: flags}).Frameless() {
		t.Fatal("kiosk mode: frameless")
	}
	flags.windowed = true
	if (&Desktop{flags: flags}).Frameless() {
		t.Fatal("--windowed keeps the frame")
	}
}

// TestNoOrderBeforeTheStaffPIN: a kiosk on a real terminal takes no order
// until the staff PIN is set; setting it from the PIN pad opens it.
func TestNoOrderBeforeTheStaffPIN(t *testing.T) {
	sim := startSim(t)
	ctx := context.Background()
	stack, err := startKiosk(ctx, commonFlags{terminal: sim.URL(), dataDir: t.TempDir()}, payment.DefaultLimits,
		kiosk.NewRelay(nil), warnLogger(io.Discard))
	if err != nil {
		t.Fatal(err)
	}
	defer stack.Close()
	testenv.Eventually(t, "the kiosk held", func() bool { return stack.Svc.Terminal().Problem == staffapi.NoPINHold })
	if v, _ := stack.Svc.Start("en"); v.Phase == kiosk.PhaseDining {
		t.Fatal("an order started without a staff PIN")
	}
	r, err := stack.Staff.Call(ctx, "SetPIN", []json.RawMessage{json.RawMessage(`"4829"`)})
	if err != nil || !r.OK {
		t.Fatalf("SetPIN: %v %+v", err, r.Error)
	}
	testenv.Eventually(t, "the kiosk open", func() bool { return stack.Svc.Checkout().Phase == kiosk.PhaseWelcome })
	if v, _ := stack.Svc.Start("en"); v.Phase != kiosk.PhaseDining {
		t.Fatalf("after the PIN was set: phase %s (%s)", v.Phase, stack.Svc.Terminal().Problem)
	}
}

// TestSavedChoiceWarnsOfStrandedAttempts: an unfinished attempt sent to the
// terminal in use cannot be resent to another one; saving another choice
// says so.
func TestSavedChoiceWarnsOfStrandedAttempts(t *testing.T) {
	ctx := context.Background()
	c := newControl(t, &terminalLink{how: "discovery", instance: "Yavin A", url: "http://10.0.0.5:16125/localapi/v4"})
	c.ping = func(context.Context, string) error { return nil }
	if err := c.db.CreateOrder(ctx, journal.Order{ID: "o-1", Currency: "EUR", Total: 500}); err != nil {
		t.Fatal(err)
	}
	uuid := "01a20000-0000-7000-8000-000000000042"
	body := `{"amount":500,"transactionType":"debit","idempotentUuid":"` + uuid + `","cartId":"o-1"}`
	if _, err := c.db.PrepareAttempt(ctx, journal.Attempt{UUID: uuid, OrderID: "o-1", Kind: journal.KindDebit, Amount: 500,
		Policy: journal.PolicyKiosk, Terminal: "mdns:Yavin A", RequestBody: []byte(body)}); err != nil {
		t.Fatal(err)
	}
	if err := c.Choose(ctx, "Yavin A"); err != nil {
		t.Fatal(err)
	}
	if note := c.Info(ctx).Note; strings.Contains(note, "Careful") {
		t.Fatalf("the terminal in use, saved again, warns: %q", note)
	}
	if err := c.SetAddress(ctx, "10.0.0.5"); err != nil {
		t.Fatal(err)
	}
	if note := c.Info(ctx).Note; !strings.Contains(note, "Careful: 1 unfinished payment") {
		t.Fatalf("the same terminal by address: no warning that its attempt cannot be resent: %q", note)
	}
}
