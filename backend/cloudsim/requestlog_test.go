package cloudsim_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/cloudapi"
	"github.com/comptoir-pos/comptoir/backend/cloudsim"
)

// The request log keeps every request, its method, path, credential kind
// and status (0: dropped), never the key; the control API is not in it.
func TestTheRequestLogKeepsEveryRequest(t *testing.T) {
	cloud, _, _ := start(t, cloudsim.Config{Key: "sk_log"})
	ctx := ctxT(t)
	if err := cloud.Inject(cloudsim.Fault{Path: cloudsim.PathTransactions, Status: 0}); err != nil {
		t.Fatal(err)
	}
	noRetry := cloudapi.WithReadRetry(cloudapi.RetryPolicy{Tries: 1})
	client, _ := cloudapi.New(cloud.URL(), cloud.Key(), noRetry)
	if _, err := client.Transactions(ctx, cloudapi.TransactionsRequest{}); err == nil {
		t.Fatal("the dropped request answered")
	}
	if _, err := client.Transaction(ctx, "nope"); err == nil {
		t.Fatal("an unknown transaction was found")
	}
	if _, err := http.Get(cloud.URL() + "/sim/state"); err != nil {
		t.Fatal(err)
	}
	got := cloud.Requests("")
	if len(got) != 2 {
		t.Fatalf("log %+v", got)
	}
	if r := got[0]; r.Method != http.MethodPost || r.Path != cloudsim.PathTransactions || r.Status != 0 || r.Auth != "both" || r.At.IsZero() {
		t.Fatalf("dropped: %+v", r)
	}
	if r := got[1]; r.Method != http.MethodGet || r.Path != cloudsim.PathTransaction || r.Status == 0 || r.Status == http.StatusOK || r.Auth != "both" {
		t.Fatalf("poll: %+v", r)
	}
	if n := len(cloud.Requests("GET " + cloudsim.PathTransaction)); n != 1 {
		t.Fatalf("filtered: %d", n)
	}
	resp, err := http.Get(cloud.URL() + "/sim/requests?path=" + cloudsim.PathTransactions)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(raw), cloudsim.PathTransactions) || strings.Contains(string(raw), "sk_log") {
		t.Fatalf("control API: %s", raw)
	}
	cloud.ResetRequests()
	if n := len(cloud.Requests("")); n != 0 {
		t.Fatalf("%d after reset", n)
	}
}

// A batch list answered 502 once (the provider's transient error on heavy
// Webservices calls) is read by the client's retry: the log shows the 502,
// then the page.
func TestABatchListReadAfterA502(t *testing.T) {
	cloud, _, _ := start(t, cloudsim.Config{Key: "sk_502"})
	if err := cloud.Inject(cloudsim.Fault{Path: cloudsim.PathWSBatch, Status: http.StatusBadGateway}); err != nil {
		t.Fatal(err)
	}
	ws, err := cloudapi.NewWebservices(cloudapi.DefaultWebservicesURL(cloud.URL()), cloud.Key(),
		cloudapi.WithReadRetry(cloudapi.RetryPolicy{Tries: 3, First: time.Millisecond, Max: 2 * time.Millisecond}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ws.Batch(ctxT(t), cloudapi.BatchRequest{}); err != nil {
		t.Fatal(err)
	}
	got := cloud.Requests(cloudsim.PathWSBatch)
	if len(got) != 2 || got[0].Status != http.StatusBadGateway || got[1].Status != http.StatusOK {
		t.Fatalf("log %+v", got)
	}
}

// Capture is served at the specification's path as well as the v4 one;
// the return page a link may name exists.
func TestCaptureAtTheSpecsPathAndTheReturnPage(t *testing.T) {
	cloud, _, _ := linkCloud(t)
	ctx := t.Context()
	e := cloudapi.DefaultLinkEndpoints
	e.Capture = cloudapi.Endpoint{Method: http.MethodPost, Path: cloudsim.PathCaptureShort}
	client, err := cloudapi.New(cloud.URL(), cloud.Key(), cloudapi.WithLinkEndpoints(e))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.GenerateLink(ctx, linkBody(t, "cs", 1000, false)); err != nil {
		t.Fatal(err)
	}
	if _, err := cloud.PayCart("cs", 0, 0, cloudsim.PayCard, false); err != nil {
		t.Fatal(err)
	}
	if c, err := client.Capture(ctx, "cs", 0); err != nil || c.Status != cloudapi.CartOK {
		t.Fatalf("capture: %+v %v", c, err)
	}
	resp, err := http.Get(cloud.URL() + cloudsim.PathReturnPage + "?cartId=cs&status=ok")
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(raw), `data-status="ok"`) {
		t.Fatalf("return page: %d %s", resp.StatusCode, raw)
	}
}
