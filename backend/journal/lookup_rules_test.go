package journal

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// sentDebit is a new order's kiosk debit of its total on terminal T1,
// sent and not answered yet.
func sentDebit(t *testing.T, db *DB, order string, amount int64) Attempt {
	t.Helper()
	newOrder(t, db, order, "EUR", amount)
	id := newUUID(t)
	return finish(t, db, Attempt{UUID: id, OrderID: order, Kind: KindDebit, Amount: amount, Policy: PolicyKiosk,
		Terminal: "T1", RequestBody: debitBody(id, order, amount)}, StateSent)
}

// apiRefundOf is a refund by API (the Webservices) of part of a debit.
func apiRefundOf(t *testing.T, debit Attempt, amount int64) Attempt {
	t.Helper()
	return Attempt{UUID: newUUID(t), OrderID: debit.OrderID, Kind: KindRefund, Channel: ChannelWebservices, Amount: amount,
		Policy: PolicyRefund, Terminal: "webservices/" + debit.TransactionID, InitialTransactionID: debit.TransactionID,
		RequestBody: fmt.Appendf(nil, `{"amount":%d}`, amount)}
}

// A refund by API gives back part or all of one approved debit of its own
// order, once: never more than the debit took, never while another refund
// by API or a reversal of it is made or may be; one declined leaves the
// debit refundable; a reversal after a refund by API is refused.
func TestRuleARefundByAPIGivesBackOneDebitOnce(t *testing.T) {
	ctx := t.Context()
	db := openMemory(t)
	newOrder(t, db, "o", "EUR", 990)
	debit := approve(t, db, "o", 990, Charge{Amount: 990})
	newOrder(t, db, "other", "EUR", 500)
	otherDebit := approve(t, db, "other", 500, Charge{Amount: 500})

	_, err := db.PrepareAttempt(ctx, apiRefundOf(t, debit, 991))
	wantCode(t, err, EINVALID)
	if !strings.Contains(err.Error(), "took 990") || !strings.Contains(err.Error(), "not 991") {
		t.Fatalf("a refund of more than the debit: %v", err)
	}
	wrongOrder := apiRefundOf(t, otherDebit, 100)
	wrongOrder.OrderID = "o"
	_, err = db.PrepareAttempt(ctx, wrongOrder)
	wantCode(t, err, EINVALID)
	nothing := apiRefundOf(t, debit, 100)
	nothing.InitialTransactionID = "tx-nobody"
	_, err = db.PrepareAttempt(ctx, nothing)
	wantCode(t, err, ECONFLICT)

	first := finish(t, db, apiRefundOf(t, debit, 400), StateSent)
	_, err = db.PrepareAttempt(ctx, apiRefundOf(t, debit, 100))
	wantCode(t, err, ECONFLICT)
	if _, err := db.Transition(ctx, first.UUID, StateSent, StateDeclined, TransitionInfo{Note: "refused"}); err != nil {
		t.Fatal(err)
	}
	whole := finish(t, db, apiRefundOf(t, debit, 990), StateApproved)
	if m, _ := db.OrderMoney(ctx, "o"); m.Refunded != 990 || m.Givable() != 0 {
		t.Fatalf("after a declined refund by API and a whole one: %+v", m)
	}
	_, err = db.PrepareAttempt(ctx, reversalOf(t, debit, 990, debit.Terminal))
	wantCode(t, err, ECONFLICT)
	if !strings.Contains(err.Error(), whole.UUID) {
		t.Fatalf("a reversal after a refund by API: %v", err)
	}
	// A reversal first: nothing is left to refund by API.
	finish(t, db, reversalOf(t, otherDebit, 500, otherDebit.Terminal), StateApproved)
	_, err = db.PrepareAttempt(ctx, apiRefundOf(t, otherDebit, 100))
	wantCode(t, err, ECONFLICT)
}

// The provider's transactions the journal holds are found among many, in
// batches, each once; a transaction is looked up by its id alone.
func TestRuleHeldTransactionsAreFoundAmongMany(t *testing.T) {
	ctx := t.Context()
	db := openMemory(t)
	var ids []string
	want := map[string]bool{}
	for i := range 1200 {
		ids = append(ids, fmt.Sprintf("tx-unknown-%d", i))
	}
	for n, at := range []int{0, 600, 1199} {
		order := fmt.Sprintf("o%d", n)
		newOrder(t, db, order, "EUR", 100)
		a := approve(t, db, order, 100, Charge{Amount: 100})
		ids[at] = a.TransactionID
		want[a.TransactionID] = true
	}
	held, err := db.HeldTransactions(ctx, ids)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(held) != fmt.Sprint(want) {
		t.Fatalf("held %v, want %v", held, want)
	}
	if held, err := db.HeldTransactions(ctx, nil); err != nil || len(held) != 0 {
		t.Fatalf("none asked: %v, %v", held, err)
	}
	_, err = db.AttemptByTransaction(ctx, "")
	wantCode(t, err, EINVALID)
	_, err = db.AttemptByTransaction(ctx, "tx-unknown-1")
	wantCode(t, err, ENOTFOUND)
	if a, err := db.AttemptByTransaction(ctx, ids[600]); err != nil || a.OrderID != "o1" {
		t.Fatalf("held transaction: %+v, %v", a, err)
	}
}

// An adopted charge or give-back came through the shop's terminal unless
// it names its channel, and only a channel Comptoir knows; it is dated when
// the provider made it, when the provider says (else when it is adopted);
// its request body is the history entry that showed it, or, when that is
// not JSON, what the journal knows of it.
func TestRuleAnAdoptedChargeKeepsItsChannelAndEvidence(t *testing.T) {
	ctx := t.Context()
	clock := newStepClock()
	db := openMemory(t, WithClock(clock.Now))
	c := AdoptedCharge{TransactionID: "kp-1", Amount: 900, Currency: "EUR", Terminal: "T1", Who: "staff:ab", Raw: []byte("not json")}
	a, err := db.AdoptCharge(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	var body map[string]any
	if a.Channel != ChannelLocal || json.Unmarshal(a.RequestBody, &body) != nil || body["transactionId"] != "kp-1" || body["amount"] != 900.0 {
		t.Fatalf("adopted %+v, body %s", a, a.RequestBody)
	}
	if !a.CreatedAt.Equal(a.FinalAt) || a.CreatedAt.Year() != 2026 {
		t.Fatalf("adopted without a date: made %v, adopted %v", a.CreatedAt, a.FinalAt)
	}
	made := time.Date(2026, 2, 27, 9, 30, 0, 0, time.UTC)
	raw := `{"transactionId":"cl-1","amount":500,"type":"debit"}`
	b, err := db.AdoptCharge(ctx, AdoptedCharge{TransactionID: "cl-1", Amount: 500, Currency: "EUR", Terminal: "T1",
		Channel: ChannelCloud, Who: "staff:ab", Raw: []byte(raw), At: made})
	if err != nil || b.Channel != ChannelCloud || string(b.RequestBody) != raw || !b.CreatedAt.Equal(made) {
		t.Fatalf("adopted through the cloud %+v, %v", b, err)
	}
	if o, err := db.Order(ctx, b.OrderID); err != nil || !o.CreatedAt.Equal(made) {
		t.Fatalf("the adopted charge's order %+v, %v", o, err)
	}
	g, err := db.AdoptGiveBack(ctx, AdoptedGiveBack{OrderID: b.OrderID, Kind: KindRefund, TransactionID: "bo-1",
		InitialTransactionID: "cl-1", Amount: 200, Who: "system:reconcile", Raw: []byte("{broken"), At: made.Add(time.Hour)})
	if err != nil || !g.CreatedAt.Equal(made.Add(time.Hour)) || json.Unmarshal(g.RequestBody, &body) != nil ||
		body["transactionId"] != "bo-1" || body["amount"] != 200.0 {
		t.Fatalf("adopted give-back %+v (body %s), %v", g, g.RequestBody, err)
	}
	if h, err := db.AdoptGiveBack(ctx, AdoptedGiveBack{OrderID: b.OrderID, Kind: KindRefund, TransactionID: "bo-2",
		InitialTransactionID: "cl-1", Amount: 100, Who: "system:reconcile"}); err != nil || !h.CreatedAt.Equal(h.FinalAt) {
		t.Fatalf("adopted give-back without a date %+v, %v", h, err)
	}
	_, err = db.AdoptCharge(ctx, AdoptedCharge{TransactionID: "x-1", Amount: 500, Currency: "EUR", Terminal: "T1",
		Channel: "pigeon", Who: "staff:ab"})
	wantCode(t, err, EINVALID)
}

// Each outcome's event says all it was told (the note, the transaction,
// the error, what was charged, the provider's id and status, an approval
// still awaiting the provider's record), and an approval in something that
// is not a currency is kept in the flag's words, never as a currency.
func TestRuleAnOutcomesEventSaysAllItWasTold(t *testing.T) {
	ctx := t.Context()
	db := openMemory(t)
	a := sentDebit(t, db, "o", 700)
	out, err := db.Transition(ctx, a.UUID, StateSent, StateApproved, TransitionInfo{
		Note: "seen", TransactionID: "tx-9", Error: "late", Charged: &Charge{Amount: 700, GiftAmount: 50, Currency: "euro"},
		ProviderID: "p-7", ProviderStatus: "captured", AwaitWitness: true})
	if err != nil {
		t.Fatal(err)
	}
	if out.ChargedCurrency != "" || !strings.Contains(out.Flag, `currency "euro"`) {
		t.Fatalf("approval in euro: currency %q, flag %q", out.ChargedCurrency, out.Flag)
	}
	ev := lastEvent(t, db, a.UUID)
	for _, part := range []string{"seen", "transactionId tx-9", "error: late", "charged 700 (gift 50)", "provider id p-7",
		"provider status captured", "flagged: ", "awaiting the provider's record"} {
		if !strings.Contains(ev.Detail, part) {
			t.Errorf("event %q does not say %q", ev.Detail, part)
		}
	}
}

// What an attempt moved is what the provider said it charged, once it said
// so, and what was asked until then: in all, in its amount and in its tip.
func TestRuleAnAttemptMovedWhatTheProviderSaidElseWhatWasAsked(t *testing.T) {
	asked := Attempt{Amount: 1000, GiftAmount: 50}
	if asked.Total() != 1050 || asked.Paid() != 1000 || asked.Gift() != 50 {
		t.Fatalf("asked: total %d, paid %d, gift %d", asked.Total(), asked.Paid(), asked.Gift())
	}
	charged := Attempt{Amount: 1000, GiftAmount: 50, Charged: true, ChargedAmount: 900, ChargedGift: 20}
	if charged.Total() != 920 || charged.Paid() != 900 || charged.Gift() != 20 {
		t.Fatalf("charged: total %d, paid %d, gift %d", charged.Total(), charged.Paid(), charged.Gift())
	}
}

// An unknown attempt resolves only to approved or declined, and an order
// is set aside or closed only with a reason: anything else is refused and
// changes nothing.
func TestRuleAResolutionIsApprovedOrDeclinedAndAFlagSaysWhy(t *testing.T) {
	ctx := t.Context()
	db := openMemory(t)
	u := attemptIn(t, db, StateUnknown)
	for _, to := range []State{StateCancelled, StateFailed, StateUnknown, StateSent} {
		_, err := db.Resolve(ctx, u.UUID, Resolution{To: to, Who: "staff:1", Note: "looked"})
		wantCode(t, err, EINVALID)
	}
	if a, err := db.Attempt(ctx, u.UUID); err != nil || a.State != StateUnknown {
		t.Fatalf("after refused resolutions: %+v, %v", a, err)
	}
	err := db.FlagOrder(ctx, u.OrderID, " ")
	wantCode(t, err, EINVALID)
	err = db.CloseOrder(ctx, u.OrderID, "")
	wantCode(t, err, EINVALID)
	if o, err := db.Order(ctx, u.OrderID); err != nil || o.Attention != "" || !o.ClosedAt.IsZero() {
		t.Fatalf("flagged or closed without a reason: %+v, %v", o, err)
	}
	_, err = db.OrderFactsOf(ctx, "no-such-order")
	wantCode(t, err, ENOTFOUND)
}

// The audit trail says what happened and nothing that did not: a debit's
// preparation names no transaction, a send without a note is its number
// alone, a resolution without a transaction names none, nor a provider's
// word without an id or a note.
func TestRuleTheAuditTrailSaysNothingThatDidNotHappen(t *testing.T) {
	ctx := t.Context()
	db := openMemory(t)
	a := sentDebit(t, db, "o", 700)
	evs, err := db.Events(ctx, a.UUID)
	if err != nil || len(evs) != 2 {
		t.Fatalf("events %+v, %v", evs, err)
	}
	if strings.Contains(evs[0].Detail, "transaction") || evs[1].Detail != "send #1" {
		t.Fatalf("prepared %q, sent %q", evs[0].Detail, evs[1].Detail)
	}
	u := attemptIn(t, db, StateUnknown)
	if _, err := db.Resolve(ctx, u.UUID, Resolution{To: StateDeclined, Who: "staff:1", Note: "not on the terminal"}); err != nil {
		t.Fatal(err)
	}
	if ev := lastEvent(t, db, u.UUID); ev.Detail != "not on the terminal" {
		t.Fatalf("a resolution without a transaction says %q", ev.Detail)
	}
	newOrder(t, db, "w", "EUR", 300)
	w := approveAwaiting(t, db, "w", 300, Charge{Amount: 300})
	if _, err := db.RecordWitness(ctx, w.UUID, WitnessWord{To: WitnessConfirmed, Who: "system:witness"}); err != nil {
		t.Fatal(err)
	}
	if ev := lastEvent(t, db, w.UUID); ev.Detail != "the provider's record: confirmed (was awaiting)" {
		t.Fatalf("a witness word without an id or a note says %q", ev.Detail)
	}
}

// Only an approval awaits the provider's record: an outcome of another
// kind asking to is refused, saying so (the database's constraint holds
// the same rule, in its own words), and the attempt stays as it was.
func TestRuleOnlyAnApprovalAwaitsTheProvidersRecord(t *testing.T) {
	ctx := t.Context()
	db := openMemory(t)
	a := sentDebit(t, db, "o", 700)
	_, err := db.Transition(ctx, a.UUID, StateSent, StateDeclined, TransitionInfo{Note: "declined", AwaitWitness: true})
	wantCode(t, err, EINVALID)
	if !strings.Contains(err.Error(), "only an approval awaits the provider's record") {
		t.Fatalf("refused with %v", err)
	}
	if got, err := db.Attempt(ctx, a.UUID); err != nil || got.State != StateSent || got.Witness != "" {
		t.Fatalf("after a declined outcome awaiting a record: %+v, %v", got, err)
	}
}

// A provider's record names a transaction by the terminal's id or by the
// provider's own: the attempt that holds it under either is found, among
// many ids asked at once; an id nobody holds is not in the answer.
func TestRuleAHolderIsFoundByEitherIdOfItsTransaction(t *testing.T) {
	ctx := t.Context()
	db := openMemory(t)
	newOrder(t, db, "a", "EUR", 300)
	byTerminal := approve(t, db, "a", 300, Charge{Amount: 300})
	newOrder(t, db, "b", "EUR", 400)
	byProvider := approveAwaiting(t, db, "b", 400, Charge{Amount: 400})
	if _, err := db.RecordWitness(ctx, byProvider.UUID, WitnessWord{To: WitnessConfirmed, ProviderID: "prov-77", Who: "system:witness"}); err != nil {
		t.Fatal(err)
	}
	ids := make([]string, 600)
	for i := range ids {
		ids[i] = fmt.Sprintf("nobody-%d", i)
	}
	ids[10], ids[590] = byTerminal.TransactionID, "prov-77"
	got, err := db.Holders(ctx, ids)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{byTerminal.TransactionID: byTerminal.UUID, "prov-77": byProvider.UUID}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("holders %v, want %v", got, want)
	}
	// Asked in batches: a list that ends on a batch's end, or no list, asks
	// no empty batch.
	for _, n := range []int{0, 250, 500} {
		if got, err := db.Holders(ctx, ids[:n]); err != nil || (n > 10 && len(got) != 1) || (n == 0 && len(got) != 0) {
			t.Fatalf("%d ids: %v %v", n, got, err)
		}
	}
	// The provider's word moves one way: a confirmed record is not denied
	// afterwards.
	_, err = db.RecordWitness(ctx, byProvider.UUID, WitnessWord{To: WitnessDenied, Who: "system:witness"})
	wantCode(t, err, ECONFLICT)
	if !strings.Contains(err.Error(), "may not follow it") {
		t.Fatalf("a confirmed record denied: %v", err)
	}
}

// Money given back outside Comptoir is journaled the way the provider made
// it: a refund naming its debit as the Webservices' (the provider refunds a
// transaction once by API), one naming none as the provider's own on the
// shop's terminal channel, a reversal on the terminal and channel of the
// debit it reverses. An order keeps the time it says it was made.
func TestRuleMoneyGivenBackElsewhereIsJournaledTheWayItWasMade(t *testing.T) {
	ctx := t.Context()
	db := openMemory(t)
	made := time.Date(2026, 2, 1, 8, 0, 0, 0, time.UTC)
	if err := db.CreateOrder(ctx, Order{ID: "o", Currency: "EUR", Total: 3000, CreatedAt: made}); err != nil {
		t.Fatal(err)
	}
	if o, err := db.Order(ctx, "o"); err != nil || !o.CreatedAt.Equal(made) {
		t.Fatalf("order made %v: %+v, %v", made, o, err)
	}
	debit := approve(t, db, "o", 3000, Charge{Amount: 3000})
	named, err := db.AdoptGiveBack(ctx, AdoptedGiveBack{OrderID: "o", Kind: KindRefund, TransactionID: "r-1",
		InitialTransactionID: debit.TransactionID, Amount: 100, Who: "system:reconcile"})
	if err != nil || named.Channel != ChannelWebservices || named.Terminal != debit.Terminal || named.Policy != PolicyRefund {
		t.Fatalf("a refund naming its debit: %+v, %v", named, err)
	}
	unnamed, err := db.AdoptGiveBack(ctx, AdoptedGiveBack{OrderID: "o", Kind: KindRefund, TransactionID: "r-2",
		Amount: 100, Who: "system:reconcile"})
	if err != nil || unnamed.Channel != ChannelLocal || unnamed.Terminal != "provider" || unnamed.Policy != PolicyRefund {
		t.Fatalf("a refund naming no debit: %+v, %v", unnamed, err)
	}
	newOrder(t, db, "c", "EUR", 500)
	id := newUUID(t)
	cloud := finish(t, db, Attempt{UUID: id, OrderID: "c", Kind: KindDebit, Channel: ChannelCloud, Amount: 500,
		Policy: PolicyKiosk, Terminal: "cloud:SN-1", RequestBody: debitBody(id, "c", 500)}, StateSent)
	cloud, err = db.Transition(ctx, id, StateSent, StateApproved, TransitionInfo{TransactionID: "tx-c", Charged: &Charge{Amount: 500}})
	if err != nil {
		t.Fatal(err)
	}
	rev, err := db.AdoptGiveBack(ctx, AdoptedGiveBack{OrderID: "c", Kind: KindReversal, TransactionID: "v-1",
		InitialTransactionID: cloud.TransactionID, Amount: 500, Who: "system:reconcile"})
	if err != nil || rev.Channel != cloud.Channel || rev.Terminal != cloud.Terminal || rev.Policy != PolicyReversal {
		t.Fatalf("a reversal of %+v: %+v, %v", cloud, rev, err)
	}
}
