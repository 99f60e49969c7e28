package terminalsim

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/localapi"
)

// control calls the control API and decodes its answer into out.
func control(t *testing.T, sim *Terminal, method, path, body string, out any) int {
	t.Helper()
	base := strings.TrimSuffix(sim.URL(), localapi.BasePath)
	req, err := http.NewRequestWithContext(testCtx(t), method, base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			t.Fatalf("%s %s: %v: %s", method, path, err, data)
		}
	}
	return resp.StatusCode
}

func TestControlAPI(t *testing.T) {
	sim, c := newSim(t, Config{CurrencyCode: "GBP"})
	ctx := testCtx(t)

	var help map[string]any
	if code := control(t, sim, "GET", "/sim/", "", &help); code != 200 || help["localApi"] != sim.URL() || len(help["testAmounts"].([]any)) != len(TestAmounts) {
		t.Errorf("help %d %v", code, help)
	}

	var st State
	control(t, sim, "GET", "/sim/state", "", &st)
	if st.CurrencyCode != "GBP" || st.Current != nil || !st.Paper || st.Script == nil || st.TimeScale != testScale {
		t.Errorf("state %+v", st)
	}

	// Script a behaviour, pay, read the ledger.
	if code := control(t, sim, "POST", "/sim/script", `{"behaviours": [{"preset": "approve", "tip": 300}], "default": {"preset": "decline"}}`, &st); code != 200 || len(st.Script) != 1 || st.Script[0].Tip != 300 || st.Default.Outcome != OutcomeDecline {
		t.Fatalf("script %d %+v", code, st)
	}
	tx := mustApproved(t, wait(t, ctx, payAsync(ctx, c, &localapi.PaymentRequest{Amount: 500, EnableGiftScreen: localapi.Bool(true)})))
	if tx.GiftAmount != 300 || tx.CurrencyCode != "GBP" {
		t.Errorf("scripted tip: %s", tx.Raw)
	}
	mustDeclined(t, wait(t, ctx, payAsync(ctx, c, &localapi.PaymentRequest{Amount: 500})))
	var ledger []LedgerEntry
	if control(t, sim, "GET", "/sim/ledger", "", &ledger); len(ledger) != 1 || ledger[0].Total != 800 || ledger[0].Currency != "GBP" {
		t.Errorf("ledger %+v", ledger)
	}

	// Printer and shares logs.
	var printed []Ticket
	if control(t, sim, "GET", "/sim/printed", "", &printed); printed == nil || len(printed) != 0 {
		t.Errorf("printed %+v", printed)
	}
	if _, err := c.Print(ctx, &localapi.PrintRequest{Data: "hello"}); err != nil {
		t.Fatal(err)
	}
	if control(t, sim, "GET", "/sim/printed", "", &printed); len(printed) != 1 || printed[0].Text != "hello" {
		t.Errorf("printed %+v", printed)
	}
	if _, err := c.ShareReceipt(ctx, &localapi.ShareReceiptRequest{TransactionID: tx.TransactionID, Medium: "sms", ReceiptTicket: &localapi.ReceiptTicket{Data: "r"}}); err != nil {
		t.Fatal(err)
	}
	var shares []Share
	if control(t, sim, "GET", "/sim/shares", "", &shares); len(shares) != 1 || shares[0].Medium != "sms" {
		t.Errorf("shares %+v", shares)
	}

	// Settings.
	control(t, sim, "POST", "/sim/settings", `{"paper": false, "tipsEnabled": true}`, &st)
	if st.Paper || !st.TipsEnabled {
		t.Errorf("settings %+v", st)
	}

	// Clock.
	var clock map[string]time.Time
	before := sim.Now()
	control(t, sim, "POST", "/sim/clock", `{"advance": "25h"}`, &clock)
	if d := clock["now"].Sub(before); d < 25*time.Hour || d > 26*time.Hour {
		t.Errorf("advanced by %v", d)
	}
	control(t, sim, "POST", "/sim/clock", `{"set": "2030-01-02T03:04:05Z"}`, &clock)
	if y := clock["now"].Year(); y != 2030 {
		t.Errorf("set clock: %v", clock["now"])
	}

	// A customer over the control API, with a keypad payment.
	control(t, sim, "POST", "/sim/settings", `{"tipsEnabled": false}`, &st)
	var kp map[string]string
	if code := control(t, sim, "POST", "/sim/keypad", `{"amount": 1200, "behaviour": {"preset": "hold"}}`, &kp); code != 200 || kp["idempotentUuid"] == "" {
		t.Fatalf("keypad %d %v", code, kp)
	}
	control(t, sim, "GET", "/sim/state", "", &st)
	if st.Current == nil || !st.Current.Keypad || st.Current.Amount != 1200 {
		t.Errorf("state during keypad payment %+v", st.Current)
	}
	var errAns map[string]string
	if code := control(t, sim, "POST", "/sim/customer", `{"action": "tip", "tip": 100}`, &errAns); code != http.StatusConflict || errAns["error"] == "" {
		t.Errorf("tip with the screens off: %d %v", code, errAns)
	}
	mustPhase(t, ctx, sim, kp["idempotentUuid"], PhaseBanking)
	if code := control(t, sim, "POST", "/sim/customer", `{"action": "present_card"}`, nil); code != 200 {
		t.Errorf("present card: %d", code)
	}
	if err := sim.WaitIdle(ctx); err != nil {
		t.Fatal(err)
	}

	// Bad requests.
	for _, tt := range []struct{ path, body string }{
		{"/sim/script", `{"behaviours": [{"preset": "nope"}]}`},
		{"/sim/script", `{"behavior": []}`},
		{"/sim/customer", `{"action": "dance"}`},
		{"/sim/clock", `{"advance": "tomorrow"}`},
		{"/sim/settings", `not json`},
		{"/sim/keypad", `{"amount": 0}`},
	} {
		if code := control(t, sim, "POST", tt.path, tt.body, &errAns); code < 400 || errAns["error"] == "" {
			t.Errorf("%s %s: %d %v", tt.path, tt.body, code, errAns)
		}
	}

	// Reset forgets everything.
	control(t, sim, "POST", "/sim/reset", "", &st)
	if st.Ledger != 0 || st.Printed != 0 || st.Shares != 0 || st.Transactions != 0 || !st.Paper || st.TipsEnabled || st.Default.Outcome != OutcomeApprove || st.Now.Year() == 2030 {
		t.Errorf("after reset %+v", st)
	}
}

func TestResetDuringPayment(t *testing.T) {
	sim, c := newSim(t, Config{})
	ctx := testCtx(t)
	id, res := payIn(t, ctx, sim, c, Hold(), 100, PhaseBanking)
	sim.Reset()
	mustDeclined(t, wait(t, ctx, res))
	if _, ok := sim.Current(); ok || len(sim.Ledger()) != 0 {
		t.Error("reset left a payment or a charge")
	}
	if _, ok := sim.Transaction(id); ok {
		t.Error("reset left the transaction known")
	}
}
