package staff

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/cloudapi"
	"github.com/comptoir-pos/comptoir/backend/cloudsim"
	"github.com/comptoir-pos/comptoir/backend/fault"
	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/payment"
)

var martin = LinkRequest{Amount: 2450, Label: "Commande Martin 12:30", FirstName: "Claire", LastName: "Martin", Phone: "+33 6 12 34 56 78"}

// linkUntil reads the link's attempt as staff see it until cond holds.
func (e *env) linkUntil(sid, uuid, what string, cond func(AttemptView) bool) AttemptView {
	e.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		v, err := e.st.linkView(e.ctx, uuid)
		if err != nil {
			e.t.Fatal(err)
		}
		if cond(v) {
			return v
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("timed out waiting for %s: %+v", what, v)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// cartOf is the simulated cloud's cart of a link attempt.
func (e *env) cartOf(v AttemptView) cloudsim.CartView {
	e.t.Helper()
	id := payment.LinkCartID(v.OrderID, v.UUID)
	for _, c := range e.cloud.Carts() {
		if c.CartID == id {
			return c
		}
	}
	e.t.Fatalf("no cart %s in %+v", id, e.cloud.Carts())
	return cloudsim.CartView{}
}

// authorisedLink sends an authorise-only link, has the customer pay it,
// and waits until the journal holds it paid, to capture.
func (e *env) authorisedLink() (string, AttemptView) {
	e.t.Helper()
	sid := e.unlock().ID
	r := martin
	r.AuthoriseOnly = true
	v, err := e.st.SendLink(e.ctx, sid, r)
	if err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.cloud.PayCart(e.cartOf(v).CartID, 0, 0, cloudsim.PayCard, false); err != nil {
		e.t.Fatal(err)
	}
	return sid, e.linkUntil(sid, v.UUID, "authorised", func(v AttemptView) bool { return v.CanCapture && v.OrderStatus == journal.OrderPaid })
}

// Staff send a link by SMS to a phone order's customer: an order of the
// amount, a link attempt journaled with the provider's SMS feature and
// the customer, shown among the payments until the customer pays it.
func TestSendLinkBySMS(t *testing.T) {
	e := newEnv(t, withLinks(5*time.Millisecond, nil))
	sid := e.unlock().ID
	v, err := e.st.SendLink(e.ctx, sid, martin)
	if err != nil {
		t.Fatal(err)
	}
	if v.Channel != journal.ChannelLink || v.Link == "" || !v.CanCancelLink || v.State.Final() || v.Amount != 2450 || v.Policy != journal.PolicyCounter {
		t.Fatalf("sent %+v", v)
	}
	o, err := e.db.Order(e.ctx, v.OrderID)
	if err != nil || o.Total != 2450 || o.Status != journal.OrderOpen || !strings.Contains(string(o.Data), "Commande Martin") {
		t.Fatalf("order %+v, %v", o, err)
	}
	cart := e.cartOf(v)
	for k, want := range map[string]string{
		"order_source": `"click_and_collect"`, "message": `"Commande Martin 12:30"`,
	} {
		if got := string(cart.Request[k]); got != want {
			t.Errorf("%s = %s, want %s", k, got, want)
		}
	}
	if f := string(cart.Request["features"]); !strings.Contains(f, `"share_by_sms":true`) || strings.Contains(f, `"share_by_email":true`) {
		t.Errorf("features %s", f)
	}
	if c := string(cart.Request["customer"]); !strings.Contains(c, `"telephone":"+33612345678"`) || !strings.Contains(c, `"last_name":"Martin"`) {
		t.Errorf("customer %s", c)
	}
	page, err := e.st.Attempts(e.ctx, sid, Filter{OrderNumber: v.OrderID})
	if err != nil || page.Total != 1 || page.Attempts[0].Link != v.Link {
		t.Fatalf("listed %+v, %v", page, err)
	}
	if _, err := e.cloud.PayCart(cart.CartID, 0, 0, cloudsim.PayCard, false); err != nil {
		t.Fatal(err)
	}
	// The order is settled just after the attempt's outcome (a view reads
	// the attempt, then its order: wait for both).
	v = e.linkUntil(sid, v.UUID, "paid", func(v AttemptView) bool {
		return v.OrderStatus == journal.OrderPaid && v.State == journal.StateApproved
	})
	if v.CanCancelLink || v.CanCapture || v.State != journal.StateApproved || v.ProviderStatus != cloudapi.CartOK {
		t.Fatalf("paid %+v", v)
	}
	if ev := e.events(v.UUID); !hasNote(ev, "payment link of 2450 sent by staff (SMS)") {
		t.Fatalf("no note naming the sending: %+v", ev)
	}
}

func hasNote(evs []journal.Event, text string) bool {
	for _, ev := range evs {
		if ev.Kind == journal.EventNote && strings.HasPrefix(ev.Actor, "staff:") && strings.Contains(ev.Detail, text) {
			return true
		}
	}
	return false
}

// A link request that cannot be sent is refused whole: no order, no
// attempt, a sentence saying what to change.
func TestSendLinkRefused(t *testing.T) {
	e := newEnv(t, withLinks(5*time.Millisecond, nil))
	sid := e.unlock().ID
	for name, mod := range map[string]func(*LinkRequest){
		"no amount":         func(r *LinkRequest) { r.Amount = 0 },
		"nowhere to send":   func(r *LinkRequest) { r.Phone, r.Email = "", "" },
		"no last name":      func(r *LinkRequest) { r.LastName = " " },
		"national number":   func(r *LinkRequest) { r.Phone = "06 12 34 56 78" },
		"letters":           func(r *LinkRequest) { r.Phone = "+33 6 12 AB 56 78" },
		"not an email":      func(r *LinkRequest) { r.Phone, r.Email = "", "claire.martin" },
		"email with a name": func(r *LinkRequest) { r.Phone, r.Email = "", "Claire <claire@example.fr>" },
	} {
		r := martin
		mod(&r)
		_, err := e.st.SendLink(e.ctx, sid, r)
		if se := wantCode(t, err, EINVALID); se.Message == "" {
			t.Errorf("%s: no message", name)
		}
	}
	if atts, _ := e.db.ListAttempts(e.ctx, journal.AttemptFilter{}); len(atts) != 0 {
		t.Fatalf("attempts made for refused links: %+v", atts)
	}
	if carts := e.cloud.Carts(); len(carts) != 0 {
		t.Fatalf("carts made: %+v", carts)
	}
	// Without the cloud, there are no links.
	plain := newEnv(t)
	_, err := plain.st.SendLink(plain.ctx, plain.unlock().ID, martin)
	wantCode(t, err, EINVALID)
	if plain.st.OffersLinks() || !e.st.OffersLinks() {
		t.Fatal("OffersLinks does not follow the cloud")
	}
}

// Staff cancel a link nobody paid: the cart is cancelled, the attempt
// says so, and there is nothing left to cancel.
func TestCancelLink(t *testing.T) {
	e := newEnv(t, withLinks(5*time.Millisecond, nil))
	sid := e.unlock().ID
	r := martin
	r.Phone, r.Email = "", "claire@example.fr"
	v, err := e.st.SendLink(e.ctx, sid, r)
	if err != nil {
		t.Fatal(err)
	}
	if f := string(e.cartOf(v).Request["features"]); !strings.Contains(f, `"share_by_email":true`) {
		t.Fatalf("features %s", f)
	}
	v, err = e.st.CancelLink(e.ctx, sid, v.UUID)
	if err != nil {
		t.Fatal(err)
	}
	if v.State != journal.StateCancelled || v.CanCancelLink || v.OrderStatus != journal.OrderCancelled {
		t.Fatalf("cancelled %+v", v)
	}
	if c := e.cartOf(v); c.Status != cloudsim.CartKO {
		t.Fatalf("cart %+v", c)
	}
	_, err = e.st.CancelLink(e.ctx, sid, v.UUID)
	wantCode(t, err, EINVALID)
	if !hasNote(e.events(v.UUID), "cancel asked by staff") {
		t.Fatalf("no note of the cancel: %+v", e.events(v.UUID))
	}
}

// The customer pays just before staff cancel: the cart was paid in full,
// so the link is paid, and the cancel's answer says so.
func TestCancelLinkPaidWins(t *testing.T) {
	e := newEnv(t, withLinks(time.Hour, nil)) // the cart is read only at the cancel
	sid := e.unlock().ID
	v, err := e.st.SendLink(e.ctx, sid, martin)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.cloud.PayCart(e.cartOf(v).CartID, 0, 0, cloudsim.PayCard, false); err != nil {
		t.Fatal(err)
	}
	v, err = e.st.CancelLink(e.ctx, sid, v.UUID)
	if err != nil {
		t.Fatal(err)
	}
	if v.State != journal.StateApproved {
		t.Fatalf("after the cancel %+v", v)
	}
	if c := e.cartOf(v); c.Status != cloudsim.CartOK {
		t.Fatalf("cart %+v", c)
	}
}

// An authorise-only link, paid: staff capture it once; the journal keeps
// the capture as an event and the cart is ok.
func TestCaptureLink(t *testing.T) {
	e := newEnv(t, withLinks(5*time.Millisecond, nil))
	sid := e.unlock().ID
	r := martin
	r.AuthoriseOnly = true
	v, err := e.st.SendLink(e.ctx, sid, r)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.st.CaptureLink(e.ctx, sid, v.UUID); fault.CodeOf(err) != EINVALID {
		t.Fatalf("capture of an unpaid link: %v", err)
	}
	if _, err := e.cloud.PayCart(e.cartOf(v).CartID, 0, 0, cloudsim.PayCard, false); err != nil {
		t.Fatal(err)
	}
	v = e.linkUntil(sid, v.UUID, "authorised", func(v AttemptView) bool {
		return v.OrderStatus == journal.OrderPaid && v.State == journal.StateApproved
	})
	if v.State != journal.StateApproved || v.ProviderStatus != cloudapi.CartAuthorised || !v.CanCapture {
		t.Fatalf("authorised %+v", v)
	}
	v, err = e.st.CaptureLink(e.ctx, sid, v.UUID)
	if err != nil {
		t.Fatal(err)
	}
	if v.ProviderStatus != cloudapi.CartOK || v.CanCapture || v.State != journal.StateApproved || v.OrderStatus != journal.OrderPaid {
		t.Fatalf("captured %+v", v)
	}
	if c := e.cartOf(v); c.Status != cloudsim.CartOK {
		t.Fatalf("cart %+v", c)
	}
	if last := e.lastEvent(v.UUID); last.Kind != journal.EventCaptured || !strings.HasPrefix(last.Actor, "staff:") {
		t.Fatalf("last event %+v", last)
	}
	_, err = e.st.CaptureLink(e.ctx, sid, v.UUID)
	wantCode(t, err, EINVALID)
}

// lostCapture captures, then loses the answer.
type lostCapture struct{ *cloudapi.Client }

func (l lostCapture) Capture(ctx context.Context, cartID string, amount int64) (*cloudapi.Cart, error) {
	if _, err := l.Client.Capture(ctx, cartID, amount); err != nil {
		return nil, err
	}
	return nil, errors.New("connection reset by peer")
}

// The capture's answer is lost: the cart, read again, says it was
// captured, and the journal records that; nothing is asked twice.
func TestCaptureLinkLostAnswer(t *testing.T) {
	e := newEnv(t, withLinks(5*time.Millisecond, func(c *cloudapi.Client) payment.LinkAPI { return lostCapture{c} }))
	sid, v := e.authorisedLink()
	v, err := e.st.CaptureLink(e.ctx, sid, v.UUID)
	if err != nil || v.ProviderStatus != cloudapi.CartOK {
		t.Fatalf("captured %+v, %v", v, err)
	}
}

// The issuer refuses the capture: nothing is recorded as captured, the
// link stays authorised and can be captured again.
func TestCaptureLinkRefused(t *testing.T) {
	e := newEnv(t, withLinks(5*time.Millisecond, nil))
	sid, v := e.authorisedLink()
	resp, err := http.Post(e.cloud.URL()+"/sim/carts/refuse-next-capture", "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	_, err = e.st.CaptureLink(e.ctx, sid, v.UUID)
	wantCode(t, err, ETERMINAL)
	v, _ = e.st.linkView(e.ctx, v.UUID)
	if v.ProviderStatus != cloudapi.CartAuthorised || !v.CanCapture || e.cartOf(v).Status != cloudsim.CartAuthorised {
		t.Fatalf("after the refusal %+v, cart %+v", v, e.cartOf(v))
	}
	if v, err = e.st.CaptureLink(e.ctx, sid, v.UUID); err != nil || v.ProviderStatus != cloudapi.CartOK {
		t.Fatalf("second capture %+v, %v", v, err)
	}
}

// releasedCart answers that the authorised cart was cancelled meanwhile:
// once a capture is asked, the cart reads ko.
type releasedCart struct {
	*cloudapi.Client
	asked *atomic.Bool
}

func (r releasedCart) Capture(context.Context, string, int64) (*cloudapi.Cart, error) {
	r.asked.Store(true)
	return nil, &cloudapi.CaptureError{Reason: cloudapi.CaptureCancelled, Message: "This cart has already been cancelled"}
}

func (r releasedCart) Cart(ctx context.Context, id string) (*cloudapi.Cart, error) {
	if !r.asked.Load() {
		return r.Client.Cart(ctx, id)
	}
	return &cloudapi.Cart{CartID: id, Status: cloudapi.CartKO, Raw: []byte(`{"status":"ko"}`)}, nil
}

// The provider released the authorised money instead: the journal keeps
// the approval (it was approved) with the cart's end, and the order needs
// staff: the customer was not charged in the end.
func TestCaptureLinkReleased(t *testing.T) {
	e := newEnv(t, withLinks(5*time.Millisecond, func(c *cloudapi.Client) payment.LinkAPI { return releasedCart{c, new(atomic.Bool)} }))
	sid, v := e.authorisedLink()
	_, err := e.st.CaptureLink(e.ctx, sid, v.UUID)
	wantCode(t, err, EINVALID)
	v, _ = e.st.linkView(e.ctx, v.UUID)
	if v.ProviderStatus != cloudapi.CartKO || v.CanCapture || v.OrderStatus != journal.OrderNeedsAttention || !v.NeedsAttention {
		t.Fatalf("released %+v", v)
	}
}
