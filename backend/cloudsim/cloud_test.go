package cloudsim_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/cloudapi"
	"github.com/comptoir-pos/comptoir/backend/cloudsim"
	"github.com/comptoir-pos/comptoir/backend/internal/testenv"
	"github.com/comptoir-pos/comptoir/backend/terminalsim"
)

const serial = "SN-TEST-1"

// startApproving runs a cloud with one terminal whose customer pays at
// once.
func startApproving(t *testing.T) (*cloudsim.Cloud, *cloudapi.Client, *terminalsim.Terminal) {
	t.Helper()
	approve := terminalsim.Approve()
	approve.Delay = 0
	return start(t, cloudsim.Config{Terminal: terminalsim.Config{Default: &approve}})
}

// start runs a cloud with one terminal whose customer waits for the test.
func start(t *testing.T, cfg cloudsim.Config) (*cloudsim.Cloud, *cloudapi.Client, *terminalsim.Terminal) {
	t.Helper()
	if cfg.Serials == nil {
		cfg.Serials = []string{serial}
	}
	if cfg.TimeScale == 0 {
		cfg.TimeScale = 0.01
	}
	if cfg.Terminal.Default == nil {
		hold := terminalsim.Behaviour{Hold: true}
		cfg.Terminal.Default = &hold
	}
	c, cl := testenv.Cloud(t, cfg)
	term, _ := c.Terminal(serial)
	return c, cl, term
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func body(t *testing.T, v map[string]any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func debit(uuid string, amount int64) map[string]any {
	return map[string]any{"serialNumber": serial, "amount": amount, "idempotentUuid": uuid, "cartId": "order-1", "checkoutExternalId": uuid}
}

func TestPaymentAcknowledgedThenPolledThenOnTheWebhook(t *testing.T) {
	var mu sync.Mutex
	var hooks []cloudsim.Transaction
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var tx cloudsim.Transaction
		_ = json.NewDecoder(r.Body).Decode(&tx)
		mu.Lock()
		hooks = append(hooks, tx)
		mu.Unlock()
	}))
	defer hook.Close()
	c, cl, term := start(t, cloudsim.Config{WebhookURL: hook.URL})
	ctx := ctxT(t)

	ack, err := cl.Payment(ctx, body(t, debit("u-1", 1250)))
	if err != nil || ack.Status != "ok" || ack.TransactionID == "" {
		t.Fatalf("ack = %+v, %v", ack, err)
	}
	if err := term.WaitPhase(ctx, "u-1", terminalsim.PhaseBanking); err != nil {
		t.Fatal(err)
	}
	tx, err := cl.Transaction(ctx, ack.TransactionID)
	if err != nil || tx.Status != "pending" {
		t.Fatalf("poll during the payment = %+v, %v", tx, err)
	}
	if err := term.PresentCard(); err != nil {
		t.Fatal(err)
	}
	done, err := c.Wait(ctx, "u-1")
	if err != nil || done.Status != "ok" {
		t.Fatalf("outcome = %+v, %v", done, err)
	}
	tx, err = cl.Transaction(ctx, ack.TransactionID)
	if err != nil || tx.Status != "ok" || tx.Amount != 1250 || tx.TransactionID != ack.TransactionID || tx.LocalID == "" || tx.LocalID == tx.TransactionID {
		t.Fatalf("poll after = %+v, %v", tx, err)
	}
	if len(term.ChargesFor("u-1")) != 1 {
		t.Fatalf("terminal ledger = %+v", term.Ledger())
	}
	if err := c.WaitFor(ctx, func([]cloudsim.Transaction) bool { _, _, ds := c.Webhook(); return len(ds) == 1 }); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(hooks) != 1 || hooks[0].TransactionID != ack.TransactionID || hooks[0].Status != "ok" || hooks[0].CheckoutExternalID != "u-1" {
		t.Fatalf("webhook = %+v", hooks)
	}
}

func TestSameUUIDIsOneTransactionAndOneCharge(t *testing.T) {
	c, cl, term := start(t, cloudsim.Config{})
	ctx := ctxT(t)
	a1, err := cl.Payment(ctx, body(t, debit("u-2", 500)))
	if err != nil {
		t.Fatal(err)
	}
	a2, err := cl.Payment(ctx, body(t, debit("u-2", 500)))
	if err != nil || a2.TransactionID != a1.TransactionID {
		t.Fatalf("resend = %+v, %v; want the same transaction %s", a2, err, a1.TransactionID)
	}
	if err := term.WaitPhase(ctx, "u-2", terminalsim.PhaseBanking); err != nil {
		t.Fatal(err)
	}
	if err := term.PresentCard(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Wait(ctx, "u-2"); err != nil {
		t.Fatal(err)
	}
	if n := len(term.ChargesFor("u-2")); n != 1 {
		t.Fatalf("%d charges for one uuid", n)
	}
	// A completed ok holds its checkoutExternalId: a new attempt with it is refused.
	reuse := debit("u-3", 500)
	reuse["checkoutExternalId"] = "u-2"
	var ae *cloudapi.APIError
	if _, err := cl.Payment(ctx, body(t, reuse)); !errors.As(err, &ae) || ae.Status != 400 {
		t.Fatalf("reused checkoutExternalId: %v", err)
	}
}

func TestAuthenticationAndContentType(t *testing.T) {
	c, _, _ := start(t, cloudsim.Config{Key: "right"})
	ctx := ctxT(t)
	wrong, _ := cloudapi.New(c.URL(), "wrong")
	var au *cloudapi.AuthError
	if _, err := wrong.Payment(ctx, body(t, debit("u-4", 100))); !errors.As(err, &au) {
		t.Fatalf("wrong key on v5: %v", err)
	}
	if _, err := wrong.Abort(ctx, serial, "u-4"); !errors.As(err, &au) {
		t.Fatalf("wrong key on v4: %v", err)
	}
	right, _ := cloudapi.New(c.URL(), "right")
	other := debit("u-4", 100)
	other["serialNumber"] = "NOT-OURS"
	if _, err := right.Payment(ctx, body(t, other)); !errors.As(err, &au) {
		t.Fatalf("a terminal of another company: %v", err)
	}
	var ae *cloudapi.APIError
	if _, err := right.Payment(ctx, body(t, map[string]any{"serialNumber": serial, "amount": 0})); !errors.As(err, &ae) || ae.Status != 400 || ae.Message == "" {
		t.Fatalf("amount 0: %v", err)
	}

	send := func(path string, h http.Header) int {
		req, _ := http.NewRequest(http.MethodPost, c.URL()+path, bytes.NewReader(body(t, debit("u-5", 100))))
		req.Header = h
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := send(cloudsim.PathPayment, http.Header{"Authorization": {"Bearer right"}}); code != 400 {
		t.Fatalf("without Content-Type: HTTP %d, want 400", code)
	}
	if code := send(cloudsim.PathPayment, http.Header{"Service-Secret": {"right"}, "Content-Type": {"application/json"}}); code != 401 {
		t.Fatalf("v5 with the v4 header: HTTP %d, want 401", code)
	}
	if n := len(c.Transactions()); n != 0 {
		t.Fatalf("refused requests made %d transactions", n)
	}
}

func TestOfflineTerminalExpiresAndChargesNothing(t *testing.T) {
	var hooked sync.WaitGroup
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hooked.Add(1) }))
	defer hook.Close()
	c, cl, term := start(t, cloudsim.Config{WebhookURL: hook.URL})
	ctx := ctxT(t)
	if err := c.SetOnline(serial, false); err != nil {
		t.Fatal(err)
	}
	ack, err := cl.Payment(ctx, body(t, debit("u-6", 700)))
	if err != nil || ack.Status != "ok" {
		t.Fatalf("ack = %+v, %v", ack, err)
	}
	done, err := c.Wait(ctx, "u-6")
	if err != nil || done.Status != cloudsim.StatusExpired {
		t.Fatalf("outcome = %+v, %v", done, err)
	}
	tx, err := cl.Transaction(ctx, ack.TransactionID)
	if err != nil || tx.Status != "expired" {
		t.Fatalf("poll = %+v, %v", tx, err)
	}
	// Coming back online does not deliver it: never retransmitted.
	_ = c.SetOnline(serial, true)
	if st := term.State(); st.Current != nil || st.Ledger != 0 {
		t.Fatalf("terminal after an expired action: %+v", st)
	}
	page, err := cl.Transactions(ctx, cloudapi.TransactionsRequest{SerialNumbers: []string{serial}})
	if err != nil || page.Total != 0 {
		t.Fatalf("history lists an expired action: %+v, %v", page, err)
	}
	if _, _, ds := c.Webhook(); len(ds) != 0 {
		t.Fatalf("webhook for an expired action: %+v", ds)
	}
	// The other answers the specification leaves open.
	for _, mode := range []string{cloudsim.PollPending, cloudsim.PollNotFound} {
		if err := c.SetExpiredPoll(mode); err != nil {
			t.Fatal(err)
		}
		tx, err := cl.Transaction(ctx, ack.TransactionID)
		switch mode {
		case cloudsim.PollPending:
			if err != nil || tx.Status != "pending" {
				t.Fatalf("%s: %+v, %v", mode, tx, err)
			}
		case cloudsim.PollNotFound:
			var he *cloudapi.HTTPError
			if !errors.As(err, &he) || he.Status != 404 {
				t.Fatalf("%s: %v", mode, err)
			}
		}
	}
	// A v4 form to an offline terminal says it was not delivered.
	_ = c.SetOnline(serial, false)
	var ae *cloudapi.APIError
	if _, err := cl.Print(ctx, serial, "hello", "text"); !errors.As(err, &ae) {
		t.Fatalf("print to an offline terminal: %v", err)
	}
}

func TestLostAcknowledgementStillRunsAndIsInTheHistory(t *testing.T) {
	c, cl, term := start(t, cloudsim.Config{})
	ctx := ctxT(t)
	c.LoseNextAck()
	_, err := cl.Payment(ctx, body(t, debit("u-7", 900)))
	var te *cloudapi.TransportError
	if !errors.As(err, &te) || !te.Sent {
		t.Fatalf("lost acknowledgement: %v", err)
	}
	if err := term.WaitPhase(ctx, "u-7", terminalsim.PhaseBanking); err != nil {
		t.Fatal(err)
	}
	if err := term.PresentCard(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Wait(ctx, "u-7"); err != nil {
		t.Fatal(err)
	}
	page, err := cl.Transactions(ctx, cloudapi.TransactionsRequest{SerialNumbers: []string{serial}, Timezone: "UTC",
		StartDate: time.Now().UTC().Add(-time.Hour).Format("2006-01-02")})
	if err != nil || len(page.Transactions) != 1 {
		t.Fatalf("history = %+v, %v", page, err)
	}
	e := page.Transactions[0]
	if e.Status != "ok" || e.IdempotentUUID != "u-7" || e.CheckoutExternalID != "u-7" || e.CartID != "order-1" || e.Amount != 900 {
		t.Fatalf("entry = %+v", e)
	}
	c.SetHistoryIDs(false)
	page, err = cl.Transactions(ctx, cloudapi.TransactionsRequest{SerialNumbers: []string{serial}})
	if err != nil || len(page.Transactions) != 1 || page.Transactions[0].IdempotentUUID != "" || page.Transactions[0].CartID != "order-1" {
		t.Fatalf("history without ids = %+v, %v", page, err)
	}
	page, err = cl.Transactions(ctx, cloudapi.TransactionsRequest{SerialNumbers: []string{"OTHER"}})
	if err != nil || page.Total != 0 {
		t.Fatalf("another serial's history = %+v, %v", page, err)
	}
}

func TestAbortBeforeTheHandoverChargesNothing(t *testing.T) {
	hold := terminalsim.Behaviour{HoldHandover: true, Hold: true}
	c, cl, term := start(t, cloudsim.Config{Terminal: terminalsim.Config{Default: &hold}})
	ctx := ctxT(t)
	if _, err := cl.Payment(ctx, body(t, debit("u-8", 300))); err != nil {
		t.Fatal(err)
	}
	if err := term.WaitFor(ctx, func(s terminalsim.State) bool { return s.Current != nil && s.Current.IdempotentUUID == "u-8" }); err != nil {
		t.Fatal(err)
	}
	st, err := cl.Abort(ctx, serial, "u-8")
	if err != nil || st.Status != "ok" {
		t.Fatalf("abort = %+v, %v", st, err)
	}
	done, err := c.Wait(ctx, "u-8")
	if err != nil || done.Status != "ko" {
		t.Fatalf("outcome = %+v, %v", done, err)
	}
	if n := len(term.ChargesFor("u-8")); n != 0 {
		t.Fatalf("aborted payment charged %d times", n)
	}
}

func TestReversalThroughTheCloud(t *testing.T) {
	c, cl, term := startApproving(t)
	ctx := ctxT(t)
	ack, err := cl.Payment(ctx, body(t, debit("u-9", 2000)))
	if err != nil {
		t.Fatal(err)
	}
	if done, err := c.Wait(ctx, "u-9"); err != nil || done.Status != "ok" {
		t.Fatalf("outcome = %+v, %v", done, err)
	}
	rb, _ := json.Marshal(cloudapi.ReversalRequest{Amount: 2000, InitialTransactionID: ack.TransactionID})
	// The terminal's answer to the cloud is lost: the cloud reads the
	// terminal's ledger, as the real one learns it from the terminal.
	if err := term.FailNextReversalAnswers(terminalsim.AnswerLost); err != nil {
		t.Fatal(err)
	}
	r, err := cl.Reversal(ctx, rb)
	if err != nil || r.ReversalTransactionID == "" || r.InitialTransactionID != ack.TransactionID {
		t.Fatalf("reversal = %+v, %v", r, err)
	}
	var kinds []string
	for _, e := range term.Ledger() {
		kinds = append(kinds, e.Kind)
	}
	if len(kinds) != 2 || kinds[1] != "reversal" {
		t.Fatalf("terminal ledger kinds = %v", kinds)
	}
	var ae *cloudapi.APIError
	if _, err := cl.Reversal(ctx, rb); !errors.As(err, &ae) || ae.Message == "" {
		t.Fatalf("second reversal: %v", err)
	}
	if len(term.Ledger()) != 2 {
		t.Fatalf("a second reversal moved money: %+v", term.Ledger())
	}
}

func TestWebhookRetriesThenDeactivates(t *testing.T) {
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/elsewhere", http.StatusFound) // a redirect is a failure
	}))
	defer hook.Close()
	approve := terminalsim.Approve()
	approve.Delay = 0
	c, cl, _ := start(t, cloudsim.Config{WebhookURL: hook.URL, TimeScale: 0.00001, Terminal: terminalsim.Config{Default: &approve, TimeScale: 0.01}})
	ctx := ctxT(t)
	if _, err := cl.Payment(ctx, body(t, debit("u-10", 100))); err != nil {
		t.Fatal(err)
	}
	err := c.WaitFor(ctx, func([]cloudsim.Transaction) bool { _, off, _ := c.Webhook(); return off })
	if err != nil {
		t.Fatal(err)
	}
	_, _, ds := c.Webhook()
	if len(ds) != 1+len(cloudsim.DefaultWebhookRetries) {
		t.Fatalf("%d deliveries, want the first and %d retries: %+v", len(ds), len(cloudsim.DefaultWebhookRetries), ds)
	}
	for i, d := range ds {
		if d.OK || d.Attempt != i || d.HTTPStatus != http.StatusFound {
			t.Fatalf("delivery %d = %+v", i, d)
		}
	}
}

func TestControlAPIReachesEachTerminal(t *testing.T) {
	c, _, _ := start(t, cloudsim.Config{})
	post := func(path, b string) *http.Response {
		resp, err := http.Post(c.URL()+path, "application/json", bytes.NewBufferString(b))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	if resp := post("/sim/terminals", `{"serial":"SN-2","online":false}`); resp.StatusCode != 200 {
		t.Fatalf("add terminal: HTTP %d", resp.StatusCode)
	}
	st := c.State()
	if len(st.Terminals) != 2 || st.Terminals[0].Serial != "SN-2" || st.Terminals[0].Online {
		t.Fatalf("state = %+v", st.Terminals)
	}
	resp, err := http.Get(c.URL() + "/sim/terminals/SN-2/sim/state")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var ts terminalsim.State
	if err := json.NewDecoder(resp.Body).Decode(&ts); err != nil || ts.Serial != "SN-2" {
		t.Fatalf("terminal control: %+v, %v", ts, err)
	}
	if resp := post("/sim/faults", `{"poll":"sometimes"}`); resp.StatusCode != 400 {
		t.Fatalf("a bad poll mode: HTTP %d", resp.StatusCode)
	}
	if resp := post("/sim/faults", `{"next":[{"path":"/v5/pos/payment","status":502}],"historyIds":false}`); resp.StatusCode != 200 {
		t.Fatalf("faults: HTTP %d", resp.StatusCode)
	}
	if st := c.State(); len(st.Faults.Next) != 1 || st.Faults.HistoryIDs {
		t.Fatalf("faults = %+v", st.Faults)
	}
	if resp := post("/sim/faults", `{"list":{"extra":-1}}`); resp.StatusCode != 400 {
		t.Fatalf("a negative list fault: HTTP %d", resp.StatusCode)
	}
	if resp := post("/sim/faults", `{"list":{"extra":3,"pad":10}}`); resp.StatusCode != 200 {
		t.Fatalf("list fault: HTTP %d", resp.StatusCode)
	}
	req, _ := http.NewRequest(http.MethodPost, c.URL()+cloudsim.PathTransactions, bytes.NewBufferString(`{"limit":2}`))
	req.Header.Set("Service-Secret", c.Key())
	req.Header.Set("Content-Type", "application/json")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var page struct {
		Count        int `json:"count"`
		Transactions []struct {
			Issuer string `json:"issuer"`
		} `json:"transactions"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&page); err != nil || page.Count != 3 || len(page.Transactions) != 3 || len(page.Transactions[0].Issuer) != 10 {
		t.Fatalf("a faulty page: %+v, %v", page, err)
	}
	if s := c.ListServed(); s.Pages != 1 || s.Bytes == 0 {
		t.Fatalf("served %+v", s)
	}
}

// debit_and_enrol: with an amount it charges like a debit; with 0 it only
// enrols the card. Both deliver a card token.
func TestDebitAndEnrol(t *testing.T) {
	c, cl, term := startApproving(t)
	ctx := ctxT(t)
	for _, amount := range []int64{0, 1500} {
		b := debit("enrol-"+strconv.FormatInt(amount, 10), amount)
		b["transactionType"] = "debit_and_enrol"
		if _, err := cl.Payment(ctx, body(t, b)); err != nil {
			t.Fatalf("amount %d: %v", amount, err)
		}
		done, err := c.Wait(ctx, b["idempotentUuid"].(string))
		if err != nil || done.Status != "ok" || done.CardToken == "" || done.TransactionType != "debit_and_enrol" {
			t.Fatalf("amount %d: %+v, %v", amount, done, err)
		}
	}
	if l := term.Ledger(); len(l) != 1 || l[0].Total != 1500 {
		t.Fatalf("ledger %+v: the enrolment alone charged, or the debit did not", l)
	}
	var ae *cloudapi.APIError
	if _, err := cl.Payment(ctx, body(t, map[string]any{"serialNumber": serial, "amount": -1, "transactionType": "debit_and_enrol"})); !errors.As(err, &ae) {
		t.Fatalf("a negative enrolment: %v", err)
	}
}
