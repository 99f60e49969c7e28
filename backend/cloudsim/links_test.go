package cloudsim_test

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/cloudapi"
	"github.com/comptoir-pos/comptoir/backend/cloudsim"
	"github.com/comptoir-pos/comptoir/backend/internal/testenv"
)

// linkCloud is a cloud at its real pace (TimeScale 1) on a clock the
// test moves.
func linkCloud(t *testing.T) (*cloudsim.Cloud, *cloudapi.Client, *testenv.Clock) {
	t.Helper()
	clk := testenv.NewClock(time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC))
	cloud, client := testenv.Cloud(t, cloudsim.Config{Key: "sk_links", Now: clk.Now, TimeScale: 1})
	return cloud, client, clk
}

func linkBody(t *testing.T, cartID string, amount int64, instant bool) []byte {
	t.Helper()
	b, err := json.Marshal(cloudapi.LinkRequest{CartID: cartID, Amount: amount, IsInstantCapture: &instant,
		ReturnURLSuccess: "https://shop.example/ok", ReturnURLCancelled: "https://shop.example/cancelled",
		OrderSource: cloudapi.OrderClickAndCollect,
		Items:       []cloudapi.LinkItem{{Name: "Lunch deal", TotalAmount: amount, Quantity: 1, EligibleTitreRestaurant: true}}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A link asked twice for the same cart is the same link: a lost answer is
// settled by asking again.
func TestALinkAskedAgainIsTheSameLink(t *testing.T) {
	_, client, _ := linkCloud(t)
	ctx := t.Context()
	first, err := client.GenerateLink(ctx, linkBody(t, "20261125-042-1", 2000, true))
	if err != nil || first.Existing || !strings.Contains(first.URL, cloudsim.PathPayPage) {
		t.Fatalf("first: %+v %v", first, err)
	}
	again, err := client.GenerateLink(ctx, linkBody(t, "20261125-042-1", 2000, true))
	if err != nil || !again.Existing || again.URL != first.URL {
		t.Fatalf("again: %+v %v", again, err)
	}
	// A request missing its return URLs is refused field by field.
	_, err = client.GenerateLink(ctx, []byte(`{"cart_id": "x", "amount": 100}`))
	var fe *cloudapi.FieldError
	if !errors.As(err, &fe) || len(fe.Fields["return_url_success"]) == 0 || len(fe.Fields["return_url_cancelled"]) == 0 {
		t.Fatalf("missing fields: %v", err)
	}
	// camelCase keys are still accepted.
	if l, err := client.GenerateLink(ctx, []byte(`{"cartId": "camel", "amount": 100, "returnUrlSuccess": "https://a.example/", "returnUrlCancelled": "https://a.example/"}`)); err != nil || l.Existing {
		t.Fatalf("camelCase: %+v %v", l, err)
	}
}

// Part paid by meal voucher, then the rest by card: pending shows what is
// paid, then ok. A paid cart cannot be cancelled, and says so with the cart.
func TestACartPaidInTwoParts(t *testing.T) {
	cloud, client, _ := linkCloud(t)
	ctx := t.Context()
	if _, err := client.GenerateLink(ctx, linkBody(t, "c1", 2000, true)); err != nil {
		t.Fatal(err)
	}
	c, err := client.Cart(ctx, "c1")
	if err != nil || c.Status != cloudapi.CartPending || c.RequestedAmount != 2000 || c.PaidAmount != 0 {
		t.Fatalf("new cart %+v %v", c, err)
	}
	if _, err := cloud.PayCart("c1", 1200, 0, cloudsim.PayMealVoucher, false); err != nil {
		t.Fatal(err)
	}
	if c, _ = client.Cart(ctx, "c1"); c.Status != cloudapi.CartPending || c.PaidAmount != 1200 || len(c.Transactions) != 1 {
		t.Fatalf("part paid %+v", c)
	}
	// A meal voucher payment cannot be given back by cancelling.
	_, err = client.CancelLink(ctx, "c1")
	var ce *cloudapi.CancelError
	if !errors.As(err, &ce) || ce.Reason != cloudapi.CancelNonCancellable || ce.Cart == nil || ce.Cart.PaidAmount != 1200 {
		t.Fatalf("cancel with a voucher in: %v", err)
	}
	if _, err := cloud.PayCart("c1", 0, 150, cloudsim.PayCard, false); err != nil {
		t.Fatal(err)
	}
	if c, _ = client.Cart(ctx, "c1"); c.Status != cloudapi.CartOK || c.PaidAmount != 2000 || c.GiftAmount != 150 {
		t.Fatalf("paid %+v", c)
	}
	_, err = client.CancelLink(ctx, "c1")
	if !errors.As(err, &ce) || ce.Reason != cloudapi.CancelPaid || ce.Cart == nil || ce.Cart.Status != cloudapi.CartOK {
		t.Fatalf("cancel a paid cart: %v", err)
	}
	if _, err := client.Cart(ctx, "nope"); err == nil {
		t.Fatal("an unknown cart was read")
	}
}

// Cancelled, then cancelled again; an unpaid link is cancelled by the
// provider after 72 hours.
func TestCancelAndExpiry(t *testing.T) {
	_, client, clk := linkCloud(t)
	ctx := t.Context()
	for _, id := range []string{"a", "b"} {
		if _, err := client.GenerateLink(ctx, linkBody(t, id, 900, true)); err != nil {
			t.Fatal(err)
		}
	}
	if msg, err := client.CancelLink(ctx, "a"); err != nil || msg == "" {
		t.Fatalf("cancel: %q %v", msg, err)
	}
	var ce *cloudapi.CancelError
	if _, err := client.CancelLink(ctx, "a"); !errors.As(err, &ce) || ce.Reason != cloudapi.CancelCancelled {
		t.Fatalf("cancel again: %v", err)
	}
	clk.Advance(71 * time.Hour)
	if c, _ := client.Cart(ctx, "b"); c.Status != cloudapi.CartPending {
		t.Fatalf("71 h: %+v", c)
	}
	clk.Advance(time.Hour)
	if c, _ := client.Cart(ctx, "b"); c.Status != cloudapi.CartKO {
		t.Fatalf("72 h: %+v", c)
	}
}

// A link without instant capture is authorised when paid, then captured.
func TestCaptureOfAnAuthorisedCart(t *testing.T) {
	cloud, client, _ := linkCloud(t)
	ctx := t.Context()
	if _, err := client.GenerateLink(ctx, linkBody(t, "cc", 3000, false)); err != nil {
		t.Fatal(err)
	}
	var cap *cloudapi.CaptureError
	if _, err := client.Capture(ctx, "cc", 0); !errors.As(err, &cap) || cap.Reason != cloudapi.CaptureNotPaid {
		t.Fatalf("capture unpaid: %v", err)
	}
	if _, err := cloud.PayCart("cc", 0, 0, cloudsim.PayCard, false); err != nil {
		t.Fatal(err)
	}
	if c, _ := client.Cart(ctx, "cc"); c.Status != cloudapi.CartAuthorised {
		t.Fatalf("paid without instant capture: %+v", c)
	}
	if _, err := client.Capture(ctx, "cc", 3001); err == nil {
		t.Fatal("a capture above the requested amount was accepted")
	}
	c, err := client.Capture(ctx, "cc", 0)
	if err != nil || c.Status != cloudapi.CartOK || c.RequestedAmount != 3000 || c.PaidAmount != 3000 {
		t.Fatalf("capture: %+v %v", c, err)
	}
	if _, err := client.Capture(ctx, "cc", 0); !errors.As(err, &cap) || cap.Reason != cloudapi.CaptureDone {
		t.Fatalf("capture again: %v", err)
	}
}

// The link's page plays the customer: it shows the amount and pays it.
func TestTheLinksPagePays(t *testing.T) {
	_, client, _ := linkCloud(t)
	ctx := t.Context()
	l, err := client.GenerateLink(ctx, linkBody(t, "page", 1250, true))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(l.URL)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(page), "12.50 EUR") || !strings.Contains(string(page), `data-status="pending"`) {
		t.Fatalf("page %s", page)
	}
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err = noRedirect.PostForm(l.URL, url.Values{"action": {"pay"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if loc := resp.Header.Get("Location"); resp.StatusCode != http.StatusSeeOther || loc != "https://shop.example/ok?cartId=page&status=ok" {
		t.Fatalf("after paying: %d %q", resp.StatusCode, loc)
	}
	if c, _ := client.Cart(ctx, "page"); c.Status != cloudapi.CartOK {
		t.Fatalf("cart %+v", c)
	}
}

// A checkout's external id is claimed for good.
func TestCheckoutExternalIDsAreClaimedOnce(t *testing.T) {
	_, client, _ := linkCloud(t)
	ctx := t.Context()
	body := []byte(`{"checkout_external_id": "order-7", "amount": 990}`)
	co, err := client.CreateCheckout(ctx, body)
	if err != nil || co.Token == "" || co.Link == "" {
		t.Fatalf("checkout: %+v %v", co, err)
	}
	if _, err := client.CreateCheckout(ctx, body); !errors.Is(err, cloudapi.ErrCheckoutExists) {
		t.Fatalf("again: %v", err)
	}
	if _, err := client.CreateCheckout(ctx, []byte(`{"checkout_external_id": "order-8", "amount": 99}`)); err == nil {
		t.Fatal("a checkout under 1.00 was accepted")
	}
}
