package cloudsim_test

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/cloudapi"
	"github.com/comptoir-pos/comptoir/backend/cloudsim"
	"github.com/comptoir-pos/comptoir/backend/terminalsim"
)

// paid makes an approved debit on a terminal of the cloud and returns the
// cloud's transaction id.
func paid(t *testing.T, c *cloudsim.Cloud, cl *cloudapi.Client, sn, uuid string, amount int64) string {
	t.Helper()
	ctx := ctxT(t)
	ack, err := cl.Payment(ctx, body(t, map[string]any{"serialNumber": sn, "amount": amount, "idempotentUuid": uuid, "reference": "ref-" + uuid}))
	if err != nil {
		t.Fatal(err)
	}
	tx, err := c.Wait(ctx, uuid)
	if err != nil || tx.Status != "ok" {
		t.Fatalf("payment %s: %+v %v", uuid, tx, err)
	}
	return ack.TransactionID
}

func wsCloud(t *testing.T) (*cloudsim.Cloud, *cloudapi.Client, *cloudapi.Webservices) {
	t.Helper()
	approve := terminalsim.Behaviour{}
	c, cl, _ := start(t, cloudsim.Config{Serials: []string{"SN-A", "SN-B"}, Terminal: terminalsim.Config{Default: &approve, TimeScale: 0.001, NoTestAmounts: true}})
	ws, err := cloudapi.NewWebservices(cloudapi.DefaultWebservicesURL(c.URL()), c.Key())
	if err != nil {
		t.Fatal(err)
	}
	return c, cl, ws
}

// The batch sees every terminal's transactions, filters them as asked,
// and a single fetch answers under transactionDetails on the same path
// as the Cloud API's poll.
func TestWebservicesSeeTheWholeCompany(t *testing.T) {
	c, cl, ws := wsCloud(t)
	ctx := ctxT(t)
	a := paid(t, c, cl, "SN-A", "u-a", 1200)
	b := paid(t, c, cl, "SN-B", "u-b", 800)
	all, err := ws.BatchAll(ctx, cloudapi.BatchRequest{Limit: 1, Timezone: "Europe/Paris"}, time.Now())
	if err != nil || len(all) != 2 || all[0].TransactionID != b || all[1].TransactionID != a {
		t.Fatalf("batch %+v %v (want %s then %s, newest first)", all, err, b, a)
	}
	page, err := ws.Batch(ctx, cloudapi.BatchRequest{SerialNumbers: []string{"SN-A"}})
	if err != nil || page.Total != 1 || page.Transactions[0].TransactionID != a || page.Transactions[0].Reference != "ref-u-a" {
		t.Fatalf("by serial %+v %v", page, err)
	}
	if page, _ := ws.Batch(ctx, cloudapi.BatchRequest{References: []string{"ref-u-b"}}); page.Total != 1 || page.Transactions[0].TransactionID != b {
		t.Fatalf("by reference %+v", page)
	}
	// Today, inclusive end date, in the caller's zone.
	today := time.Now().In(time.UTC).Format(time.DateOnly)
	if page, err := ws.Batch(ctx, cloudapi.BatchRequest{StartDate: today, EndDate: today, Timezone: "UTC"}); err != nil || page.Total != 2 {
		t.Fatalf("today %+v %v", page, err)
	}
	if _, err := ws.Batch(ctx, cloudapi.BatchRequest{StartTime: "10:00:00Z"}); err == nil {
		t.Fatal("a time with a zone designator was sent")
	}
	d, err := ws.Details(ctx, a)
	if err != nil || d.TransactionID != a || d.AskedAmount != 1200 || d.Status != "ok" || d.SerialNumber != "SN-A" {
		t.Fatalf("details %+v %v", d, err)
	}
	// The Cloud API's poll on the same path, with the key in both headers
	// as the fetch's, reads the same transaction with the webhook's fields.
	if tx, err := cl.Transaction(ctx, a); err != nil || tx.TransactionID != a || tx.Status != "ok" || tx.Amount != 1200 ||
		tx.CurrencyCode == "" || tx.IdempotentUUID != "u-a" || tx.SerialNumber != "SN-A" {
		t.Fatalf("poll %+v %v", tx, err)
	}
}

// GET /v5/transaction/ is the poll with the bearer header alone, the
// fetch with Service-Secret alone, and with both (one key sent both ways)
// an answer that either reads: the fetch's transactionDetails, holding
// the webhook's fields too.
func TestThePollAndTheFetchShareTheirPath(t *testing.T) {
	c, cl, _ := wsCloud(t)
	ctx := ctxT(t)
	a := paid(t, c, cl, "SN-A", "u-a", 1200)
	for name, h := range map[string]http.Header{
		"bearer":         {"Authorization": {"Bearer " + c.Key()}},
		"service-secret": {"Service-Secret": {c.Key()}},
		"both":           {"Authorization": {"Bearer " + c.Key()}, "Service-Secret": {c.Key()}},
	} {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, c.URL()+cloudsim.PathTransaction+"?transactionId="+a, nil)
		req.Header = h
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		tx, perr := cloudapi.ParseTransaction(raw)
		var d struct {
			Details *cloudapi.TransactionDetails `json:"transactionDetails"`
		}
		_ = json.Unmarshal(raw, &d)
		switch {
		case resp.StatusCode != http.StatusOK || perr != nil || tx.TransactionID != a || tx.Status != "ok" || tx.Amount != 1200:
			t.Errorf("%s: not a poll's answer: %d %s", name, resp.StatusCode, raw)
		case name != "bearer" && (d.Details == nil || d.Details.AskedAmount != 1200 || d.Details.Type != "debit"):
			t.Errorf("%s: not a fetch's answer: %s", name, raw)
		case name == "both" && (tx.CurrencyCode == "" || tx.IdempotentUUID != "u-a"):
			t.Errorf("%s: the webhook's fields are missing: %s", name, raw)
		}
	}
}

func refundBody(t *testing.T, amount int64) []byte {
	t.Helper()
	b, err := json.Marshal(cloudapi.RefundRequest{Amount: amount, UserEmail: "manager@shop.example",
		Vendor: cloudapi.RefundVendor{SoftwareName: "Comptoir", SoftwareVersion: "test"}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Each answer of a refund is its own outcome; one refund per transaction.
func TestEveryRefundAnswer(t *testing.T) {
	c, cl, ws := wsCloud(t)
	ctx := ctxT(t)
	c.ScriptRefunds(cloudsim.ScriptPending, cloudsim.ScriptWaiting, cloudsim.ScriptNotPossible, cloudsim.ScriptImpossible)
	ids := make([]string, 5)
	for i := range ids {
		ids[i] = paid(t, c, cl, "SN-A", "r-"+string(rune('a'+i)), 1000)
	}

	pending, err := ws.Refund(ctx, ids[0], refundBody(t, 1000))
	if err != nil || pending.Status != cloudapi.RefundPending || pending.TransactionID == "" {
		t.Fatalf("pending %+v %v", pending, err)
	}
	waiting, err := ws.Refund(ctx, ids[1], refundBody(t, 400))
	if err != nil || waiting.Status != cloudapi.RefundWaiting || waiting.ApprovalURL == "" {
		t.Fatalf("waiting %+v %v", waiting, err)
	}
	if r, err := ws.Refund(ctx, ids[2], refundBody(t, 1000)); err != nil || r.Status != cloudapi.RefundNotPossible {
		t.Fatalf("not possible %+v %v", r, err)
	}
	var re *cloudapi.RefundError
	if _, err := ws.Refund(ctx, ids[3], refundBody(t, 1000)); !errors.As(err, &re) || re.Message == "" {
		t.Fatalf("impossible %v", err)
	}
	var fe *cloudapi.FieldError
	if _, err := ws.Refund(ctx, ids[4], []byte(`{"amount": 100}`)); !errors.As(err, &fe) || len(fe.Fields["user_email"]) == 0 || len(fe.Fields["vendor"]) == 0 {
		t.Fatalf("fields %v", err)
	}
	if _, err := ws.Refund(ctx, ids[4], refundBody(t, 1001)); !errors.As(err, &fe) || len(fe.Fields["amount"]) == 0 {
		t.Fatalf("above the original %v", err)
	}
	done, err := ws.Refund(ctx, ids[4], refundBody(t, 300))
	if err != nil || done.Status != cloudapi.RefundRefunded {
		t.Fatalf("refunded %+v %v", done, err)
	}
	// A partial refund leaves the rest not refundable by API.
	if _, err := ws.Refund(ctx, ids[4], refundBody(t, 300)); !errors.As(err, &re) {
		t.Fatalf("second refund %v", err)
	}
	// The manager approves the waiting one: a refund transaction appears.
	if _, err := c.DecideRefund(waiting.TransactionID, true); err != nil {
		t.Fatal(err)
	}
	if d, err := ws.Details(ctx, waiting.TransactionID); err != nil || d.Type != "refund" || d.AskedAmount != 400 {
		t.Fatalf("approved refund %+v %v", d, err)
	}
	if d, err := ws.Details(ctx, waiting.TransactionID); err != nil || d.Status != "ok" {
		t.Fatalf("approved refund %+v %v", d, err)
	}
	// The pending one is a pending transaction until it is decided.
	if d, err := ws.Details(ctx, pending.TransactionID); err != nil || d.Status != "pending" {
		t.Fatalf("pending refund %+v %v", d, err)
	}
	if _, err := c.DecideRefund(pending.TransactionID, false); err != nil {
		t.Fatal(err)
	}
	if d, err := ws.Details(ctx, pending.TransactionID); err != nil || d.Status != "ko" {
		t.Fatalf("rejected refund %+v %v", d, err)
	}
}

// A refund whose answer is lost was made: fetching tells, asking again
// is refused.
func TestALostRefundAnswerIsSettledByFetching(t *testing.T) {
	c, cl, ws := wsCloud(t)
	ctx := ctxT(t)
	id := paid(t, c, cl, "SN-B", "lost-1", 700)
	c.ScriptRefunds(cloudsim.ScriptLost)
	_, err := ws.Refund(ctx, id, refundBody(t, 700))
	var te *cloudapi.TransportError
	if !errors.As(err, &te) || !te.Sent {
		t.Fatalf("lost answer: %v", err)
	}
	all, err := ws.BatchAll(ctx, cloudapi.BatchRequest{SerialNumbers: []string{"SN-B"}}, time.Now())
	if err != nil || len(all) != 2 || all[0].Kind() != "refund" || all[0].Amount != 700 {
		t.Fatalf("history after a lost answer %+v %v", all, err)
	}
	var re *cloudapi.RefundError
	if _, err := ws.Refund(ctx, id, refundBody(t, 700)); !errors.As(err, &re) {
		t.Fatalf("asked again: %v", err)
	}
}
