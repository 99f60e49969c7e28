package payment

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/cloudapi"
	"github.com/comptoir-pos/comptoir/backend/cloudsim"
	"github.com/comptoir-pos/comptoir/backend/fault"
	"github.com/comptoir-pos/comptoir/backend/internal/testenv"
	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/localapi"
	"github.com/comptoir-pos/comptoir/backend/terminalsim"
)

// twoWays is one simulated terminal reached two ways: its own Local API on
// a LAN the test can cut (the first way), and its serial number through
// the simulated provider cloud (the fallback), journaled as one terminal.
type twoWays struct {
	*env
	lan      *localapi.Client
	fallback Channel
	ws       *cloudapi.Webservices
	lim      Limits
	witness  *Witness
}

const twoWaysTerminal = "terminal:" + cloudSerial

func newTwoWays(t *testing.T, lim Limits) *twoWays {
	t.Helper()
	cloud, cl := testenv.Cloud(t, cloudsim.Config{Key: "sk_two_ways", Serials: []string{cloudSerial}, LAN: true, Terminal: testenv.Scripted})
	ws, err := cloudapi.NewWebservices(cloudapi.DefaultWebservicesURL(cloud.URL()), cloud.Key())
	if err != nil {
		t.Fatal(err)
	}
	lan, err := localapi.NewClient(cloud.LANURL(cloudSerial))
	if err != nil {
		t.Fatal(err)
	}
	sim, _ := cloud.Terminal(cloudSerial)
	ctx := testenv.Context(t)
	vendor := &localapi.Vendor{SoftwareName: "Comptoir", SoftwareVersion: "test"}
	w := &twoWays{env: &env{t: t, ctx: ctx, sim: sim, client: lan, cloud: cloud, dir: t.TempDir()},
		lan: lan, fallback: Cloud(cl, cloudSerial, vendor, 5*time.Millisecond), ws: ws, lim: lim}
	w.reopen()
	return w
}

// reopen opens the journal and an orchestrator on both ways, as a
// process start does.
func (w *twoWays) reopen() {
	w.t.Helper()
	db, err := journal.Open(w.ctx, w.dir)
	if err != nil {
		w.t.Fatal(err)
	}
	w.db, w.events = db, &recorder{}
	o, err := New(Config{Journal: db, Terminal: w.lan, Fallback: w.fallback, TerminalID: twoWaysTerminal, Limits: w.lim,
		Emitter: w.events, Vendor: &localapi.Vendor{SoftwareName: "Comptoir", SoftwareVersion: "test"},
		Reachable: func(ctx context.Context) error { _, err := w.lan.Ping(ctx, false); return err },
		Witness:   w.witness, OtherChannels: []journal.Channel{journal.ChannelWebservices}})
	if err != nil {
		w.t.Fatal(err)
	}
	w.o = o
	w.t.Cleanup(w.close)
}

func (w *twoWays) setLAN(up bool) {
	w.t.Helper()
	if err := w.cloud.SetLAN(cloudSerial, up); err != nil {
		w.t.Fatal(err)
	}
}

// cloudMade counts the transactions the cloud started (not those the
// terminal made over its LAN).
func (w *twoWays) cloudMade() int {
	n := 0
	for _, x := range w.cloud.Transactions() {
		if x.Via != cloudsim.ViaTerminal {
			n++
		}
	}
	return n
}

// A new attempt goes over the LAN while the terminal answers there,
// through the cloud when it does not, and each is charged once.
func TestTheLANFirstTheCloudBehindIt(t *testing.T) {
	w := newTwoWays(t, testLimits)
	w.recover()
	pay := func(order string, amount int64) View {
		t.Helper()
		w.order(order, amount)
		h := w.start(Request{OrderID: order, Amount: amount, Policy: journal.PolicyKiosk})
		v := w.wait(h)
		if v.State != journal.StateApproved || !v.OrderPaid || w.charges(h.UUID()) != 1 {
			t.Fatalf("%s: view %+v, %d charges", order, v, w.charges(h.UUID()))
		}
		if a := w.attempt(h.UUID()); a.Terminal != twoWaysTerminal {
			t.Fatalf("%s journaled on terminal %q", order, a.Terminal)
		}
		return v
	}
	if v := pay("lan-up", 500); v.Channel != journal.ChannelLocal || w.cloudMade() != 0 {
		t.Fatalf("LAN up: went %s, %d cloud transactions", v.Channel, w.cloudMade())
	}
	w.setLAN(false)
	if v := pay("lan-down", 700); v.Channel != journal.ChannelCloud || w.cloudMade() != 1 {
		t.Fatalf("LAN down: went %s, %d cloud transactions", v.Channel, w.cloudMade())
	}
	w.setLAN(true)
	if v := pay("lan-back", 900); v.Channel != journal.ChannelLocal || w.cloudMade() != 1 {
		t.Fatalf("LAN back: went %s, %d cloud transactions", v.Channel, w.cloudMade())
	}
	if n := len(w.sim.Ledger()); n != 3 {
		t.Fatalf("%d charges on the terminal for three payments", n)
	}
}

// "LAN down" is not "nothing happened": an attempt whose request reached
// the terminal stays on the LAN while the LAN is cut (the terminal may be
// charging the card), no other attempt goes to that terminal through the
// cloud meanwhile, and once the LAN is back the same request attaches to
// the payment: one charge, never a second through the cloud.
func TestAnAttemptStaysOnItsWayWhenTheLANDrops(t *testing.T) {
	w := newTwoWays(t, testLimits)
	w.recover()
	w.sim.Script(terminalsim.Hold())
	w.order("held", 1200)
	h := w.start(Request{OrderID: "held", Amount: 1200, Policy: journal.PolicyKiosk})
	if err := w.sim.WaitPhase(w.ctx, h.UUID(), terminalsim.PhaseBanking); err != nil {
		t.Fatal(err)
	}
	w.setLAN(false)
	// The driver is cut off mid-request and asks again, over the LAN only.
	waitFor(t, func() bool { return w.attempt(h.UUID()).SendCount >= 3 })
	w.order("next", 400)
	if _, err := w.o.Start(w.ctx, Request{OrderID: "next", Amount: 400, Policy: journal.PolicyKiosk}); fault.CodeOf(err) != fault.ECONFLICT {
		t.Fatalf("a second attempt while the terminal holds one: %v, want refused", err)
	}
	if err := w.sim.PresentCard(); err != nil {
		t.Fatal(err)
	}
	w.setLAN(true)
	v := w.wait(h)
	if v.State != journal.StateApproved || v.Channel != journal.ChannelLocal || w.charges(h.UUID()) != 1 || w.cloudMade() != 0 {
		t.Fatalf("view %+v, %d charges, %d cloud transactions", v, w.charges(h.UUID()), w.cloudMade())
	}
	if v := w.wait(w.start(Request{OrderID: "next", Amount: 400, Policy: journal.PolicyKiosk})); v.State != journal.StateApproved {
		t.Fatalf("the next order once the first ended: %+v", v)
	}
}

// Recovery resumes each attempt through the way it went: a cloud attempt
// left open is polled through the cloud even with the LAN back, never
// sent over the LAN; a LAN attempt left open while the LAN is down stays
// open (no new payment starts) until the LAN answers.
func TestRecoveryGoesTheWayTheAttemptWent(t *testing.T) {
	w := newTwoWays(t, testLimits)
	w.recover()
	w.setLAN(false)
	w.sim.Script(terminalsim.Hold())
	w.order("by-cloud", 800)
	h := w.start(Request{OrderID: "by-cloud", Amount: 800, Policy: journal.PolicyKiosk})
	if err := w.sim.WaitPhase(w.ctx, h.UUID(), terminalsim.PhaseBanking); err != nil {
		t.Fatal(err)
	}
	w.close() // the process stops with the attempt open
	if err := w.sim.PresentCard(); err != nil {
		t.Fatal(err)
	}
	w.setLAN(true)
	w.reopen()
	views := w.recover()
	if len(views) != 1 || views[0].State != journal.StateApproved || views[0].Channel != journal.ChannelCloud {
		t.Fatalf("recovered %+v", views)
	}
	if a := w.attempt(h.UUID()); a.SendCount != 1 || w.charges(h.UUID()) != 1 {
		t.Fatalf("%d sends, %d charges: the attempt was sent again", a.SendCount, w.charges(h.UUID()))
	}

	w.sim.Script(terminalsim.Hold())
	w.order("by-lan", 600)
	h = w.start(Request{OrderID: "by-lan", Amount: 600, Policy: journal.PolicyKiosk})
	if err := w.sim.WaitPhase(w.ctx, h.UUID(), terminalsim.PhaseBanking); err != nil {
		t.Fatal(err)
	}
	w.close()
	w.setLAN(false)
	w.reopen()
	if _, err := w.o.Recover(w.ctx); !errors.Is(err, ErrTerminalUnreachable) {
		t.Fatalf("recovery with the LAN down: %v, want the terminal unreachable", err)
	}
	w.order("meanwhile", 300)
	if _, err := w.o.Start(w.ctx, Request{OrderID: "meanwhile", Amount: 300, Policy: journal.PolicyKiosk}); !errors.Is(err, ErrNotReady) {
		t.Fatalf("a new payment before the LAN attempt is known: %v", err)
	}
	if err := w.sim.PresentCard(); err != nil {
		t.Fatal(err)
	}
	w.setLAN(true)
	views = w.recover()
	if len(views) != 1 || views[0].State != journal.StateApproved || views[0].Channel != journal.ChannelLocal || w.cloudMade() != 1 {
		t.Fatalf("recovered %+v, %d cloud transactions", views, w.cloudMade())
	}
}

// A reversal goes the way its debit went: the transaction id the journal
// holds is that way's.
func TestAReversalGoesTheWayItsDebitWent(t *testing.T) {
	w := newTwoWays(t, testLimits)
	w.recover()
	w.setLAN(false)
	w.order("rev", 650)
	d := w.wait(w.start(Request{OrderID: "rev", Amount: 650, Policy: journal.PolicyKiosk}))
	w.setLAN(true)
	v, err := w.o.Reverse(w.ctx, d.UUID)
	if err != nil || v.State != journal.StateApproved || v.Channel != journal.ChannelCloud {
		t.Fatalf("reversal %+v %v", v, err)
	}
}

// The same terminal reached two ways lists both ways' transactions, under
// ids the journal may not hold: a history search never takes an earlier
// attempt of the other way (same order, same amount) for this one. A LAN
// attempt declined, then a cloud attempt whose acknowledgement was lost:
// the one transaction of the order in the history is the LAN's, and the
// cloud attempt is left to staff rather than settled as declined.
func TestAHistorySearchNeverTakesTheOtherWaysAttempt(t *testing.T) {
	e := newEnv(t, testLimits)
	db := e.reopen()
	lanDown := false
	p := &polling{
		send: func(int) Answer { return Answer{Outcome: OutcomeIndefinite, Message: "the acknowledgement was lost"} },
		poll: func(int) Answer { return Answer{Outcome: OutcomePending} },
		lookup: func(int) (Match, error) {
			// The LAN's declined transaction, under the cloud's own id.
			return Match{Verdict: InHistory, Candidates: 1, Raw: []byte(`{"transactionId":"trs_lan","cartId":"X","amount":900,"status":"ko"}`),
				Charge: Charge{TransactionID: "trs_lan", Amount: 900}}, nil
		},
	}
	o, err := New(Config{Journal: db, Terminal: e.client, Fallback: p, TerminalID: "sim", Limits: testLimits,
		Reachable: func(context.Context) error {
			if lanDown {
				return errors.New("no route")
			}
			return nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	e.o = o
	e.recover()
	e.order("X", 900)
	e.sim.Script(terminalsim.Decline())
	if v := e.wait(e.start(Request{OrderID: "X", Amount: 900, Policy: journal.PolicyKiosk})); v.State != journal.StateDeclined || v.Channel != journal.ChannelLocal {
		t.Fatalf("the LAN attempt %+v", v)
	}
	lanDown = true
	v := e.wait(e.start(Request{OrderID: "X", Amount: 900, Policy: journal.PolicyKiosk}))
	if v.Channel != journal.ChannelCloud || v.State != journal.StateUnknown || !strings.Contains(v.Message, "could be it") {
		t.Fatalf("the cloud attempt %+v: want unknown, left to staff", v)
	}
}

// A fallback must be another way to one terminal.
func TestAFallbackIsAnotherWayToOneTerminal(t *testing.T) {
	e := newEnv(t, testLimits)
	for _, fb := range []Channel{Local(e.client, nil, time.Second), Webservices(nil, WebservicesOptions{})} {
		if _, err := New(Config{Journal: e.db, Terminal: e.client, Fallback: fb, TerminalID: "sim"}); err == nil {
			t.Fatalf("fallback %s accepted", fb.Name())
		}
	}
}

// waitFor polls cond until it holds, with a generous deadline.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition never held")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
