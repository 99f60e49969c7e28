package cloudapi

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// Online payment authenticates with Service-Secret, the v5 checkouts too
// (the bearer header, carrying the same key, beside it); the cart
// operations go where the settings say.
func TestLinkCallsCarryServiceSecretAndGoWhereTheSettingsSay(t *testing.T) {
	var got []*http.Request
	var bodies []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got, bodies = append(got, r.Clone(context.Background())), append(bodies, string(b))
		switch {
		case strings.HasSuffix(r.URL.Path, "checkouts/"):
			w.WriteHeader(http.StatusCreated)
			io.WriteString(w, `{"checkout_token": "tok", "payment_link": "https://pay.example/c/1"}`)
		default:
			io.WriteString(w, `{"cart_id": "c1", "status": "pending", "requested_amount": 900}`)
		}
	}))
	t.Cleanup(srv.Close)
	cart, err := ParseEndpoint("post /shop/cart/info")
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(srv.URL, key, WithLinkEndpoints(LinkEndpoints{Cart: cart, Cancel: DefaultLinkEndpoints.Cancel, Capture: DefaultLinkEndpoints.Capture}))
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if _, err := c.CreateCheckout(ctx, []byte(`{"checkout_external_id": "o1", "amount": 900}`)); err != nil {
		t.Fatal(err)
	}
	if cart, err := c.Cart(ctx, "c1"); err != nil || cart.RequestedAmount != 900 {
		t.Fatalf("cart %+v %v", cart, err)
	}
	c2, _ := New(srv.URL, key)
	if _, err := c2.Cart(ctx, "c 1"); err != nil {
		t.Fatal(err)
	}
	for i, r := range got {
		if r.Header.Get("Service-Secret") != key || r.Header.Get("Authorization") != "Bearer "+key || r.Header.Get("Content-Type") != "application/json" {
			t.Errorf("request %d %s: headers %v", i, r.URL.Path, r.Header)
		}
	}
	if got[1].Method != http.MethodPost || got[1].URL.Path != "/shop/cart/info" || bodies[1] != `{"cart_id":"c1"}` {
		t.Errorf("cart by setting: %s %s %s", got[1].Method, got[1].URL.Path, bodies[1])
	}
	if got[2].Method != http.MethodGet || got[2].URL.Path != "/v4/ecommerce/cart/" || got[2].URL.Query().Get("cart_id") != "c 1" {
		t.Errorf("cart by default: %s %s", got[2].Method, got[2].URL)
	}
	for _, bad := range []string{"/v4/cart/", "FETCH /v4/cart/", "GET v4/cart/", "GET /v4/cart/?x=1"} {
		if _, err := ParseEndpoint(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// Each answer the specification lists for a cart operation is its own
// outcome; what it does not list is an error, never a success.
func TestCartAnswersAreClassified(t *testing.T) {
	ctx := context.Background()
	t.Run("a capture's data under its own names", func(t *testing.T) {
		c, _ := server(t, 200, `{"message": "ok", "data": {"cart_id": "c1", "amount_requested": 3000, "amount_paid": 3000, "tip_amount": 200, "status": "ok", "transactions": [{"transaction_id": "t1", "total_amount": 3200, "status": "ok"}]}}`)
		cart, err := c.Capture(ctx, "c1", 0)
		if err != nil || cart.RequestedAmount != 3000 || cart.PaidAmount != 3000 || cart.GiftAmount != 200 || len(cart.Transactions) != 1 {
			t.Fatalf("%+v %v", cart, err)
		}
	})
	t.Run("the issuer refuses a capture", func(t *testing.T) {
		c, _ := server(t, 400, `{"message": "The capture of one or more transaction(s) was not possible", "errors": [{"transaction_id": "t1", "reason": "expired authorisation"}]}`)
		_, err := c.Capture(ctx, "c1", 0)
		var ce *CaptureError
		if !errors.As(err, &ce) || ce.Reason != CaptureRefused || ce.Transactions["t1"] != "expired authorisation" {
			t.Fatalf("%v", err)
		}
	})
	t.Run("a capture of a cancelled link", func(t *testing.T) {
		c, _ := server(t, 400, `{"message": "This link has already been cancelled and does not have any transactions that require capturing"}`)
		var ce *CaptureError
		if _, err := c.Capture(ctx, "c1", 0); !errors.As(err, &ce) || ce.Reason != CaptureCancelled {
			t.Fatalf("%v", err)
		}
	})
	t.Run("a 200 capture without ok is no capture", func(t *testing.T) {
		c, _ := server(t, 200, `{"message": "queued"}`)
		var ce *CaptureError
		if _, err := c.Capture(ctx, "c1", 0); !errors.As(err, &ce) || ce.Reason != CaptureOther {
			t.Fatalf("%v", err)
		}
	})
	t.Run("a cancel refused on a paid cart carries the cart", func(t *testing.T) {
		c, _ := server(t, 400, `{"error": "Cart has already been paid in full", "webhook_data": {"cart_id": "c1", "status": "ok", "requested_amount": 2000, "paid_amount": 2000}}`)
		_, err := c.CancelLink(ctx, "c1")
		var ce *CancelError
		if !errors.As(err, &ce) || ce.Reason != CancelPaid || ce.Cart == nil || ce.Cart.Status != CartOK {
			t.Fatalf("%v", err)
		}
	})
	t.Run("a cancel answered by an unknown cart", func(t *testing.T) {
		c, _ := server(t, 404, `{"detail": "Not found."}`)
		var he *HTTPError
		if _, err := c.CancelLink(ctx, "c1"); !errors.As(err, &he) || he.Status != 404 {
			t.Fatalf("%v", err)
		}
	})
	t.Run("a cart without a status is unreadable", func(t *testing.T) {
		c, _ := server(t, 200, `{"cart_id": "c1"}`)
		var de *DecodeError
		if _, err := c.Cart(ctx, "c1"); !errors.As(err, &de) {
			t.Fatalf("%v", err)
		}
	})
	t.Run("a 201 without a link is no link", func(t *testing.T) {
		c, _ := server(t, 201, `{}`)
		var de *DecodeError
		if _, err := c.GenerateLink(ctx, []byte(`{}`)); !errors.As(err, &de) {
			t.Fatalf("%v", err)
		}
	})
	t.Run("a duplicate cart_id without a link is a field error, not the same link", func(t *testing.T) {
		c, _ := server(t, 400, `{"errors": {"cart_id": ["This cart_id already exists"]}}`)
		var fe *FieldError
		if _, err := c.GenerateLink(ctx, []byte(`{}`)); !errors.As(err, &fe) {
			t.Fatalf("%v", err)
		}
	})
}
