package payment

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/localapi"
	"github.com/comptoir-pos/comptoir/backend/terminalsim"
)

// orderedTerminal forwards to the simulator but lets /abort overtake the
// /payment request: two connections, no ordering guarantee on the LAN.
type orderedTerminal struct {
	c       *localapi.Client
	aborted chan struct{}
	aborts  atomic.Int32
}

func (o *orderedTerminal) PaymentBody(ctx context.Context, body []byte) (*localapi.Transaction, error) {
	select {
	case <-o.aborted:
	case <-ctx.Done():
		return nil, &localapi.TransportError{Endpoint: "/payment", Timeout: true, Err: ctx.Err()}
	}
	return o.c.PaymentBody(ctx, body)
}

func (o *orderedTerminal) ReversalBody(ctx context.Context, body []byte) (*localapi.ReversalResponse, error) {
	return o.c.ReversalBody(ctx, body)
}

func (o *orderedTerminal) Transactions(ctx context.Context, req *localapi.TransactionsRequest) (*localapi.TransactionList, error) {
	return o.c.Transactions(ctx, req)
}

func (o *orderedTerminal) Abort(ctx context.Context, req *localapi.AbortRequest) (*localapi.AbortResponse, error) {
	resp, err := o.c.Abort(ctx, req)
	if o.aborts.Add(1) == 1 {
		close(o.aborted)
	}
	return resp, err
}

// The customer cancels at once; the /abort reaches the terminal before the
// /payment and gets "Nothing to abort"; the /payment then starts the payment.
// The abort must be sent again, or a payment the customer cancelled would
// run on the terminal until the request-open limit. The same race exists in
// recovery of an abort_requested attempt, where /abort and the resend leave
// together.
func TestNothingToAbortThenThePaymentStarts(t *testing.T) {
	lim := testLimits
	lim.KioskTimeout = 200 * time.Millisecond
	lim.RequestOpen = 800 * time.Millisecond
	e := newEnv(t, lim)
	term := &orderedTerminal{c: e.client, aborted: make(chan struct{})}
	e.close()
	e.open(term, lim)
	e.recover()
	e.sim.Script(terminalsim.HoldBeforeHandover()) // abortable for as long as it runs
	h := e.kiosk("NA1", 400)
	for e.attempt(h.UUID()).SendCount == 0 { // the /payment is on its way
		time.Sleep(time.Millisecond)
	}
	h.Cancel()
	v := e.wait(h)
	if v.State != journal.StateCancelled {
		t.Errorf("cancelled before the terminal started, ended %s (abort %q, %d abort(s) sent): %s",
			v.State, v.Abort, term.aborts.Load(), v.Message)
	}
}
