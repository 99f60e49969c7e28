package journal

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// approvedDebit journals a debit of amount on order (created with total)
// and approves it with what the terminal said it charged.
func approvedDebit(t testing.TB, db *DB, order string, total, amount, chargedGift int64, terminal string) Attempt {
	t.Helper()
	ctx := context.Background()
	if _, err := db.Order(ctx, order); err != nil {
		if err := db.CreateOrder(ctx, Order{ID: order, Currency: "EUR", Total: total}); err != nil {
			t.Fatal(err)
		}
	}
	id := newUUID(t)
	a, err := db.PrepareAttempt(ctx, Attempt{UUID: id, OrderID: order, Kind: KindDebit, Amount: amount,
		Policy: PolicyCounter, Terminal: terminal, RequestBody: debitBody(id, order, amount)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.MarkSent(ctx, a.UUID); err != nil {
		t.Fatal(err)
	}
	a, err = db.Transition(ctx, a.UUID, StateSent, StateApproved, TransitionInfo{
		TransactionID: "tx-" + id, Charged: &Charge{Amount: amount, GiftAmount: chargedGift}})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func reversalOf(t testing.TB, debit Attempt, amount int64, terminal string) Attempt {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"amount": amount, "initialTransactionId": debit.TransactionID})
	return Attempt{UUID: newUUID(t), OrderID: debit.OrderID, Kind: KindReversal, Amount: amount, Policy: PolicyReversal,
		Terminal: terminal, InitialTransactionID: debit.TransactionID, RequestBody: body}
}

func refundOf(t testing.TB, order string, amount int64, terminal string) Attempt {
	t.Helper()
	id := newUUID(t)
	return Attempt{UUID: id, OrderID: order, Kind: KindRefund, Amount: amount, Policy: PolicyRefund, Terminal: terminal,
		RequestBody: []byte(fmt.Sprintf(`{"transactionType":"refund","amount":%d,"idempotentUuid":%q,"cartId":%q}`, amount, id, order))}
}

func finish(t testing.TB, db *DB, a Attempt, to State) Attempt {
	t.Helper()
	ctx := context.Background()
	a, err := db.PrepareAttempt(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	if to == StatePrepared {
		return a
	}
	if a, err = db.MarkSent(ctx, a.UUID); err != nil {
		t.Fatal(err)
	}
	if to == StateSent {
		return a
	}
	info := TransitionInfo{}
	if to == StateApproved {
		info.Charged = &Charge{Amount: a.Amount, GiftAmount: a.GiftAmount}
	}
	if a, err = db.Transition(ctx, a.UUID, StateSent, to, info); err != nil {
		t.Fatal(err)
	}
	return a
}

// The journal records what the terminal charged beside what was asked,
// and every account of the order's money uses what was charged.
func TestMoneyCountsWhatWasCharged(t *testing.T) {
	ctx := t.Context()
	db := openMemory(t)
	d := approvedDebit(t, db, "tip", 2000, 2000, 150, "T1")
	got, err := db.Attempt(ctx, d.UUID)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Charged || got.ChargedAmount != 2000 || got.ChargedGift != 150 || got.GiftAmount != 0 || got.Total() != 2150 {
		t.Fatalf("asked %d+%d, charged %v %d+%d, total %d", got.Amount, got.GiftAmount, got.Charged, got.ChargedAmount, got.ChargedGift, got.Total())
	}
	m, err := db.OrderMoney(ctx, "tip")
	if err != nil {
		t.Fatal(err)
	}
	if m.Paid != 2000 || m.Gifts != 150 || m.Taken() != 2150 || m.Givable() != 2150 || m.Due() != 0 {
		t.Fatalf("money %+v: taken %d givable %d due %d", m, m.Taken(), m.Givable(), m.Due())
	}
	// What the terminal said is written once.
	_, err = db.w.ExecContext(ctx, `UPDATE attempts SET charged_gift = 0 WHERE uuid = ?`, d.UUID)
	wantCode(t, mapErr(err, "raw write"), EINVALID)
	_, err = db.w.ExecContext(ctx, `UPDATE attempts SET transaction_id = 'forged' WHERE uuid = ?`, d.UUID)
	wantCode(t, mapErr(err, "raw write"), EINVALID)
}

// For every order, money given back (refunds and reversals, those not yet
// settled included) never exceeds money taken, whichever comes first.
func TestMoneyGivenBackNeverExceedsMoneyTaken(t *testing.T) {
	ctx := t.Context()
	tests := []struct {
		name string
		run  func(t *testing.T, db *DB, d Attempt) error
	}{
		{"reversal then refund", func(t *testing.T, db *DB, d Attempt) error {
			finish(t, db, reversalOf(t, d, 2000, "T1"), StateApproved)
			_, err := db.PrepareAttempt(ctx, refundOf(t, d.OrderID, 2000, "T1"))
			return err
		}},
		{"reversal unsettled then refund", func(t *testing.T, db *DB, d Attempt) error {
			finish(t, db, reversalOf(t, d, 2000, "T1"), StateUnknown)
			_, err := db.PrepareAttempt(ctx, refundOf(t, d.OrderID, 1, "T2"))
			return err
		}},
		{"reversal open then refund on another terminal", func(t *testing.T, db *DB, d Attempt) error {
			finish(t, db, reversalOf(t, d, 2000, "T1"), StateSent)
			_, err := db.PrepareAttempt(ctx, refundOf(t, d.OrderID, 1, "T2"))
			return err
		}},
		{"refund then reversal", func(t *testing.T, db *DB, d Attempt) error {
			finish(t, db, refundOf(t, d.OrderID, 500, "T1"), StateApproved)
			_, err := db.PrepareAttempt(ctx, reversalOf(t, d, 2000, "T1"))
			return err
		}},
		{"refund unknown then reversal", func(t *testing.T, db *DB, d Attempt) error {
			finish(t, db, refundOf(t, d.OrderID, 1, "T1"), StateUnknown)
			_, err := db.PrepareAttempt(ctx, reversalOf(t, d, 2000, "T1"))
			return err
		}},
		{"two refunds beyond the charge", func(t *testing.T, db *DB, d Attempt) error {
			finish(t, db, refundOf(t, d.OrderID, 1500, "T1"), StateApproved)
			_, err := db.PrepareAttempt(ctx, refundOf(t, d.OrderID, 501, "T1"))
			return err
		}},
		{"second reversal", func(t *testing.T, db *DB, d Attempt) error {
			finish(t, db, reversalOf(t, d, 2000, "T1"), StateApproved)
			_, err := db.PrepareAttempt(ctx, reversalOf(t, d, 2000, "T1"))
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := openMemory(t)
			d := approvedDebit(t, db, "o", 2000, 2000, 0, "T1")
			err := tt.run(t, db, d)
			wantCode(t, err, ECONFLICT)
			m, err := db.OrderMoney(ctx, "o")
			if err != nil {
				t.Fatal(err)
			}
			if m.GivenBack() > m.Taken() {
				t.Fatalf("given back %d of %d taken", m.GivenBack(), m.Taken())
			}
		})
	}
}

// What a failed or declined reversal or refund gave back is nothing: the
// money can still be given back another way.
func TestMoneyFailedGiveBacksDoNotCount(t *testing.T) {
	ctx := t.Context()
	db := openMemory(t)
	d := approvedDebit(t, db, "o", 2000, 2000, 150, "T1")
	finish(t, db, reversalOf(t, d, 2150, "T1"), StateFailed)
	finish(t, db, refundOf(t, "o", 2150, "T1"), StateDeclined)
	m, err := db.OrderMoney(ctx, "o")
	if err != nil {
		t.Fatal(err)
	}
	if m.Givable() != 2150 {
		t.Fatalf("givable %d after a failed reversal and a declined refund: %+v", m.Givable(), m)
	}
	r := finish(t, db, reversalOf(t, d, 2150, "T1"), StateApproved)
	if m, _ = db.OrderMoney(ctx, "o"); m.Reversed != 2150 || m.Givable() != 0 {
		t.Fatalf("after reversal %s: %+v", r.UUID, m)
	}
}

// A reversal gives back one whole approved debit of its order, on the
// terminal that took it.
func TestReversalRules(t *testing.T) {
	ctx := t.Context()
	db := openMemory(t)
	d := approvedDebit(t, db, "o", 2000, 2000, 150, "T1")
	other := approvedDebit(t, db, "p", 1000, 1000, 0, "T1")
	declined := fixture(t, db)
	declined = finish(t, db, declined, StateDeclined)

	wrongOrder := reversalOf(t, other, 1000, "T1")
	wrongOrder.OrderID = "o"
	notWhole := reversalOf(t, d, 2000, "T1") // the tip is part of it
	elsewhere := reversalOf(t, d, 2150, "T2")
	ofDeclined := reversalOf(t, declined, 1250, declined.Terminal)
	ofDeclined.InitialTransactionID = "no-such-transaction"
	ofDeclined.RequestBody, _ = json.Marshal(map[string]any{"amount": 1250, "initialTransactionId": "no-such-transaction"})
	gift := reversalOf(t, d, 2000, "T1")
	gift.GiftAmount = 150
	for name, tt := range map[string]struct {
		a    Attempt
		code string
		msg  string
	}{
		"another order's debit":     {wrongOrder, EINVALID, "is order p's"},
		"not the whole debit":       {notWhole, EINVALID, "whole debit, 2150"},
		"another terminal":          {elsewhere, ECONFLICT, "only that terminal"},
		"no such approved debit":    {ofDeclined, ECONFLICT, "nothing to reverse"},
		"a gift apart from amount":  {gift, EINVALID, "whole amount"},
		"no transaction to reverse": {func() Attempt { a := reversalOf(t, d, 2150, "T1"); a.InitialTransactionID = ""; return a }(), EINVALID, "names the transaction"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := db.PrepareAttempt(ctx, tt.a)
			wantCode(t, err, tt.code)
			if !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("err = %v, want %q", err, tt.msg)
			}
		})
	}
	// The database itself refuses a second live reversal of a transaction.
	r := finish(t, db, reversalOf(t, d, 2150, "T1"), StateApproved)
	_, err := db.w.ExecContext(ctx, `INSERT INTO attempts (uuid, order_id, kind, amount, policy, terminal,
		initial_transaction_id, request_body, state, created_at, updated_at)
		VALUES ('raw', 'o', 'reversal', 2150, 'reversal', 'T9', ?, '{}', 'approved', 0, 0)`, d.TransactionID)
	wantCode(t, mapErr(err, "raw insert"), ECONFLICT)
	if got, err := db.Attempt(ctx, r.UUID); err != nil || got.InitialTransactionID != d.TransactionID || got.Kind != KindReversal {
		t.Fatalf("reversal %+v, %v", got, err)
	}
}

// Resolve stores the transaction the attempt turned out to be, and never
// one another attempt holds.
func TestResolveWithATransaction(t *testing.T) {
	ctx := t.Context()
	db := openMemory(t)
	held := approvedDebit(t, db, "o", 2000, 2000, 0, "T1")
	u := attemptIn(t, db, StateUnknown)
	_, err := db.Resolve(ctx, u.UUID, Resolution{To: StateApproved, Who: "staff:1", TransactionID: held.TransactionID})
	wantCode(t, err, ECONFLICT)
	got, err := db.Resolve(ctx, u.UUID, Resolution{To: StateApproved, Who: "system:history", Note: "one match",
		TransactionID: "tx-found", Charged: &Charge{Amount: 1250, GiftAmount: 100}, Response: []byte(`{"status":"ok"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if got.TransactionID != "tx-found" || !got.Charged || got.Total() != 1350 || string(got.Response) != `{"status":"ok"}` {
		t.Fatalf("resolved %+v", got)
	}
	if a, err := db.AttemptByTransaction(ctx, "tx-found"); err != nil || a.UUID != u.UUID {
		t.Fatalf("by transaction: %+v, %v", a, err)
	}
	evs, err := db.Events(ctx, u.UUID)
	if err != nil {
		t.Fatal(err)
	}
	last := evs[len(evs)-1]
	if last.Kind != EventResolution || last.Actor != "system:history" || !strings.Contains(last.Detail, "tx-found") {
		t.Fatalf("resolution event %+v", last)
	}
}

// A charge the journal did not know becomes an order of its own, which can
// be given back within what it took, once.
func TestAdoptCharge(t *testing.T) {
	ctx := t.Context()
	db := openMemory(t)
	c := AdoptedCharge{TransactionID: "kp-1", Amount: 900, GiftAmount: 100, Currency: "EUR", Terminal: "T1",
		Who: "staff:ab", Raw: []byte(`{"transactionId":"kp-1","amount":900,"giftAmount":100,"type":"debit","status":"ok"}`)}
	a, err := db.AdoptCharge(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if a.State != StateApproved || a.Total() != 1000 || a.OrderID != AdoptedOrderPrefix+"kp-1" || a.SendCount != 0 {
		t.Fatalf("adopted %+v", a)
	}
	if o, err := db.Order(ctx, a.OrderID); err != nil || o.Status != OrderPaid || o.Total != 900 {
		t.Fatalf("order %+v, %v", o, err)
	}
	_, err = db.AdoptCharge(ctx, c)
	wantCode(t, err, ECONFLICT)
	if m, err := db.OrderMoney(ctx, a.OrderID); err != nil || m.Givable() != 1000 {
		t.Fatalf("money %+v, %v", m, err)
	}
	finish(t, db, reversalOf(t, a, 1000, "T1"), StateApproved)
	_, err = db.PrepareAttempt(ctx, refundOf(t, a.OrderID, 1, "T1"))
	wantCode(t, err, ECONFLICT)
	evs, err := db.Events(ctx, a.UUID)
	if err != nil || len(evs) != 1 || evs[0].Kind != EventAdopted || evs[0].Actor != "staff:ab" {
		t.Fatalf("events %+v, %v", evs, err)
	}
}

// A database of a build that recorded reversals as staff notes and kept
// only the asked gift is brought to the current version: its reversals
// become attempts that count in what can still be given back, and the
// tips the terminal answered become what was charged.
func TestUpgradeFromVersion3(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	oldDB := openOldBuild(t, dir, "0001_initial.sql", "0002_audit.sql", "0003_no_replace.sql")
	tipped := oldAttemptIn(t, oldDB, StateApproved, 150)
	reversed := oldAttemptIn(t, oldDB, StateApproved, 0)
	open := oldAttemptIn(t, oldDB, StateSent, 0)
	rec := fmt.Sprintf(`{"reversalTransactionId":"rv-1","initialTransactionId":%q,"amount":1250}`, reversed.TransactionID)
	note := func(a Attempt, text string) {
		t.Helper()
		if err := oldDB.update(ctx, "old build's note", func(tx *sql.Tx) error {
			return insertEvent(ctx, tx, a.ID, 2000, a.State, a.State, EventNote, "staff:1a2b3c4d", text, nil)
		}); err != nil {
			t.Fatal(err)
		}
	}
	note(reversed, "reversal approved "+rec+"\nterminal answered: {\"status\":\"ok\"}")
	// A note that only looks like one is left alone.
	note(tipped, "reversal approved {not json")
	before := snapshot(t, oldDB)
	if err := oldDB.w.Close(); err != nil {
		t.Fatal(err)
	}

	db := openDir(t, dir)
	ms, _ := loadMigrations(migrationFS)
	if v, err := db.SchemaVersion(ctx); err != nil || v != len(ms) {
		t.Fatalf("schema version %d, %v; want %d", v, err, len(ms))
	}
	if after := snapshot(t, db); !strings.HasPrefix(after, strings.Split(before, "\n")[0]) {
		t.Fatalf("rows changed by the upgrade:\nbefore\n%s\nafter\n%s", before, after)
	}
	got, err := db.Attempt(ctx, tipped.UUID)
	if err != nil || !got.Charged || got.ChargedGift != 150 || got.GiftAmount != 0 || got.Channel != ChannelLocal {
		t.Fatalf("tipped attempt after upgrade: %+v, %v", got, err)
	}
	if got, err := db.Attempt(ctx, open.UUID); err != nil || got.Charged || got.State != StateSent {
		t.Fatalf("open attempt after upgrade: %+v, %v", got, err)
	}
	m, err := db.OrderMoney(ctx, reversed.OrderID)
	if err != nil || m.Reversed != 1250 || m.Givable() != 0 {
		t.Fatalf("reversed order after upgrade: %+v, %v", m, err)
	}
	_, err = db.PrepareAttempt(ctx, refundOf(t, reversed.OrderID, 1, "T9"))
	wantCode(t, err, ECONFLICT)
	atts, err := db.AttemptsForOrder(ctx, reversed.OrderID)
	if err != nil || len(atts) != 2 || atts[1].Kind != KindReversal || atts[1].TransactionID != "rv-1" || atts[1].State != StateApproved {
		t.Fatalf("attempts of the reversed order: %+v, %v", atts, err)
	}
	if evs, err := db.Events(ctx, atts[1].UUID); err != nil || len(evs) != 1 {
		t.Fatalf("events of the recorded reversal: %+v, %v", evs, err)
	}
	// Events stay attached to their attempts, and the rules hold on the new table.
	if n := countEvents(t, db, reversed.UUID); n != 4 {
		t.Fatalf("%d events on the reversed debit, want 4", n)
	}
	var fk int
	if err := db.w.QueryRowContext(ctx, "PRAGMA foreign_keys").Scan(&fk); err != nil || fk != 1 {
		t.Fatalf("foreign keys after the upgrade: %d, %v", fk, err)
	}
	_, err = db.w.ExecContext(ctx, `DELETE FROM attempts`)
	wantCode(t, mapErr(err, "raw write"), EINVALID)
	_, err = db.w.ExecContext(ctx, `INSERT INTO attempt_events (attempt_id, at, kind) VALUES (999999, 0, 'note')`)
	if err == nil {
		t.Fatal("an event of no attempt was accepted: foreign keys are off")
	}
	checkNoReplace(t, db, tipped, open)
}

// The provider's id of an attempt is written once; its status follows it
// while it runs, each change an event; a final attempt takes no more.
func TestSetProvider(t *testing.T) {
	ctx := t.Context()
	db := openMemory(t)
	a := attemptIn(t, db, StateSent)
	got, err := db.SetProvider(ctx, a.UUID, "cloud-tx-1", "pending", []byte(`{"status":"pending"}`), "acknowledged")
	if err != nil || got.ProviderID != "cloud-tx-1" || got.ProviderStatus != "pending" {
		t.Fatalf("set %+v, %v", got, err)
	}
	before := countEvents(t, db, a.UUID)
	if _, err := db.SetProvider(ctx, a.UUID, "cloud-tx-1", "pending", nil, "polled"); err != nil {
		t.Fatal(err)
	}
	if countEvents(t, db, a.UUID) != before {
		t.Fatal("an unchanged status wrote an event")
	}
	_, err = db.SetProvider(ctx, a.UUID, "cloud-tx-2", "", nil, "")
	wantCode(t, err, ECONFLICT)
	if _, err := db.Transition(ctx, a.UUID, StateSent, StateDeclined, TransitionInfo{}); err != nil {
		t.Fatal(err)
	}
	_, err = db.SetProvider(ctx, a.UUID, "", "ok", nil, "")
	wantCode(t, err, ECONFLICT)
}

// An approved link whose cart was only authorised takes one capture: its
// provider status moves on as an event naming who asked; nothing else
// takes it (an open attempt, another channel, one already captured).
func TestRecordCapture(t *testing.T) {
	ctx := t.Context()
	db := openMemory(t)
	link := fixture(t, db)
	link.Channel = ChannelLink
	a, err := db.PrepareAttempt(ctx, link)
	if err != nil {
		t.Fatal(err)
	}
	if a, err = db.MarkSent(ctx, a.UUID); err != nil {
		t.Fatal(err)
	}
	_, err = db.RecordCapture(ctx, a.UUID, "staff:1", "ok", nil, "")
	wantCode(t, err, ECONFLICT) // still open
	if _, err = db.Transition(ctx, a.UUID, StateSent, StateApproved, TransitionInfo{ProviderStatus: ProviderAuthorised,
		Charged: &Charge{Amount: a.Amount}}); err != nil {
		t.Fatal(err)
	}
	_, err = db.RecordCapture(ctx, a.UUID, "", "ok", nil, "")
	wantCode(t, err, EINVALID)
	got, err := db.RecordCapture(ctx, a.UUID, "staff:1", "ok", []byte(`{"message":"ok"}`), "captured by staff")
	if err != nil || got.ProviderStatus != "ok" || got.State != StateApproved || got.ChargedAmount != a.Amount {
		t.Fatalf("captured %+v, %v", got, err)
	}
	evs, err := db.Events(ctx, a.UUID)
	if err != nil {
		t.Fatal(err)
	}
	last := evs[len(evs)-1]
	if last.Kind != EventCaptured || last.Actor != "staff:1" || !strings.Contains(last.Detail, "provider status ok") {
		t.Fatalf("last event %+v", last)
	}
	_, err = db.RecordCapture(ctx, a.UUID, "staff:1", "ok", nil, "")
	wantCode(t, err, ECONFLICT) // captured once
	card := attemptIn(t, db, StateApproved)
	_, err = db.RecordCapture(ctx, card.UUID, "staff:1", "ok", nil, "")
	wantCode(t, err, ECONFLICT)
}
