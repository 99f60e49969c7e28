package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/cloudapi"
	"github.com/comptoir-pos/comptoir/backend/cloudsim"
	"github.com/comptoir-pos/comptoir/backend/internal/testenv"
	"github.com/comptoir-pos/comptoir/backend/reconcile"
)

func linkCloud(t *testing.T) *cloudsim.Cloud {
	t.Helper()
	cloud, _ := testenv.Cloud(t, cloudsim.Config{Key: "sk_link_cmd", TimeScale: 1})
	t.Setenv(envCloudKey, cloud.Key())
	return cloud
}

// waitCart waits for the command's cart at the provider.
func waitCart(t *testing.T, cloud *cloudsim.Cloud, done <-chan int) cloudsim.CartView {
	t.Helper()
	for {
		if carts := cloud.Carts(); len(carts) == 1 {
			return carts[0]
		}
		select {
		case code := <-done:
			t.Fatalf("the command ended (exit %d) before its link existed", code)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// `comptoir link` prints the link's address, waits, and prints the outcome.
func TestLinkCommandPaid(t *testing.T) {
	cloud := linkCloud(t)
	var out, errOut syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- cmdLink(t.Context(), []string{"--cloud", cloud.URL(), "--data-dir", t.TempDir(), "--amount", "1990", "--order", "T1",
			"--email", "ana@example.com", "--first", "Ana", "--last", "Lopez"}, &out, &errOut)
	}()
	cart := waitCart(t, cloud, done)
	if got := string(cart.Request["features"]); !strings.Contains(got, `"share_by_email":true`) {
		t.Fatalf("features %s", got)
	}
	for !strings.Contains(errOut.String(), cart.PaymentLink) {
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := cloud.PayCart(cart.CartID, 0, 0, cloudsim.PayCard, false); err != nil {
		t.Fatal(err)
	}
	if code := <-done; code != 0 {
		t.Fatalf("exit %d: %s %s", code, out.String(), errOut.String())
	}
	var res linkResult
	if err := json.Unmarshal([]byte(out.String()), &res); err != nil || res.Status != "approved" || !res.OrderPaid || res.Link != cart.PaymentLink {
		t.Fatalf("printed %s (%v)", out.String(), err)
	}
}

// Ctrl-C cancels the cart, then its true state is printed.
func TestLinkCommandCancelled(t *testing.T) {
	cloud := linkCloud(t)
	ctx, interrupt := context.WithCancel(t.Context())
	var out, errOut syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- cmdLink(ctx, []string{"--cloud", cloud.URL(), "--data-dir", t.TempDir(), "--amount", "500"}, &out, &errOut)
	}()
	cart := waitCart(t, cloud, done)
	interrupt()
	if code := <-done; code != 1 || !strings.Contains(out.String(), `"cancelled"`) {
		t.Fatalf("exit %d: %s %s", code, out.String(), errOut.String())
	}
	if carts := cloud.Carts(); carts[0].CartID != cart.CartID || carts[0].Status != cloudsim.CartKO {
		t.Fatalf("carts %+v", carts)
	}
}

func TestLinkCommandNeedsTheCloud(t *testing.T) {
	t.Setenv(envCloudKey, "")
	var out, errOut bytes.Buffer
	if code := run([]string{"link", "--data-dir", t.TempDir(), "--amount", "500"}, &out, &errOut); code != 1 || !strings.Contains(errOut.String(), "cloud") {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
}

// `comptoir reconcile` sets the journal beside the provider's list: a paid
// link matches its online payment; a payment of a cart no order knows is
// named, and the exit code says staff are needed.
func TestReconcileCommand(t *testing.T) {
	cloud := linkCloud(t)
	dir := t.TempDir()
	var out, errOut syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- cmdLink(t.Context(), []string{"--cloud", cloud.URL(), "--data-dir", dir, "--amount", "1990", "--order", "R1"}, &out, &errOut)
	}()
	cart := waitCart(t, cloud, done)
	if _, err := cloud.PayCart(cart.CartID, 500, 0, cloudsim.PayMealVoucher, false); err != nil {
		t.Fatal(err)
	}
	if _, err := cloud.PayCart(cart.CartID, 0, 0, cloudsim.PayCard, false); err != nil {
		t.Fatal(err)
	}
	if code := <-done; code != 0 {
		t.Fatalf("link: exit %d: %s", code, errOut.String())
	}
	day := time.Now().UTC().Format(time.DateOnly)
	reconcileRun := func() (int, reconcile.Report, string) {
		var out, errOut bytes.Buffer
		code := cmdReconcile(t.Context(), []string{"--data-dir", dir, "--cloud", cloud.URL(), "--no-terminal", "--tz", "UTC", "--date", day}, &out, &errOut)
		var rep reconcile.Report
		if code != 1 {
			if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
				t.Fatalf("printed %s: %v", out.String(), err)
			}
		}
		return code, rep, errOut.String()
	}
	code, rep, stderr := reconcileRun()
	if code != 0 || len(rep.Differences) != 0 || !rep.ProviderRead || rep.TerminalRead || len(rep.Lines) != 1 || len(rep.Lines[0].Provider) != 2 {
		t.Fatalf("exit %d (%s): %+v", code, stderr, rep)
	}
	// Another system's cart, paid: the company's list holds a payment this
	// journal has no order for.
	other, err := cloudapi.New(cloud.URL(), cloud.Key())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.GenerateLink(t.Context(), []byte(`{"cart_id":"elsewhere-1","amount":700,"return_url_success":"https://x.example/","return_url_cancelled":"https://x.example/"}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := cloud.PayCart("elsewhere-1", 0, 0, cloudsim.PayCard, false); err != nil {
		t.Fatal(err)
	}
	code, rep, stderr = reconcileRun()
	if code != exitNeedsStaff || len(rep.Differences) != 1 {
		t.Fatalf("exit %d (%s): %+v", code, stderr, rep)
	}
	if d := rep.Differences[0]; d.Kind != reconcile.KindNoOrder || d.OrderID != "elsewhere-1" || d.OtherAmount != 700 || d.Action == "" {
		t.Fatalf("difference %+v", d)
	}
	// Nothing to read it with: an error, not an empty report.
	var errOut2 bytes.Buffer
	if code := cmdReconcile(t.Context(), []string{"--data-dir", t.TempDir(), "--no-terminal", "--date", day}, &bytes.Buffer{}, &errOut2); code != 1 {
		t.Fatalf("with no source: exit %d: %s", code, errOut2.String())
	}
}
