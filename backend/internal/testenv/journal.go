package testenv

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/comptoir-pos/comptoir/backend/journal"
)

// Journal opens the journal in dir (empty: a temporary folder of the
// test's), closed at the end of the test (Close may be called before).
func Journal(t testing.TB, dir string, opts ...journal.Option) *journal.DB {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	db, err := journal.Open(context.Background(), dir, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

var uuidSeq atomic.Int64

// PaidOrder journals order (in EUR unless it says) and a debit of its
// total that a terminal "T1" approved, as the payment core would: what
// the restaurant's stream and the kitchen are fed.
func PaidOrder(t testing.TB, db *journal.DB, order journal.Order) {
	t.Helper()
	ctx := context.Background()
	if order.Currency == "" {
		order.Currency = "EUR"
	}
	if err := db.CreateOrder(ctx, order); err != nil {
		t.Fatal(err)
	}
	u := fmt.Sprintf("0190a0b0-0000-7000-8000-%012d", uuidSeq.Add(1))
	if _, err := db.PrepareAttempt(ctx, journal.Attempt{UUID: u, OrderID: order.ID, Kind: journal.KindDebit, Amount: order.Total,
		Policy: journal.PolicyKiosk, Terminal: "T1", RequestBody: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.MarkSent(ctx, u); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Transition(ctx, u, journal.StateSent, journal.StateApproved,
		journal.TransitionInfo{TransactionID: "tx-" + u, Charged: &journal.Charge{Amount: order.Total}}); err != nil {
		t.Fatal(err)
	}
}
