package payment

import (
	"strings"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/cloudapi"
	"github.com/comptoir-pos/comptoir/backend/cloudsim"
	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/terminalsim"
)

// The cloud rules against the simulated provider cloud, whose terminal is
// the terminal simulator: what the terminal charged is the truth.

// A lost acknowledgement is settled from the history, by the attempt's own
// ids, or (when the history does not list them, as the specification's
// list of fields does not) by its order and amount; never resent.
func TestCloudsimLostAcknowledgement(t *testing.T) {
	for _, ids := range []bool{true, false} {
		t.Run(map[bool]string{true: "history with ids", false: "history without ids"}[ids], func(t *testing.T) {
			e := newEnvOn(t, "cloud", testLimits)
			e.recover()
			e.cloud.SetHistoryIDs(ids)
			e.cloud.LoseNextAck()
			h := e.kiosk("L1", 800)
			v := e.wait(h)
			if v.State != journal.StateApproved || !v.OrderPaid || !strings.HasPrefix(v.TransactionID, "trs_") {
				t.Fatalf("view %+v", v)
			}
			if n := len(e.cloud.Transactions()); n != 1 || e.charges(h.UUID()) != 1 {
				t.Fatalf("%d cloud transactions, %d charges: the lost acknowledgement was resent", n, e.charges(h.UUID()))
			}
		})
	}
}

// A payment lost on its way to the cloud (or journaled as sent by a
// process killed before it left) is in no history: it is waited for until
// the history is complete, never resent, then settled as not charged.
func TestCloudsimPaymentThatNeverArrived(t *testing.T) {
	lim := testLimits
	lim.SettleAfter = 300 * time.Millisecond
	e := newEnvOn(t, "cloud", lim)
	e.recover()
	if err := e.cloud.Inject(cloudsim.Fault{Path: cloudsim.PathPayment}); err != nil {
		t.Fatal(err)
	}
	h := e.kiosk("N1", 800)
	v := e.wait(h)
	if v.State != journal.StateFailed || v.OrderPaid {
		t.Fatalf("view %+v", v)
	}
	att, err := e.db.Attempt(e.ctx, h.UUID())
	if err != nil {
		t.Fatal(err)
	}
	if att.SendCount != 1 || len(e.cloud.Transactions()) != 0 {
		t.Fatalf("%d sends, %d cloud transactions: the payment was resent", att.SendCount, len(e.cloud.Transactions()))
	}
	if settled := att.FinalAt.Sub(att.LastSentAt); settled < lim.SettleAfter {
		t.Fatalf("settled %s after the send, before the history was complete (%s)", settled, lim.SettleAfter)
	}
}

// The poll says pending for ever (or 404): past the deadline the history
// decides, both ways.
func TestCloudsimPollUselessPastTheDeadline(t *testing.T) {
	t.Parallel() // waits on real cadences: beside the others
	modes := []string{cloudsim.PollPending, cloudsim.PollNotFound, cloudsim.PollError}
	eachPollMode(t, modes, (*cloudsim.Cloud).SetPoll, func(t *testing.T, e *env, _ string) {
		h := e.kiosk("P1", 400)
		if v := e.wait(h); v.State != journal.StateApproved || e.charges(h.UUID()) != 1 {
			t.Fatalf("approved on the terminal: view %+v", v)
		}
		h = e.kiosk("P2", 400, terminalsim.Behaviour{Outcome: terminalsim.OutcomeDecline})
		if v := e.wait(h); v.State != journal.StateDeclined || e.charges(h.UUID()) != 0 {
			t.Fatalf("declined on the terminal: view %+v", v)
		}
	})
}

// eachPollMode runs test on a ready cloud env for each of modes, set on the
// cloud by set, with a client timeout short enough to reach the deadline.
func eachPollMode(t *testing.T, modes []string, set func(*cloudsim.Cloud, string) error, test func(t *testing.T, e *env, mode string)) {
	lim := testLimits
	lim.KioskTimeout, lim.SettleAfter = 150*time.Millisecond, 50*time.Millisecond
	for _, mode := range modes {
		t.Run(mode, func(t *testing.T) {
			e := newEnvOn(t, "cloud", lim)
			e.recover()
			if err := set(e.cloud, mode); err != nil {
				t.Fatal(err)
			}
			test(t, e, mode)
		})
	}
}

// An offline terminal: the action expires after 5 s (scaled), nothing is
// charged, and the kiosk is told quickly when the poll says so; when the
// poll does not (pending for ever, 404), the history decides past the
// deadline. Never unknown, never approved.
func TestCloudsimOfflineTerminal(t *testing.T) {
	modes := []string{cloudsim.PollExpired, cloudsim.PollPending, cloudsim.PollNotFound}
	eachPollMode(t, modes, (*cloudsim.Cloud).SetExpiredPoll, func(t *testing.T, e *env, mode string) {
		if err := e.cloud.SetOnline(cloudSerial, false); err != nil {
			t.Fatal(err)
		}
		v := e.wait(e.kiosk("O1", 500))
		if v.State == journal.StateApproved || v.State == journal.StateUnknown || v.OrderPaid {
			t.Fatalf("view %+v", v)
		}
		if mode == cloudsim.PollExpired && !strings.Contains(v.Message, "offline") {
			t.Fatalf("the expiry is not told: %q", v.Message)
		}
		// Back online: the expired action is never delivered, and a
		// new attempt pays.
		_ = e.cloud.SetOnline(cloudSerial, true)
		if len(e.sim.Ledger()) != 0 {
			t.Fatalf("terminal ledger %+v", e.sim.Ledger())
		}
		if v := e.wait(e.start(Request{OrderID: "O1", Amount: 500, Policy: journal.PolicyKiosk})); v.State != journal.StateApproved {
			t.Fatalf("after the terminal came back: %+v", v)
		}
	})
}

// 400 and 401 are refusals: nothing started, the message says why, the
// key is not in it.
func TestCloudsimRefusals(t *testing.T) {
	e := newEnvOn(t, "cloud", testLimits)
	e.recover()
	e.order("R1", 300)
	// 401: a key the cloud does not know.
	wrong, err := cloudapi.New(e.cloud.URL(), "sk_wrong_key_123")
	if err != nil {
		t.Fatal(err)
	}
	e.close()
	e.channel = Cloud(wrong, cloudSerial, nil, 5*time.Millisecond)
	e.open(nil, testLimits)
	e.recover()
	v := e.wait(e.start(Request{OrderID: "R1", Amount: 300, Policy: journal.PolicyKiosk}))
	if v.State != journal.StateFailed || !strings.Contains(v.Message, "401") || strings.Contains(v.Message, "sk_wrong_key_123") {
		t.Fatalf("401: view %+v", v)
	}
	// 400: the cloud refuses the request itself.
	right, _ := cloudapi.New(e.cloud.URL(), e.cloud.Key())
	e.close()
	e.channel = Cloud(right, cloudSerial, nil, 5*time.Millisecond)
	e.open(nil, testLimits)
	e.recover()
	if err := e.cloud.Inject(cloudsim.Fault{Path: cloudsim.PathPayment, Status: 400}); err != nil {
		t.Fatal(err)
	}
	v = e.wait(e.start(Request{OrderID: "R1", Amount: 300, Policy: journal.PolicyKiosk}))
	if v.State != journal.StateFailed || !strings.Contains(v.Message, "400") {
		t.Fatalf("400: view %+v", v)
	}
	if len(e.cloud.Transactions()) != 0 || len(e.sim.Ledger()) != 0 {
		t.Fatalf("a refused request made a transaction: %+v", e.cloud.Transactions())
	}
}
