package payment

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/cloudapi"
	"github.com/comptoir-pos/comptoir/backend/cloudsim"
	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/localapi"
	"github.com/comptoir-pos/comptoir/backend/terminalsim"
	"github.com/google/uuid"
)

// Refunds by API against the simulated provider cloud's Webservices: the
// debit is taken through the cloud channel, then given back through the
// Webservices by a second orchestrator on the same journal.

type wsEnv struct {
	*env
	ws  *Orchestrator
	api *cloudapi.Webservices
}

func newWSEnv(t *testing.T) *wsEnv {
	t.Helper()
	e := &wsEnv{env: newEnvOn(t, "cloud", testLimits)}
	e.recover()
	api, err := cloudapi.NewWebservices(cloudapi.DefaultWebservicesURL(e.cloud.URL()), e.cloud.Key())
	if err != nil {
		t.Fatal(err)
	}
	e.api = api
	e.openWS()
	return e
}

// openWS (re)starts the Webservices' orchestrator on the journal and
// recovers its attempts.
func (e *wsEnv) openWS() {
	e.t.Helper()
	ch := Webservices(e.api, WebservicesOptions{UserEmail: "owner@example.com", PollEvery: 5 * time.Millisecond,
		Vendor: &localapi.Vendor{SoftwareName: "Comptoir", SoftwareVersion: "test"}})
	o, err := New(Config{Journal: e.db, Channel: ch, TerminalID: "webservices", Limits: testLimits,
		OtherChannels: []journal.Channel{journal.ChannelCloud}})
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(o.Close)
	if _, err := o.Recover(e.ctx); err != nil {
		e.t.Fatal(err)
	}
	e.ws = o
}

// paid takes an order of amount through the cloud channel and returns its
// approved debit.
func (e *wsEnv) paid(order string, amount int64) journal.Attempt {
	e.t.Helper()
	e.order(order, amount)
	v := e.wait(e.start(Request{OrderID: order, Amount: amount, Policy: journal.PolicyKiosk}))
	if v.State != journal.StateApproved {
		e.t.Fatalf("payment %+v", v)
	}
	return e.attempt(v.UUID)
}

func (e *wsEnv) refund(debit journal.Attempt, amount int64) *Handle {
	e.t.Helper()
	h, err := e.ws.StartAPIRefund(e.ctx, debit.UUID, amount)
	if err != nil {
		e.t.Fatalf("refund by API: %v", err)
	}
	return h
}

// refunds are the refunds the provider made or holds for a transaction.
func (e *wsEnv) refunds(original string) []cloudsim.RefundView {
	return slices.DeleteFunc(e.cloud.Refunds(), func(r cloudsim.RefundView) bool { return r.Original != original })
}

// Each of the provider's answers is its own outcome, journaled before and
// after, and the money account of the order follows.
func TestAPIRefundAnswers(t *testing.T) {
	for _, tc := range []struct {
		script  string
		state   journal.State
		refunds int // the provider's refunds of the transaction
	}{
		{cloudsim.ScriptRefunded, journal.StateApproved, 1},
		{cloudsim.ScriptNotPossible, journal.StateDeclined, 0},
		{cloudsim.ScriptImpossible, journal.StateFailed, 0},
		{cloudsim.ScriptLost, journal.StateApproved, 1},
	} {
		t.Run(tc.script, func(t *testing.T) {
			e := newWSEnv(t)
			debit := e.paid("R1", 1500)
			e.cloud.ScriptRefunds(tc.script)
			v := e.wait(e.refund(debit, 600))
			if v.State != tc.state || len(e.refunds(debit.TransactionID)) != tc.refunds {
				t.Fatalf("view %+v, provider's refunds %+v", v, e.refunds(debit.TransactionID))
			}
			att := e.attempt(v.UUID)
			if att.Channel != journal.ChannelWebservices || att.Kind != journal.KindRefund || att.InitialTransactionID != debit.TransactionID {
				t.Fatalf("attempt %+v", att)
			}
			if tc.script == cloudsim.ScriptLost && att.SendCount != 1 {
				t.Fatalf("a lost answer was settled by asking again (%d sends)", att.SendCount)
			}
			m, err := e.db.OrderMoney(e.ctx, "R1")
			if err != nil {
				t.Fatal(err)
			}
			want := int64(1500)
			if tc.state == journal.StateApproved {
				want = 900
				if r := e.refunds(debit.TransactionID)[0]; att.TransactionID != r.ID || r.Amount != 600 {
					t.Fatalf("journal %s, provider %+v", att.TransactionID, r)
				}
			}
			if m.Givable() != want {
				t.Fatalf("givable %d, want %d", m.Givable(), want)
			}
		})
	}
}

// A field refused by the provider is a failure with its message: nothing
// was refunded.
func TestAPIRefundFieldRefusal(t *testing.T) {
	e := newWSEnv(t)
	debit := e.paid("F1", 1000)
	ch := Webservices(e.api, WebservicesOptions{UserEmail: "owner@example.com", Vendor: &localapi.Vendor{SoftwareName: "Comptoir", SoftwareVersion: "test"}})
	a := ch.Send(e.ctx, journal.Attempt{InitialTransactionID: debit.TransactionID, Amount: 100, RequestBody: []byte(`{"amount":100}`)})
	if a.Outcome != OutcomeRefused || !strings.Contains(a.Message, "user_email") {
		t.Fatalf("answer %+v", a)
	}
}

// Pending and waiting refunds are followed by fetching until the provider
// decides; a waiting one carries the manager's approval link.
func TestAPIRefundPendingAndWaiting(t *testing.T) {
	for _, tc := range []struct {
		script string
		accept bool
		state  journal.State
	}{
		{cloudsim.ScriptPending, true, journal.StateApproved},
		{cloudsim.ScriptPending, false, journal.StateDeclined},
		{cloudsim.ScriptWaiting, true, journal.StateApproved},
	} {
		t.Run(tc.script, func(t *testing.T) {
			e := newWSEnv(t)
			debit := e.paid("P1", 2000)
			e.cloud.ScriptRefunds(tc.script)
			v, err := e.ws.APIRefund(e.ctx, debit.UUID, 2000)
			if err != nil || v.State != journal.StateSent || v.ProviderStatus != tc.script {
				t.Fatalf("first word %+v %v", v, err)
			}
			att := e.attempt(v.UUID)
			if tc.script == cloudsim.ScriptWaiting && !strings.Contains(string(att.Response), "approval_url") {
				t.Fatalf("the approval link is not journaled: %s", att.Response)
			}
			// Counted as given back while it runs: nothing more can go.
			if m, _ := e.db.OrderMoney(e.ctx, "P1"); m.Givable() != 0 {
				t.Fatalf("givable while pending %d", m.Givable())
			}
			if _, err := e.ws.StartAPIRefund(e.ctx, debit.UUID, 100); err == nil {
				t.Fatal("a second refund of the transaction was started")
			}
			if _, err := e.cloud.DecideRefund(att.ProviderID, tc.accept); err != nil {
				t.Fatal(err)
			}
			h, _ := e.ws.Active(v.UUID)
			if h == nil {
				t.Fatal("the refund is not followed")
			}
			if v := e.wait(h); v.State != tc.state {
				t.Fatalf("decided %+v", v)
			}
		})
	}
}

// A refund still pending when the process stops is followed again after
// a restart, never asked again.
func TestAPIRefundResumedAfterRestart(t *testing.T) {
	e := newWSEnv(t)
	debit := e.paid("S1", 800)
	e.cloud.ScriptRefunds(cloudsim.ScriptWaiting)
	v, err := e.ws.APIRefund(e.ctx, debit.UUID, 800)
	if err != nil || v.ProviderStatus != cloudsim.ScriptWaiting {
		t.Fatalf("%+v %v", v, err)
	}
	e.ws.Close()
	e.close()
	e.open(nil, testLimits)
	e.recover()
	e.openWS()
	if _, err := e.cloud.DecideRefund(e.attempt(v.UUID).ProviderID, true); err != nil {
		t.Fatal(err)
	}
	h, ok := e.ws.Active(v.UUID)
	if !ok {
		t.Fatal("not resumed")
	}
	if v := e.wait(h); v.State != journal.StateApproved || e.attempt(v.UUID).SendCount != 1 || len(e.refunds(debit.TransactionID)) != 1 {
		t.Fatalf("after restart %+v", v)
	}
}

// A request journaled as sent whose answer never came (the process was
// killed while it was out) is settled from the company's list: made, it is
// adopted; not made, it is asked again once.
func TestAPIRefundSentThenKilled(t *testing.T) {
	for _, made := range []bool{true, false} {
		t.Run(map[bool]string{true: "made", false: "never arrived"}[made], func(t *testing.T) {
			e := newWSEnv(t)
			debit := e.paid("K1", 1200)
			e.ws.Close()
			ch := Webservices(e.api, WebservicesOptions{UserEmail: "owner@example.com", Vendor: &localapi.Vendor{SoftwareName: "Comptoir", SoftwareVersion: "test"}})
			body, err := ch.Body(NewAttempt{UUID: "x", Policy: Policy{Kind: journal.KindRefund}, Request: Request{Amount: 1200}})
			if err != nil {
				t.Fatal(err)
			}
			id := uuid.Must(uuid.NewV7()).String()
			if _, err := e.db.PrepareAttempt(e.ctx, journal.Attempt{UUID: id, OrderID: "K1", Kind: journal.KindRefund,
				Channel: journal.ChannelWebservices, Amount: 1200, Policy: journal.PolicyRefund, Terminal: "webservices/" + debit.TransactionID,
				InitialTransactionID: debit.TransactionID, RequestBody: body}); err != nil {
				t.Fatal(err)
			}
			if _, err := e.db.MarkSent(e.ctx, id); err != nil {
				t.Fatal(err)
			}
			if made {
				if _, err := e.api.Refund(e.ctx, debit.TransactionID, body); err != nil {
					t.Fatal(err)
				}
			}
			e.openWS()
			h, ok := e.ws.Active(id)
			if !ok {
				t.Fatal("not resumed")
			}
			v := e.wait(h)
			att := e.attempt(id)
			rs := e.refunds(debit.TransactionID)
			if v.State != journal.StateApproved || len(rs) != 1 || att.TransactionID != rs[0].ID {
				t.Fatalf("view %+v, provider %+v", v, rs)
			}
			if want := map[bool]int{true: 1, false: 2}[made]; att.SendCount != want {
				t.Fatalf("%d sends, want %d", att.SendCount, want)
			}
		})
	}
}

// The provider's rules are checked before anything is journaled: the
// amount, a scheme it never refunds by API, one refund per transaction,
// none after a reversal.
func TestAPIRefundRules(t *testing.T) {
	e := newWSEnv(t)
	debit := e.paid("U1", 1000)
	if _, err := e.ws.StartAPIRefund(e.ctx, debit.UUID, 1001); !errors.Is(err, ErrNotRefundable) {
		t.Fatalf("above the original: %v", err)
	}
	e.wait(e.refund(debit, 300))
	_, err := e.ws.StartAPIRefund(e.ctx, debit.UUID, 300)
	if err == nil || !strings.Contains(err.Error(), "already has refund") {
		t.Fatalf("second refund: %v", err)
	}
	// A reversal after the refund is refused by the journal too.
	if _, err := e.o.StartReversal(e.ctx, debit.UUID); err == nil {
		t.Fatal("reversed after a refund by API")
	}
	amex := terminalsim.Approve()
	amex.Card = "amex"
	e.sim.Script(amex)
	other := e.paid("U2", 500)
	if _, err := e.ws.StartAPIRefund(e.ctx, other.UUID, 500); !errors.Is(err, ErrNotRefundable) {
		t.Fatalf("amex: %v", err)
	}
	atts, _ := e.db.AttemptsForOrder(e.ctx, "U2")
	if len(atts) != 1 || len(e.refunds(other.TransactionID)) != 0 {
		t.Fatalf("something was journaled or sent: %d attempts", len(atts))
	}
}

func TestRefundableByAPI(t *testing.T) {
	for name, want := range map[string]bool{"VISA": true, "CB": true, "amex": false, "American Express": false, "CUP": false,
		"ANCV": false, "Conecs": false, "Mastercard": true, "cupcake": true} {
		if got := refundableByAPI(name) == ""; got != want {
			t.Errorf("%s: refundable %v", name, got)
		}
	}
}

// fakeDetails answers the fetch of one transaction.
type fakeDetails struct {
	WebservicesAPI
	d cloudapi.TransactionDetails
}

func (f fakeDetails) Details(context.Context, string) (*cloudapi.TransactionDetails, error) {
	return &f.d, nil
}

// The status of the transaction refunded, as another provider may word it:
// refused, still pending, or given back already stop the refund before it
// is journaled; any other word lets the provider decide.
func TestAPIRefundOriginalStatus(t *testing.T) {
	for status, ok := range map[string]bool{"ok": true, "captured": true, "SUCCESS": true, "ko": false, "rejected": false,
		"pending": false, "refunded": false, "partially_refunded": false, "reversed": false} {
		ch := Webservices(fakeDetails{d: cloudapi.TransactionDetails{Status: status, TotalAmount: 1000, Scheme: "VISA"}}, WebservicesOptions{}).(*wsChannel)
		err := ch.refundable(context.Background(), "T1", 500)
		if (err == nil) != ok || (err != nil && !errors.Is(err, ErrNotRefundable)) {
			t.Errorf("status %q: %v", status, err)
		}
	}
}

// fakeList answers the company's list and the fetch of the original.
type fakeList struct {
	WebservicesAPI
	entries []cloudapi.HistoryEntry
	orig    cloudapi.TransactionDetails
}

func (f fakeList) BatchAll(context.Context, cloudapi.BatchRequest, time.Time) ([]cloudapi.HistoryEntry, error) {
	return f.entries, nil
}

func (f fakeList) Details(context.Context, string) (*cloudapi.TransactionDetails, error) {
	return &f.orig, nil
}

// A refund whose answer was lost is told from another till's refund of the
// same amount by the original's terminal, fetched when the original is
// older than the list searched.
func TestAPIRefundLookupTellsTheTills(t *testing.T) {
	list := fakeList{
		entries: []cloudapi.HistoryEntry{
			{TransactionID: "R-other", Type: "refund", Status: "ok", Amount: 500, SerialNumber: "SN-OTHER"},
			{TransactionID: "R-ours", Type: "refund", Status: "ok", Amount: 500, SerialNumber: "SN-OURS"},
		},
		orig: cloudapi.TransactionDetails{TransactionID: "T1", Status: "ok", SerialNumber: "SN-OURS"},
	}
	ch := Webservices(list, WebservicesOptions{})
	none := func(context.Context, []string) (map[string]bool, error) { return map[string]bool{}, nil }
	m, err := ch.Lookup(context.Background(), journal.Attempt{InitialTransactionID: "T1", Amount: 500}, time.Now().Add(-time.Hour), none)
	if err != nil || m.Verdict != InHistory || m.Charge.TransactionID != "R-ours" || !m.Charge.Approved {
		t.Fatalf("match %+v %v", m, err)
	}
}
