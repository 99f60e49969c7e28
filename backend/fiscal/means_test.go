package fiscal

import (
	"encoding/json"
	"testing"

	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/google/uuid"
)

// A credit says how its money went back: by card on the terminal, or by
// the provider without the card (the channel's trait, not its name).
func TestACreditsMeansSaysARefundWithoutTheCard(t *testing.T) {
	e := newEnv(t)
	debit := e.sale("o-1")
	e.record()
	e.attempt("o-1", journal.KindRefund, 300, "")
	id := uuid.Must(uuid.NewV7()).String()
	body, _ := json.Marshal(map[string]any{"amount": 200})
	if _, err := e.db.PrepareAttempt(e.ctx, journal.Attempt{UUID: id, OrderID: "o-1", Kind: journal.KindRefund, Amount: 200,
		Policy: journal.PolicyRefund, Channel: journal.ChannelWebservices, Terminal: "webservices/" + debit.TransactionID,
		InitialTransactionID: debit.TransactionID, RequestBody: body}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.db.MarkSent(e.ctx, id); err != nil {
		t.Fatal(err)
	}
	if _, err := e.db.Transition(e.ctx, id, journal.StateSent, journal.StateApproved, journal.TransitionInfo{
		TransactionID: "TX-WS", Charged: &journal.Charge{Amount: 200}}); err != nil {
		t.Fatal(err)
	}
	if n := e.record(); n != 2 {
		t.Fatalf("%d credits", n)
	}
	means := map[int64]string{}
	for _, tk := range e.tickets()[1:] {
		if len(tk.Payments) != 1 {
			t.Fatalf("credit %+v", tk)
		}
		means[-tk.Payments[0].Amount] = tk.Payments[0].Means
	}
	if means[300] != "card" || means[200] != "card (by API)" {
		t.Fatalf("means %v: the refund on the terminal is by card, the one by API says so", means)
	}
}
