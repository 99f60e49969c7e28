package journal

import (
	"strings"
	"testing"
)

// approveAwaiting sends and approves a debit of amount on order over the
// LAN, awaiting the provider's record.
func approveAwaiting(t *testing.T, db *DB, order string, amount int64, c Charge) Attempt {
	t.Helper()
	return approveDebit(t, db, order, amount, TransitionInfo{Charged: &c, AwaitWitness: true})
}

// An approval over the LAN waits for the provider's record: until the
// record confirms it, it pays nothing, cannot be given back and keeps its
// order from a second debit; then each of the provider's words gives the
// order its status, in the same transaction.
func TestTheProvidersRecordDecidesAnApprovalOverTheLAN(t *testing.T) {
	tests := []struct {
		name   string
		words  []Witness // in order
		charge Charge
		status OrderStatus
		paid   int64 // Money.Paid after the last word
		unwit  int64 // Money.Unwitnessed after the last word
	}{
		{"awaiting", nil, Charge{Amount: 130}, OrderNeedsAttention, 0, 130},
		{"confirmed", []Witness{WitnessConfirmed}, Charge{Amount: 130}, OrderPaid, 130, 0},
		{"could not be asked: paid on the terminal's word", []Witness{WitnessUnconfirmed}, Charge{Amount: 130}, OrderPaid, 130, 0},
		{"denied", []Witness{WitnessDenied}, Charge{Amount: 130}, OrderNeedsAttention, 0, 130},
		{"unconfirmed, then denied", []Witness{WitnessUnconfirmed, WitnessDenied}, Charge{Amount: 130}, OrderNeedsAttention, 0, 130},
		{"unconfirmed, then confirmed", []Witness{WitnessUnconfirmed, WitnessConfirmed}, Charge{Amount: 130}, OrderPaid, 130, 0},
		{"denied, then a late record", []Witness{WitnessDenied, WitnessConfirmed}, Charge{Amount: 130}, OrderPaid, 130, 0},
		{"confirmed, but for another amount", []Witness{WitnessConfirmed}, Charge{Amount: 1}, OrderNeedsAttention, 0, 0},
		{"a tip is taken with it", []Witness{WitnessDenied}, Charge{Amount: 130, GiftAmount: 20}, OrderNeedsAttention, 0, 150},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := t.Context()
			db := oneOrder(t)
			a := approveAwaiting(t, db, "o", 130, tt.charge)
			if a.Witness != WitnessAwaiting {
				t.Fatalf("witness %q after the approval", a.Witness)
			}
			for _, w := range tt.words {
				var err error
				if a, err = db.RecordWitness(ctx, a.UUID, WitnessWord{To: w, Who: "system:witness", Note: "test"}); err != nil {
					t.Fatalf("%s: %v", w, err)
				}
			}
			m, err := db.OrderMoney(ctx, "o")
			if err != nil {
				t.Fatal(err)
			}
			if st := orderStatus(t, db, "o"); st != tt.status || m.Paid != tt.paid || m.Unwitnessed != tt.unwit {
				t.Fatalf("status %s, money %+v; want %s, paid %d, unwitnessed %d", st, m, tt.status, tt.paid, tt.unwit)
			}
			if tt.unwit > 0 {
				if m.Givable() != 0 || m.Taken() != 0 {
					t.Fatalf("money the provider does not show can be given back: %+v", m)
				}
				_, err = db.PrepareAttempt(ctx, newAttempt(t, "o", "T-other"))
				wantCode(t, err, ECONFLICT)
			}
		})
	}
}

// The provider's word only moves forward: a confirmation stands, nothing
// goes back to awaiting, only an approval asks for a witness, and only
// with its outcome.
func TestTheProvidersWordMovesForward(t *testing.T) {
	ctx := t.Context()
	db := oneOrder(t)
	a := approveAwaiting(t, db, "o", 130, Charge{Amount: 130})
	if _, err := db.RecordWitness(ctx, a.UUID, WitnessWord{To: WitnessConfirmed, Who: "system:witness", ProviderID: "srv-1"}); err != nil {
		t.Fatal(err)
	}
	for _, w := range []Witness{WitnessDenied, WitnessUnconfirmed, WitnessConfirmed} {
		_, err := db.RecordWitness(ctx, a.UUID, WitnessWord{To: w, Who: "system:witness"})
		wantCode(t, err, ECONFLICT)
	}
	_, err := db.RecordWitness(ctx, a.UUID, WitnessWord{To: WitnessAwaiting, Who: "system:witness"})
	wantCode(t, err, EINVALID)
	_, err = db.RecordWitness(ctx, a.UUID, WitnessWord{To: WitnessDenied})
	wantCode(t, err, EINVALID)
	got, _ := db.Attempt(ctx, a.UUID)
	if got.ProviderID != "srv-1" {
		t.Fatalf("the provider's id %q, want srv-1", got.ProviderID)
	}
	// The database itself refuses what the code would not ask.
	for _, q := range []string{
		`UPDATE attempts SET witness = 'awaiting' WHERE uuid = '` + a.UUID + `'`,
		`UPDATE attempts SET witness = 'denied' WHERE uuid = '` + a.UUID + `'`,
	} {
		if _, err := db.w.ExecContext(ctx, q); err == nil || !strings.Contains(err.Error(), "only moves forward") {
			t.Fatalf("%s: %v", q, err)
		}
	}
	// A decline never awaits a witness; a plain approval cannot ask later.
	newOrder(t, db, "d", "EUR", 1250)
	d := newAttempt(t, "d", "T-d")
	if _, err := db.PrepareAttempt(ctx, d); err != nil {
		t.Fatal(err)
	}
	if _, err := db.MarkSent(ctx, d.UUID); err != nil {
		t.Fatal(err)
	}
	_, err = db.Transition(ctx, d.UUID, StateSent, StateDeclined, TransitionInfo{AwaitWitness: true})
	wantCode(t, err, EINVALID)
	newOrder(t, db, "p", "EUR", 1250)
	plain := approve(t, db, "p", 1250, Charge{Amount: 1250})
	_, err = db.RecordWitness(ctx, plain.UUID, WitnessWord{To: WitnessDenied, Who: "system:witness"})
	wantCode(t, err, ECONFLICT)
	if _, err := db.w.ExecContext(ctx, `UPDATE attempts SET witness = 'awaiting' WHERE uuid = ?`, plain.UUID); err == nil {
		t.Fatal("a final approval was set awaiting after its outcome")
	}
}

// Staff accept an approval the provider's record did not show: it pays,
// and the acceptance is its last event; the periodic check no longer
// asks about it.
func TestAcceptOrderCountsADeniedApproval(t *testing.T) {
	ctx := t.Context()
	db := oneOrder(t)
	a := approveAwaiting(t, db, "o", 130, Charge{Amount: 130})
	if _, err := db.RecordWitness(ctx, a.UUID, WitnessWord{To: WitnessDenied, Who: "system:witness"}); err != nil {
		t.Fatal(err)
	}
	open, err := db.WitnessOpen(ctx, a.CreatedAt.Add(-1))
	if err != nil || len(open) != 1 {
		t.Fatalf("open witnesses %d, %v", len(open), err)
	}
	st, err := db.AcceptOrder(ctx, "o", "staff:1a2b", "seen in the back office under another id")
	if err != nil || st != OrderPaid {
		t.Fatalf("accept: %s, %v", st, err)
	}
	got, _ := db.Attempt(ctx, a.UUID)
	evs, _ := db.Events(ctx, a.UUID)
	if got.Witness != WitnessAccepted || evs[len(evs)-1].Kind != EventAccepted {
		t.Fatalf("witness %q, last event %+v", got.Witness, evs[len(evs)-1])
	}
	if open, _ := db.WitnessOpen(ctx, a.CreatedAt.Add(-1)); len(open) != 0 {
		t.Fatalf("an accepted approval is still looked up: %d", len(open))
	}
}

// An unknown outcome settled from the terminal's own history over the LAN
// awaits the provider's record like a direct answer.
func TestResolveAwaitsTheProvidersRecord(t *testing.T) {
	ctx := t.Context()
	db := openMemory(t)
	a := attemptIn(t, db, StateUnknown)
	got, err := db.Resolve(ctx, a.UUID, Resolution{To: StateApproved, Who: "system:history", TransactionID: "tx-h",
		Charged: &Charge{Amount: a.Amount}, AwaitWitness: true})
	if err != nil {
		t.Fatal(err)
	}
	if got.Witness != WitnessAwaiting || orderStatus(t, db, a.OrderID) != OrderNeedsAttention {
		t.Fatalf("witness %q, status %s", got.Witness, orderStatus(t, db, a.OrderID))
	}
	if _, err := db.RecordWitness(ctx, a.UUID, WitnessWord{To: WitnessConfirmed, Who: "system:witness"}); err != nil {
		t.Fatal(err)
	}
	if st := orderStatus(t, db, a.OrderID); st == OrderNeedsAttention {
		t.Fatalf("confirmed, still %s", st)
	}
}
