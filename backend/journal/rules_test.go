package journal

// The journal's money rules that a wrong settle would break, each stated
// by its test's name (docs/testing.md lists them).

import "testing"

// A tip is the customer's gift, never a payment of the order: an order of
// 1.50 with 1.30 approved and a tip of 0.20 still owes 0.20, and is open.
// The tip is money taken, and can be given back.
func TestRuleATipNeverPaysForTheOrder(t *testing.T) {
	ctx := t.Context()
	db := openMemory(t)
	newOrder(t, db, "o", "EUR", 150)
	approve(t, db, "o", 130, Charge{Amount: 130, GiftAmount: 20, Currency: "EUR"})
	m, err := db.OrderMoney(ctx, "o")
	if err != nil {
		t.Fatal(err)
	}
	if m.Paid != 130 || m.Gifts != 20 || m.Due() != 20 || m.Taken() != 150 || m.Givable() != 150 {
		t.Fatalf("money %+v: the tip pays nothing of the order", m)
	}
	if st := orderStatus(t, db, "o"); st != OrderOpen {
		t.Fatalf("status %s, want open: 0.20 is still due", st)
	}
	f, err := db.OrderFactsOf(ctx, "o")
	if err != nil || f.Paid != 130 || f.Kept != 150 {
		t.Fatalf("facts %+v, %v", f, err)
	}
}

// A tip is checked like the amount where the customer saw no tip screen
// (the caller says so: payment knows where an attempt went): a tip other
// than the one asked is flagged there, and tolerated elsewhere.
func TestRuleATipWithoutATipScreenIsFlagged(t *testing.T) {
	for _, tc := range []struct {
		name     string
		asked    int64
		gift     int64
		noScreen bool
		flagged  bool
	}{
		{"no tip screen, the tip asked", 50, 50, true, false},
		{"no tip screen, a tip not asked", 0, 20, true, true},
		{"no tip screen, less tip than asked", 50, 0, true, true},
		{"a tip screen, a tip chosen", 0, 20, false, false},
	} {
		a := Attempt{Kind: KindDebit, Policy: PolicyKiosk, Amount: 1000, GiftAmount: tc.asked}
		why := disagreement(a, "EUR", Charge{Amount: 1000, GiftAmount: tc.gift, Currency: "EUR", NoTipScreen: tc.noScreen})
		if (why != "") != tc.flagged {
			t.Errorf("%s: %q", tc.name, why)
		}
	}
}
