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

// A tip is checked like the amount wherever the customer saw no tip screen:
// a kiosk's payment on a terminal (enableGiftScreen false) and any refund
// on a terminal. A tip other than the one asked there is flagged; the
// counter's terminal may show its tip screen, and a payment link's customer
// may add a tip on the phone.
func TestRuleATipWithoutATipScreenIsFlagged(t *testing.T) {
	for _, tc := range []struct {
		name    string
		a       Attempt
		gift    int64
		flagged bool
	}{
		{"kiosk, the tip asked", Attempt{Kind: KindDebit, Policy: PolicyKiosk, GiftAmount: 50}, 50, false},
		{"kiosk, a tip not asked", Attempt{Kind: KindDebit, Policy: PolicyKiosk}, 20, true},
		{"kiosk, less tip than asked", Attempt{Kind: KindDebit, Policy: PolicyKiosk, GiftAmount: 50}, 0, true},
		{"kiosk through the cloud, a tip not asked", Attempt{Kind: KindDebit, Policy: PolicyKiosk, Channel: ChannelCloud}, 20, true},
		{"refund, a tip not asked", Attempt{Kind: KindRefund, Policy: PolicyRefund}, 20, true},
		{"counter, the terminal's tip screen", Attempt{Kind: KindDebit, Policy: PolicyCounter}, 20, false},
		{"kiosk by payment link, a tip on the phone", Attempt{Kind: KindDebit, Policy: PolicyKiosk, Channel: ChannelLink}, 20, false},
	} {
		tc.a.Amount = 1000
		why := disagreement(tc.a, "EUR", Charge{Amount: 1000, GiftAmount: tc.gift, Currency: "EUR"})
		if (why != "") != tc.flagged {
			t.Errorf("%s: %q", tc.name, why)
		}
	}
}
