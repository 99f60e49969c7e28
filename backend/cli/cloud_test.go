package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/cloudapi"
	"github.com/comptoir-pos/comptoir/backend/cloudsim"
	"github.com/comptoir-pos/comptoir/backend/fault"
	"github.com/comptoir-pos/comptoir/backend/internal/testenv"
	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/kiosk"
	"github.com/comptoir-pos/comptoir/backend/payment"
	"github.com/comptoir-pos/comptoir/backend/staff"
	"github.com/comptoir-pos/comptoir/backend/staffapi"
)

// tinyCloud acknowledges every payment of terminal SN-1 and answers the
// poll with the outcome at once: approved.
func tinyCloud(t *testing.T, key string) *httptest.Server {
	t.Helper()
	var mu sync.Mutex
	amounts := map[string]float64{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if r.Header.Get("Authorization") != "Bearer "+key && r.Header.Get("Service-Secret") != key {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		switch r.URL.Path {
		case cloudapi.PathPayment:
			var b map[string]any
			_ = json.NewDecoder(r.Body).Decode(&b)
			if b["serialNumber"] != "SN-1" {
				w.WriteHeader(http.StatusBadRequest)
				fmt.Fprint(w, `{"status":"ko","message":"Terminal not found"}`)
				return
			}
			id := fmt.Sprintf("cl-%d", len(amounts)+1)
			amounts[id] = b["amount"].(float64)
			fmt.Fprintf(w, `{"status":"ok","transactionId":%q}`, id)
		case cloudapi.PathTransaction:
			id := r.URL.Query().Get("transactionId")
			fmt.Fprintf(w, `{"status":"ok","transactionId":%q,"amount":%d,"giftAmount":0}`, id, int64(amounts[id]))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestPayThroughTheCloudWithTheKeyFromTheEnvironment(t *testing.T) {
	const key = "sk_cloud_secret_42"
	srv := tinyCloud(t, key)
	dir := t.TempDir()
	t.Setenv(envCloudKey, key)
	var out, errOut bytes.Buffer
	if code := run([]string{"pay", "--cloud", srv.URL, "--serial", "SN-1", "--data-dir", dir, "--amount", "1250", "--order", "C1"}, &out, &errOut); code != 0 {
		t.Fatalf("pay: exit %d %s %s", code, out.String(), errOut.String())
	}
	var res payResult
	if err := json.Unmarshal(out.Bytes(), &res); err != nil || res.Status != "approved" || !res.OrderPaid {
		t.Fatalf("pay printed %s (%v)", out.String(), err)
	}
	out.Reset()
	if code := run([]string{"attempts", "--data-dir", dir}, &out, &errOut); code != 0 || !strings.Contains(out.String(), `"cloud"`) {
		t.Fatalf("attempts: exit %d %s", code, out.String())
	}
	// An unknown serial: refused by the cloud, nothing charged, exit 1.
	out.Reset()
	if code := run([]string{"pay", "--cloud", srv.URL, "--serial", "SN-9", "--data-dir", dir, "--amount", "500"}, &out, &errOut); code != 1 || !strings.Contains(out.String(), "Terminal not found") {
		t.Fatalf("unknown serial: exit %d %s", code, out.String())
	}
	if strings.Contains(out.String()+errOut.String(), key) {
		t.Fatal("the key was printed")
	}
}

func TestTheCloudKeyIsNeverShown(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(envCloudKey, "")
	var out, errOut bytes.Buffer
	if code := run([]string{"pay", "--cloud", "https://cloud.example.test", "--serial", "SN-1", "--data-dir", dir, "--amount", "100"}, &out, &errOut); code == 0 || !strings.Contains(errOut.String(), envCloudKey) {
		t.Fatalf("no key: exit %d %s", code, errOut.String())
	}
	stdin = strings.NewReader("sk_in_journal_77\n")
	defer func() { stdin = os.Stdin }()
	if code := run([]string{"settings", "--data-dir", dir, "set-secret", settingCloudKey}, &out, &errOut); code != 0 {
		t.Fatalf("set-secret: %s", errOut.String())
	}
	out.Reset()
	run([]string{"settings", "--data-dir", dir, "list"}, &out, &errOut)
	run([]string{"settings", "--data-dir", dir, "get", settingCloudKey}, &out, &errOut)
	if strings.Contains(out.String(), "sk_in_journal_77") || !strings.Contains(out.String(), "hidden") {
		t.Fatalf("settings showed the key: %s", out.String())
	}
}

// The kiosk screens on the cloud channel: an order paid through the
// provider's cloud, the order paid in the journal.
func TestTheKioskPaysThroughTheCloud(t *testing.T) {
	const key = "sk_cloud_kiosk"
	srv := tinyCloud(t, key)
	t.Setenv(envCloudKey, key)
	ctx := context.Background()
	stack, err := startKiosk(ctx, commonFlags{cloudURL: srv.URL, serial: "SN-1", dataDir: t.TempDir()}, payment.DefaultLimits,
		kiosk.NewRelay(nil), warnLogger(io.Discard))
	if err != nil {
		t.Fatal(err)
	}
	defer stack.Close()
	openKiosk(t, stack)
	kioskPays(t, stack, kiosk.PhaseApproved)
	if tv := stack.Svc.Terminal(); !strings.Contains(tv.Name, "SN-1") {
		t.Fatalf("terminal view %+v", tv)
	}
}

// Staff choose the cloud for the next start; the key is kept but never
// shown, and the next start pays through the cloud without a flag.
func TestStaffChooseTheCloudForTheNextStart(t *testing.T) {
	const key = "sk_saved_by_staff"
	srv := tinyCloud(t, key)
	t.Setenv(envCloudKey, "")
	ctx := context.Background()
	c := newControl(t, &terminalLink{how: "address", url: "http://10.0.0.5:16125/localapi/v4"})
	for _, bad := range []staffapi.CloudChoice{
		{On: true, URL: srv.URL, Serial: "", Key: key},
		{On: true, URL: srv.URL, Serial: "SN-1"}, // no key saved yet
		{On: true, URL: "http://cloud.example.com", Serial: "SN-1", Key: key},
	} {
		if err := c.SetCloud(ctx, bad); fault.CodeOf(err) != staff.EINVALID {
			t.Fatalf("%+v: %v", bad, err)
		}
	}
	if info := c.Info(ctx); info.Channel != "local" || info.Cloud.KeySet || info.Cloud.On {
		t.Fatalf("after refusals: %+v", info)
	}
	if err := c.SetCloud(ctx, staffapi.CloudChoice{On: true, URL: srv.URL, Serial: "SN-1", Key: key}); err != nil {
		t.Fatal(err)
	}
	info := c.Info(ctx)
	if info.Channel != "cloud" || info.Cloud.Serial != "SN-1" || !info.Cloud.KeySet || !info.RestartRequired || !info.Cloud.On || info.Cloud.LANFirst {
		t.Fatalf("after choosing the cloud: %+v", info)
	}
	raw, _ := json.Marshal(info)
	if strings.Contains(string(raw), key) {
		t.Fatalf("the key is in the panel: %s", raw)
	}
	// The next start, without flags, pays through the cloud.
	flags := commonFlags{dataDir: t.TempDir()}
	cloudDB := c.db
	if err := cloudFromSettings(ctx, &flags, cloudDB); err != nil || flags.cloudURL != srv.URL || flags.serial != "SN-1" {
		t.Fatalf("from settings: %+v %v", flags, err)
	}
	// A flag wins over the saved channel.
	withFlag := commonFlags{terminal: "10.0.0.9"}
	if err := cloudFromSettings(ctx, &withFlag, cloudDB); err != nil || withFlag.cloudURL != "" {
		t.Fatalf("--terminal lost to the saved cloud: %+v", withFlag)
	}
	// Back to the LAN keeps the cloud terminal for later.
	if err := c.SetCloud(ctx, staffapi.CloudChoice{On: false}); err != nil {
		t.Fatal(err)
	}
	if info := c.Info(ctx); info.Channel != "local" || info.Cloud.Serial != "SN-1" {
		t.Fatalf("back to the LAN: %+v", info)
	}
}

// The kiosk on the simulated cloud, with its real log file: an approved
// payment, then a refused key on the poll and a lost acknowledgement. The
// key appears nowhere in the log or on stderr.
func TestTheKioskOnTheSimulatedCloudNeverLogsTheKey(t *testing.T) {
	const key = "sk_live_never_in_a_log_0042"
	cloud, _ := testenv.Cloud(t, cloudsim.Config{Key: key, Serials: []string{"SN-1"}, TimeScale: 0.01})
	defer cloud.Close()
	t.Setenv(envCloudKey, key)
	dir := t.TempDir()
	var stderr syncBuffer
	logger, closer := kioskLogger(dir, &stderr)
	defer closer.Close()
	ctx := context.Background()
	lim := payment.DefaultLimits
	lim.KioskTimeout = 2 * time.Second
	stack, err := startKiosk(ctx, commonFlags{cloudURL: cloud.URL(), serial: "SN-1", dataDir: dir}, lim, kiosk.NewRelay(nil), logger)
	if err != nil {
		t.Fatal(err)
	}
	defer stack.Close()
	openKiosk(t, stack)
	kioskPays(t, stack, kiosk.PhaseApproved)
	stack.Svc.Finish()
	if err := cloud.Inject(
		cloudsim.Fault{Path: cloudsim.PathPayment, After: true},      // the acknowledgement is lost
		cloudsim.Fault{Path: cloudsim.PathTransactions, Status: 401}, // then the history refuses the key once
	); err != nil {
		t.Fatal(err)
	}
	kioskPays(t, stack, kiosk.PhaseApproved)
	if n := len(cloud.Transactions()); n != 2 {
		t.Fatalf("%d cloud transactions, want 2", n)
	}
	logs, err := os.ReadFile(filepath.Join(dir, "logs", "comptoir.log"))
	if err != nil || len(logs) == 0 {
		t.Fatalf("no log: %v", err)
	}
	// The log speaks of the failures it must not leak the key in.
	if !bytes.Contains(logs, []byte("HTTP 401")) || !bytes.Contains(logs, []byte("/v5/pos/payment")) {
		t.Fatalf("the log does not tell the lost acknowledgement and the refused key:\n%s", logs)
	}
	if bytes.Contains(logs, []byte(key)) || strings.Contains(stderr.String(), key) {
		t.Fatal("the API key is in the log")
	}
}

func TestPayOnTheBuiltInSimulatedCloud(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run([]string{"pay", "--demo-cloud", "--data-dir", t.TempDir(), "--amount", "990", "--order", "D1"}, &out, &errOut); code != 0 {
		t.Fatalf("pay --demo-cloud: exit %d %s %s", code, out.String(), errOut.String())
	}
	var res payResult
	if err := json.Unmarshal(out.Bytes(), &res); err != nil || res.Status != "approved" || !strings.HasPrefix(res.TransactionID, "trs_") {
		t.Fatalf("pay printed %s (%v)", out.String(), err)
	}
}

// syncBuffer is output a logger or a process writes while the test reads it.
type syncBuffer = testenv.Buffer

// openKiosk sets the staff PIN, which opens the kiosk to customers.
func openKiosk(t *testing.T, stack *Stack) {
	t.Helper()
	r, err := stack.Staff.Call(context.Background(), "SetPIN", []json.RawMessage{json.RawMessage(`"4829"`)})
	if err != nil || !r.OK {
		t.Fatalf("SetPIN: %v %+v", err, r.Error)
	}
}

// kioskPays orders a croissant at the kiosk, pays by card and waits for
// the phase the payment should end in.
func kioskPays(t *testing.T, stack *Stack, want kiosk.Phase) {
	t.Helper()
	testenv.Eventually(t, "the kiosk open", func() bool { return stack.Svc.Checkout().Phase == kiosk.PhaseWelcome })
	stack.Svc.Start("en")
	stack.Svc.ChooseDining(kiosk.DiningEatIn)
	stack.Svc.AddItem("croissant", 2)
	if v, _ := stack.Svc.Pay(kiosk.MethodCard); v.Phase != kiosk.PhasePaying {
		t.Fatalf("pay: %+v", v)
	}
	testenv.Eventually(t, string(want), func() bool { return stack.Svc.Checkout().Phase == want })
}

// The cart operations of payment links go where the settings say; a
// setting that does not read as "METHOD /path" leaves the default.
func TestLinkEndpointsComeFromTheSettings(t *testing.T) {
	ctx := t.Context()
	db, err := journal.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	store := settingsStore{db}
	if err := store.Set(ctx, settingLinkCart, "POST /shop/cart/"); err != nil {
		t.Fatal(err)
	}
	if err := store.Set(ctx, settingLinkCancel, "cancel it please"); err != nil {
		t.Fatal(err)
	}
	var logged strings.Builder
	e := linkEndpoints(ctx, db, slog.New(slog.NewTextHandler(&logged, nil)))
	if e.Cart.String() != "POST /shop/cart/" || e.Cancel != cloudapi.DefaultLinkEndpoints.Cancel || e.Capture != cloudapi.DefaultLinkEndpoints.Capture {
		t.Fatalf("endpoints %+v", e)
	}
	if !strings.Contains(logged.String(), settingLinkCancel) {
		t.Fatalf("the ignored setting is not in the log: %s", logged.String())
	}
}
