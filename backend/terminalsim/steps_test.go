package terminalsim

import (
	"context"
	"testing"

	"github.com/comptoir-pos/comptoir/backend/localapi"
	"github.com/google/uuid"
)

// payIn starts a /payment of amount under a new uuid, the terminal scripted
// with b, and waits until the terminal runs it in phase. It returns the
// uuid and the answer to come.
func payIn(t *testing.T, ctx context.Context, sim *Terminal, c *localapi.Client, b Behaviour, amount int64, phase Phase) (string, <-chan payResult) {
	t.Helper()
	sim.Script(b)
	id := uuid.NewString()
	res := payAsync(ctx, c, &localapi.PaymentRequest{Amount: amount, IdempotentUUID: id})
	mustPhase(t, ctx, sim, id, phase)
	return id, res
}

// abortHeld waits until the terminal holds one abort of its payment, past
// the handover, until the payment ends.
func abortHeld(t *testing.T, ctx context.Context, sim *Terminal) {
	t.Helper()
	if err := sim.WaitFor(ctx, func(s State) bool { return s.Current != nil && s.Current.AbortsHeld == 1 }); err != nil {
		t.Fatal(err)
	}
}

// newRequest starts a terminal scripted with script and returns, with a
// client of it and the test's context, a /payment request of amount under
// a new uuid.
func newRequest(t *testing.T, amount int64, script ...Behaviour) (*Terminal, *localapi.Client, context.Context, *localapi.PaymentRequest) {
	t.Helper()
	sim, c := newSim(t, Config{})
	sim.Script(script...)
	return sim, c, testCtx(t), &localapi.PaymentRequest{Amount: amount, IdempotentUUID: uuid.NewString()}
}
