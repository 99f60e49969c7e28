package staff

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/device"
	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/localapi"
	"github.com/comptoir-pos/comptoir/backend/payment"
	"github.com/comptoir-pos/comptoir/backend/terminalsim"
)

func TestReverseThenAlreadyReversed(t *testing.T) {
	e := newEnv(t)
	s := e.unlock()
	ord, v := e.paidOrder(1250)

	res, err := e.st.Reverse(e.ctx, s.ID, v.UUID)
	if err != nil {
		t.Fatal(err)
	}
	if res.Amount != 1250 || res.InitialTransactionID != v.TransactionID || res.ReversalTransactionID == "" || res.ReversalUUID == "" {
		t.Fatalf("reversal %+v", res)
	}
	revs := e.reversals()
	if len(revs) != 1 || revs[0].Amount != 1250 || revs[0].InitialTransactionID != v.TransactionID {
		t.Fatalf("terminal ledger reversals %+v", revs)
	}
	// The reversal is an attempt of its own: its request journaled, its
	// answer on its events, staff's request as a note.
	rv, err := e.db.Attempt(e.ctx, res.ReversalUUID)
	if err != nil || rv.Kind != journal.KindReversal || rv.State != journal.StateApproved || rv.TransactionID != res.ReversalTransactionID {
		t.Fatalf("reversal attempt %+v, %v", rv, err)
	}
	ev := e.lastEvent(res.ReversalUUID)
	if ev.Kind != journal.EventNote || ev.Actor != s.Who || !strings.Contains(ev.Detail, v.TransactionID) {
		t.Fatalf("audit note %+v", ev)
	}
	page, err := e.st.Attempts(e.ctx, s.ID, Filter{Today: true})
	if err != nil || len(page.Attempts) != 2 {
		t.Fatalf("attempts after the reversal %+v, %v", page, err)
	}
	for _, a := range page.Attempts {
		if a.UUID == v.UUID && (a.ReversalTransactionID != res.ReversalTransactionID || a.CanReverse || a.RefundableLeft != 0) {
			t.Fatalf("the reversed debit as staff see it: %+v", a)
		}
	}
	// A second reversal is refused before anything is sent.
	_, err = e.st.Reverse(e.ctx, s.ID, v.UUID)
	se := wantCode(t, err, EINVALID)
	if !strings.Contains(se.Message, "already has reversal") || !strings.Contains(se.Message, "Nothing was sent") {
		t.Fatalf("second reversal %+v", se)
	}
	// And so is a refund: everything was given back.
	_, err = e.st.Refund(e.ctx, s.ID, ord, 100)
	wantCode(t, err, EINVALID)
	if len(e.reversals()) != 1 {
		t.Fatal("a second reversal reached the ledger")
	}
}

// A refund first, then a reversal of the same order, would give back more
// than was taken: the reversal is refused, and not offered.
func TestRefundThenReverseRefused(t *testing.T) {
	e := newEnv(t)
	s := e.unlock()
	ord, v := e.paidOrder(2000)
	page, err := e.st.Attempts(e.ctx, s.ID, Filter{OrderNumber: ord})
	if err != nil || len(page.Attempts) != 1 || !page.Attempts[0].CanReverse || page.Attempts[0].RefundableLeft != 2000 {
		t.Fatalf("before: %+v, %v", page, err)
	}
	if r, err := e.st.Refund(e.ctx, s.ID, ord, 500); err != nil || r.State != journal.StateApproved {
		t.Fatalf("refund %+v, %v", r, err)
	}
	page, _ = e.st.Attempts(e.ctx, s.ID, Filter{OrderNumber: ord})
	for _, a := range page.Attempts {
		if a.UUID == v.UUID && (a.CanReverse || a.RefundableLeft != 1500) {
			t.Fatalf("after a refund: %+v", a)
		}
	}
	_, err = e.st.Reverse(e.ctx, s.ID, v.UUID)
	wantCode(t, err, EINVALID)
	if len(e.reversals()) != 0 {
		t.Fatal("reversed after a refund")
	}
}

func TestReverseAmountIncludesTip(t *testing.T) {
	e := newEnv(t)
	s := e.unlock()
	e.sim.SetTipsEnabled(true) // counter mode: the terminal's tip screen applies
	e.sim.Script(terminalsim.Approve().WithTip(200))
	ord := e.order(1500)
	v := e.pay(ord, 1500, journal.PolicyCounter, journal.StateApproved)
	if v.GiftAmount != 200 {
		t.Fatalf("tip %d, want 200", v.GiftAmount)
	}
	res, err := e.st.Reverse(e.ctx, s.ID, v.UUID)
	if err != nil {
		t.Fatal(err)
	}
	if res.Amount != 1700 {
		t.Fatalf("reversal amount %d, want amount + giftAmount = 1700", res.Amount)
	}
	if revs := e.reversals(); len(revs) != 1 || revs[0].Amount != 1700 {
		t.Fatalf("ledger %+v", revs)
	}
}

func TestReverseTerminalErrors(t *testing.T) {
	tests := []struct {
		name  string
		setup func(e *env)
		code  device.Code
	}{
		{"too old by the terminal's clock", func(e *env) { e.sim.Advance(17 * time.Hour) }, device.CodeReversalNotEligible},
		{"amount mismatch", func(e *env) { e.sim.FailNextReversal(localapi.MsgReversalAmountMismatch) }, device.CodeReversalAmount},
		{"no gateway", func(e *env) { e.sim.FailNextReversal(localapi.MsgReversalNoGateway) }, device.CodeReversalNoGateway},
		{"unexpected", func(e *env) { e.sim.FailNextReversal(localapi.MsgReversalUnexpected) }, device.CodeReversalUnexpected},
		{"id mandatory", func(e *env) { e.sim.FailNextReversal(localapi.MsgReversalIDMandatory) }, device.CodeReversalIDMandatory},
		{"not found", func(e *env) { e.sim.FailNextReversal(localapi.ReversalNotFoundMessage("x")) }, device.CodeReversalNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			s := e.unlock()
			v := e.pay(e.order(900), 900, journal.PolicyKiosk, journal.StateApproved)
			tt.setup(e)
			_, err := e.st.Reverse(e.ctx, s.ID, v.UUID)
			se := wantCode(t, err, ETERMINAL)
			if se.TerminalCode != string(tt.code) || se.Message != ReversalMessage(tt.code) || se.TerminalMessage == "" {
				t.Fatalf("error %+v, want terminal code %s", se, tt.code)
			}
			if !strings.HasSuffix(se.Message, ".") || strings.Contains(se.Message, "Error :") {
				t.Fatalf("not a sentence for staff: %q", se.Message)
			}
			att, err := e.db.AttemptsForOrder(e.ctx, v.OrderID)
			if err != nil || len(att) != 2 || att[1].Kind != journal.KindReversal || att[1].State != journal.StateFailed {
				t.Fatalf("attempts %+v, %v", att, err)
			}
			ev := e.lastEvent(att[1].UUID)
			if ev.Actor != s.Who || !strings.Contains(ev.Detail, se.TerminalMessage) {
				t.Fatalf("audit note %+v", ev)
			}
			if len(e.reversals()) != 0 {
				t.Fatal("reversed anyway")
			}
			// Nothing was given back: it can still be refunded.
			if m, _ := e.db.OrderMoney(e.ctx, v.OrderID); m.Givable() != 900 {
				t.Fatalf("money %+v", m)
			}

		})
	}
}

// Only the terminal that took a payment reverses it.
func TestReverseOnlyOnTheTerminalThatTookIt(t *testing.T) {
	e := newEnv(t)
	s := e.unlock()
	v := e.pay(e.order(700), 700, journal.PolicyKiosk, journal.StateApproved)
	_, other := newSim(t)
	e.newOrchestratorOn(other, "sim-B", testLimits)
	e.cfg.Payments = e.o
	e.restart()
	s = e.unlock()
	_, err := e.st.Reverse(e.ctx, s.ID, v.UUID)
	if se := wantCode(t, err, EINVALID); !strings.Contains(se.Message, "only that terminal") {
		t.Fatalf("error %+v", se)
	}
	if len(e.reversals()) != 0 {
		t.Fatal("reversed")
	}
}

// A reversal whose answer never comes and which the history cannot
// settle is unknown, and blocks every other way of giving the money back;
// one that could not be sent was not made.
func TestReverseOutcomeUnknownAfterSending(t *testing.T) {
	lim := testLimits
	lim.RequestOpen = 300 * time.Millisecond
	var v payment.View
	sent := true
	fake := &fakeReversal{reversal: func(ctx context.Context, req *localapi.ReversalRequest) (*localapi.ReversalResponse, error) {
		if req.Amount != 800 || req.InitialTransactionID != v.TransactionID {
			t.Errorf("reversal request %+v", req)
		}
		return nil, &localapi.TransportError{Endpoint: "/reversal", Sent: sent, Err: errors.New("connection reset")}
	}, transactions: func(ctx context.Context, req *localapi.TransactionsRequest) (*localapi.TransactionList, error) {
		return nil, &localapi.HTTPError{Endpoint: "/transactions", StatusCode: 500}
	}}
	e := newEnv(t)
	fake.Client = e.client
	e.newOrchestratorOn(fake, "sim", lim)
	e.cfg.Payments = e.o
	e.restart()
	s := e.unlock()
	v = e.pay(e.order(800), 800, journal.PolicyKiosk, journal.StateApproved)
	res, err := e.st.Reverse(e.ctx, s.ID, v.UUID)
	se := wantCode(t, err, EUNKNOWN)
	if !strings.Contains(se.Message, "needs attention") {
		t.Fatalf("message %q", se.Message)
	}
	if a, _ := e.db.Attempt(e.ctx, res.ReversalUUID); a.State != journal.StateUnknown {
		t.Fatalf("reversal attempt %+v", a)
	}
	if _, err := e.st.Refund(e.ctx, s.ID, v.OrderID, 1); err == nil {
		t.Fatal("a refund was started while a reversal's outcome is unknown")
	}

	sent = false
	v = e.pay(e.order(800), 800, journal.PolicyKiosk, journal.StateApproved)
	_, err = e.st.Reverse(e.ctx, s.ID, v.UUID)
	wantCode(t, err, ETERMINAL)
	if m, _ := e.db.OrderMoney(e.ctx, v.OrderID); m.Givable() != 800 {
		t.Fatalf("money after a reversal never sent %+v", m)
	}
}

func TestReverseOnlyApprovedDebits(t *testing.T) {
	e := newEnv(t)
	s := e.unlock()
	e.sim.Script(terminalsim.Decline())
	declined := e.pay(e.order(500), 500, journal.PolicyKiosk, journal.StateDeclined)
	_, err := e.st.Reverse(e.ctx, s.ID, declined.UUID)
	wantCode(t, err, EINVALID)

	ord := e.order(600)
	e.pay(ord, 600, journal.PolicyKiosk, journal.StateApproved)
	refund, err := e.st.Refund(e.ctx, s.ID, ord, 600)
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.st.Reverse(e.ctx, s.ID, refund.UUID)
	wantCode(t, err, EINVALID)
	_, err = e.st.Reverse(e.ctx, s.ID, "0190e7a4-0000-7000-8000-000000000000")
	wantCode(t, err, ENOTFOUND)
}

func TestReverseTransactionUnknownToJournal(t *testing.T) {
	e := newEnv(t)
	s := e.unlock()
	b := terminalsim.Approve()
	if _, err := e.sim.StartOnKeypad(430, &b); err != nil {
		t.Fatal(err)
	}
	if err := e.sim.WaitIdle(e.ctx); err != nil {
		t.Fatal(err)
	}
	cmp, err := e.st.Compare(e.ctx, s.ID, "")
	if err != nil || len(cmp.Differences) != 1 {
		t.Fatalf("compare %+v, %v", cmp, err)
	}
	res, err := e.st.ReverseTransaction(e.ctx, s.ID, cmp.Differences[0].TransactionID)
	if err != nil || res.Amount != 430 {
		t.Fatalf("reversal %+v, %v", res, err)
	}
	audit, _ := e.st.Audit(e.ctx, s.ID, 5)
	if len(audit) == 0 || audit[0].Action != "charge_adopted" || audit[0].Who != s.Who || audit[0].Subject != res.InitialTransactionID {
		t.Fatalf("audit %+v", audit)
	}
	// The charge is now in the journal, with its reversal: nothing differs,
	// and it cannot be given back again.
	if cmp, err := e.st.Compare(e.ctx, s.ID, ""); err != nil || len(cmp.Differences) != 0 {
		t.Fatalf("compare after %+v, %v", cmp.Differences, err)
	}
	_, err = e.st.ReverseTransaction(e.ctx, s.ID, res.InitialTransactionID)
	wantCode(t, err, EINVALID)
	if len(e.reversals()) != 1 {
		t.Fatalf("ledger %+v", e.reversals())
	}

	_, err = e.st.ReverseTransaction(e.ctx, s.ID, "no-such-transaction")
	wantCode(t, err, ENOTFOUND)
}

func TestRefundWithinWhatWasCharged(t *testing.T) {
	e := newEnv(t)
	s := e.unlock()
	ord, debit := e.paidOrder(2000)

	_, err := e.st.Refund(e.ctx, s.ID, ord, 2001)
	wantCode(t, err, EINVALID)
	_, err = e.st.Refund(e.ctx, s.ID, ord, 0)
	wantCode(t, err, EINVALID)

	v, err := e.st.Refund(e.ctx, s.ID, ord, 500)
	if err != nil {
		t.Fatal(err)
	}
	if v.State != journal.StateApproved || v.Kind != journal.KindRefund || v.UUID == debit.UUID || v.Amount != 500 {
		t.Fatalf("refund %+v", v)
	}
	att, err := e.db.Attempt(e.ctx, v.UUID)
	if err != nil || att.Policy != journal.PolicyRefund || !strings.Contains(string(att.RequestBody), `"transactionType":"refund"`) ||
		!strings.Contains(string(att.RequestBody), s.Who) {
		t.Fatalf("refund attempt %+v, %v", att, err)
	}
	if ev := e.lastEvent(v.UUID); ev.Actor != s.Who || !strings.Contains(ev.Detail, "refund of 500") {
		t.Fatalf("note %+v", ev)
	}

	// 1500 left: 1600 is refused before anything is sent.
	before := len(e.sim.Ledger())
	_, err = e.st.Refund(e.ctx, s.ID, ord, 1600)
	se := wantCode(t, err, EINVALID)
	if !strings.Contains(se.Message, "15.00 EUR") {
		t.Fatalf("message %q", se.Message)
	}
	if len(e.sim.Ledger()) != before {
		t.Fatal("a refund beyond the charge reached the terminal")
	}
	if v, err := e.st.Refund(e.ctx, s.ID, ord, 1500); err != nil || v.State != journal.StateApproved {
		t.Fatalf("refund of the rest %+v, %v", v, err)
	}
	_, err = e.st.Refund(e.ctx, s.ID, ord, 1)
	wantCode(t, err, EINVALID)
	_, err = e.st.Refund(e.ctx, s.ID, "no-such-order", 100)
	wantCode(t, err, ENOTFOUND)

	var refunded int64
	for _, l := range e.sim.Ledger() {
		if l.Kind == "refund" {
			refunded += l.Amount
		}
	}
	if refunded != 2000 {
		t.Fatalf("terminal refunded %d, want 2000", refunded)
	}
}

// The terminal answers a refund with the card's token and both card
// tickets. The journal keeps them apart and purges them
// (journal.splitCard); staff's notes on the attempts and the audit lines,
// kept for good, say what happened in words and hold none of it.
func TestStaffNotesHoldNoCardData(t *testing.T) {
	e := newEnv(t)
	s := e.unlock()
	ord, debit := e.paidOrder(2000)
	v, err := e.st.Refund(e.ctx, s.ID, ord, 500)
	if err != nil || v.State != journal.StateApproved {
		t.Fatalf("refund %+v, %v", v, err)
	}
	var card struct{ CardToken, ClientCardTicket, MerchantCardTicket string }
	if err := json.Unmarshal(v.Raw, &card); err != nil || card.CardToken == "" || card.ClientCardTicket == "" {
		t.Fatalf("the simulated terminal's refund carries no card data to look for: %s", v.Raw)
	}
	if err := e.st.Reprint(e.ctx, s.ID, debit.UUID); err != nil {
		t.Fatal(err)
	}
	if err := e.st.Share(e.ctx, s.ID, debit.UUID, device.ShareEmail); err != nil {
		t.Fatal(err)
	}
	e.purgedOfCardData(s.ID, []string{debit.UUID, v.UUID}, card.CardToken)
	if ev := e.lastEvent(v.UUID); ev.Actor != s.Who || !strings.Contains(ev.Detail, "refund of 500 asked by staff: approved") ||
		!strings.Contains(ev.Detail, v.TransactionID) {
		t.Fatalf("the refund's note %q does not say what happened", ev.Detail)
	}
}

func TestReprintAndShare(t *testing.T) {
	e := newEnv(t)
	s := e.unlock()
	v := e.pay(e.order(1100), 1100, journal.PolicyKiosk, journal.StateApproved)
	before := len(e.sim.Printed())
	if err := e.st.Reprint(e.ctx, s.ID, v.UUID); err != nil {
		t.Fatal(err)
	}
	printed := e.sim.Printed()
	if len(printed) != before+1 || !strings.Contains(printed[len(printed)-1].Text, "Menu") {
		t.Fatalf("printed %+v", printed)
	}
	if ev := e.lastEvent(v.UUID); ev.Actor != s.Who || !strings.Contains(ev.Detail, "reprinted") {
		t.Fatalf("note %+v", ev)
	}
	if err := e.st.Share(e.ctx, s.ID, v.UUID, device.ShareEmail); err != nil {
		t.Fatal(err)
	}
	shares := e.sim.Shares()
	if len(shares) != 1 || shares[0].TransactionID != v.TransactionID || shares[0].Medium != "email" {
		t.Fatalf("shares %+v", shares)
	}
	wantCode(t, e.st.Share(e.ctx, s.ID, v.UUID, "fax"), EINVALID)

	// The terminal's refusal is a sentence.
	e.cfg.Terminal = device.LocalClient(&shareRefused{Client: e.client})
	e.restart()
	s = e.unlock()
	se := wantCode(t, e.st.Share(e.ctx, s.ID, v.UUID, device.ShareSMS), ETERMINAL)
	if se.Message != receiptMessage(device.CodeShareTransactionID) {
		t.Fatalf("message %q", se.Message)
	}
}

// A receipt sent through the terminal waits for the customer, whom the
// terminal prompts for the address: longer than another call to the
// terminal (TerminalTimeout, 30 s by default).
func TestAShareWaitsForTheCustomerAtTheTerminal(t *testing.T) {
	e := newEnv(t)
	s := e.unlock()
	v := e.pay(e.order(1100), 1100, journal.PolicyKiosk, journal.StateApproved)
	share := &shareDeadline{Client: e.client}
	e.cfg.Terminal = device.LocalClient(share)
	e.restart()
	s = e.unlock()
	if err := e.st.Share(e.ctx, s.ID, v.UUID, device.ShareEmail); err != nil {
		t.Fatal(err)
	}
	if other := e.st.cfg.TerminalTimeout; share.left <= other || share.left > shareTimeout {
		t.Fatalf("the share may wait %s: more than another call's %s, at most %s", share.left, other, shareTimeout)
	}
}

// shareDeadline records how long a share may wait.
type shareDeadline struct {
	*localapi.Client
	left time.Duration
}

func (s *shareDeadline) ShareReceipt(ctx context.Context, _ *localapi.ShareReceiptRequest) (*localapi.StatusResponse, error) {
	if dl, ok := ctx.Deadline(); ok {
		s.left = time.Until(dl)
	}
	return &localapi.StatusResponse{Status: localapi.StatusOK, Raw: []byte(`{"status":"ok"}`)}, nil
}

type shareRefused struct{ *localapi.Client }

func (shareRefused) ShareReceipt(context.Context, *localapi.ShareReceiptRequest) (*localapi.StatusResponse, error) {
	raw := []byte(`{"status":"ko","message":"Parameter 'transactionId' is missing or invalid"}`)
	return nil, &localapi.APIError{Endpoint: "/share-receipt", Message: localapi.MsgShareTransactionID, Code: localapi.CodeShareTransactionID, Raw: raw}
}

// unknownAttempt leaves a held payment without an answer past the
// request-open limit: the attempt becomes unknown, the terminal still waits
// for the customer.
func unknownAttempt(e *env, ord string, amount int64) payment.View {
	e.t.Helper()
	e.sim.Script(terminalsim.Hold())
	v, err := e.o.Pay(e.ctx, payment.Request{OrderID: ord, Amount: amount, Policy: journal.PolicyKiosk})
	if err != nil {
		e.t.Fatal(err)
	}
	if v.State != journal.StateUnknown {
		e.t.Fatalf("attempt %s, want unknown", v.State)
	}
	return v
}

func TestResolveUnknownPaidAndNotPaid(t *testing.T) {
	e, s, ord, v := unknownOrder(t, 1300)
	if o, _ := e.db.Order(e.ctx, ord); o.Status != journal.OrderNeedsAttention {
		t.Fatalf("order %s", o.Status)
	}
	page, err := e.st.Attempts(e.ctx, s.ID, Filter{NeedsAttention: true})
	if err != nil || page.Total != 1 || page.Attempts[0].UUID != v.UUID {
		t.Fatalf("needs attention %+v, %v", page, err)
	}
	// The customer's card is read after all: charged.
	e.customer(e.sim.PresentCard)
	ev, err := e.st.ResolveUnknown(e.ctx, s.ID, v.UUID)
	if err != nil {
		t.Fatal(err)
	}
	if len(ev.Charged) != 1 || ev.Charged[0].CartID != ord || !strings.Contains(ev.Hint, "charged") {
		t.Fatalf("evidence %+v", ev)
	}
	cmp, err := e.st.Compare(e.ctx, s.ID, "")
	if err != nil || len(cmp.Differences) != 1 || cmp.Differences[0].Kind != DiffState || cmp.Differences[0].AttemptUUID != v.UUID {
		t.Fatalf("compare before the decision %+v, %v", cmp.Differences, err)
	}
	att, err := e.st.ConfirmUnknown(e.ctx, s.ID, v.UUID, Decision{Paid: true, Note: "card ticket seen"})
	if err != nil {
		t.Fatal(err)
	}
	if att.State != journal.StateApproved {
		t.Fatalf("resolved %+v", att)
	}
	last := e.lastEvent(v.UUID)
	if last.Kind != journal.EventResolution || last.Actor != s.Who || !strings.Contains(last.Detail, "card ticket seen") ||
		!strings.Contains(last.Detail, ev.Charged[0].TransactionID) {
		t.Fatalf("resolution event %+v", last)
	}
	if o, _ := e.db.Order(e.ctx, ord); o.Status != journal.OrderPaid {
		t.Fatalf("order %s, want paid", o.Status)
	}
	if cmp, _ := e.st.Compare(e.ctx, s.ID, ""); len(cmp.Differences) != 0 {
		t.Fatalf("differences after the decision %+v", cmp.Differences)
	}
	_, err = e.st.ConfirmUnknown(e.ctx, s.ID, v.UUID, Decision{})
	wantCode(t, err, EINVALID)

	// Not paid: the card was refused; the order is open again.
	ord2 := e.order(400)
	v2 := unknownAttempt(e, ord2, 400)
	e.customer(e.sim.Decline)
	ev2, err := e.st.ResolveUnknown(e.ctx, s.ID, v2.UUID)
	if err != nil || len(ev2.Charged) != 0 || len(ev2.Entries) != 1 || !strings.Contains(ev2.Hint, "not charged") {
		t.Fatalf("evidence %+v, %v", ev2, err)
	}
	if _, err := e.st.ConfirmUnknown(e.ctx, s.ID, v2.UUID, Decision{}); err != nil {
		t.Fatal(err)
	}
	if a, _ := e.db.Attempt(e.ctx, v2.UUID); a.State != journal.StateDeclined {
		t.Fatalf("attempt %s", a.State)
	}
	if last := e.lastEvent(v2.UUID); last.Actor != s.Who || !strings.Contains(last.Detail, "not paid") {
		t.Fatalf("resolution event %+v", last)
	}
	if o, _ := e.db.Order(e.ctx, ord2); o.Status != journal.OrderOpen {
		t.Fatalf("order %s, want open", o.Status)
	}
	// The customer may pay again.
	e.pay(ord2, 400, journal.PolicyKiosk, journal.StateApproved)
}

func TestTerminalStatusAndGreeting(t *testing.T) {
	e := newEnv(t)
	s := e.unlock()
	st, err := e.st.Terminal(e.ctx, s.ID, true)
	if err != nil || !st.Reachable || !st.Greeted || st.Mode != "kiosk" || st.ClientTimeoutSeconds != testLimits.KioskTimeout.Seconds() {
		t.Fatalf("status %+v, %v", st, err)
	}
	if e.sim.State().Greetings != 1 {
		t.Fatalf("greetings %d", e.sim.State().Greetings)
	}
	e.sim.Close()
	st, err = e.st.Terminal(e.ctx, s.ID, false)
	if err != nil || st.Reachable || st.Message == "" {
		t.Fatalf("status of a closed terminal %+v, %v", st, err)
	}
}

// Staff settling an unknown outcome name the transaction they recognised:
// it is stored with the attempt, so that the payment can then be reversed
// and matched like any other.
func TestConfirmUnknownWithTheTransaction(t *testing.T) {
	e, s, ord, v := unknownOrder(t, 1300)
	e.customer(e.sim.PresentCard)
	held := e.pay(e.order(1300), 1300, journal.PolicyKiosk, journal.StateApproved)
	ev, err := e.st.ResolveUnknown(e.ctx, s.ID, v.UUID)
	if err != nil || len(ev.Charged) != 1 || len(ev.Entries) != 2 {
		t.Fatalf("evidence %+v, %v", ev, err)
	}
	charge := ev.Charged[0].TransactionID
	for _, bad := range []Decision{
		{Paid: true, TransactionID: held.TransactionID}, // another payment's
		{Paid: false, TransactionID: charge},            // approved, for "not paid"
		{Paid: true, TransactionID: "made-up"},
	} {
		_, err := e.st.ConfirmUnknown(e.ctx, s.ID, v.UUID, bad)
		wantCode(t, err, EINVALID)
	}
	att, err := e.st.ConfirmUnknown(e.ctx, s.ID, v.UUID, Decision{Paid: true, TransactionID: charge, Note: "ticket"})
	if err != nil || att.State != journal.StateApproved || att.TransactionID != charge || att.ChargedAmount != 1300 {
		t.Fatalf("settled %+v, %v", att, err)
	}
	page, err := e.st.Attempts(e.ctx, s.ID, Filter{OrderNumber: ord})
	if err != nil || len(page.Attempts) != 1 || !page.Attempts[0].CanReverse {
		t.Fatalf("after settling %+v, %v", page, err)
	}
	res, err := e.st.Reverse(e.ctx, s.ID, v.UUID)
	if err != nil || res.InitialTransactionID != charge {
		t.Fatalf("reversal %+v, %v", res, err)
	}
	if revs := e.reversals(); len(revs) != 1 || revs[0].InitialTransactionID != charge {
		t.Fatalf("ledger %+v", revs)
	}
}

// A terminal that approved another amount than asked leaves the order
// needing staff, the payment showing how it disagreed; staff accept it
// only with a note, after which it counts as what it charged; the
// acceptance is audited. An order with nothing flagged needs no accepting.
func TestAcceptOrderOfAFlaggedApproval(t *testing.T) {
	e := newEnv(t)
	sess := e.unlock()
	id := e.order(1300)
	e.sim.Script(terminalsim.Approve().After(0).Misreporting(terminalsim.Misreport{Amount: 1200}))
	v := e.pay(id, 1300, journal.PolicyCounter, journal.StateApproved)
	av := e.debitView(sess.ID, v.UUID)
	if av.Flag == "" || !av.NeedsAttention || !av.CanAccept || av.OrderStatus != journal.OrderNeedsAttention {
		t.Fatalf("flagged attempt as staff see it: %+v", av)
	}
	if _, err := e.st.AcceptOrder(e.ctx, sess.ID, v.UUID, "  "); err == nil {
		t.Fatal("accepted without a note")
	}
	if _, err := e.st.AcceptOrder(e.ctx, "not-a-session", v.UUID, "checked"); err == nil {
		t.Fatal("accepted without a session")
	}
	av, err := e.st.AcceptOrder(e.ctx, sess.ID, v.UUID, "the customer paid 1.00 in cash")
	if err != nil {
		t.Fatal(err)
	}
	if av.Flag != "" || av.CanAccept || av.OrderStatus != journal.OrderOpen {
		t.Fatalf("after acceptance: %+v", av)
	}
	if m, _ := e.db.OrderMoney(e.ctx, id); m.Paid != 1200 || m.Due() != 100 {
		t.Fatalf("money after acceptance %+v", m)
	}
	entries, err := e.db.Audit(e.ctx, journal.AuditQuery{Action: "accept_order"})
	if err != nil || len(entries) != 1 || entries[0].Subject != id || !strings.Contains(entries[0].Detail, "cash") {
		t.Fatalf("audit %+v, %v", entries, err)
	}
	// Nothing to accept on a plain paid order.
	paid := e.order(500)
	pv := e.pay(paid, 500, journal.PolicyCounter, journal.StateApproved)
	if _, err := e.st.AcceptOrder(e.ctx, sess.ID, pv.UUID, "checked"); err == nil {
		t.Fatal("accepted an order that needed nothing")
	}
}
