package terminalsim

import (
	"testing"

	"github.com/comptoir-pos/comptoir/backend/localapi"
	"github.com/google/uuid"
)

// Rule 6: an abort before the handover stops the payment.
func TestAbortBeforeHandover(t *testing.T) {
	for _, tt := range []struct {
		name  string
		gift  *bool
		phase Phase
	}{
		{"preparing", nil, PhasePreparing},
		{"gift screen", localapi.Bool(true), PhaseScreens},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sim, c := newSim(t, Config{})
			ctx := testCtx(t)
			sim.Script(HoldBeforeHandover())
			id := uuid.NewString()
			req := &localapi.PaymentRequest{Amount: 1000, IdempotentUUID: id, EnableGiftScreen: tt.gift}
			res := payAsync(ctx, c, req)
			mustPhase(t, ctx, sim, id, tt.phase)

			resp, err := c.Abort(ctx, &localapi.AbortRequest{IdempotentUUID: id})
			if err != nil || resp.Status != "ok" {
				t.Fatalf("abort: %v %v", resp, err)
			}
			if resp.IdempotentUUID != "" {
				t.Errorf("abort naming its uuid echoed %q", resp.IdempotentUUID)
			}
			tx := mustDeclined(t, wait(t, ctx, res))
			if tx.TransactionID != "" {
				t.Errorf("aborted payment has transactionId %q", tx.TransactionID)
			}
			if err := sim.WaitPhase(ctx, id, PhaseBanking); err == nil {
				t.Error("aborted payment reached the banking screen")
			}
			if n := len(sim.Ledger()); n != 0 {
				t.Errorf("charged: %+v", sim.Ledger())
			}
			// The uuid is remembered as that ko.
			again := mustDeclined(t, wait(t, ctx, payAsync(ctx, c, req)))
			if string(again.Raw) != string(tx.Raw) {
				t.Errorf("replay %s, want %s", again.Raw, tx.Raw)
			}
			// Nothing in progress any more.
			_, err = c.Abort(ctx, &localapi.AbortRequest{IdempotentUUID: id})
			mustCode(t, err, localapi.CodeNothingToAbort, localapi.MsgNothingToAbort)
		})
	}
}

// Rule 6: after the handover the abort waits for the end and the payment's
// own answer decides.
func TestAbortAfterHandover(t *testing.T) {
	for _, tt := range []struct {
		name    string
		act     func(*Terminal) error
		charged bool
	}{
		{"customer pays anyway", (*Terminal).PresentCard, true},
		{"card declined", (*Terminal).Decline, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sim, c := newSim(t, Config{})
			ctx := testCtx(t)
			id, res := payIn(t, ctx, sim, c, Hold(), 1000, PhaseBanking)

			aborted := abortAsync(ctx, c, id)
			abortHeld(t, ctx, sim)
			select {
			case err := <-aborted:
				t.Fatalf("abort answered before the payment ended: %v", err)
			default:
			}
			if err := tt.act(sim); err != nil {
				t.Fatal(err)
			}
			mustCode(t, wait(t, ctx, aborted), localapi.CodeAbortNotPossible, localapi.MsgAbortNotPossible)
			r := wait(t, ctx, res)
			if tt.charged {
				mustApproved(t, r)
			} else {
				mustDeclined(t, r)
			}
			if got := len(sim.ChargesFor(id)) == 1; got != tt.charged {
				t.Errorf("charged = %v, want %v", got, tt.charged)
			}
		})
	}
}

func TestAbortNothingInProgress(t *testing.T) {
	sim, c := newSim(t, Config{})
	ctx := testCtx(t)
	for _, body := range []string{"", "null", "{}"} {
		wantKO(t, rawJSON(t, sim, "POST", "/abort", body), localapi.MsgNothingToAbort)
	}
	_, err := c.Abort(ctx, &localapi.AbortRequest{IdempotentUUID: uuid.NewString()})
	mustCode(t, err, localapi.CodeNothingToAbort, localapi.MsgNothingToAbort)
	_, err = c.Abort(ctx, &localapi.AbortRequest{})
	mustCode(t, err, localapi.CodeNothingToAbort, localapi.MsgNothingToAbort)
}

// Rule 6: a payment started on the terminal's keypad cannot be aborted and
// keeps the terminal busy.
func TestKeypadPayment(t *testing.T) {
	sim, c := newSim(t, Config{})
	ctx := testCtx(t)
	hold := Hold()
	kid, err := sim.StartOnKeypad(2500, &hold)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sim.StartOnKeypad(100, nil); err == nil {
		t.Error("second keypad payment accepted")
	}
	mustPhase(t, ctx, sim, kid, PhaseBanking)
	for _, id := range []string{"", kid} {
		_, err := c.Abort(ctx, &localapi.AbortRequest{IdempotentUUID: id})
		mustCode(t, err, localapi.CodeAbortNotAllowed, localapi.MsgAbortNotAllowed)
	}
	_, err = c.Payment(ctx, &localapi.PaymentRequest{Amount: 100, IdempotentUUID: uuid.NewString()})
	mustCode(t, err, localapi.CodeBusy, localapi.BusyMessage(kid))
	// Its uuid cannot be used to attach from the Local API.
	_, err = c.Payment(ctx, &localapi.PaymentRequest{Amount: 2500, IdempotentUUID: kid})
	mustCode(t, err, localapi.CodeBusy, localapi.BusyMessage(kid))
	sim.PresentCard()
	if err := sim.WaitIdle(ctx); err != nil {
		t.Fatal(err)
	}
	if l := sim.Ledger(); len(l) != 1 || !l[0].Keypad || l[0].Total != 2500 {
		t.Errorf("ledger %+v", l)
	}
}

// Rule 6: the earlier form aborts whatever is in progress and echoes its
// uuid.
func TestAbortEarlierForm(t *testing.T) {
	sim, c := newSim(t, Config{})
	ctx := testCtx(t)

	id, res := payIn(t, ctx, sim, c, HoldBeforeHandover(), 1000, PhasePreparing)
	m := rawJSON(t, sim, "POST", "/abort", "") // no body at all
	if m["status"] != "ok" || m["idempotentUuid"] != id {
		t.Errorf("earlier-form abort before handover: %v", m)
	}
	mustDeclined(t, wait(t, ctx, res))

	id, res = payIn(t, ctx, sim, c, Hold(), 1000, PhaseBanking)
	done := rawAsync(ctx, sim, "POST", "/abort", "{}")
	abortHeld(t, ctx, sim)
	sim.PresentCard()
	m = wait(t, ctx, done).json(t)
	if m["status"] != "ko" || m["message"] != localapi.MsgAbortNotPossible || m["idempotentUuid"] != id {
		t.Errorf("earlier-form abort after handover: %v", m)
	}
	mustApproved(t, wait(t, ctx, res))
}

// Several aborts of one payment before the handover all answer ok.
func TestAbortTwiceBeforeHandover(t *testing.T) {
	sim, c := newSim(t, Config{})
	ctx := testCtx(t)
	id, res := payIn(t, ctx, sim, c, HoldBeforeHandover(), 1000, PhasePreparing)
	a1, a2 := abortAsync(ctx, c, id), abortAsync(ctx, c, id)
	for _, ch := range []<-chan error{a1, a2} {
		if err := wait(t, ctx, ch); err != nil && localapi.ErrorCode(err) != localapi.CodeNothingToAbort {
			t.Errorf("abort: %v", err)
		}
	}
	mustDeclined(t, wait(t, ctx, res))
}
