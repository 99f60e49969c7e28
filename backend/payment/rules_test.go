package payment

// The money rules that a wrong settle would break, each stated by its
// test's name (docs/testing.md lists them).

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/localapi"
	"github.com/comptoir-pos/comptoir/backend/terminalsim"
	"github.com/google/uuid"
)

// The terminal answers the customer's cancel while the /payment request is
// still out: whatever the cancel's answer, the /payment answer decides, and
// an approval that comes after the cancel's answer wins (the customer was
// charged, and is told so).
func TestRuleAfterACancelThePaymentAnswerStillOutDecidesALateApprovalWins(t *testing.T) {
	for _, tt := range []struct {
		name   string
		aborts []func() (*localapi.AbortResponse, error)
	}{
		{"stopped", list(abortOK)},
		{"not possible", list(abortKO(localapi.MsgAbortNotPossible))},
		{"nothing to abort", list(abortKO(localapi.MsgNothingToAbort))},
		{"another payment runs", list(abortKO(localapi.BusyMessage("01a20000-0000-7000-8000-000000000099")))},
		{"unreachable", list(abortRefused)},
		{"HTTP 500", list(abortHTTP500)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			lim := testLimits
			// The /payment stays out, and the grace after "stopped" lasts,
			// long enough for any machine: the approval comes well within.
			lim.AbortGrace, lim.KioskTimeout, lim.RequestOpen = 5*time.Second, 30*time.Second, 40*time.Second
			e, s, h := startScripted(t, lim)
			s.setAborts(tt.aborts)
			h.Cancel()
			waitView(t, e, h, func(v View) bool { return v.Abort != AbortNone && v.Abort != AbortPending })
			s.answer(1, txFor(h.UUID(), localapi.StatusOK), nil)
			v := e.wait(h)
			if v.State != journal.StateApproved || !v.ChargedDespiteCancel || !v.OrderPaid {
				t.Fatalf("view %+v: an approval after the cancel's answer is the outcome", v)
			}
			if a := e.attempt(h.UUID()); a.State != journal.StateApproved || a.TransactionID == "" {
				t.Fatalf("journal %+v", a)
			}
			if st := e.orderStatus("C1"); st != journal.OrderPaid {
				t.Fatalf("order %s", st)
			}
			// The journal keeps the terminal's words on the cancel.
			if tt.name != "not possible" {
				return
			}
			said := false
			for _, ev := range e.eventsOf(h.UUID()) {
				said = said || strings.Contains(ev.Detail, "("+localapi.MsgAbortNotPossible+")")
			}
			if !said {
				t.Fatalf("the cancel's answer is not in the journal: %+v", e.eventsOf(h.UUID()))
			}
		})
	}
}

// An attempt whose outcome is unknown, still running at the provider (its
// history lists it as pending), is never settled as declined, however old
// it is: it may still charge the customer. Once the history says charged,
// it is approved.
func TestRuleAnUnknownStillPendingAtTheProviderIsNeverSettledDeclined(t *testing.T) {
	var charged atomic.Bool
	p := &polling{
		send: func(int) Answer { return ack("cloud-1") },
		poll: func(int) Answer { return Answer{Outcome: OutcomePending, ProviderStatus: "pending"} },
		lookup: func(int) (Match, error) {
			m := Match{Verdict: InHistory, Candidates: 1, Pending: true, Charge: Charge{TransactionID: "cloud-1"}}
			if charged.Load() {
				m.Pending, m.Charge = false, Charge{TransactionID: "cloud-1", Amount: 900, Approved: true}
			}
			return m, nil
		},
	}
	e := pollingEnv(t, p, testLimits)
	id := e.unknownOn(journal.ChannelCloud, "SN-1", "U1", 900)
	e.o.cfg.Now = func() time.Time { return time.Now().Add(testLimits.SettleAfter + testLimits.Idempotency) }
	warnings := &levelLog{min: slog.LevelWarn}
	e.o.log = slog.New(warnings)
	if settled, err := e.o.SettleUnknown(e.ctx); err != nil || len(settled) != 0 {
		t.Fatalf("settled %+v, %v: it is still running at the provider", settled, err)
	}
	if w := warnings.all(); len(w) > 0 { // left as it is: nothing went wrong
		t.Fatalf("warnings logged: %q", w)
	}
	if a := e.attempt(id); a.State != journal.StateUnknown {
		t.Fatalf("an attempt still pending at the provider became %s", a.State)
	}
	if st := e.orderStatus("U1"); st != journal.OrderNeedsAttention {
		t.Fatalf("order %s", st)
	}
	charged.Store(true)
	settled, err := e.o.SettleUnknown(e.ctx)
	if err != nil || len(settled) != 1 || settled[0].State != journal.StateApproved {
		t.Fatalf("settled %+v, %v", settled, err)
	}
}

// A refund by API whose outcome is unknown and that the provider's list
// does not show (yet) is never settled as declined, however old it is: a
// refund may wait for a manager's approval before it is listed, and
// calling it declined would free its money to be given back twice.
func TestRuleAnUnknownRefundByAPINotInTheProvidersListIsNeverSettledDeclined(t *testing.T) {
	e := newWSEnv(t)
	debit := e.paid("K1", 1200)
	id := e.unknownOn(journal.ChannelWebservices, "webservices/"+debit.TransactionID, "K1", 500,
		func(a *journal.Attempt) {
			a.Kind, a.Policy, a.InitialTransactionID = journal.KindRefund, journal.PolicyRefund, debit.TransactionID
		})
	e.ws.cfg.Now = func() time.Time { return time.Now().Add(testLimits.SettleAfter + testLimits.Idempotency) }
	warnings := &levelLog{min: slog.LevelWarn}
	e.ws.log = slog.New(warnings)
	if settled, err := e.ws.SettleUnknown(e.ctx); err != nil || len(settled) != 0 {
		t.Fatalf("settled %+v, %v: the provider's list does not show it", settled, err)
	}
	if w := warnings.all(); len(w) > 0 { // left to staff: nothing went wrong
		t.Fatalf("warnings logged: %q", w)
	}
	if a := e.attempt(id); a.State != journal.StateUnknown {
		t.Fatalf("a refund missing from the provider's list became %s", a.State)
	}
	m, err := e.db.OrderMoney(e.ctx, "K1")
	if err != nil || m.Pending != 500 || m.Givable() != 700 {
		t.Fatalf("money %+v, %v: the unknown refund counts as given back", m, err)
	}
}

// A cloud attempt overdue (no outcome within the client timeout) that the
// provider's history does not list yet is followed, never ended as not
// charged, until the history is complete for it: the payment may still be
// on its way to the terminal, and here it is charged after the first
// search came back empty.
func TestRuleAnOverdueCloudAttemptMissingFromTheHistoryIsNotEndedBeforeTheHistoryIsComplete(t *testing.T) {
	lim := testLimits
	lim.KioskTimeout, lim.SettleAfter = 50*time.Millisecond, 5*time.Second
	var released atomic.Bool
	p := &polling{
		send: func(int) Answer { return ack("cloud-4") },
		poll: func(int) Answer {
			if released.Load() {
				return paid("cloud-4", 600)
			}
			return Answer{Outcome: OutcomePending, ProviderStatus: "pending"}
		},
		lookup: func(int) (Match, error) { return Match{Verdict: NotInHistory}, nil },
	}
	e := pollingEnv(t, p, lim)
	h := e.kiosk("O1", 600)
	waitView(t, e, h, func(View) bool { _, _, _, lookups := p.counts(); return lookups >= 1 })
	released.Store(true)
	v := e.wait(h)
	if v.State != journal.StateApproved || v.TransactionID != "cloud-4" {
		t.Fatalf("view %+v: ended before the history was complete", v)
	}
	if s, _, _, _ := p.counts(); s != 1 {
		t.Fatalf("sent %d times", s)
	}
}

// unknownOn journals an attempt of order (created with amount) on channel
// and terminal, sent and then left unknown, as a process that reached its
// request-open limit leaves it; edit changes the attempt before it is
// prepared. It returns the attempt's uuid.
func (e *env) unknownOn(channel journal.Channel, terminal, order string, amount int64, edit ...func(*journal.Attempt)) string {
	e.t.Helper()
	if _, err := e.db.Order(e.ctx, order); err != nil {
		e.order(order, amount)
	}
	id := uuid.Must(uuid.NewV7()).String()
	body, _ := json.Marshal(map[string]any{"idempotentUuid": id, "amount": amount, "cartId": order})
	a := journal.Attempt{UUID: id, OrderID: order, Kind: journal.KindDebit, Channel: channel, Amount: amount,
		Policy: journal.PolicyKiosk, Terminal: terminal, RequestBody: body}
	for _, f := range edit {
		f(&a)
	}
	if _, err := e.db.PrepareAttempt(e.ctx, a); err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.db.MarkSent(e.ctx, id); err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.db.Transition(e.ctx, id, journal.StateSent, journal.StateUnknown,
		journal.TransitionInfo{Error: "no answer within the request-open limit", Note: "test"}); err != nil {
		e.t.Fatal(err)
	}
	return id
}

// The process died while the customer's cancel was out, and the terminal
// then charged the card: recovery asks the terminal, and the charge stands
// (approved, charged despite the cancel), never a "cancelled" assumed
// from the pending cancel.
func TestRuleARecoveredCancelAsksTheTerminalAndAChargeMadeMeanwhileStands(t *testing.T) {
	lim := testLimits
	e := newEnv(t, lim)
	e.restartOn(hangingAborts{e.client}, lim)
	h := e.kiosk("R2", 900, terminalsim.Hold())
	e.atPhase(h, terminalsim.PhaseBanking)
	h.Cancel()
	waitView(t, e, h, func(v View) bool { return v.State == journal.StateAbortRequested })
	e.close() // the process dies with the cancel out
	if err := e.sim.PresentCard(); err != nil {
		t.Fatal(err)
	}
	if err := e.sim.WaitIdle(e.ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(e.sim.ChargesFor(h.UUID())); n != 1 {
		t.Fatalf("%d charges", n)
	}
	e.open(e.client, lim)
	e.recover()
	a := e.attempt(h.UUID())
	if a.State != journal.StateApproved || a.TransactionID != e.sim.ChargesFor(h.UUID())[0].TransactionID {
		t.Fatalf("recovered as %s (%s): the terminal charged it", a.State, a.Error)
	}
	if st := e.orderStatus("R2"); st != journal.OrderPaid {
		t.Fatalf("order %s", st)
	}
}

// An attempt that ends while its /payment is still out (the cancel
// stopped it and no answer came within the grace period) stops waiting for
// that request at once: the request is cancelled, not left to run to its
// client timeout.
func TestRuleAnAttemptThatEndsStopsWaitingForItsRequest(t *testing.T) {
	lim := testLimits
	lim.AbortGrace, lim.KioskTimeout, lim.RequestOpen = 50*time.Millisecond, 30*time.Second, 40*time.Second
	e, s, h := startScripted(t, lim)
	s.setAborts(list(abortOK))
	h.Cancel()
	if v := e.wait(h); v.State != journal.StateCancelled {
		t.Fatalf("view %+v", v)
	}
	s.waitFor(t, e.ctx, "the /payment to end", func(int, int, int) bool { return len(s.ends) == 1 })
	s.mu.Lock()
	defer s.mu.Unlock()
	if !errors.Is(s.ends[0], context.Canceled) {
		t.Fatalf("the /payment ended by %v, not cancelled when its attempt ended", s.ends[0])
	}
	// The journal numbers the cancel's requests: this was the first.
	numbered := false
	for _, ev := range e.eventsOf(h.UUID()) {
		numbered = numbered || strings.HasPrefix(ev.Detail, "abort #1: ")
	}
	if !numbered {
		t.Fatalf("no abort #1 in the journal: %+v", e.eventsOf(h.UUID()))
	}
}
