package journal

// The journal's guards at its edge (what it is asked to record is checked
// before it is believed) and the audit trail it keeps of each attempt:
// docs/testing.md lists these beside the money rules.

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/comptoir-pos/comptoir/backend/fault"
)

// lastEvent is the attempt's latest event.
func lastEvent(t *testing.T, db *DB, id string) Event {
	t.Helper()
	evs, err := db.Events(context.Background(), id)
	if err != nil || len(evs) == 0 {
		t.Fatalf("events %+v, %v", evs, err)
	}
	return evs[len(evs)-1]
}

// A reversal's request body reverses the transaction the attempt names,
// and no other: the body is sent byte for byte, so a body that says
// otherwise would reverse someone else's payment.
func TestAReversalsBodyReversesItsOwnTransaction(t *testing.T) {
	ctx := t.Context()
	db := openMemory(t)
	debit := approvedDebit(t, db, "o", 990, 990, 0, "T1")
	r := reversalOf(t, debit, 990, "T1")
	r.RequestBody = []byte(`{"amount":990,"initialTransactionId":"tx-someone-else"}`)
	_, err := db.PrepareAttempt(ctx, r)
	wantCode(t, err, EINVALID)
	r.RequestBody = []byte(`{"amount":990,"initialTransactionId":42}`)
	_, err = db.PrepareAttempt(ctx, r)
	wantCode(t, err, EINVALID)
	// Its first event names the transaction it reverses.
	a := finish(t, db, reversalOf(t, debit, 990, "T1"), StatePrepared)
	if ev := lastEvent(t, db, a.UUID); !strings.HasPrefix(ev.Detail, "reversal of 990") || !strings.Contains(ev.Detail, ", of transaction "+debit.TransactionID) {
		t.Fatalf("first event %+v", ev)
	}
}

// What a provider says it charged is never negative, in the amount or in
// the tip; zero is a charge (a decline may name it).
func TestANegativeChargeIsRefused(t *testing.T) {
	ctx := t.Context()
	for _, c := range []Charge{{Amount: -1}, {Amount: 130, GiftAmount: -1}} {
		db := openMemory(t)
		a := attemptIn(t, db, StateSent)
		_, err := db.Transition(ctx, a.UUID, StateSent, StateApproved, TransitionInfo{Charged: &c})
		wantCode(t, err, EINVALID)
		if got, _ := db.Attempt(ctx, a.UUID); got.State != StateSent || got.Charged {
			t.Fatalf("after a refused charge %+v", got)
		}
	}
	db := openMemory(t)
	a := attemptIn(t, db, StateSent)
	got, err := db.Transition(ctx, a.UUID, StateSent, StateDeclined, TransitionInfo{Charged: &Charge{Amount: 0}})
	if err != nil || !got.Charged || got.ChargedAmount != 0 {
		t.Fatalf("a decline naming 0: %+v, %v", got, err)
	}
}

// The audit trail says why an approval pays nothing: flagged (and how),
// or awaiting the provider's record; whether the approval came as an
// answer or as a resolution of an unknown outcome.
func TestTheTrailOfAnApprovalThatPaysNothingSaysWhy(t *testing.T) {
	ctx := t.Context()
	db := oneOrder(t)
	a := approve(t, db, "o", 130, Charge{Amount: 1})
	if ev := lastEvent(t, db, a.UUID); !strings.Contains(ev.Detail, "flagged: 1 charged where 130 was asked") {
		t.Fatalf("approval event %+v", ev)
	}
	u := attemptIn(t, db, StateUnknown)
	if _, err := db.Resolve(ctx, u.UUID, Resolution{To: StateApproved, Who: "staff:1", TransactionID: "tx-u",
		Charged: &Charge{Amount: u.Amount + 5}, Note: "seen on the terminal"}); err != nil {
		t.Fatal(err)
	}
	if ev := lastEvent(t, db, u.UUID); !strings.Contains(ev.Detail, "flagged: ") || !strings.Contains(ev.Detail, "seen on the terminal") {
		t.Fatalf("resolution event %+v", ev)
	}
	w := attemptIn(t, db, StateUnknown)
	if _, err := db.Resolve(ctx, w.UUID, Resolution{To: StateApproved, Who: "system:history", TransactionID: "tx-w",
		Charged: &Charge{Amount: w.Amount}, AwaitWitness: true}); err != nil {
		t.Fatal(err)
	}
	if ev := lastEvent(t, db, w.UUID); !strings.Contains(ev.Detail, "awaiting the provider's record") || strings.Contains(ev.Detail, "flagged") {
		t.Fatalf("resolution event %+v", ev)
	}
	d := attemptIn(t, db, StateUnknown)
	if _, err := db.Resolve(ctx, d.UUID, Resolution{To: StateDeclined, Who: "staff:1", Note: "not on the terminal"}); err != nil {
		t.Fatal(err)
	}
	if ev := lastEvent(t, db, d.UUID); strings.Contains(ev.Detail, "flagged") || strings.Contains(ev.Detail, "awaiting") {
		t.Fatalf("a decline's resolution event %+v", ev)
	}
}

// The provider's word on an open attempt is an event only when it says
// something new, and the event names what is new: the provider's id the
// first time, the status each time it changes.
func TestTheProvidersWordIsAnEventOnlyWhenItIsNew(t *testing.T) {
	ctx := t.Context()
	db := openMemory(t)
	a := attemptIn(t, db, StateSent)
	n := countEvents(t, db, a.UUID)
	step := func(id, status, wantIn, wantOut string) {
		t.Helper()
		if _, err := db.SetProvider(ctx, a.UUID, id, status, nil, "polled"); err != nil {
			t.Fatal(err)
		}
		got := countEvents(t, db, a.UUID)
		if wantIn == "" {
			if got != n {
				t.Fatalf("SetProvider(%q, %q) said nothing new, yet wrote an event", id, status)
			}
			return
		}
		ev := lastEvent(t, db, a.UUID)
		if got != n+1 || !strings.Contains(ev.Detail, wantIn) || (wantOut != "" && strings.Contains(ev.Detail, wantOut)) {
			t.Fatalf("SetProvider(%q, %q): %d events (had %d), last %q", id, status, got, n, ev.Detail)
		}
		n = got
	}
	step("", "accepted", "provider status accepted", "provider id")
	step("cloud-1", "", "provider id cloud-1", "provider status")
	step("cloud-1", "accepted", "", "")
	step("", "", "", "")
	step("cloud-1", "pending", "provider status pending", "provider id")
	step("", "pending", "", "")
}

// Only a payment link's approval whose cart was authorised is captured:
// an approval through another channel with the same word is not.
func TestOnlyAnAuthorisedLinkApprovalIsCaptured(t *testing.T) {
	ctx := t.Context()
	db := openMemory(t)
	a := attemptIn(t, db, StateSent)
	if _, err := db.Transition(ctx, a.UUID, StateSent, StateApproved, TransitionInfo{ProviderStatus: ProviderAuthorised,
		Charged: &Charge{Amount: a.Amount}}); err != nil {
		t.Fatal(err)
	}
	_, err := db.RecordCapture(ctx, a.UUID, "staff:1", "ok", nil, "")
	wantCode(t, err, ECONFLICT)
}

// The provider's word on an approval over the LAN is an event naming the
// provider's own transaction and why; the provider's id is written once,
// and the attempt's own transaction named again writes nothing.
func TestTheProvidersRecordIsNamedInTheTrail(t *testing.T) {
	ctx := t.Context()
	db := oneOrder(t)
	a := approveAwaiting(t, db, "o", 130, Charge{Amount: 130})
	got, err := db.RecordWitness(ctx, a.UUID, WitnessWord{To: WitnessUnconfirmed, ProviderID: a.TransactionID, Who: "system:witness"})
	if err != nil || got.ProviderID != "" {
		t.Fatalf("the attempt's own transaction named: provider id %q, %v", got.ProviderID, err)
	}
	got, err = db.RecordWitness(ctx, a.UUID, WitnessWord{To: WitnessConfirmed, ProviderID: "ws-77", Who: "system:witness",
		Note: "found by its amount and time"})
	if err != nil || got.ProviderID != "ws-77" {
		t.Fatalf("provider id %q, %v", got.ProviderID, err)
	}
	ev := lastEvent(t, db, a.UUID)
	if !strings.HasPrefix(ev.Detail, "the provider's record: confirmed (was unconfirmed)") ||
		!strings.Contains(ev.Detail, "; the provider's transaction ws-77: found by its amount and time") {
		t.Fatalf("witness event %+v", ev)
	}
}

// Staff accepting an order count every approval of it the provider's
// record did not show, not only the first.
func TestStaffAcceptanceCountsEveryDeniedApproval(t *testing.T) {
	ctx := t.Context()
	db := openMemory(t)
	newOrder(t, db, "o", "EUR", 200)
	// The first paid on the terminal's word while the record could not be
	// read (so the second may be taken), then both denied by the record.
	first := approveAwaiting(t, db, "o", 100, Charge{Amount: 100})
	if _, err := db.RecordWitness(ctx, first.UUID, WitnessWord{To: WitnessUnconfirmed, Who: "system:witness"}); err != nil {
		t.Fatal(err)
	}
	second := approveAwaiting(t, db, "o", 100, Charge{Amount: 100})
	ids := []string{first.UUID, second.UUID}
	for _, id := range ids {
		if _, err := db.RecordWitness(ctx, id, WitnessWord{To: WitnessDenied, Who: "system:witness"}); err != nil {
			t.Fatal(err)
		}
	}
	st, err := db.AcceptOrder(ctx, "o", "staff:1", "both seen in the back office")
	if err != nil || st != OrderPaid {
		t.Fatalf("accept: %s, %v", st, err)
	}
	for _, id := range ids {
		if a, _ := db.Attempt(ctx, id); a.Witness != WitnessAccepted || lastEvent(t, db, id).Kind != EventAccepted {
			t.Fatalf("attempt %s: witness %q", id, a.Witness)
		}
	}
}

// A currency is three capital letters, A to Z both included.
func TestCurrenciesAreThreeCapitalLetters(t *testing.T) {
	ctx := t.Context()
	db := openMemory(t)
	for i, c := range []string{"ZAR", "AUD", "EUR"} {
		if err := db.CreateOrder(ctx, Order{ID: "ok" + string(rune('0'+i)), Currency: c, Total: 1}); err != nil {
			t.Errorf("%s refused: %v", c, err)
		}
	}
	for i, c := range []string{"EU", "EURO", "eur", "@UR", "[UR", "EU@", "EU["} {
		wantCode(t, db.CreateOrder(ctx, Order{ID: "bad" + string(rune('0'+i)), Currency: c, Total: 1}), EINVALID)
	}
}

// The settings written with a new order are checked like any setting, and
// all of them are written with it.
func TestSettingsWrittenWithAnOrderAreCheckedAndAllWritten(t *testing.T) {
	ctx := t.Context()
	db := openMemory(t)
	wantCode(t, db.CreateOrder(ctx, Order{ID: "a", Currency: "EUR", Total: 1}, SettingWrite{Key: "", Value: []byte(`1`)}), EINVALID)
	wantCode(t, db.CreateOrder(ctx, Order{ID: "a", Currency: "EUR", Total: 1}, SettingWrite{Key: "k", Value: []byte(`{`)}), EINVALID)
	if _, err := db.Order(ctx, "a"); fault.CodeOf(err) != ENOTFOUND {
		t.Fatalf("an order refused for its settings was recorded: %v", err)
	}
	if err := db.CreateOrder(ctx, Order{ID: "b", Currency: "EUR", Total: 1},
		SettingWrite{Key: "seq", Value: []byte(`7`)}, SettingWrite{Key: "day", Value: []byte(`"2026-11-22"`)}); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{"seq": `7`, "day": `"2026-11-22"`} {
		if v, ok, err := db.Setting(ctx, k); err != nil || !ok || string(v) != want {
			t.Fatalf("setting %s = %s (%v, %v)", k, v, ok, err)
		}
	}
}

// Card fields are taken out of an answer only when it is one JSON object;
// anything else is kept whole, byte for byte. Put back for a receipt, they
// make a valid answer again, and never replace a key the answer has.
func TestCardFieldsAreTakenOnlyFromOneJSONObject(t *testing.T) {
	for _, raw := range []string{`{"cardToken":"tok"} and more`, `["cardToken","tok"]`, `"cardToken"`} {
		if kept, card := splitCard([]byte(raw)); string(kept) != raw || card != nil {
			t.Errorf("%s: kept %s, card %s", raw, kept, card)
		}
	}
	kept, card := splitCard([]byte(`{"cardToken":"tok","clientTicket":"T"}`))
	if string(kept) != `{}` {
		t.Fatalf("kept %s", kept)
	}
	if back := withCard(kept, nullStr(string(card))); string(back) != `{"cardToken":"tok","clientTicket":"T"}` &&
		string(back) != `{"clientTicket":"T","cardToken":"tok"}` {
		t.Fatalf("put back %s", back)
	}
	if back := withCard([]byte(`{"cardToken":"mine"}`), nullStr(`{"cardToken":"theirs"}`)); string(back) != `{"cardToken":"mine"}` {
		t.Fatalf("an answer's own key replaced: %s", back)
	}
}

// Putting card details back adds every card key the answer lacks, whatever
// the order they are met in, and nothing else: a key the answer has, or one
// that is not a card's, is skipped without stopping the rest. An answer
// written with spaces stays valid JSON, and one with no card details to
// add is returned byte for byte.
func TestEveryMissingCardKeyIsPutBackAndNothingElse(t *testing.T) {
	card := nullStr(`{"amount":999,"cardToken":"theirs","clientTicket":"C","merchantCardTicket":"M","ticketUrl":"U"}`)
	// A map's order changes from one walk to the next: thirty walks meet a
	// skipped key first in almost every one of them.
	for range 30 {
		back := withCard([]byte(`{"amount":130,"cardToken":"mine"}`), card)
		var got map[string]any
		if err := json.Unmarshal(back, &got); err != nil {
			t.Fatalf("put back %s: %v", back, err)
		}
		want := map[string]any{"amount": 130.0, "cardToken": "mine", "clientTicket": "C", "merchantCardTicket": "M", "ticketUrl": "U"}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("put back %s, want %v", back, want)
		}
	}
	back := withCard([]byte(`{ }`), nullStr(`{"cardToken":"t","clientTicket":"C"}`))
	var got map[string]string
	if err := json.Unmarshal(back, &got); err != nil || got["cardToken"] != "t" || got["clientTicket"] != "C" || len(got) != 2 {
		t.Fatalf("put back into an empty answer written with a space: %s (%v)", back, err)
	}
	for _, c := range []struct{ answer, card string }{
		{" {\"status\": \"ok\"}\n", `{}`},
		{" {\"status\": \"ok\"}\n", `[]`},
		{" {\"status\": \"ok\"}\n", `not json`},
		{" {\"status\": \"ok\"}\n", `{"amount":1}`},
		{" {\"cardToken\": \"mine\"}\n", `{"cardToken":"theirs"}`},
		{`null`, `{"cardToken":"t"}`},
		{`[1]`, `{"cardToken":"t"}`},
		{``, `{"cardToken":"t"}`},
	} {
		if back := withCard([]byte(c.answer), nullStr(c.card)); string(back) != c.answer {
			t.Fatalf("card details %s: answer %q became %q", c.card, c.answer, back)
		}
	}
}

// A closed order whose money was all given back is cancelled; one that
// kept part of it waits for staff.
func TestAClosedOrderIsCancelledOnlyWhenAllItsMoneyWentBack(t *testing.T) {
	ctx := t.Context()
	db := openMemory(t)
	for _, tt := range []struct {
		order, tx string
		back      func(debit Attempt) Attempt
		want      OrderStatus
		what      string
	}{
		{"rev", "T1", func(d Attempt) Attempt { return reversalOf(t, d, 600, "T1") }, OrderCancelled, "its part reversed"},
		{"ref", "T2", func(Attempt) Attempt { return refundOf(t, "ref", 200, "T2") }, OrderNeedsAttention, "400 kept"},
		// Refunded to the last cent is given back as surely as reversed.
		{"all", "T3", func(Attempt) Attempt { return refundOf(t, "all", 600, "T3") }, OrderCancelled, "its part refunded"},
	} {
		debit := approvedDebit(t, db, tt.order, 1000, 600, 0, tt.tx)
		finish(t, db, tt.back(debit), StateApproved)
		if err := db.CloseOrder(ctx, tt.order, "the customer left"); err != nil {
			t.Fatal(err)
		}
		if st := orderStatus(t, db, tt.order); st != tt.want {
			t.Fatalf("closed with %s: %s, want %s", tt.what, st, tt.want)
		}
	}
}

// Money given back counts its tip part too: a refund may not give back,
// amount and tip together, more than the order took.
func TestMoneyGivenBackCountsItsTipToo(t *testing.T) {
	ctx := t.Context()
	db := openMemory(t)
	approvedDebit(t, db, "o", 1000, 1000, 0, "T1")
	r := refundOf(t, "o", 900, "T1")
	r.GiftAmount = 200
	_, err := db.PrepareAttempt(ctx, r)
	wantCode(t, err, ECONFLICT)
	r = refundOf(t, "o", 800, "T1")
	r.GiftAmount = 200
	if _, err := db.PrepareAttempt(ctx, r); err != nil {
		t.Fatalf("all that was taken, tip part included: %v", err)
	}
}

// Money given back outside Comptoir is journaled the way its debit went
// (a reversal on the debit's terminal and channel), and giving back
// exactly what was taken is no reason to call staff.
func TestAnAdoptedGiveBackGoesTheWayOfItsDebit(t *testing.T) {
	ctx := t.Context()
	db := openMemory(t)
	newOrder(t, db, "o", "EUR", 990)
	id := newUUID(t)
	a, err := db.PrepareAttempt(ctx, Attempt{UUID: id, OrderID: "o", Kind: KindDebit, Channel: ChannelCloud, Amount: 990,
		Policy: PolicyKiosk, Terminal: "cloud:SN-1", RequestBody: debitBody(id, "o", 990)})
	if err != nil {
		t.Fatal(err)
	}
	db.MarkSent(ctx, a.UUID)
	if a, err = db.Transition(ctx, a.UUID, StateSent, StateApproved, TransitionInfo{TransactionID: "cl-1", Charged: &Charge{Amount: 990}}); err != nil {
		t.Fatal(err)
	}
	g, err := db.AdoptGiveBack(ctx, AdoptedGiveBack{OrderID: "o", Kind: KindReversal, TransactionID: "kp-1",
		InitialTransactionID: "cl-1", Amount: 990, Who: "system:reconcile"})
	if err != nil {
		t.Fatal(err)
	}
	if g.Channel != ChannelCloud || g.Terminal != "cloud:SN-1" || g.Policy != PolicyReversal {
		t.Fatalf("adopted %+v", g)
	}
	if o, _ := db.Order(ctx, "o"); o.Attention != "" {
		t.Fatalf("all that was taken given back, yet flagged: %q", o.Attention)
	}
}

// The maintenance check passes a sound journal; the read pool has the
// size asked, one reader at least.
func TestASoundJournalPassesItsCheck(t *testing.T) {
	db := openDir(t, t.TempDir(), WithReaders(3))
	if err := db.Check(t.Context()); err != nil {
		t.Fatalf("a sound journal: %v", err)
	}
	if n := db.r.Stats().MaxOpenConnections; n != 3 {
		t.Fatalf("%d readers, want 3", n)
	}
	if o := buildOptions([]Option{WithReaders(0)}); o.readers != 1 {
		t.Fatalf("%d readers, want 1", o.readers)
	}
	if o := buildOptions([]Option{WithReaders(2)}); o.readers != 2 {
		t.Fatalf("%d readers, want 2", o.readers)
	}
}

// A journal damaged on disk fails its check with what SQLite found, naming
// the file: here the orders table's first page, its free space pointing
// past the page's end.
func TestADamagedJournalFailsItsCheck(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	db := openDir(t, dir)
	newOrder(t, db, "a", "EUR", 100)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, dbFileName)
	raw, err := sql.Open("sqlite", p)
	if err != nil {
		t.Fatal(err)
	}
	var root, size int64
	err = raw.QueryRowContext(ctx, `SELECT rootpage FROM sqlite_schema WHERE type = 'table' AND name = 'orders'`).Scan(&root)
	if err == nil {
		err = raw.QueryRowContext(ctx, `PRAGMA page_size`).Scan(&size)
	}
	raw.Close()
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	// A b-tree page's bytes 1-2: where its first free block starts.
	_, err = f.WriteAt([]byte{0x0f, 0xff}, (root-1)*size+1)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	damaged := openDir(t, dir)
	err = damaged.Check(ctx)
	wantCode(t, err, EINTERNAL)
	if msg := err.Error(); !strings.Contains(msg, "is damaged") || !strings.Contains(msg, "orders") || !strings.Contains(msg, p) {
		t.Fatalf("check of a damaged journal: %v", err)
	}
}

// A migration that runs with foreign keys off must leave none broken: one
// that does is not applied.
func TestAMigrationThatBreaksAForeignKeyIsNotApplied(t *testing.T) {
	ctx := t.Context()
	w, err := sql.Open("sqlite", "file:fk-migration?mode=memory")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	w.SetMaxOpenConns(1)
	fsys := fstest.MapFS{
		"migrations/0001_a.sql": {Data: []byte("CREATE TABLE p (id INTEGER PRIMARY KEY); CREATE TABLE c (p INTEGER REFERENCES p(id));")},
		"migrations/0002_b.sql": {Data: []byte(foreignKeysOff + "\nINSERT INTO c VALUES (42);")},
	}
	err = migrate(ctx, w, fsys, "test")
	if err == nil || !strings.Contains(err.Error(), "foreign key") {
		t.Fatalf("a migration leaving a dangling row: %v", err)
	}
	var v int
	w.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v)
	if v != 1 {
		t.Fatalf("user_version %d, want 1", v)
	}
	_, err = loadMigrations(fstest.MapFS{"migrations/0001_a.sql": {}, "migrations/0003_c.sql": {}})
	if err == nil || !strings.Contains(err.Error(), "expected version 2") {
		t.Fatalf("a gap: %v", err)
	}
}

// A journal file that others could read is made private when the journal
// opens it, not only when it creates it.
func TestAnExistingJournalFileIsMadePrivate(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no POSIX modes")
	}
	dir := t.TempDir()
	openDir(t, dir).Close()
	p := filepath.Join(dir, dbFileName)
	if err := os.Chmod(p, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := PrivateFile(p); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, %v", fi.Mode().Perm(), err)
	}
}

// A directory whose holder has not written its PID yet, or wrote something
// that is not one, is refused without a PID in the message; the lock
// released twice is released once.
func TestTheLockSaysOnlyAPIDItRead(t *testing.T) {
	dir := t.TempDir()
	l, err := lockDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, held := range []string{"", "12abc", "-5", "0", "99999999999999999999"} {
		if err := l.f.Truncate(0); err != nil {
			t.Fatal(err)
		}
		if _, err := l.f.WriteAt([]byte(held), 0); err != nil {
			t.Fatal(err)
		}
		_, err = lockDir(dir)
		wantCode(t, err, ELOCKED)
		if strings.Contains(err.Error(), "pid") {
			t.Fatalf("holder wrote %q: message %q names a PID", held, err)
		}
	}
	if err := l.release(); err != nil {
		t.Fatal(err)
	}
	if err := l.release(); err != nil {
		t.Fatalf("released twice: %v", err)
	}
}
