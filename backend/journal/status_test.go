package journal

import (
	"context"
	"strings"
	"testing"
)

// The one rule of an order's status, as a table: an unknown or flagged
// attempt (or a flagged order) needs attention; paid in full is paid;
// closed with nothing kept is cancelled; closed with something kept and
// not paid in full needs attention; anything else is open.
func TestStatusOfIsOneRule(t *testing.T) {
	tests := []struct {
		name string
		f    OrderFacts
		want OrderStatus
	}{
		{"new", OrderFacts{Total: 1300}, OrderOpen},
		{"partly paid, still paying", OrderFacts{Total: 1300, Paid: 500, Kept: 500}, OrderOpen},
		{"paid exactly", OrderFacts{Total: 1300, Paid: 1300, Kept: 1300}, OrderPaid},
		{"paid with a tip", OrderFacts{Total: 1300, Paid: 1300, Kept: 1450}, OrderPaid},
		{"paid, then closed", OrderFacts{Total: 1300, Paid: 1300, Kept: 1300, Closed: true}, OrderPaid},
		{"paid, then given back", OrderFacts{Total: 1300, Paid: 1300, Kept: 0}, OrderPaid},
		{"paid but an attempt unknown", OrderFacts{Total: 1300, Paid: 1300, Kept: 1300, Attention: true}, OrderNeedsAttention},
		{"unknown", OrderFacts{Total: 1300, Attention: true}, OrderNeedsAttention},
		{"closed, nothing paid", OrderFacts{Total: 1300, Closed: true}, OrderCancelled},
		{"closed while an attempt runs", OrderFacts{Total: 1300, Closed: true, Running: true}, OrderNeedsAttention},
		{"running, not closed", OrderFacts{Total: 1300, Running: true}, OrderOpen},
		{"closed, a part paid", OrderFacts{Total: 1300, Paid: 500, Kept: 500, Closed: true}, OrderNeedsAttention},
		{"closed, a part paid and given back", OrderFacts{Total: 1300, Paid: 500, Kept: 0, Closed: true}, OrderCancelled},
		{"closed, only a tip kept", OrderFacts{Total: 1300, Kept: 100, Closed: true}, OrderNeedsAttention},
		{"zero total is never paid", OrderFacts{Total: 0}, OrderOpen},
		{"zero total closed", OrderFacts{Total: 0, Closed: true}, OrderCancelled},
		{"flagged and closed", OrderFacts{Total: 1300, Kept: 1, Closed: true, Attention: true}, OrderNeedsAttention},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := StatusOf(tt.f); got != tt.want {
				t.Fatalf("StatusOf(%+v) = %s, want %s", tt.f, got, tt.want)
			}
		})
	}
}

// approve sends and approves a debit of amount on order with what the
// provider answered.
func approve(t *testing.T, db *DB, order string, amount int64, c Charge) Attempt {
	t.Helper()
	return approveDebit(t, db, order, amount, TransitionInfo{Charged: &c})
}

// approveDebit sends a counter's debit of amount on order (its terminal
// may show the tip screen) and approves it with info, under a transaction
// id of its own.
func approveDebit(t *testing.T, db *DB, order string, amount int64, info TransitionInfo) Attempt {
	t.Helper()
	return approveAs(t, db, PolicyCounter, order, amount, info)
}

// approveAs is approveDebit under policy.
func approveAs(t *testing.T, db *DB, policy Policy, order string, amount int64, info TransitionInfo) Attempt {
	t.Helper()
	ctx := context.Background()
	id := newUUID(t)
	a, err := db.PrepareAttempt(ctx, Attempt{UUID: id, OrderID: order, Kind: KindDebit, Amount: amount,
		Policy: policy, Terminal: "T-" + id, RequestBody: debitBody(id, order, amount)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.MarkSent(ctx, a.UUID); err != nil {
		t.Fatal(err)
	}
	info.TransactionID = "tx-" + id
	a, err = db.Transition(ctx, a.UUID, StateSent, StateApproved, info)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// oneOrder is a journal in memory holding order "o" of 1.30 EUR.
func oneOrder(t *testing.T) *DB {
	t.Helper()
	db := openMemory(t)
	newOrder(t, db, "o", "EUR", 130)
	return db
}

func newOrder(t *testing.T, db *DB, id, currency string, total int64) {
	t.Helper()
	if err := db.CreateOrder(context.Background(), Order{ID: id, Currency: currency, Total: total}); err != nil {
		t.Fatal(err)
	}
}

func orderStatus(t *testing.T, db *DB, id string) OrderStatus {
	t.Helper()
	o, err := db.Order(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return o.Status
}

// An order is paid only by money the provider says it took, for what was
// asked: an approval of another amount (under or over), with a tip the
// kiosk's terminal could not have asked for (no tip screen), in another
// currency, or of another type is flagged; the order needs attention and
// the flagged money pays nothing, though it can be given back.
func TestApprovalThatDisagreesWithTheRequestPaysNothing(t *testing.T) {
	tests := []struct {
		name    string
		charge  Charge
		flagged string // a word the flag must hold; "" for none
		policy  Policy
	}{
		{"a kiosk's payment as asked", Charge{Amount: 130, Currency: "EUR"}, "", PolicyKiosk},
		{"a tip where the customer saw no tip screen", Charge{Amount: 130, GiftAmount: 20, Currency: "EUR", NoTipScreen: true}, "a tip of 20 where 0 was asked", PolicyKiosk},
		{"as asked", Charge{Amount: 130, Currency: "EUR", Type: "debit"}, "", PolicyCounter},
		{"as asked, lower-case currency", Charge{Amount: 130, Currency: "eur", Type: "DEBIT"}, "", PolicyCounter},
		{"no currency, no type named", Charge{Amount: 130}, "", PolicyCounter},
		{"an unlisted type is tolerated", Charge{Amount: 130, Currency: "EUR", Type: "na"}, "", PolicyCounter},
		{"a tip beside it", Charge{Amount: 130, GiftAmount: 20, Currency: "EUR"}, "", PolicyCounter},
		{"one cent for 1.30", Charge{Amount: 1, Currency: "EUR", Type: "debit"}, "1 charged where 130 was asked", PolicyCounter},
		{"more than asked", Charge{Amount: 131, Currency: "EUR"}, "131 charged where 130 was asked", PolicyCounter},
		{"another currency", Charge{Amount: 130, Currency: "CHF", Type: "debit"}, "CHF", PolicyCounter},
		{"the currency by its ISO 4217 number", Charge{Amount: 130, Currency: "978"}, "", PolicyCounter},
		{"another currency by its number", Charge{Amount: 130, Currency: "756"}, "756", PolicyCounter},
		{"a refund for a debit", Charge{Amount: 130, Currency: "EUR", Type: "refund"}, "a refund where a debit was asked", PolicyCounter},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := t.Context()
			db := oneOrder(t)
			a := approveAs(t, db, tt.policy, "o", 130, TransitionInfo{Charged: &tt.charge})
			m, err := db.OrderMoney(ctx, "o")
			if err != nil {
				t.Fatal(err)
			}
			status := orderStatus(t, db, "o")
			if tt.flagged == "" {
				if a.Flag != "" || status != OrderPaid || m.Paid != 130 || m.Flagged != 0 {
					t.Fatalf("flag %q, status %s, money %+v: want paid, unflagged", a.Flag, status, m)
				}
				return
			}
			if !strings.Contains(a.Flag, tt.flagged) {
				t.Fatalf("flag %q, want it to say %q", a.Flag, tt.flagged)
			}
			if status != OrderNeedsAttention {
				t.Fatalf("status %s, want needs_attention", status)
			}
			if m.Paid != 0 || m.Due() != 130 || m.Flagged != tt.charge.Amount+tt.charge.GiftAmount || m.Givable() != m.Flagged {
				t.Fatalf("money %+v: flagged money pays nothing but can be given back", m)
			}
			// No new debit while staff have not looked at it.
			_, err = db.PrepareAttempt(ctx, newAttempt(t, "o", "T-other"))
			wantCode(t, err, ECONFLICT)
			if got := charged(t, db, a.UUID); got.ChargedCurrency != alphaCurrency(tt.charge.Currency) {
				t.Fatalf("charged currency %q", got.ChargedCurrency)
			}
		})
	}
}

func charged(t *testing.T, db *DB, id string) Attempt {
	t.Helper()
	a, err := db.Attempt(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// Staff accept a flagged approval: its money counts as what it charged,
// the order's status follows, and the acceptance is in the audit trail.
func TestAcceptOrderCountsAFlaggedApproval(t *testing.T) {
	ctx := t.Context()
	db := openMemory(t)
	newOrder(t, db, "over", "EUR", 130)
	a := approve(t, db, "over", 130, Charge{Amount: 150, Currency: "EUR"})
	if orderStatus(t, db, "over") != OrderNeedsAttention {
		t.Fatal("not flagged")
	}
	_, err := db.AcceptOrder(ctx, "over", "", "x")
	wantCode(t, err, EINVALID)
	st, err := db.AcceptOrder(ctx, "over", "staff:1a2b", "the customer agreed to 1.50")
	if err != nil || st != OrderPaid {
		t.Fatalf("accept: %s, %v", st, err)
	}
	m, _ := db.OrderMoney(ctx, "over")
	if m.Paid != 150 || m.Flagged != 0 {
		t.Fatalf("money after acceptance %+v", m)
	}
	evs, err := db.Events(ctx, a.UUID)
	if err != nil {
		t.Fatal(err)
	}
	last := evs[len(evs)-1]
	if last.Kind != EventAccepted || last.Actor != "staff:1a2b" || !strings.Contains(last.Detail, "150 charged where 130") {
		t.Fatalf("last event %+v", last)
	}

	// A short approval accepted leaves the order open: the rest is due.
	newOrder(t, db, "short", "EUR", 130)
	approve(t, db, "short", 130, Charge{Amount: 30})
	if st, err := db.AcceptOrder(ctx, "short", "staff:1a2b", "30 taken, the rest by another card"); err != nil || st != OrderOpen {
		t.Fatalf("accept short: %s, %v", st, err)
	}
	if m, _ := db.OrderMoney(ctx, "short"); m.Due() != 100 {
		t.Fatalf("due after the short approval %+v", m)
	}
}

// The status moves with the attempt that moves it, in the same
// transaction: the caller never sets it.
func TestStatusFollowsEveryOutcome(t *testing.T) {
	ctx := t.Context()
	db := openMemory(t)

	// Split tender: open after the first part, paid after the second.
	newOrder(t, db, "split", "EUR", 1300)
	approve(t, db, "split", 500, Charge{Amount: 500})
	if st := orderStatus(t, db, "split"); st != OrderOpen {
		t.Fatalf("after the first part: %s", st)
	}
	approve(t, db, "split", 800, Charge{Amount: 800})
	if st := orderStatus(t, db, "split"); st != OrderPaid {
		t.Fatalf("after the second part: %s", st)
	}

	// A tip is no payment: 1200 + 100 of tip does not pay 1300.
	newOrder(t, db, "tip", "EUR", 1300)
	approve(t, db, "tip", 1200, Charge{Amount: 1200, GiftAmount: 100})
	if st := orderStatus(t, db, "tip"); st != OrderOpen {
		t.Fatalf("a tip counted as payment: %s", st)
	}

	// Unknown needs attention; resolved declined, the order is open again.
	a := attemptIn(t, db, StateUnknown)
	if st := orderStatus(t, db, a.OrderID); st != OrderNeedsAttention {
		t.Fatalf("unknown: %s", st)
	}
	if _, err := db.Resolve(ctx, a.UUID, Resolution{To: StateDeclined, Who: "staff:x", Note: "not in the history"}); err != nil {
		t.Fatal(err)
	}
	if st := orderStatus(t, db, a.OrderID); st != OrderOpen {
		t.Fatalf("resolved declined: %s", st)
	}
	// Resolved approved for a charge that disagrees: still needs attention.
	b := attemptIn(t, db, StateUnknown)
	if _, err := db.Resolve(ctx, b.UUID, Resolution{To: StateApproved, Who: "system:history", Note: "found",
		TransactionID: "tx-b", Charged: &Charge{Amount: b.Amount, Currency: "GBP"}}); err != nil {
		t.Fatal(err)
	}
	if st := orderStatus(t, db, b.OrderID); st != OrderNeedsAttention {
		t.Fatalf("resolved approved in another currency: %s", st)
	}

	// Closed: cancelled when nothing is kept, needs attention when a part
	// is, cancelled again once that part is given back.
	newOrder(t, db, "walked", "EUR", 1300)
	if err := db.CloseOrder(ctx, "walked", "customer gone"); err != nil {
		t.Fatal(err)
	}
	if st := orderStatus(t, db, "walked"); st != OrderCancelled {
		t.Fatalf("closed unpaid: %s", st)
	}
	newOrder(t, db, "voucher", "EUR", 1300)
	part := approve(t, db, "voucher", 500, Charge{Amount: 500})
	if err := db.CloseOrder(ctx, "voucher", "customer gone after the voucher part"); err != nil {
		t.Fatal(err)
	}
	if st := orderStatus(t, db, "voucher"); st != OrderNeedsAttention {
		t.Fatalf("closed partly paid: %s", st)
	}
	finish(t, db, reversalOf(t, part, 500, part.Terminal), StateApproved)
	if st := orderStatus(t, db, "voucher"); st != OrderCancelled {
		t.Fatalf("closed, its part reversed: %s", st)
	}

	// A late approval after the close is money taken: paid.
	newOrder(t, db, "late", "EUR", 700)
	id := newUUID(t)
	late, err := db.PrepareAttempt(ctx, Attempt{UUID: id, OrderID: "late", Kind: KindDebit, Amount: 700,
		Policy: PolicyKiosk, Terminal: "T-late", RequestBody: debitBody(id, "late", 700)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.MarkSent(ctx, late.UUID); err != nil {
		t.Fatal(err)
	}
	if err := db.CloseOrder(ctx, "late", "the kiosk gave up on the screen"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Transition(ctx, late.UUID, StateSent, StateApproved, TransitionInfo{Charged: &Charge{Amount: 700}}); err != nil {
		t.Fatal(err)
	}
	if st := orderStatus(t, db, "late"); st != OrderPaid {
		t.Fatalf("late approval after the close: %s", st)
	}

	// Flagged by hand: needs attention until accepted; the reason is kept.
	newOrder(t, db, "flag", "EUR", 100)
	if err := db.FlagOrder(ctx, "flag", "the link was released instead of captured"); err != nil {
		t.Fatal(err)
	}
	if err := db.FlagOrder(ctx, "flag", "a second reason"); err != nil {
		t.Fatal(err)
	}
	o, _ := db.Order(ctx, "flag")
	if o.Status != OrderNeedsAttention || o.Attention != "the link was released instead of captured" {
		t.Fatalf("flagged order %+v", o)
	}
	evs, _ := db.OrderEvents(ctx, "flag")
	if len(evs) != 3 || !strings.Contains(evs[2].Note, "a second reason") {
		t.Fatalf("events of the flagged order %+v", evs)
	}
	if st, err := db.AcceptOrder(ctx, "flag", "staff:x", "checked at the provider"); err != nil || st != OrderOpen {
		t.Fatalf("accepted: %s, %v", st, err)
	}
}

// A database of the build before the journal decided statuses keeps what
// that build concluded: its cancelled orders are closed, and an order
// that needed attention for another reason than an unknown attempt still
// does, with that reason.
func TestUpgradeFromVersion5KeepsStatuses(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	old := openOldBuild(t, dir, "0001_initial.sql", "0002_audit.sql", "0003_no_replace.sql", "0004_money_back.sql", "0005_fiscal.sql")
	for _, q := range []string{
		`INSERT INTO orders (id, created_at, updated_at, currency, total, status) VALUES
			('c', 1, 2, 'EUR', 100, 'cancelled'), ('n', 1, 2, 'EUR', 100, 'needs_attention'), ('p', 1, 2, 'EUR', 100, 'open')`,
		`INSERT INTO order_events (order_id, at, from_status, to_status, note) VALUES
			('n', 2, 'open', 'needs_attention', 'the terminal charged 1 where 100 was asked')`,
	} {
		if _, err := old.w.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	if err := old.w.Close(); err != nil {
		t.Fatal(err)
	}
	db := openDir(t, dir)
	c, _ := db.Order(ctx, "c")
	n, _ := db.Order(ctx, "n")
	p, _ := db.Order(ctx, "p")
	if c.ClosedAt.IsZero() || c.Status != OrderCancelled {
		t.Fatalf("cancelled order after the upgrade %+v", c)
	}
	if n.Status != OrderNeedsAttention || n.Attention != "the terminal charged 1 where 100 was asked" {
		t.Fatalf("needs-attention order after the upgrade %+v", n)
	}
	if !p.ClosedAt.IsZero() || p.Attention != "" {
		t.Fatalf("open order after the upgrade %+v", p)
	}
}
