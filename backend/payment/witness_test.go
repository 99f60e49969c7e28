package payment

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/cloudapi"
	"github.com/comptoir-pos/comptoir/backend/cloudsim"
	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/localapi"
	"github.com/comptoir-pos/comptoir/backend/terminalsim"
)

// switchedWS is the Webservices, which a test can make unreachable.
type switchedWS struct {
	WitnessAPI
	down  atomic.Bool
	reads atomic.Int32
}

func (s *switchedWS) unreachable() error {
	return &cloudapi.TransportError{Op: "GET /transaction/", Err: errors.New("connection refused"), Sent: false}
}

func (s *switchedWS) Details(ctx context.Context, id string) (*cloudapi.TransactionDetails, error) {
	s.reads.Add(1)
	if s.down.Load() {
		return nil, s.unreachable()
	}
	return s.WitnessAPI.Details(ctx, id)
}

func (s *switchedWS) BatchAll(ctx context.Context, r cloudapi.BatchRequest, now time.Time) ([]cloudapi.HistoryEntry, error) {
	s.reads.Add(1)
	if s.down.Load() {
		return nil, s.unreachable()
	}
	return s.WitnessAPI.BatchAll(ctx, r, now)
}

// witnessed is a terminal on the LAN (the cloud's own virtual terminal,
// or a rogue device: a terminal simulator the provider has never heard
// of) and the provider's Webservices as second witness.
func witnessed(t *testing.T, rogue bool, opts WitnessOptions) (*twoWays, *switchedWS) {
	t.Helper()
	w := newTwoWays(t, testLimits)
	w.close()
	sw := &switchedWS{WitnessAPI: w.ws}
	opts.Serial = cloudSerial
	if opts.Wait == 0 {
		opts.Wait = 2 * time.Second
	}
	opts.PollEvery = 10 * time.Millisecond
	w.witness = NewWitness(sw, opts)
	if rogue {
		sim, err := terminalsim.New(terminalsim.Config{TimeScale: 0.001, NoTestAmounts: true, Serial: "ROGUE"})
		if err != nil {
			t.Fatal(err)
		}
		if err := sim.Start("127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { sim.Close() })
		if w.lan, err = localapi.NewClient(sim.URL()); err != nil {
			t.Fatal(err)
		}
		w.sim = sim
	}
	w.reopen()
	w.recover()
	return w, sw
}

// everShownApproved reports whether the customer could have been told
// "approved" for the attempt: a view of it approved without a flag.
func everShownApproved(w *twoWays, id string) bool {
	for _, v := range w.events.all() {
		if v.UUID == id && v.State == journal.StateApproved && v.Flag == "" {
			return true
		}
	}
	return false
}

// A device on the LAN answering "ok" in the terminal's place: the
// provider's record does not show the approval, so the order is not
// paid, it needs staff, and nobody is ever shown "approved".
func TestARogueApprovalOverTheLANIsNotPaid(t *testing.T) {
	w, _ := witnessed(t, true, WitnessOptions{Wait: 300 * time.Millisecond})
	w.order("rogue", 1300)
	h := w.start(Request{OrderID: "rogue", Amount: 1300, Policy: journal.PolicyKiosk})
	v := w.wait(h)
	if v.State != journal.StateApproved || v.OrderPaid || !strings.Contains(v.Flag, "does not show this approval") {
		t.Fatalf("view %+v", v)
	}
	if everShownApproved(w, h.UUID()) {
		t.Fatal("the customer was shown approved")
	}
	a := w.attempt(h.UUID())
	m, _ := w.o.Summary(w.ctx, "rogue")
	if a.Witness != journal.WitnessDenied || w.orderStatus("rogue") != journal.OrderNeedsAttention || m.Paid != 0 || m.Givable() != 0 {
		t.Fatalf("witness %q, status %s, money %+v", a.Witness, w.orderStatus("rogue"), m)
	}
}

// The real terminal's approval is in the provider's record, under
// whichever id the provider gives it: confirmed, the order paid, and the
// provider's own id journaled when it differs; a record that lags two
// reads still confirms within the wait.
func TestTheRealTerminalsApprovalIsConfirmed(t *testing.T) {
	for _, tc := range []struct {
		ids string
		lag int
	}{{cloudsim.LANIDsCloud, 0}, {cloudsim.LANIDsEither, 0}, {cloudsim.LANIDsTerminal, 0}, {cloudsim.LANIDsCloud, 2}, {cloudsim.LANIDsTerminal, 2}} {
		t.Run(tc.ids+map[bool]string{true: ", lagging", false: ""}[tc.lag > 0], func(t *testing.T) {
			w, sw := witnessed(t, false, WitnessOptions{})
			if err := w.cloud.SetLANIDs(tc.ids); err != nil {
				t.Fatal(err)
			}
			if err := w.cloud.SetRecordLag(tc.lag); err != nil {
				t.Fatal(err)
			}
			w.order("real", 1300)
			h := w.start(Request{OrderID: "real", Amount: 1300, Policy: journal.PolicyKiosk})
			v := w.wait(h)
			a := w.attempt(h.UUID())
			if v.State != journal.StateApproved || !v.OrderPaid || v.Flag != "" || a.Witness != journal.WitnessConfirmed {
				t.Fatalf("view %+v, witness %q", v, a.Witness)
			}
			if tc.ids == cloudsim.LANIDsCloud && !strings.HasPrefix(a.ProviderID, "trs_") {
				t.Fatalf("the provider's own id %q not journaled", a.ProviderID)
			}
			if tc.lag > 0 && sw.reads.Load() <= int32(tc.lag) {
				t.Fatalf("confirmed in %d reads of a record that lags %d", sw.reads.Load(), tc.lag)
			}
		})
	}
}

// The provider's record cannot be read at all: the order counts as paid
// on the terminal's word (the weaker guarantee), recorded unconfirmed; the
// periodic check reads the record again and, when it does not show the
// approval, sends the order to staff. Strict, the order waits for staff
// from the start, and a record read later confirms it.
func TestAnApprovalTheProviderCouldNotConfirm(t *testing.T) {
	t.Run("paid on the terminal's word, denied later", func(t *testing.T) {
		w, sw := witnessed(t, true, WitnessOptions{Wait: 100 * time.Millisecond, Lag: time.Millisecond})
		sw.down.Store(true)
		w.order("o", 500)
		h := w.start(Request{OrderID: "o", Amount: 500, Policy: journal.PolicyKiosk})
		v := w.wait(h)
		if v.State != journal.StateApproved || !v.OrderPaid || v.Flag != "" || w.attempt(h.UUID()).Witness != journal.WitnessUnconfirmed {
			t.Fatalf("view %+v, witness %q", v, w.attempt(h.UUID()).Witness)
		}
		sw.down.Store(false)
		w.o.recheckWitnesses(w.ctx)
		if a := w.attempt(h.UUID()); a.Witness != journal.WitnessDenied || w.orderStatus("o") != journal.OrderNeedsAttention {
			t.Fatalf("after the record was read: witness %q, status %s", a.Witness, w.orderStatus("o"))
		}
	})
	t.Run("strict: staff until the record is read", func(t *testing.T) {
		w, sw := witnessed(t, false, WitnessOptions{Wait: 100 * time.Millisecond, Strict: true})
		sw.down.Store(true)
		w.order("s", 500)
		h := w.start(Request{OrderID: "s", Amount: 500, Policy: journal.PolicyKiosk})
		v := w.wait(h)
		if v.OrderPaid || !strings.Contains(v.Flag, "could not be read") || w.orderStatus("s") != journal.OrderNeedsAttention {
			t.Fatalf("view %+v, status %s", v, w.orderStatus("s"))
		}
		sw.down.Store(false)
		w.o.recheckWitnesses(w.ctx)
		if a := w.attempt(h.UUID()); a.Witness != journal.WitnessConfirmed || w.orderStatus("s") != journal.OrderPaid {
			t.Fatalf("after the record was read: witness %q, status %s", a.Witness, w.orderStatus("s"))
		}
	})
}

// A process stopped while an approval waited for the record: recovery
// reads it, and the order is paid once the record confirms it.
func TestRecoveryReadsTheRecordOfAnApprovalLeftWaiting(t *testing.T) {
	w, sw := witnessed(t, false, WitnessOptions{Wait: time.Hour})
	sw.down.Store(true)
	w.order("left", 450)
	h := w.start(Request{OrderID: "left", Amount: 450, Policy: journal.PolicyKiosk})
	waitFor(t, func() bool { return w.attempt(h.UUID()).Witness == journal.WitnessAwaiting })
	if w.orderStatus("left") != journal.OrderNeedsAttention {
		t.Fatalf("awaiting the record, the order is %s", w.orderStatus("left"))
	}
	w.close()
	sw.down.Store(false)
	w.reopen()
	w.recover()
	if a := w.attempt(h.UUID()); a.Witness != journal.WitnessConfirmed || w.orderStatus("left") != journal.OrderPaid {
		t.Fatalf("after recovery: witness %q, status %s", a.Witness, w.orderStatus("left"))
	}
}

// A rogue replaying the id of a transaction the journal already holds is
// denied at once, and a payment through the cloud needs no witness.
func TestAReplayedTransactionIsNoWitness(t *testing.T) {
	w, _ := witnessed(t, false, WitnessOptions{})
	w.order("first", 800)
	first := w.wait(w.start(Request{OrderID: "first", Amount: 800, Policy: journal.PolicyKiosk}))
	if first.Flag != "" || !first.OrderPaid {
		t.Fatalf("first %+v", first)
	}
	att := w.attempt(first.UUID)
	att.UUID, att.OrderID = "another", "second"
	r := w.witness.read(w.ctx, att, w.db.Holders)
	if r.found || !strings.Contains(r.mismatch, "already attempt") {
		t.Fatalf("a replayed id read as %+v", r)
	}
	w.setLAN(false)
	w.order("cloud", 300)
	v := w.wait(w.start(Request{OrderID: "cloud", Amount: 300, Policy: journal.PolicyKiosk}))
	if a := w.attempt(v.UUID); v.Channel != journal.ChannelCloud || a.Witness != "" || !v.OrderPaid {
		t.Fatalf("through the cloud: %+v, witness %q", v, a.Witness)
	}
}

// A provider that does not answer holds the periodic check (and recovery)
// for one read, not one per approval waiting for its record.
func TestAProviderThatDoesNotAnswerIsAskedOnce(t *testing.T) {
	w, sw := witnessed(t, false, WitnessOptions{Wait: 50 * time.Millisecond})
	sw.down.Store(true)
	for _, id := range []string{"a", "b", "c"} {
		w.order(id, 300)
		if v := w.wait(w.start(Request{OrderID: id, Amount: 300, Policy: journal.PolicyKiosk})); w.attempt(v.UUID).Witness != journal.WitnessUnconfirmed {
			t.Fatalf("%s: %+v", id, v)
		}
	}
	sw.reads.Store(0)
	w.o.recheckWitnesses(w.ctx)
	if n := sw.reads.Load(); n == 0 || n > 2 {
		t.Fatalf("%d reads of a provider that does not answer, for three approvals: want one attempt's", n)
	}
}

// A witness setting left out (zero) or impossible (negative) takes its
// default; one given is kept.
func TestRuleAWitnessSettingLeftOutTakesItsDefault(t *testing.T) {
	defaults := WitnessOptions{Wait: 20 * time.Second, PollEvery: 2 * time.Second, Skew: 10 * time.Minute, Lag: 10 * time.Minute, Recheck: 7 * 24 * time.Hour}
	for _, d := range []time.Duration{0, -time.Second} {
		got := NewWitness(nil, WitnessOptions{Wait: d, PollEvery: d, Skew: d, Lag: d, Recheck: d}).opts
		if got.Wait != defaults.Wait || got.PollEvery != defaults.PollEvery || got.Skew != defaults.Skew ||
			got.Lag != defaults.Lag || got.Recheck != defaults.Recheck || got.Now == nil {
			t.Fatalf("settings of %s: %+v, want the defaults %+v", d, got, defaults)
		}
	}
	given := WitnessOptions{Wait: time.Second, PollEvery: time.Millisecond, Skew: time.Minute, Lag: 2 * time.Minute, Recheck: time.Hour}
	if got := NewWitness(nil, given).opts; got.Wait != given.Wait || got.PollEvery != given.PollEvery || got.Skew != given.Skew ||
		got.Lag != given.Lag || got.Recheck != given.Recheck || got.Now == nil {
		t.Fatalf("given %+v, kept %+v", given, got)
	}
}
