package payment

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/comptoir-pos/comptoir/backend/cloudapi"
	"github.com/comptoir-pos/comptoir/backend/cloudsim"
	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/terminalsim"
)

// The provider's record of a transaction agrees with what the terminal
// said it charged, or the approval is not confirmed: each way a record can
// differ is named, and each field the record leaves out (no kind, no
// currency, no serial, no readable date) is no disagreement.
func TestRuleTheProvidersRecordMustAgreeWithTheTerminal(t *testing.T) {
	w := NewWitness(nil, WitnessOptions{Serial: "SN-1", Skew: 10 * time.Minute})
	sentAt := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	att := journal.Attempt{UUID: "a", Kind: journal.KindDebit, Amount: 1000, Charged: true, ChargedAmount: 1000, ChargedGift: 150,
		ChargedCurrency: "EUR", FirstSentAt: sentAt}
	type record struct {
		status, kind, serial, created, currency string
		amount, gift                            int64
	}
	agrees := record{"ok", "debit", "SN-1", sentAt.Add(time.Second).Format(time.RFC3339), "EUR", 1000, 150}
	for _, tc := range []struct {
		name string
		edit func(*record)
		want string // "" when it agrees; else a word of the reason
	}{
		{"the same", func(*record) {}, ""},
		{"still pending", func(r *record) { r.status = "pending" }, ""},
		{"refused", func(r *record) { r.status = "ko" }, "lists it as ko"},
		{"another amount", func(r *record) { r.amount = 900 }, "lists 900"},
		{"another tip", func(r *record) { r.gift = 0 }, "(tip 0)"},
		{"a refund", func(r *record) { r.kind = "refund" }, "lists a refund"},
		{"no kind", func(r *record) { r.kind = "" }, ""},
		{"the kind in capitals", func(r *record) { r.kind = " DEBIT " }, ""},
		{"a kind that names none", func(r *record) { r.kind = "na" }, ""},
		{"a kind nobody listed", func(r *record) { r.kind = "payment" }, ""},
		{"a reversal in capitals", func(r *record) { r.kind = "REVERSAL" }, "lists a reversal"},
		{"a credit", func(r *record) { r.kind = "Credit" }, "lists a credit"},
		{"another currency", func(r *record) { r.currency = "USD" }, "in USD"},
		{"the currency in lower case", func(r *record) { r.currency = "eur" }, ""},
		{"no currency", func(r *record) { r.currency = "" }, ""},
		{"another terminal", func(r *record) { r.serial = "SN-2" }, "on terminal SN-2"},
		{"no serial", func(r *record) { r.serial = "" }, ""},
		{"made before the payment", func(r *record) { r.created = sentAt.Add(-11 * time.Minute).Format(time.RFC3339) }, "before this payment"},
		{"made within the skew before it", func(r *record) { r.created = sentAt.Add(-9 * time.Minute).Format(time.RFC3339) }, ""},
		{"an unreadable date", func(r *record) { r.created = "yesterday" }, ""},
	} {
		r := agrees
		tc.edit(&r)
		got := w.disagrees(att, r.status, r.kind, r.serial, r.created, r.currency, r.amount, r.gift)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	// An attempt that names no currency is not held to one.
	noCurrency := att
	noCurrency.ChargedCurrency = ""
	if got := w.disagrees(noCurrency, "ok", "debit", "SN-1", agrees.created, "USD", 1000, 150); got != "" {
		t.Errorf("an attempt without a currency: %q", got)
	}
	// A witness that knows no serial takes any terminal's record.
	anySerial := NewWitness(nil, WitnessOptions{})
	if got := anySerial.disagrees(att, "ok", "debit", "SN-9", agrees.created, "EUR", 1000, 150); got != "" {
		t.Errorf("a witness without a serial: %q", got)
	}
}

// The witness judges an approval by its own record: the terminal's
// earlier payments listed around it (another amount, another order) do
// not deny it, whether the provider lists the payment under the
// terminal's id or under its own.
func TestRuleOtherPaymentsInTheProvidersListDoNotDenyAnApproval(t *testing.T) {
	for _, ids := range []string{cloudsim.LANIDsTerminal, cloudsim.LANIDsCloud} {
		t.Run(ids, func(t *testing.T) {
			w, _ := witnessed(t, false, WitnessOptions{})
			if err := w.cloud.SetLANIDs(ids); err != nil {
				t.Fatal(err)
			}
			var seen []string
			for _, p := range []struct {
				order  string
				amount int64
			}{{"first", 450}, {"second", 700}} {
				w.order(p.order, p.amount)
				h := w.start(Request{OrderID: p.order, Amount: p.amount, Policy: journal.PolicyKiosk})
				v := w.wait(h)
				a := w.attempt(h.UUID())
				if v.State != journal.StateApproved || !v.OrderPaid || a.Witness != journal.WitnessConfirmed {
					t.Fatalf("%s: view %+v, witness %q", p.order, v, a.Witness)
				}
				seen = append(seen, a.ProviderID+"/"+a.TransactionID) // the provider's id, when it has its own
			}
			if seen[0] == seen[1] {
				t.Fatalf("both approvals confirmed by the same record %q", seen[0])
			}
		})
	}
}

// While the provider's record of an approval lags (the provider lists it
// under its own id, not yet), the witness waits for it: an earlier entry
// of the same order that was refused, or a payment keyed on the terminal
// for the same amount, is not taken for it.
func TestRuleALaggingRecordIsAwaitedNotReplacedByAnotherEntry(t *testing.T) {
	w, _ := witnessed(t, false, WitnessOptions{})
	if err := w.cloud.SetLANIDs(cloudsim.LANIDsCloud); err != nil {
		t.Fatal(err)
	}
	w.order("same", 700)
	w.sim.Script(terminalsim.Decline())
	if v := w.wait(w.start(Request{OrderID: "same", Amount: 700, Policy: journal.PolicyKiosk})); v.State != journal.StateDeclined {
		t.Fatalf("first attempt %+v", v)
	}
	b := terminalsim.Approve()
	if _, err := w.sim.StartOnKeypad(700, &b); err != nil {
		t.Fatal(err)
	}
	if err := w.sim.WaitIdle(w.ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(w.cloud.Transactions()); n != 2 { // both listed now, before the record lags
		t.Fatalf("%d transactions listed before the payment", n)
	}
	if err := w.cloud.SetRecordLag(2); err != nil {
		t.Fatal(err)
	}
	h := w.start(Request{OrderID: "same", Amount: 700, Policy: journal.PolicyKiosk})
	if v := w.wait(h); v.State != journal.StateApproved || !v.OrderPaid {
		t.Fatalf("view %+v", v)
	}
	a := w.attempt(h.UUID())
	var ours string
	for _, tx := range w.cloud.Transactions() {
		if tx.LocalID == a.TransactionID || tx.TransactionID == a.TransactionID {
			ours = tx.TransactionID
		}
	}
	if a.Witness != journal.WitnessConfirmed || ours == "" || a.ProviderID != ours {
		t.Fatalf("witness %q by record %q, want the approval's own record %q", a.Witness, a.ProviderID, ours)
	}
}

// Nor is a record another attempt already holds: the first part of an
// order paid in two equal parts is confirmed by its record, and the
// second part, whose record lags, waits for its own.
func TestRuleARecordAnotherAttemptHoldsConfirmsNothingElse(t *testing.T) {
	w, _ := witnessed(t, false, WitnessOptions{})
	if err := w.cloud.SetLANIDs(cloudsim.LANIDsCloud); err != nil {
		t.Fatal(err)
	}
	w.order("halves", 1400)
	first := w.wait(w.start(Request{OrderID: "halves", Amount: 700, Policy: journal.PolicyKiosk}))
	a1 := w.attempt(first.UUID)
	if first.State != journal.StateApproved || a1.Witness != journal.WitnessConfirmed || a1.ProviderID == "" {
		t.Fatalf("first half %+v, witness %q, record %q", first, a1.Witness, a1.ProviderID)
	}
	if err := w.cloud.SetRecordLag(2); err != nil {
		t.Fatal(err)
	}
	second := w.wait(w.start(Request{OrderID: "halves", Amount: 700, Policy: journal.PolicyKiosk}))
	a2 := w.attempt(second.UUID)
	if second.State != journal.StateApproved || a2.Witness != journal.WitnessConfirmed || a2.ProviderID == a1.ProviderID {
		t.Fatalf("second half %+v, witness %q, record %q (the first's: %q)", second, a2.Witness, a2.ProviderID, a1.ProviderID)
	}
}

// answersByID is a provider whose fetch by id answers err and whose list
// cannot be read.
type answersByID struct{ err error }

func (a answersByID) Details(context.Context, string) (*cloudapi.TransactionDetails, error) {
	return nil, a.err
}

func (answersByID) BatchAll(context.Context, cloudapi.BatchRequest, time.Time) ([]cloudapi.HistoryEntry, error) {
	return nil, &cloudapi.TransportError{Op: "POST /transactions/", Err: errors.New("connection refused")}
}

// The provider has answered about an approval when it said it has no
// transaction under that id (404, 403, 410, or an error of its API), not
// when the request failed (a 500, no connection): only an answer can
// deny an approval; a failure leaves it unconfirmed.
func TestRuleOnlyAnAnswerFromTheProviderCounts(t *testing.T) {
	att := journal.Attempt{UUID: "a", TransactionID: "t-1", Amount: 500, FirstSentAt: time.Now()}
	none := func(context.Context, []string) (map[string]string, error) { return map[string]string{}, nil }
	for _, tc := range []struct {
		err      error
		answered bool
	}{
		{&cloudapi.HTTPError{Status: 404}, true},
		{&cloudapi.HTTPError{Status: 403}, true},
		{&cloudapi.HTTPError{Status: 410}, true},
		{&cloudapi.APIError{Status: 400, Message: "unknown transaction"}, true},
		{&cloudapi.HTTPError{Status: 500}, false},
		{&cloudapi.HTTPError{Status: 401}, false},
		{&cloudapi.TransportError{Op: "GET /transaction/", Err: errors.New("connection refused")}, false},
	} {
		w := NewWitness(answersByID{tc.err}, WitnessOptions{Serial: "SN-1"})
		if r := w.read(context.Background(), att, none); r.readable != tc.answered || r.found {
			t.Errorf("%v: answered %v, found %v; want answered %v", tc.err, r.readable, r.found, tc.answered)
		}
	}
}

// The periodic check reads the record only of the approvals this
// terminal took: another terminal's approval awaiting its record is left
// to the process that drives that terminal, and this terminal's own
// approvals after it are still checked.
func TestRuleTheRecheckLeavesAnotherTerminalsApprovals(t *testing.T) {
	w, sw := witnessed(t, false, WitnessOptions{Wait: 50 * time.Millisecond, Lag: time.Hour})
	w.order("theirs", 900)
	id := uuid.Must(uuid.NewV7()).String()
	if _, err := w.db.PrepareAttempt(w.ctx, journal.Attempt{UUID: id, OrderID: "theirs", Kind: journal.KindDebit, Channel: journal.ChannelLocal,
		Amount: 900, Policy: journal.PolicyKiosk, Terminal: "terminal:SN-OTHER", RequestBody: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.db.MarkSent(w.ctx, id); err != nil {
		t.Fatal(err)
	}
	if _, err := w.db.Transition(w.ctx, id, journal.StateSent, journal.StateApproved, journal.TransitionInfo{TransactionID: "t-theirs",
		Charged: &journal.Charge{Amount: 900}, AwaitWitness: true, Note: "approved"}); err != nil {
		t.Fatal(err)
	}
	sw.down.Store(true)
	w.order("ours", 500)
	h := w.start(Request{OrderID: "ours", Amount: 500, Policy: journal.PolicyKiosk})
	if v := w.wait(h); v.State != journal.StateApproved || w.attempt(h.UUID()).Witness != journal.WitnessUnconfirmed {
		t.Fatalf("our approval %+v, witness %q", v, w.attempt(h.UUID()).Witness)
	}
	sw.down.Store(false)
	w.o.recheckWitnesses(w.ctx)
	if a := w.attempt(id); a.Witness != journal.WitnessAwaiting {
		t.Fatalf("another terminal's approval became %q", a.Witness)
	}
	if a := w.attempt(h.UUID()); a.Witness != journal.WitnessConfirmed {
		t.Fatalf("our approval, listed after theirs, became %q", a.Witness)
	}
}

// Among the list's entries that could be the approval, the one nearest
// its first send that no other attempt holds is taken (one the attempt
// itself holds still counts); none, or holders that cannot be read, is
// no candidate.
func TestRuleTheNearestUnheldEntryIsTheApprovalsRecord(t *testing.T) {
	w := NewWitness(nil, WitnessOptions{Serial: "SN-1"})
	sentAt := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	att := journal.Attempt{UUID: "mine", FirstSentAt: sentAt}
	at := func(id string, d time.Duration) cloudapi.HistoryEntry {
		return cloudapi.HistoryEntry{TransactionID: id, CreatedAt: sentAt.Add(d).Format(time.RFC3339)}
	}
	heldBy := func(m map[string]string) func(context.Context, []string) (map[string]string, error) {
		return func(context.Context, []string) (map[string]string, error) { return m, nil }
	}
	for _, tc := range []struct {
		name       string
		candidates []cloudapi.HistoryEntry
		held       map[string]string
		want       string // "" for none
	}{
		{"none", nil, nil, ""},
		{"the only one", []cloudapi.HistoryEntry{at("a", 3*time.Second)}, nil, "a"},
		{"at the very second", []cloudapi.HistoryEntry{at("a", 0)}, nil, "a"},
		{"the nearest after", []cloudapi.HistoryEntry{at("far", 40*time.Second), at("near", 2*time.Second), at("farther", time.Minute)}, nil, "near"},
		{"the nearest before", []cloudapi.HistoryEntry{at("after", 30*time.Second), at("before", -5*time.Second)}, nil, "before"},
		{"the first of two as near", []cloudapi.HistoryEntry{at("first", 0), at("second", 0)}, nil, "first"},
		{"held by another", []cloudapi.HistoryEntry{at("theirs", time.Second), at("free", 20*time.Second)}, map[string]string{"theirs": "other"}, "free"},
		{"held by itself", []cloudapi.HistoryEntry{at("own", time.Second), at("free", 20*time.Second)}, map[string]string{"own": "mine"}, "own"},
		{"all held by others", []cloudapi.HistoryEntry{at("theirs", time.Second)}, map[string]string{"theirs": "other"}, ""},
	} {
		e, ok := w.unheld(context.Background(), att, tc.candidates, heldBy(tc.held))
		if ok != (tc.want != "") || e.TransactionID != tc.want {
			t.Errorf("%s: %q (%v), want %q", tc.name, e.TransactionID, ok, tc.want)
		}
	}
	failing := func(context.Context, []string) (map[string]string, error) { return nil, errors.New("journal closed") }
	if e, ok := w.unheld(context.Background(), att, []cloudapi.HistoryEntry{at("a", 0)}, failing); ok {
		t.Errorf("holders unread: took %q", e.TransactionID)
	}
}

// listing records the list requests a witness makes, and answers them
// with entries.
type listing struct {
	answersByID
	asked   []cloudapi.BatchRequest
	entries []cloudapi.HistoryEntry
}

func (l *listing) BatchAll(_ context.Context, r cloudapi.BatchRequest, _ time.Time) ([]cloudapi.HistoryEntry, error) {
	l.asked = append(l.asked, r)
	return l.entries, nil
}

// The list is asked for the terminal's transactions when the witness
// knows its serial, for the company's otherwise, by whole days around the
// first send; what it keeps is from the skew before the first send on.
func TestRuleTheListIsAskedForTheTerminalsTransactions(t *testing.T) {
	sentAt := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	att := journal.Attempt{UUID: "mine", FirstSentAt: sentAt}
	at := func(id string, d time.Duration) cloudapi.HistoryEntry {
		return cloudapi.HistoryEntry{TransactionID: id, CreatedAt: sentAt.Add(d).Format(time.RFC3339)}
	}
	for _, serial := range []string{"SN-1", ""} {
		api := &listing{entries: []cloudapi.HistoryEntry{at("after", time.Minute), at("within the skew", -9*time.Minute),
			at("before", -11*time.Minute), {TransactionID: "undated", CreatedAt: "yesterday"}}}
		w := NewWitness(api, WitnessOptions{Serial: serial, Skew: 10 * time.Minute, Now: func() time.Time { return sentAt.Add(time.Minute) }})
		got, err := w.list(context.Background(), att)
		if err != nil || len(api.asked) != 1 {
			t.Fatalf("%q: %v, %d requests", serial, err, len(api.asked))
		}
		r := api.asked[0]
		if serial != "" && (len(r.SerialNumbers) != 1 || r.SerialNumbers[0] != serial) || serial == "" && len(r.SerialNumbers) != 0 {
			t.Errorf("witness of %q asked for terminals %q", serial, r.SerialNumbers)
		}
		if r.StartDate != "2026-11-26" || r.EndDate != "2026-11-29" || r.StartTime != "" || r.EndTime != "" {
			t.Errorf("asked %s %s to %s %s, want whole days around the first send", r.StartDate, r.StartTime, r.EndDate, r.EndTime)
		}
		var ids []string
		for _, e := range got {
			ids = append(ids, e.TransactionID)
		}
		if strings.Join(ids, ",") != "after,within the skew,undated" {
			t.Errorf("kept %q, want those from ten minutes before the first send on, and the undated one", ids)
		}
	}
}
