package payment

import (
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/terminalsim"
)

// mutedEnv is unknownEnv with its mute terminal at hand (m.drop says
// whether the next attempts reach the terminal at all), logging to log.
func mutedEnv(t *testing.T, log *slog.Logger) (*env, *mute) {
	lim := testLimits
	lim.KioskTimeout, lim.RequestOpen = 200*time.Millisecond, 300*time.Millisecond
	e := newEnv(t, lim)
	m := &mute{Client: e.client}
	e.log = log
	e.restartOn(m, lim)
	return e, m
}

// One check settles every unknown outcome the history decides, whatever
// comes before it in the journal: another terminal's attempt, one too young to be called not
// charged, or one the history cannot tell from another payment, stays
// with staff without holding back the next one, and without a warning in
// the log (nothing went wrong).
func TestRuleAnUndecidedUnknownDoesNotHoldBackTheNext(t *testing.T) {
	warnings := &levelLog{min: slog.LevelWarn}
	e, m := mutedEnv(t, slog.New(warnings))
	// Another terminal's: only the provider that took it knows it.
	foreign := e.unknownOn(journal.ChannelLocal, "another-terminal", "Y0", 500)
	m.drop = true
	young := e.unknownAttempt("Y1", 800) // never reached the terminal; its history not complete yet
	m.drop = false
	ambiguous := e.unknownAttempt("Y2", 1500)
	b := terminalsim.Approve()
	if _, err := e.sim.StartOnKeypad(1500, &b); err != nil { // another payment of the same amount
		t.Fatal(err)
	}
	if err := e.sim.WaitIdle(e.ctx); err != nil {
		t.Fatal(err)
	}
	charged := e.unknownAttempt("Y3", 1200)
	settled, err := e.o.SettleUnknown(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(settled) != 1 || settled[0].UUID != charged.UUID || settled[0].State != journal.StateApproved {
		t.Fatalf("settled %+v, want only %s, approved", settled, charged.UUID)
	}
	for _, id := range []string{foreign, young.UUID, ambiguous.UUID} {
		if st := e.attempt(id).State; st != journal.StateUnknown {
			t.Fatalf("%s settled %s", id, st)
		}
	}
	if w := warnings.all(); len(w) > 0 {
		t.Fatalf("warnings logged: %q", w)
	}
}

// A debit settled from the history is charged what the history says,
// its tip apart; the view says how it was settled, not "call staff".
func TestRuleADebitSettledFromTheHistoryKeepsItsTip(t *testing.T) {
	e, _ := mutedEnv(t, nil)
	e.readyWithTips()
	e.order("T1", 1000)
	e.sim.Script(terminalsim.Approve().WithTip(200))
	v := e.wait(e.start(Request{OrderID: "T1", Amount: 1000, Policy: journal.PolicyCounter}))
	if v.State != journal.StateUnknown {
		t.Fatalf("attempt %+v, want unknown", v)
	}
	settled, err := e.o.SettleUnknown(e.ctx)
	if err != nil || len(settled) != 1 {
		t.Fatalf("settled %+v, %v", settled, err)
	}
	if s := settled[0]; s.State != journal.StateApproved || s.Flag != "" || !strings.HasPrefix(s.Message, "settled from the provider's history") {
		t.Fatalf("settled view %+v", s)
	}
	if a := e.attempt(v.UUID); !a.Charged || a.ChargedAmount != 1000 || a.ChargedGift != 200 {
		t.Fatalf("journal %+v: want 10.00 charged and 2.00 of tip", a)
	}
}

// An unknown debit that the history over the LAN shows approved is
// confirmed by the provider's record, like a direct approval: a device
// answering in the terminal's place (here it lists the attempt as
// approved) does not make the order paid.
func TestRuleAnApprovalSettledFromTheLANHistoryIsWitnessed(t *testing.T) {
	w, _ := witnessed(t, true, WitnessOptions{Wait: 300 * time.Millisecond})
	id := w.unknownOn(journal.ChannelLocal, twoWaysTerminal, "U9", 1300)
	body, _ := json.Marshal(map[string]any{"idempotentUuid": id, "amount": 1300, "cartId": "U9"})
	w.sim.Script(terminalsim.Approve())
	if tx, err := w.lan.PaymentBody(w.ctx, body); err != nil || tx.Status != "ok" {
		t.Fatalf("the rogue device's approval: %+v, %v", tx, err)
	}
	settled, err := w.o.SettleUnknown(w.ctx)
	if err != nil || len(settled) != 1 {
		t.Fatalf("settled %+v, %v", settled, err)
	}
	a := w.attempt(id)
	if a.Witness != journal.WitnessDenied || w.orderStatus("U9") == journal.OrderPaid || settled[0].OrderPaid {
		t.Fatalf("witness %q, order %s, view %+v: the provider's record shows no such approval", a.Witness, w.orderStatus("U9"), settled[0])
	}
}

// However often recovery runs to its end, one periodic check of unknown
// outcomes runs for the orchestrator (two would ask the provider's history
// twice as often), and none when the check is off.
func TestRuleOnePeriodicCheckHoweverOftenRecoveryRuns(t *testing.T) {
	for _, every := range []time.Duration{time.Hour, 0} {
		logged := &levelLog{min: slog.LevelInfo}
		lim := testLimits
		lim.UnknownCheck = every
		e := newEnv(t, lim)
		e.log = slog.New(logged)
		e.restartOn(e.client, lim)
		e.recover()
		e.recover()
		want := 1
		if every == 0 {
			want = 0
		}
		if n := startedChecks(logged); n != want {
			t.Fatalf("check every %s: %d periodic checks started by two recoveries, want %d", every, n, want)
		}
	}
}

// startedChecks counts the periodic checks the log says were started.
func startedChecks(l *levelLog) int {
	n := 0
	for _, line := range l.all() {
		if strings.Contains(line, "checked again periodically") {
			n++
		}
	}
	return n
}
