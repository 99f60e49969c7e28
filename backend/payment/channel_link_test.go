package payment

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/cloudapi"
	"github.com/comptoir-pos/comptoir/backend/cloudsim"
	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/localapi"
)

// The payment link's rules against the simulated provider cloud, whose
// carts are the truth.

// newLinkEnv is a ready env on the link channel, against the simulated
// provider cloud.
func newLinkEnv(t *testing.T, opts LinkOptions) *env {
	t.Helper()
	cloud, client := startCloud(t, "sk_test_links")
	if opts.ReturnURL == "" {
		opts.ReturnURL = "https://shop.example/thanks"
	}
	if opts.PollEvery == 0 {
		opts.PollEvery = 5 * time.Millisecond
	}
	opts.Vendor = &localapi.Vendor{SoftwareName: "Comptoir", SoftwareVersion: "test"}
	e := &env{t: t, cloud: cloud, dir: t.TempDir(), channel: Link(client, opts), terminalID: "links"}
	e.ctx = t.Context()
	e.open(nil, testLimits)
	e.recover()
	return e
}

// linkOf waits until the attempt shows its link, and returns it with its
// cart id.
func (e *env) linkOf(h *Handle) (link, cartID string) {
	e.t.Helper()
	v := e.until(h, func(v View) bool { return v.Link != "" || v.Final() })
	if v.Link == "" {
		e.t.Fatalf("no link: %+v", v)
	}
	return v.Link, LinkCartID(v.OrderID, v.UUID)
}

// until waits for an event of the attempt's view that satisfies ok.
func (e *env) until(h *Handle, ok func(View) bool) View {
	e.t.Helper()
	for {
		changed := e.events.changed()
		if v := h.View(); ok(v) {
			return v
		}
		select {
		case <-h.Done():
			return h.View()
		case <-changed:
		case <-e.ctx.Done():
			e.t.Fatalf("never: %+v", h.View())
		}
	}
}

// startLink starts a link attempt for a new order and waits for its link.
func (e *env) startLink(orderID string, amount int64) (h *Handle, cartID string) {
	e.t.Helper()
	e.order(orderID, amount)
	h = e.start(Request{OrderID: orderID, Amount: amount, Policy: journal.PolicyKiosk})
	_, cartID = e.linkOf(h)
	return h, cartID
}

func (e *env) pay(cartID string, amount int64, kind string) cloudsim.CartView {
	e.t.Helper()
	v, err := e.cloud.PayCart(cartID, amount, 0, kind, false)
	if err != nil {
		e.t.Fatal(err)
	}
	return v
}

func TestLinkPaidInFull(t *testing.T) {
	e := newLinkEnv(t, LinkOptions{BrandName: "Chez Test", Currency: "EUR"})
	e.order("K1", 1250)
	h := e.start(Request{OrderID: "K1", Amount: 1250, Policy: journal.PolicyKiosk, Link: &LinkDetails{
		Source: cloudapi.OrderPayAtTable, Tips: new(bool),
		Items: []LinkItem{{Name: "Menu midi", Quantity: 1, Total: 1250, VATBasisPoints: 1000, Tax: 114, VoucherEligible: true}},
	}})
	link, cartID := e.linkOf(h)
	att := e.attempt(h.UUID())
	if att.Channel != journal.ChannelLink || att.Terminal != "links/K1" || att.ProviderID != link {
		t.Fatalf("journal %+v", att)
	}
	// The request as journaled is what the provider received.
	body := bodyOf(t, att)
	if body["cart_id"] != cartID || body["amount"] != float64(1250) || body["order_source"] != "pay_at_table" {
		t.Fatalf("link request %s", att.RequestBody)
	}
	items := body["items"].([]any)
	if it := items[0].(map[string]any); it["eligible_titre_restaurant"] != true || it["tax"].(map[string]any)["rate"] != float64(1000) {
		t.Fatalf("item %v", it)
	}
	if f := body["features"].(map[string]any); f["tips"] != false || f["meal_vouchers"] != true {
		t.Fatalf("features %v", f)
	}
	if v := h.View(); v.Expires.Sub(att.FirstSentAt) != LinkLifetime || v.Final() {
		t.Fatalf("view %+v", v)
	}
	e.pay(cartID, 0, cloudsim.PayCard)
	v := e.wait(h)
	if v.State != journal.StateApproved || !v.OrderPaid || v.ChargedAmount != 1250 || v.TransactionID == "" {
		t.Fatalf("view %+v", v)
	}
	if carts := e.cloud.Carts(); len(carts) != 1 || carts[0].Status != cloudsim.CartOK {
		t.Fatalf("carts %+v", carts)
	}
}

// A lost answer to generate_link is settled by asking again with the same
// cart_id: one link, not two.
func TestLinkLostAnswerOneLink(t *testing.T) {
	e := newLinkEnv(t, LinkOptions{})
	if err := e.cloud.Inject(cloudsim.Fault{Path: cloudsim.PathGenerateLink, After: true}); err != nil {
		t.Fatal(err)
	}
	h := e.kiosk("K2", 900)
	link, cartID := e.linkOf(h)
	carts := e.cloud.Carts()
	if len(carts) != 1 || carts[0].PaymentLink != link || carts[0].CartID != cartID {
		t.Fatalf("link %s, carts %+v", link, carts)
	}
	if att := e.attempt(h.UUID()); att.SendCount != 2 {
		t.Fatalf("%d sends", att.SendCount)
	}
	e.pay(cartID, 0, cloudsim.PayCard)
	if v := e.wait(h); v.State != journal.StateApproved {
		t.Fatalf("view %+v", v)
	}
}

// A refused link request fails at once: no link, nothing to pay.
func TestLinkRefused(t *testing.T) {
	e := newLinkEnv(t, LinkOptions{})
	if err := e.cloud.Inject(cloudsim.Fault{Path: cloudsim.PathGenerateLink, Status: 400}); err != nil {
		t.Fatal(err)
	}
	v := e.wait(e.kiosk("K3", 900))
	if v.State != journal.StateFailed || !strings.Contains(v.Message, "400") || v.Link != "" || len(e.cloud.Carts()) != 0 {
		t.Fatalf("view %+v", v)
	}
}

// The customer pays part with a meal voucher: the screen shows it; the
// rest by card ends it paid.
func TestLinkPartialThenRest(t *testing.T) {
	e := newLinkEnv(t, LinkOptions{})
	h, cartID := e.startLink("K4", 2000)
	e.pay(cartID, 1200, cloudsim.PayMealVoucher)
	if v := e.until(h, func(v View) bool { return v.Paid == 1200 }); v.Final() {
		t.Fatalf("final after a part: %+v", v)
	}
	e.pay(cartID, 0, cloudsim.PayCard)
	v := e.wait(h)
	if v.State != journal.StateApproved || v.ChargedAmount != 2000 || !strings.Contains(v.TransactionID, ",") {
		t.Fatalf("view %+v", v)
	}
}

// A link nobody pays is ko after the provider's 72 h: the journal agrees,
// nothing charged.
func TestLinkExpiredUnpaid(t *testing.T) {
	e := newLinkEnv(t, LinkOptions{})
	h, cartID := e.startLink("K5", 700)
	if err := e.cloud.ExpireCart(cartID); err != nil {
		t.Fatal(err)
	}
	v := e.wait(h)
	if v.State != journal.StateCancelled || v.OrderPaid || !strings.Contains(v.Message, "expired") {
		t.Fatalf("view %+v", v)
	}
}

// Part paid by meal voucher (which cannot be cancelled), and then nothing:
// past its lifetime the link is cancelled by Comptoir, which the provider
// refuses; nobody guesses: unknown, for staff, with what was paid.
func TestLinkPartialThenExpiry(t *testing.T) {
	t.Parallel() // waits on real cadences: beside the others
	e := newLinkEnv(t, LinkOptions{Lifetime: 300 * time.Millisecond, Margin: 50 * time.Millisecond})
	// The provider's answer to the cancel is awaited a second.
	lim := testLimits
	lim.RequestOpen = time.Second
	e.restartOn(nil, lim)
	h, cartID := e.startLink("K6", 2000)
	e.pay(cartID, 800, cloudsim.PayMealVoucher)
	v := e.wait(h)
	if v.State != journal.StateUnknown || v.Paid != 800 || e.orderStatus("K6") != journal.OrderNeedsAttention {
		t.Fatalf("view %+v, order %s", v, e.orderStatus("K6"))
	}
	// With a card part instead, the cancel gives it back: cancelled.
	h, cartID = e.startLink("K7", 2000)
	e.pay(cartID, 800, cloudsim.PayCard)
	if v := e.wait(h); v.State != journal.StateCancelled || v.OrderPaid {
		t.Fatalf("card part: view %+v", v)
	}
	if carts := e.cloud.Carts(); carts[1].Status != cloudsim.CartKO || carts[1].PaidAmount != 0 {
		t.Fatalf("carts %+v", carts)
	}
}

// Cancel racing the payment: the provider says the cart is paid in full,
// and paid wins, said as charged despite the cancel.
func TestLinkCancelRacingPayment(t *testing.T) {
	e := newLinkEnv(t, LinkOptions{PollEvery: time.Hour})
	h, cartID := e.startLink("K8", 1500)
	e.pay(cartID, 0, cloudsim.PayCard)
	h.Cancel()
	v := e.wait(h)
	if v.State != journal.StateApproved || !v.ChargedDespiteCancel || !v.OrderPaid {
		t.Fatalf("view %+v", v)
	}
	// A cancel with nothing paid: the cart is cancelled, then read.
	h, cartID = e.startLink("K9", 1500)
	h.Cancel()
	if v := e.wait(h); v.State != journal.StateCancelled {
		t.Fatalf("view %+v", v)
	}
	if _, err := e.cloud.PayCart(cartID, 0, 0, cloudsim.PayCard, false); err == nil {
		t.Fatal("a cancelled link could still be paid")
	}
}

// A restart while a link is pending: recovery resumes reading its cart
// without waiting for its customer, and new links start beside it.
func TestLinkRestartWhilePending(t *testing.T) {
	e := newLinkEnv(t, LinkOptions{})
	h := e.kiosk("KA", 1100)
	link, cartID := e.linkOf(h)
	id := h.UUID()
	e.close()
	e.open(nil, testLimits)
	views := e.recover()
	if len(views) != 1 || views[0].UUID != id || views[0].Final() || views[0].Link != link {
		t.Fatalf("recovered %+v", views)
	}
	other := e.kiosk("KB", 500)
	e.linkOf(other)
	e.pay(cartID, 0, cloudsim.PayCard)
	r, ok := e.o.Active(id)
	if !ok {
		t.Fatal("the recovered link is not followed")
	}
	if v := e.wait(r); v.State != journal.StateApproved || !v.OrderPaid {
		t.Fatalf("view %+v", v)
	}
	if v := other.View(); v.Final() {
		t.Fatalf("the other link ended: %+v", v)
	}
}

// The terminal's orchestrator leaves the links' attempts to theirs.
func TestLinkAttemptsLeftToTheirOrchestrator(t *testing.T) {
	e := newLinkEnv(t, LinkOptions{})
	h := e.kiosk("KC", 1100)
	e.linkOf(h)
	term, err := New(Config{Journal: e.db, Terminal: &fakeTerminal{}, TerminalID: "sim", Limits: testLimits,
		OtherChannels: []journal.Channel{journal.ChannelLink}})
	if err != nil {
		t.Fatal(err)
	}
	defer term.Close()
	if views, err := term.Recover(e.ctx); err != nil || len(views) != 0 {
		t.Fatalf("recovered %+v, %v", views, err)
	}
	if att := e.attempt(h.UUID()); att.State != journal.StateSent {
		t.Fatalf("attempt %+v", att)
	}
}

func TestLinkBodyRules(t *testing.T) {
	ch := Link(nil, LinkOptions{ReturnURL: "https://shop.example/"})
	pol, _ := DefaultLimits.Policy(journal.PolicyCounter)
	body, err := ch.Body(NewAttempt{UUID: "u1", Policy: pol, Request: Request{OrderID: "O1", Amount: 500}})
	if err != nil {
		t.Fatal(err)
	}
	var b map[string]any
	if err := json.Unmarshal(body, &b); err != nil || b["cart_id"] != "O1-u1" || b["return_url_cancelled"] != "https://shop.example/" {
		t.Fatalf("%s, %v", body, err)
	}
	refund, _ := DefaultLimits.Policy(journal.PolicyRefund)
	for name, a := range map[string]NewAttempt{
		"refund":        {UUID: "u2", Policy: refund, Request: Request{OrderID: "O1", Amount: 500}},
		"sms, no phone": {UUID: "u3", Policy: pol, Request: Request{OrderID: "O1", Amount: 500, Link: &LinkDetails{ShareBySMS: true}}},
		"gift":          {UUID: "u4", Policy: pol, Request: Request{OrderID: "O1", Amount: 500, GiftAmount: 10}},
	} {
		if _, err := ch.Body(a); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
