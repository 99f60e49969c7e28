package localapi_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/internal/testenv"
	"github.com/comptoir-pos/comptoir/backend/localapi"
	"github.com/comptoir-pos/comptoir/backend/terminalsim"
)

// The client against the simulated terminal over real HTTP: every endpoint,
// each outcome class, the way the orchestrator will use them.
func TestClientAgainstSimulator(t *testing.T) {
	sim, c := testenv.Terminal(t, testenv.Scripted)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	if _, err := c.Ping(ctx, true); err != nil {
		t.Fatalf("ping: %v", err)
	}

	// Approved, then the same uuid again: the same transaction, no second charge.
	req := &localapi.PaymentRequest{Amount: 1250, IdempotentUUID: "0193b1c2-0000-7000-8000-0000000000a1", CartID: "A1", EnableGiftScreen: localapi.Bool(false)}
	tx, err := c.Payment(ctx, req)
	if err != nil || !tx.Approved() || tx.IdempotentUUID != req.IdempotentUUID || tx.CartID != "A1" {
		t.Fatalf("payment: tx=%+v err=%v", tx, err)
	}
	again, err := c.Payment(ctx, req)
	if err != nil || again.TransactionID != tx.TransactionID {
		t.Fatalf("replay: tx=%+v err=%v", again, err)
	}
	if n := len(sim.ChargesFor(req.IdempotentUUID)); n != 1 {
		t.Fatalf("%d charges for one uuid", n)
	}

	// Declined: ko without message, final for its uuid.
	sim.Script(terminalsim.Decline())
	declined := &localapi.PaymentRequest{Amount: 900, IdempotentUUID: "0193b1c2-0000-7000-8000-0000000000a2"}
	if tx, err := c.Payment(ctx, declined); err != nil || !tx.Declined() {
		t.Fatalf("decline: tx=%+v err=%v", tx, err)
	}
	if tx, err := c.Payment(ctx, declined); err != nil || !tx.Declined() {
		t.Fatalf("declined replay: tx=%+v err=%v", tx, err)
	}

	// Busy: a second payment while one is held is an application error
	// naming the payment in progress; abort before the handover cancels it.
	sim.Script(terminalsim.HoldBeforeHandover())
	held := &localapi.PaymentRequest{Amount: 700, IdempotentUUID: "0193b1c2-0000-7000-8000-0000000000a3"}
	heldDone := make(chan error, 1)
	go func() {
		tx, err := c.Payment(ctx, held)
		if err == nil && !tx.Declined() {
			err = errors.New("aborted payment was not ko")
		}
		heldDone <- err
	}()
	if err := sim.WaitPhase(ctx, held.IdempotentUUID, terminalsim.PhasePreparing); err != nil {
		t.Fatal(err)
	}
	_, err = c.Payment(ctx, &localapi.PaymentRequest{Amount: 100, IdempotentUUID: "0193b1c2-0000-7000-8000-0000000000a4"})
	var ae *localapi.APIError
	if !errors.As(err, &ae) || ae.Code != localapi.CodeBusy || ae.Arg != held.IdempotentUUID {
		t.Fatalf("busy: %v", err)
	}
	if _, err := c.Abort(ctx, &localapi.AbortRequest{IdempotentUUID: held.IdempotentUUID}); err != nil {
		t.Fatalf("abort before handover: %v", err)
	}
	if err := <-heldDone; err != nil {
		t.Fatalf("held payment: %v", err)
	}
	if _, err := c.Abort(ctx, &localapi.AbortRequest{IdempotentUUID: held.IdempotentUUID}); localapi.ErrorCode(err) != localapi.CodeNothingToAbort {
		t.Fatalf("abort with nothing in progress: %v", err)
	}

	// Reversal: the amount is amount + giftAmount, once.
	if _, err := c.Reversal(ctx, &localapi.ReversalRequest{Amount: 1, InitialTransactionID: tx.TransactionID}); localapi.ErrorCode(err) != localapi.CodeReversalAmount {
		t.Fatalf("reversal amount mismatch: %v", err)
	}
	rev, err := c.Reversal(ctx, &localapi.ReversalRequest{Amount: tx.Total(), InitialTransactionID: tx.TransactionID})
	if err != nil || rev.ReversalTransactionID == "" || rev.InitialTransactionID != tx.TransactionID {
		t.Fatalf("reversal: %+v %v", rev, err)
	}
	if _, err := c.Reversal(ctx, &localapi.ReversalRequest{Amount: tx.Total(), InitialTransactionID: tx.TransactionID}); localapi.ErrorCode(err) != localapi.CodeReversalAlready {
		t.Fatalf("second reversal: %v", err)
	}
	if _, err := c.Reversal(ctx, &localapi.ReversalRequest{Amount: 5, InitialTransactionID: "nope"}); localapi.ErrorCode(err) != localapi.CodeReversalNotFound {
		t.Fatalf("unknown reversal: %v", err)
	}

	// Refund.
	refund, err := c.Payment(ctx, &localapi.PaymentRequest{Amount: 300, TransactionType: localapi.TypeRefund, IdempotentUUID: "0193b1c2-0000-7000-8000-0000000000a5"})
	if err != nil || !refund.Approved() || refund.TransactionType != localapi.TypeRefund {
		t.Fatalf("refund: %+v %v", refund, err)
	}

	// Printing and sharing, valid and invalid.
	if _, err := c.Print(ctx, &localapi.PrintRequest{Data: "1b40" + "48656c6c6f0a", Format: localapi.FormatESCPOS}); err != nil {
		t.Fatalf("print: %v", err)
	}
	if p := sim.Printed(); len(p) != 1 || p[0].Text != "Hello\n" {
		t.Fatalf("printed = %+v", p)
	}
	if _, err := c.ShareReceipt(ctx, &localapi.ShareReceiptRequest{ReceiptTicket: &localapi.ReceiptTicket{Data: "Merci"}, TransactionID: "nope", Medium: localapi.ShareEmail}); localapi.ErrorCode(err) != localapi.CodeShareTransactionID {
		t.Fatalf("share unknown transaction: %v", err)
	}
	if _, err := c.ShareReceipt(ctx, &localapi.ShareReceiptRequest{ReceiptTicket: &localapi.ReceiptTicket{Data: "Merci"}, TransactionID: tx.TransactionID, Medium: localapi.ShareSMS}); err != nil {
		t.Fatalf("share: %v", err)
	}

	// History: the debits, the refund and the reversal, newest first.
	list, err := c.Transactions(ctx, &localapi.TransactionsRequest{Limit: 200})
	if err != nil {
		t.Fatal(err)
	}
	types := map[string]int{}
	for _, h := range list.Transactions {
		types[h.Type]++
		if _, err := h.Created(); err != nil {
			t.Errorf("createdAt %q: %v", h.CreatedAt, err)
		}
	}
	if types[localapi.HistoryDebit] != 2 || types[localapi.HistoryRefund] != 1 || types[localapi.HistoryReversal] != 1 || list.Total != 4 {
		t.Fatalf("history = %v (total %d)", types, list.Total)
	}

	// The earlier simple form charges too.
	if tx, err := c.SimplePayment(ctx, 450); err != nil || !tx.Approved() || tx.Amount != 450 {
		t.Fatalf("simple payment: %+v %v", tx, err)
	}
}

// Transport-level outcomes the simulator produces: the charge happened but
// the answer was lost or was an HTTP 500; a resend with the same uuid tells
// the truth.
func TestLostAnswersAreRecoveredByTheSameUUID(t *testing.T) {
	sim, c := testenv.Terminal(t, testenv.Scripted)
	ctx := context.Background()
	for i, b := range []terminalsim.Behaviour{terminalsim.AnswerLostAfterCharge(), terminalsim.HTTP500Charged()} {
		sim.Script(b)
		req := &localapi.PaymentRequest{Amount: 1000, IdempotentUUID: "0193b1c2-0000-7000-8000-0000000000b" + string(rune('0'+i))}
		if _, err := c.Payment(ctx, req); !localapi.IsTransport(err) {
			t.Fatalf("%s: err = %v, want a transport-level error", b.Answer, err)
		}
		tx, err := c.Payment(ctx, req)
		if err != nil || !tx.Approved() {
			t.Fatalf("%s: resend: %+v %v", b.Answer, tx, err)
		}
		if n := len(sim.ChargesFor(req.IdempotentUUID)); n != 1 {
			t.Fatalf("%s: %d charges", b.Answer, n)
		}
	}
}
