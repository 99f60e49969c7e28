package payment

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/cloudapi"
	"github.com/comptoir-pos/comptoir/backend/journal"
)

// fakeCloud is a provider cloud over HTTP, as the Cloud API describes it,
// with one terminal: a payment is acknowledged with a server id and its
// outcome polled; what the terminal then does is the test's script.
type fakeCloud struct {
	t  testing.TB
	mu sync.Mutex
	// ack answers a payment: "ok" (default), "lost" (accepted, then the
	// connection drops before the answer), "400", "401", "offline"
	// (accepted, never delivered: pending for ever, in no history).
	ack string
	// outcome is the terminal's: "ok", "ko", or "" (pending until cancel
	// or release). afterCancel is the outcome once an abort arrived.
	outcome, afterCancel string
	// pollFails is how many polls are answered 401 before the others.
	pollFails int
	// listedAs, when set, is the status the history lists a transaction
	// under while it is pending (the poll still says pending).
	listedAs        string
	txs             []*fakeTx
	payments, polls int
	lists           int // pages of the history asked
	aborts          []string
	key             string
}

type fakeTx struct {
	id, uuid, extID, cartID, status, kind string
	amount                                int64
	delivered                             bool
}

func (f *fakeCloud) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	auth := r.Header.Get("Authorization") == "Bearer "+f.key
	if !strings.HasPrefix(r.URL.Path, "/v5/") {
		auth = r.Header.Get("Service-Secret") == f.key
	}
	if !auth || r.Header.Get("Content-Type") != "application/json" {
		http.Error(w, `{"status":"ko","message":"bad headers"}`, http.StatusUnauthorized)
		return
	}
	var body map[string]any
	_ = json.NewDecoder(r.Body).Decode(&body)
	str := func(k string) string { s, _ := body[k].(string); return s }
	switch r.URL.Path {
	case cloudapi.PathPayment:
		f.payments++
		switch f.ack {
		case "400":
			w.WriteHeader(400)
			fmt.Fprint(w, `{"status":"ko","message":"Terminal not found"}`)
			return
		case "401":
			w.WriteHeader(401)
			return
		}
		if str("serialNumber") != "SN-1" || str("checkoutExternalId") == "" {
			f.t.Errorf("payment body %v", body)
		}
		tx := &fakeTx{id: fmt.Sprintf("cl-%d", len(f.txs)+1), uuid: str("idempotentUuid"), extID: str("checkoutExternalId"),
			cartID: str("cartId"), amount: int64(body["amount"].(float64)), status: cloudapi.StatusPending, kind: str("transactionType"),
			delivered: f.ack != "offline"}
		if tx.delivered && f.outcome != "" {
			tx.status = f.outcome
		}
		f.txs = append(f.txs, tx)
		if f.ack == "lost" {
			hj, _ := w.(http.Hijacker)
			conn, _, _ := hj.Hijack()
			conn.Close()
			return
		}
		fmt.Fprintf(w, `{"status":"ok","transactionId":%q}`, tx.id)
	case cloudapi.PathTransaction:
		f.polls++
		if f.polls <= f.pollFails {
			w.WriteHeader(401)
			fmt.Fprint(w, `{"status":"ko","message":"Invalid API key"}`)
			return
		}
		for _, tx := range f.txs {
			if tx.id == r.URL.Query().Get("transactionId") {
				fmt.Fprintf(w, `{"status":%q,"transactionId":%q,"amount":%d,"giftAmount":0,"currencyCode":"EUR"}`, tx.status, tx.id, tx.amount)
				return
			}
		}
		http.NotFound(w, r)
	case cloudapi.PathAbort:
		f.aborts = append(f.aborts, str("idempotentUuid"))
		for _, tx := range f.txs {
			if tx.uuid == str("idempotentUuid") && tx.delivered && tx.status == cloudapi.StatusPending && f.afterCancel != "" {
				tx.status = f.afterCancel
			}
		}
		fmt.Fprint(w, `{"status":"ok"}`)
	case cloudapi.PathTransactions:
		f.lists++
		var list []map[string]any
		for i := len(f.txs) - 1; i >= 0; i-- {
			tx := f.txs[i]
			if !tx.delivered {
				continue
			}
			status := tx.status
			if status == cloudapi.StatusPending && f.listedAs != "" {
				status = f.listedAs
			}
			list = append(list, map[string]any{"status": status, "transactionId": tx.id, "amount": tx.amount, "giftAmount": 0,
				"type": tx.kind, "cartId": tx.cartID, "checkoutExternalId": tx.extID, "serialNumber": "SN-1",
				"createdAt": time.Now().UTC().Format(time.RFC3339)})
		}
		json.NewEncoder(w).Encode(map[string]any{"total": len(list), "limit": 200, "offset": 0, "count": len(list), "transactions": list})
	default:
		http.NotFound(w, r)
	}
}

func (f *fakeCloud) set(fn func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn()
}

func (f *fakeCloud) counts() (payments, polls, aborts int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.payments, f.polls, len(f.aborts)
}

// cloudEnv is an orchestrator on the cloud channel, through the real
// client, against a fakeCloud.
func cloudEnv(t *testing.T, f *fakeCloud, lim Limits) *env {
	t.Helper()
	f.t, f.key = t, "sk_test_123"
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	client, err := cloudapi.New(srv.URL, f.key)
	if err != nil {
		t.Fatal(err)
	}
	return channelEnv(t, Cloud(client, "SN-1", nil, 5*time.Millisecond), "cloud:SN-1", lim)
}

func TestCloudPaymentAcknowledgedThenPolled(t *testing.T) {
	f := &fakeCloud{outcome: cloudapi.StatusOK}
	e := cloudEnv(t, f, testLimits)
	h := e.kiosk("C1", 1250)
	v := e.wait(h)
	a := e.attempt(h.UUID())
	if v.State != journal.StateApproved || a.Channel != journal.ChannelCloud || a.ProviderID != "cl-1" || v.TransactionID != "cl-1" {
		t.Fatalf("view %+v, attempt channel %s provider %q", v, a.Channel, a.ProviderID)
	}
	if !strings.Contains(string(a.RequestBody), `"checkoutExternalId":"`+h.UUID()+`"`) {
		t.Fatalf("body %s", a.RequestBody)
	}
	if payments, polls, _ := f.counts(); payments != 1 || polls < 1 {
		t.Fatalf("%d payments, %d polls", payments, polls)
	}
	if e.orderStatus("C1") != journal.OrderPaid {
		t.Fatalf("order %s", e.orderStatus("C1"))
	}
}

// The acknowledgement is lost: the history, found by the attempt's
// checkoutExternalId, says what happened; the payment is never resent.
func TestCloudLostAcknowledgementSettledFromHistory(t *testing.T) {
	f := &fakeCloud{ack: "lost", outcome: cloudapi.StatusOK}
	e := cloudEnv(t, f, testLimits)
	v := e.wait(e.kiosk("L1", 800))
	if v.State != journal.StateApproved || v.TransactionID != "cl-1" {
		t.Fatalf("view %+v", v)
	}
	if payments, _, _ := f.counts(); payments != 1 {
		t.Fatalf("%d payments: a lost acknowledgement was resent", payments)
	}
}

// An offline terminal: accepted, never delivered, pending for ever and in
// no history. Nothing is charged, and that is decided from the history
// past the deadline, never guessed from the silence.
func TestCloudOfflineTerminalChargesNothing(t *testing.T) {
	lim := testLimits
	lim.KioskTimeout, lim.SettleAfter = 100*time.Millisecond, 50*time.Millisecond
	f := &fakeCloud{ack: "offline"}
	e := cloudEnv(t, f, lim)
	v := e.wait(e.kiosk("O1", 500))
	if v.State == journal.StateApproved || v.State == journal.StateUnknown {
		t.Fatalf("view %+v", v)
	}
	if payments, _, _ := f.counts(); payments != 1 {
		t.Fatalf("%d payments", payments)
	}
}

func TestCloudRefusalsChargeNothing(t *testing.T) {
	for _, ack := range []string{"400", "401"} {
		t.Run(ack, func(t *testing.T) {
			f := &fakeCloud{ack: ack}
			e := cloudEnv(t, f, testLimits)
			v := e.wait(e.kiosk("R1", 300))
			if v.State != journal.StateFailed || v.Message == "" {
				t.Fatalf("view %+v", v)
			}
			if strings.Contains(v.Message, f.key) {
				t.Fatalf("the key is in the message: %q", v.Message)
			}
			if payments, _, _ := f.counts(); payments != 1 {
				t.Fatalf("%d payments", payments)
			}
		})
	}
}

// The customer cancels after the terminal took the card: the abort is
// delivered, the poll goes on, and the payment's own outcome decides.
func TestCloudCancelAfterHandoverCharged(t *testing.T) {
	f := &fakeCloud{afterCancel: cloudapi.StatusOK}
	v := cancelOnCloud(t, f, "X1")
	if v.State != journal.StateApproved || !v.ChargedDespiteCancel {
		t.Fatalf("view %+v", v)
	}
	if _, _, aborts := f.counts(); aborts < 1 {
		t.Fatal("no abort sent")
	}
}

func TestCloudCancelBeforeHandoverNotCharged(t *testing.T) {
	v := cancelOnCloud(t, &fakeCloud{afterCancel: cloudapi.StatusKO}, "X2")
	if v.State == journal.StateApproved || v.State == journal.StateUnknown {
		t.Fatalf("view %+v", v)
	}
}

// cancelOnCloud has the customer cancel a kiosk debit of order through f
// once the cloud acknowledged it, and returns its last view.
func cancelOnCloud(t *testing.T, f *fakeCloud, order string) View {
	t.Helper()
	e := cloudEnv(t, f, testLimits)
	h := e.kiosk(order, 700)
	waitView(t, e, h, func(View) bool { return e.attempt(h.UUID()).ProviderID != "" })
	h.Cancel()
	return e.wait(h)
}

// Over many payments with the cloud's faults drawn at random (lost
// acknowledgements, offline terminals, declines, cancels before and after
// the card), the journal and the cloud agree exactly: every charge the
// cloud made is an approved attempt, no order is charged twice, and
// nothing approved in the journal is missing from the cloud.
func TestCloudJournalAndCloudAgreeUnderRandomFaults(t *testing.T) {
	t.Parallel() // waits on real cadences: beside the others
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 7))
	lim := testLimits
	lim.KioskTimeout, lim.SettleAfter = 150*time.Millisecond, 50*time.Millisecond
	f := &fakeCloud{}
	e := cloudEnv(t, f, lim)
	const n = 30
	for i := range n {
		order := fmt.Sprintf("R%02d", i)
		amount := int64(100 + rng.IntN(5000))
		ack := []string{"ok", "ok", "ok", "lost", "offline", "400"}[rng.IntN(6)]
		outcome := []string{cloudapi.StatusOK, cloudapi.StatusOK, cloudapi.StatusKO, ""}[rng.IntN(4)]
		afterCancel := []string{cloudapi.StatusOK, cloudapi.StatusKO}[rng.IntN(2)]
		f.set(func() { f.ack, f.outcome, f.afterCancel = ack, outcome, afterCancel })
		e.order(order, amount)
		before, _, _ := f.counts()
		h := e.start(Request{OrderID: order, Amount: amount, Policy: journal.PolicyKiosk})
		if outcome == "" {
			// The terminal waits for the card: the customer cancels once
			// the cloud has the payment. (Sent is not enough: a cancel that
			// overtakes its payment on the way finds nothing to stop, and
			// this fake terminal then waits for the card for ever.)
			waitView(t, e, h, func(View) bool { p, _, _ := f.counts(); return p > before })
			h.Cancel()
		}
		v := e.wait(h)
		if v.State == journal.StateUnknown {
			t.Fatalf("%s (%s/%s/%s): unknown: %s", order, ack, outcome, afterCancel, v.Message)
		}
	}
	// The cloud's charges, by order.
	f.mu.Lock()
	charged := map[string]int64{}
	count := map[string]int{}
	for _, tx := range f.txs {
		if tx.delivered && tx.status == cloudapi.StatusOK {
			charged[tx.cartID] += tx.amount
			count[tx.cartID]++
		}
	}
	f.mu.Unlock()
	for i := range n {
		order := fmt.Sprintf("R%02d", i)
		if count[order] > 1 {
			t.Errorf("%s charged %d times", order, count[order])
		}
		m, err := e.db.OrderMoney(e.ctx, order)
		if err != nil {
			t.Fatal(err)
		}
		if m.Taken() != charged[order] {
			t.Errorf("%s: the journal took %d, the cloud charged %d", order, m.Taken(), charged[order])
		}
	}
}
