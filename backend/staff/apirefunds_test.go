package staff

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/cloudapi"
	"github.com/comptoir-pos/comptoir/backend/cloudsim"
	"github.com/comptoir-pos/comptoir/backend/device"
	"github.com/comptoir-pos/comptoir/backend/fiscal"
	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/localapi"
	"github.com/comptoir-pos/comptoir/backend/payment"
	"github.com/comptoir-pos/comptoir/backend/reconcile"
)

// withAPIRefunds refunds by API through the Webservices of withLinks'
// simulated cloud (give it after withLinks).
func withAPIRefunds() option {
	return withRefundsThrough(func(ws *cloudapi.Webservices) payment.WebservicesAPI { return ws })
}

// withRefundsThrough refunds by API through what api makes of withLinks'
// simulated cloud's Webservices (give it after withLinks).
func withRefundsThrough(api func(*cloudapi.Webservices) payment.WebservicesAPI) option {
	return func(e *env, c *Config) {
		ws, err := cloudapi.NewWebservices(cloudapi.DefaultWebservicesURL(e.cloud.URL()), e.cloud.Key())
		if err != nil {
			e.t.Fatal(err)
		}
		o, err := payment.New(payment.Config{Journal: e.db, TerminalID: "webservices", Limits: testLimits,
			Channel: payment.Webservices(api(ws), payment.WebservicesOptions{UserEmail: "owner@example.com", PollEvery: 5 * time.Millisecond,
				Vendor: &localapi.Vendor{SoftwareName: "Comptoir", SoftwareVersion: "test"}}),
			OtherChannels: []journal.Channel{journal.ChannelLocal, journal.ChannelLink}})
		if err != nil {
			e.t.Fatal(err)
		}
		if _, err := o.Recover(e.ctx); err != nil {
			e.t.Fatal(err)
		}
		e.t.Cleanup(o.Close)
		c.Refunds = o
	}
}

// paidLink is a link paid in full by its customer, as staff see it.
func (e *env) paidLink(sid string) AttemptView {
	e.t.Helper()
	v, err := e.st.SendLink(e.ctx, sid, martin)
	if err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.cloud.PayCart(e.cartOf(v).CartID, 0, 0, cloudsim.PayCard, false); err != nil {
		e.t.Fatal(err)
	}
	return e.linkUntil(sid, v.UUID, "paid", func(v AttemptView) bool { return v.State == journal.StateApproved })
}

// paidLinkToRefund is an env with links and refunds by API, a staff
// session, and a link its customer paid in full.
func paidLinkToRefund(t *testing.T) (e *env, sid string, debit AttemptView) {
	t.Helper()
	e = newEnv(t, withLinks(5*time.Millisecond, nil), withAPIRefunds())
	sid = e.unlock().ID
	return e, sid, e.paidLink(sid)
}

// refundsAtTheProvider holds that the provider was asked for want refunds
// by API in all.
func (e *env) refundsAtTheProvider(want int) {
	e.t.Helper()
	if n := len(e.cloud.Refunds()); n != want {
		e.t.Fatalf("%d refunds asked of the provider, want %d", n, want)
	}
}

// debitView is the debit as the payments list shows it, actions included.
func (e *env) debitView(sid, uuid string) AttemptView {
	e.t.Helper()
	page, err := e.st.Attempts(e.ctx, sid, Filter{})
	if err != nil {
		e.t.Fatal(err)
	}
	for _, v := range page.Attempts {
		if v.UUID == uuid {
			return v
		}
	}
	e.t.Fatalf("no attempt %s", uuid)
	return AttemptView{}
}

// A paid link is refunded without the card: part of it, once; the
// payments list offers it until it is made, then shows it.
func TestRefundByAPI(t *testing.T) {
	e, sid, debit := paidLinkToRefund(t)
	if v := e.debitView(sid, debit.UUID); v.APIRefundable != 2450 || v.APIRefund != nil {
		t.Fatalf("before %+v", v)
	}
	r, err := e.st.RefundByAPI(e.ctx, sid, debit.UUID, 1000)
	if err != nil || r.State != journal.StateApproved || r.Channel != journal.ChannelWebservices || r.Kind != journal.KindRefund ||
		r.InitialTransactionID != debit.TransactionID || r.TransactionID == "" {
		t.Fatalf("refund %+v %v", r, err)
	}
	v := e.debitView(sid, debit.UUID)
	if v.APIRefundable != 0 || v.APIRefund == nil || v.APIRefund.State != journal.StateApproved || v.RefundableLeft != 1450 {
		t.Fatalf("after %+v", v)
	}
	_, err = e.st.RefundByAPI(e.ctx, sid, debit.UUID, 100)
	if se := wantCode(t, err, EINVALID); !strings.Contains(se.Message, "Nothing was sent") {
		t.Fatalf("second refund: %v", se.Message)
	}
	e.refundsAtTheProvider(1)
}

// A refund waiting for a manager shows the approval link, and ends when
// the manager approves it.
func TestRefundByAPIWaitsForAManager(t *testing.T) {
	e, sid, debit := paidLinkToRefund(t)
	e.cloud.ScriptRefunds(cloudsim.ScriptWaiting)
	r, err := e.st.RefundByAPI(e.ctx, sid, debit.UUID, 2450)
	if err != nil || r.State != journal.StateSent || r.ProviderStatus != cloudsim.ScriptWaiting || !strings.Contains(r.ApprovalURL, "approve-") {
		t.Fatalf("waiting %+v %v", r, err)
	}
	if _, err := e.cloud.DecideRefund(e.cloud.Refunds()[0].ID, true); err != nil {
		t.Fatal(err)
	}
	e.linkUntil(sid, r.UUID, "approved", func(v AttemptView) bool { return v.State == journal.StateApproved && v.ApprovalURL == "" })
}

// Without the Webservices, nothing is offered and the call says why.
func TestRefundByAPIOff(t *testing.T) {
	e := newEnv(t)
	sid := e.unlock().ID
	v := e.pay(e.order(1000), 1000, journal.PolicyKiosk, journal.StateApproved)
	if e.debitView(sid, v.UUID).APIRefundable != 0 || e.st.OffersAPIRefunds() {
		t.Fatal("refunds by API offered without the Webservices")
	}
	_, err := e.st.RefundByAPI(e.ctx, sid, v.UUID, 100)
	wantCode(t, err, ETERMINAL)
}

// withReconcile reconciles against the simulated terminal's history.
func withReconcile() option {
	return func(e *env, c *Config) {
		term := c.Terminal
		c.Reconcile = func(ctx context.Context, day string) (reconcile.Report, error) {
			return reconcile.Day(ctx, e.db, reconcile.Sources{Terminal: func(ctx context.Context, from, to time.Time) ([]device.HistoryEntry, error) {
				return device.ReadHistory(ctx, term, from, to, 0, 10*time.Second)
			}}, day, reconcile.Config{Location: time.Local, Now: e.clock.Now})
		}
	}
}

// A charge no order knows is found by the reconciliation, with the fix
// (a reversal, under 16 hours) that gives it back; once reversed the day
// agrees. The kiosk's own run writes what needs staff to the audit trail.
func TestReconcileFindsAChargeAndItsFix(t *testing.T) {
	e := newEnv(t, withReconcile())
	sid := e.unlock().ID
	e.pay(e.order(1000), 1000, journal.PolicyKiosk, journal.StateApproved)
	keypadCharge(e, 640)
	r, err := e.st.Reconcile(e.ctx, sid, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Differences) != 1 || len(r.Fixes) != 1 || !r.NeedsStaff {
		t.Fatalf("reconciliation %+v", r)
	}
	d, fix := r.Differences[0], r.Fixes[0]
	if d.Kind != reconcile.KindNoOrder || fix.Do != FixReverse || fix.Amount != 640 || fix.TransactionID != d.TransactionID {
		t.Fatalf("difference %+v, fix %+v", d, fix)
	}
	if _, err := e.st.ReconcileDay(e.ctx, r.Day); err != nil {
		t.Fatal(err)
	}
	audit, err := e.st.Audit(e.ctx, sid, 10)
	if err != nil || len(audit) == 0 || audit[0].Action != ReconcileAction || audit[0].Who != reconcileWho {
		t.Fatalf("audit %+v %v", audit, err)
	}
	// Past the reversal window, the fix is no longer offered.
	e.clock.Advance(reconcile.ReversalWindow + time.Minute)
	if late, err := e.st.ReconcileDay(e.ctx, r.Day); err != nil || late.Fixes[0].Do != "" {
		t.Fatalf("late fix %+v %v", late.Fixes, err)
	}
	e.clock.Advance(-reconcile.ReversalWindow - time.Minute)
	sid = e.unlock().ID
	if _, err := e.st.ReverseTransaction(e.ctx, sid, fix.TransactionID); err != nil {
		t.Fatal(err)
	}
	after, err := e.st.Reconcile(e.ctx, sid, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range after.Differences {
		if d.Kind == reconcile.KindNoOrder && d.TransactionID == fix.TransactionID {
			t.Fatalf("still no order: %+v", after.Differences)
		}
	}
}

// A charge of the company's that the journal does not know (made on a
// terminal through the cloud by another till) is recorded from the
// provider's record, then refunded in full without the card, once.
func TestRefundTransactionByAPI(t *testing.T) {
	e := newEnv(t, withLinks(5*time.Millisecond, nil), withAPIRefunds())
	sid := e.unlock().ID
	client, err := cloudapi.New(e.cloud.URL(), e.cloud.Key())
	if err != nil {
		t.Fatal(err)
	}
	ack, err := client.Payment(e.ctx, []byte(`{"serialNumber":"`+cloudSerial+`","amount":1800,"idempotentUuid":"0192f0c4-0000-7000-8000-00000000a001"}`))
	if err != nil {
		t.Fatal(err)
	}
	if tx, err := e.cloud.Wait(e.ctx, "0192f0c4-0000-7000-8000-00000000a001"); err != nil || tx.Status != "ok" {
		t.Fatalf("the other till's charge: %+v %v", tx, err)
	}
	r, err := e.st.RefundTransactionByAPI(e.ctx, sid, ack.TransactionID)
	if err != nil || r.State != journal.StateApproved || r.Amount != 1800 || r.OrderID != journal.AdoptedOrderPrefix+ack.TransactionID {
		t.Fatalf("refund %+v %v", r, err)
	}
	debit, err := e.db.AttemptByTransaction(e.ctx, ack.TransactionID)
	if err != nil || debit.Channel != journal.ChannelCloud || debit.Terminal != "cloud:"+cloudSerial {
		t.Fatalf("adopted %+v %v", debit, err)
	}
	if _, err := e.st.RefundTransactionByAPI(e.ctx, sid, ack.TransactionID); err == nil {
		t.Fatal("refunded twice")
	}
	e.refundsAtTheProvider(1)
	audit, _ := e.st.Audit(e.ctx, sid, 10)
	found := false
	for _, a := range audit {
		found = found || (a.Action == "charge_adopted" && a.Subject == ack.TransactionID)
	}
	if !found {
		t.Fatalf("no adoption in the audit trail: %+v", audit)
	}
	// The provider's record of the charge carries its card tickets: kept
	// apart from the adopted debit's events and its audit line, and purged.
	if !strings.Contains(string(debit.Response), "CUSTOMER COPY") {
		t.Fatalf("the provider's record has no card ticket to look for: %s", debit.Response)
	}
	e.purgedOfCardData(sid, []string{debit.UUID, r.UUID})
}

// The kiosk reconciles the previous day as soon as it starts.
func TestRunReconciliationStartsWithYesterday(t *testing.T) {
	e := newEnv(t)
	asked := make(chan string, 4)
	e.cfg.Reconcile = func(ctx context.Context, day string) (reconcile.Report, error) {
		asked <- day
		return reconcile.Report{Day: day}, nil
	}
	e.restart()
	ctx, cancel := context.WithCancel(e.ctx)
	done := make(chan struct{})
	go func() { defer close(done); e.st.RunReconciliation(ctx) }()
	select {
	case day := <-asked:
		if want := e.clock.Now().In(time.Local).AddDate(0, 0, -1).Format(time.DateOnly); day != want {
			t.Fatalf("reconciled %s, want %s", day, want)
		}
	case <-e.ctx.Done():
		t.Fatal("never reconciled")
	}
	cancel()
	<-done
}

// Staff print the Z of a day over: recorded once (printing it again prints
// the same closing), and refused for a day not over.
func TestPrintZ(t *testing.T) {
	e := newEnv(t)
	key, err := fiscal.LoadOrCreateKey(e.dir)
	if err != nil {
		t.Fatal(err)
	}
	e.cfg.Ledger = fiscal.NewLedger(e.db, key, "caisse-1", "Comptoir test")
	e.restart()
	sid := e.unlock().ID
	e.pay(e.order(1000), 1000, journal.PolicyKiosk, journal.StateApproved)
	today := time.Now().In(time.Local)
	_, err = e.st.PrintZ(e.ctx, sid, today.Format(time.DateOnly))
	wantCode(t, err, EINVALID)
	yesterday := today.AddDate(0, 0, -1).Format(time.DateOnly)
	c, err := e.st.PrintZ(e.ctx, sid, yesterday)
	if err != nil || c.Number != 1 || c.Name != yesterday {
		t.Fatalf("Z %+v %v", c, err)
	}
	again, err := e.st.PrintZ(e.ctx, sid, yesterday)
	if err != nil || again.Number != 1 {
		t.Fatalf("again %+v %v", again, err)
	}
	printed := e.sim.Printed()
	if len(printed) < 2 || !strings.Contains(printed[len(printed)-1].Text, "Z DAILY CLOSING "+yesterday) {
		t.Fatalf("printed %+v", printed)
	}
	// The ticket of today's sale is recorded, for tomorrow's Z.
	if n, _ := e.db.FiscalTip(e.ctx, journal.FiscalTicket); n != 1 {
		t.Fatalf("%d tickets", n)
	}
	// A PIN change is a technical event (the PIN never in it).
	if err := e.st.ChangePIN(e.ctx, sid, "2468", "1357"); err != nil {
		t.Fatal(err)
	}
	last, ok, err := e.db.FiscalLast(e.ctx, journal.FiscalEvent)
	if err != nil || !ok || !strings.Contains(string(last.Payload), `"type":"pin"`) || strings.Contains(string(last.Payload), "1357") {
		t.Fatalf("event %s %v", last.Payload, err)
	}
}
