package kiosk

import (
	"strings"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/cloudsim"
	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/orders"
	"github.com/comptoir-pos/comptoir/backend/payment"
	"github.com/comptoir-pos/comptoir/backend/receipt"
)

// cartOf is the cart of the order the kiosk shows.
func (e *env) cartOf(v CheckoutView) string {
	e.t.Helper()
	atts, err := e.db.AttemptsForOrder(e.ctx, v.OrderID)
	if err != nil || len(atts) == 0 {
		e.t.Fatalf("attempts of %s: %v", v.OrderID, err)
	}
	last := atts[len(atts)-1]
	return payment.LinkCartID(last.OrderID, last.UUID)
}

func (e *env) payByPhone() CheckoutView {
	e.t.Helper()
	e.must(e.s.Pay(MethodPhone))
	return e.waitFor("the link", func(v CheckoutView) bool { return v.Payment != nil && v.Payment.Link != "" })
}

// Paying by phone while the terminal cannot be reached: the QR code's
// link, then the approved screen, the order paid, its receipt saying so.
func TestPayByPhone(t *testing.T) {
	e := newEnv(t, withLinks(time.Hour))
	if !e.s.Info().PhonePay {
		t.Fatal("paying by phone not offered")
	}
	e.cart("croissant", 2, "cafe-creme", 1)
	e.state.Store(TerminalUnreachable)
	e.s.RefreshTerminal()
	e.waitFor("terminal unreachable", func(CheckoutView) bool { return e.s.Terminal().State == TerminalUnreachable })
	if v, _ := e.s.Pay(MethodCard); v.Error != ErrTerminalUnavailable {
		t.Fatalf("card with no terminal: %+v", v)
	}
	v := e.payByPhone()
	if v.Phase != PhasePaying || v.Payment.Step != StepPhone || v.Payment.Amount != v.Total || !strings.Contains(v.Payment.Link, "/pay/") {
		t.Fatalf("paying: %+v %+v", v, v.Payment)
	}
	atts, _ := e.db.AttemptsForOrder(e.ctx, v.OrderID)
	if len(atts) != 1 || atts[0].Channel != journal.ChannelLink || !strings.Contains(string(atts[0].RequestBody), `"order_source":"pay_at_table"`) {
		t.Fatalf("attempts %+v", atts)
	}
	if _, err := e.cloud.PayCart(e.cartOf(v), 0, 0, cloudsim.PayCard, false); err != nil {
		t.Fatal(err)
	}
	v = e.waitPhase(PhaseApproved)
	if v.Payment.Due != 0 || v.Payment.Paid != v.Total || len(e.debits()) != 0 {
		t.Fatalf("approved: %+v, terminal debits %+v", v.Payment, e.debits())
	}
	e.waitFor("order paid", func(CheckoutView) bool { return e.order(v.OrderID).Status == journal.OrderPaid })
	e.state.Store(TerminalConnected)
	e.s.RefreshTerminal()
	e.must(e.s.ChooseReceipt(ReceiptPrint))
	e.waitFor("receipt", func(v CheckoutView) bool { return v.Receipt != nil && v.Receipt.Status == ReceiptDone })
	var found bool
	for _, tk := range e.printedFrom("print") {
		found = found || strings.Contains(tk.Text, "Paiement par téléphone")
	}
	if !found {
		t.Fatalf("no receipt saying it was paid by phone: %+v", e.printedFrom("print"))
	}
	// A reprint, rebuilt from the journal, says the same.
	r, opt, err := orders.OrderReceipt(e.ctx, e.db, e.s.Settings(), v.OrderID)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Payments) != 1 || r.Payments[0].Kind != receipt.KindLink ||
		!strings.Contains(receipt.CustomerReceiptText(r, opt), "Paiement par téléphone") {
		t.Fatalf("the journal's receipt of a phone payment: %+v", r.Payments)
	}
}

// A meal voucher pays part on the phone: the screen shows it, and the end
// of the QR code's time on screen does not cancel a link with money in it.
// The screen's time ends here when the test says (its timer's work called
// once the part is seen), not on a timer racing the part's poll.
func TestPayByPhonePartNeverAbandoned(t *testing.T) {
	e := newEnv(t, withLinks(time.Hour))
	e.cart("croissant", 2, "cafe-creme", 1)
	v := e.payByPhone()
	if _, err := e.cloud.PayCart(e.cartOf(v), 200, 0, cloudsim.PayMealVoucher, false); err != nil {
		t.Fatal(err)
	}
	e.waitFor("the part paid", func(v CheckoutView) bool { return v.Payment.LinkPaid == 200 })
	if v, _ := e.s.Abandon(); v.Phase != PhasePaying {
		t.Fatalf("abandoned: %+v", v)
	}
	e.waitFor("the attempt's view with the part", func(CheckoutView) bool {
		e.s.mu.Lock()
		defer e.s.mu.Unlock()
		return e.s.co.att != nil && e.s.co.att.h != nil && e.s.co.att.h.View().Paid == 200
	})
	if stopped, att := e.endLinkScreen(); stopped || att.cancel {
		t.Fatalf("the kiosk stopped following, or cancelled, a link with money in it (stopped %v)", stopped)
	}
	if v := e.s.Checkout(); v.Phase != PhasePaying {
		t.Fatalf("after the screen's time: %+v", v)
	}
	if _, err := e.cloud.PayCart(e.cartOf(v), 0, 0, cloudsim.PayCard, false); err != nil {
		t.Fatal(err)
	}
	e.waitPhase(PhaseApproved)
}

// The link's time on screen is a timer of its own: when it ends with
// nothing paid and nothing printed, the payment by phone ends cancelled
// (whether or not the provider had made the link yet), and the customer
// can pay by card.
func TestALinksTimeOnScreenEndsItUnpaid(t *testing.T) {
	e := newEnv(t, withLinks(300*time.Millisecond))
	e.cart("croissant", 1)
	e.must(e.s.Pay(MethodPhone))
	if v := e.waitPhase(PhaseDeclined); v.Payment.Outcome != OutcomeCancelled {
		t.Fatalf("after the screen's time: %+v", v.Payment)
	}
	for _, c := range e.cloud.Carts() {
		if c.Status != cloudsim.CartKO {
			t.Fatalf("a link left open: %+v", c)
		}
	}
	e.must(e.s.PayRestByCard())
	e.waitPhase(PhaseApproved)
}

// endLinkScreen ends the time on screen of the link the checkout shows,
// as its timer would: tests end it when they say, not on a timer racing
// the link's creation and polls. It returns whether the kiosk stopped
// following the link, and the link's attempt.
func (e *env) endLinkScreen() (stopped bool, att *attempt) {
	e.t.Helper()
	e.waitFor("a link out", func(CheckoutView) bool {
		e.s.mu.Lock()
		defer e.s.mu.Unlock()
		return e.s.co.att != nil && e.s.co.att.h != nil
	})
	e.s.mu.Lock()
	gen, att := e.s.co.gen, e.s.co.att
	e.s.mu.Unlock()
	return e.s.linkScreenOver(gen, att), att
}

// Nobody pays and nothing was printed: at the end of its time on screen
// the link is cancelled; the customer can pay by card instead.
func TestPayByPhoneScreenTimeout(t *testing.T) {
	e := newEnv(t, withLinks(time.Hour))
	e.cart("croissant", 1)
	v := e.payByPhone()
	cart := e.cartOf(v)
	e.endLinkScreen()
	e.waitPhase(PhaseDeclined)
	if carts := e.cloud.Carts(); len(carts) != 1 || carts[0].Status != cloudsim.CartKO {
		t.Fatalf("carts %+v", carts)
	}
	if _, err := e.cloud.PayCart(cart, 0, 0, cloudsim.PayCard, false); err == nil {
		t.Fatal("the cancelled link could be paid")
	}
	e.must(e.s.PayRestByCard())
	if e.waitPhase(PhaseApproved); len(e.debits()) != 1 {
		t.Fatalf("card after the link: %+v", e.debits())
	}
}

// The QR code printed: the customer pays at their table; the kiosk goes
// back to welcome at once (not when the QR code's time on screen ends),
// the next customer cannot cancel the printed link, and the journal
// follows the link to its payment.
func TestPayByPhonePrintedThenAtTheTable(t *testing.T) {
	e := newEnv(t, withLinks(time.Hour))
	e.cart("croissant", 1)
	v := e.payByPhone()
	id, cart, link := v.OrderID, e.cartOf(v), v.Payment.Link
	v = e.must(e.s.PrintLink())
	if v.Phase != PhaseWelcome || v.Payment != nil {
		t.Fatalf("after printing the code: %s %+v", v.Phase, v.Payment)
	}
	var tk string
	for _, p := range e.printedFrom("print") {
		if strings.Contains(p.Text, "[QR "+link+"]") {
			tk = p.Text
		}
	}
	if tk == "" || !strings.Contains(tk, "Scannez pour payer") {
		t.Fatalf("printed %+v", e.printedFrom("print"))
	}
	// The next customer: nothing of the printed link is theirs to cancel.
	if v, _ := e.s.Cancel(); v.Phase != PhaseWelcome || v.Error != ErrWrongPhase {
		t.Fatalf("the next customer's Cancel: %s %q", v.Phase, v.Error)
	}
	if carts := e.cloud.Carts(); len(carts) != 1 || carts[0].Status == cloudsim.CartKO {
		t.Fatalf("carts after the next customer's touch %+v", carts)
	}
	if _, err := e.cloud.PayCart(cart, 0, 0, cloudsim.PayCard, false); err != nil {
		t.Fatal(err)
	}
	e.waitFor("order paid", func(CheckoutView) bool { return e.order(id).Status == journal.OrderPaid })
}

// printedAndLeft orders, shows the QR code, prints it, and lets the
// screen's time end: the kiosk is back at welcome, the link runs on.
func printedAndLeft(t *testing.T) (e *env, orderID, cart string) {
	t.Helper()
	e = newEnv(t, withLinks(time.Hour))
	e.cart("croissant", 1)
	v := e.payByPhone()
	orderID, cart = v.OrderID, e.cartOf(v)
	e.must(e.s.PrintLink())
	e.waitPhase(PhaseWelcome)
	return e, orderID, cart
}

// The printed QR code paid at the table, away from the screen: the kitchen
// still gets the order's ticket, once, when the link pays the order.
func TestPayByPhonePrintedPaidLaterTicket(t *testing.T) {
	e, id, cart := printedAndLeft(t)
	tickets := func() (n int) {
		for _, p := range e.printedFrom("print") {
			if strings.Contains(p.Text, "Commande") && strings.Contains(p.Text, "Croissant") && !strings.Contains(p.Text, "[QR ") {
				n++
			}
		}
		return n
	}
	if n := tickets(); n != 0 {
		t.Fatalf("an order ticket before the payment: %d", n)
	}
	if _, err := e.cloud.PayCart(cart, 0, 0, cloudsim.PayCard, false); err != nil {
		t.Fatal(err)
	}
	e.waitFor("the order ticket", func(CheckoutView) bool { return tickets() == 1 })
	if o := e.order(id); o.Status != journal.OrderPaid {
		t.Fatalf("order %+v", o)
	}
}

// The printed QR code never paid: when the provider ends the link, the
// order is closed as cancelled instead of staying open for ever.
func TestPayByPhonePrintedExpiredClosesOrder(t *testing.T) {
	e, id, cart := printedAndLeft(t)
	if o := e.order(id); o.Status != journal.OrderOpen {
		t.Fatalf("order closed while its link runs: %+v", o)
	}
	if err := e.cloud.ExpireCart(cart); err != nil {
		t.Fatal(err)
	}
	e.waitFor("order cancelled", func(CheckoutView) bool { return e.order(id).Status == journal.OrderCancelled })
	for _, p := range e.printedFrom("print") {
		if !strings.Contains(p.Text, "[QR ") {
			t.Fatalf("printed for an unpaid link: %q", p.Text)
		}
	}
}
