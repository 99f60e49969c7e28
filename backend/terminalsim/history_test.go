package terminalsim

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/localapi"
)

// pay runs one payment to its end with the given behaviour.
func pay(t *testing.T, ctx context.Context, sim *Terminal, c *localapi.Client, b Behaviour, req *localapi.PaymentRequest) *localapi.Transaction {
	t.Helper()
	sim.Script(b)
	r := wait(t, ctx, payAsync(ctx, c, req))
	if r.err != nil {
		t.Fatal(r.err)
	}
	return r.tx
}

// Rule 7: reversals.
func TestReversal(t *testing.T) {
	sim, c := newSim(t, Config{})
	ctx := testCtx(t)
	debit := pay(t, ctx, sim, c, Approve().WithTip(200), &localapi.PaymentRequest{Amount: 1000, EnableGiftScreen: localapi.Bool(true), CartID: "o-1"})
	if debit.Total() != 1200 {
		t.Fatalf("debit %s", debit.Raw)
	}
	refund := pay(t, ctx, sim, c, Approve(), &localapi.PaymentRequest{Amount: 500, TransactionType: localapi.TypeRefund})
	declined := pay(t, ctx, sim, c, Decline(), &localapi.PaymentRequest{Amount: 500})

	rev := func(id string, amount int64) error {
		_, err := c.Reversal(ctx, &localapi.ReversalRequest{InitialTransactionID: id, Amount: amount})
		return err
	}
	mustCode(t, rev(debit.TransactionID, 1000), localapi.CodeReversalAmount, localapi.MsgReversalAmountMismatch)
	mustCode(t, rev("nope", 1200), localapi.CodeReversalNotFound, localapi.ReversalNotFoundMessage("nope"))
	mustCode(t, rev(refund.TransactionID, 500), localapi.CodeReversalNotEligible, localapi.MsgReversalNotReversible)
	mustCode(t, rev(declined.TransactionID, 500), localapi.CodeReversalNotEligible, localapi.MsgReversalNotReversible)
	wantKO(t, rawJSON(t, sim, "POST", "/reversal", `{"amount": 1200}`), localapi.MsgReversalIDMandatory)
	wantKO(t, rawJSON(t, sim, "POST", "/reversal", `{"amount": 1200, "initialTransactionId": ""}`), localapi.MsgReversalIDMandatory)

	sim.FailNextReversal(localapi.MsgReversalNoGateway)
	mustCode(t, rev(debit.TransactionID, 1200), localapi.CodeReversalNoGateway, localapi.MsgReversalNoGateway)

	resp, err := c.Reversal(ctx, &localapi.ReversalRequest{InitialTransactionID: debit.TransactionID, Amount: 1200})
	if err != nil || resp.Status != "ok" || resp.ReversalTransactionID == "" || resp.ReversalTransactionID == debit.TransactionID || resp.InitialTransactionID != debit.TransactionID {
		t.Fatalf("reversal: %+v %v", resp, err)
	}
	mustCode(t, rev(debit.TransactionID, 1200), localapi.CodeReversalAlready, localapi.MsgReversalAlreadyReversed)
	// A reversal is not itself reversible.
	mustCode(t, rev(resp.ReversalTransactionID, 1200), localapi.CodeReversalNotEligible, localapi.MsgReversalNotReversible)

	l := sim.Ledger()
	last := l[len(l)-1]
	if last.Kind != "reversal" || last.Net != -1200 || last.InitialTransactionID != debit.TransactionID || last.TransactionID != resp.ReversalTransactionID || last.CartID != "o-1" {
		t.Errorf("reversal entry %+v", last)
	}
	var net int64
	for _, e := range l {
		net += e.Net
	}
	if net != 1200-500-1200 {
		t.Errorf("net %d", net)
	}
}

func TestReversalWindow(t *testing.T) {
	sim, c := newSim(t, Config{})
	ctx := testCtx(t)
	a := pay(t, ctx, sim, c, Approve(), &localapi.PaymentRequest{Amount: 1000})
	b := pay(t, ctx, sim, c, Approve(), &localapi.PaymentRequest{Amount: 1000})
	sim.Advance(ReversalWindow - time.Minute)
	if _, err := c.Reversal(ctx, &localapi.ReversalRequest{InitialTransactionID: a.TransactionID, Amount: 1000}); err != nil {
		t.Fatalf("reversal under 16 h: %v", err)
	}
	sim.Advance(2 * time.Minute)
	_, err := c.Reversal(ctx, &localapi.ReversalRequest{InitialTransactionID: b.TransactionID, Amount: 1000})
	mustCode(t, err, localapi.CodeReversalNotEligible, localapi.MsgReversalNotReversible)
}

// Rule 9: /transactions.
func TestTransactionsHistory(t *testing.T) {
	sim, c := newSim(t, Config{})
	ctx := testCtx(t)
	sim.SetClock(time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC))
	d1 := pay(t, ctx, sim, c, Approve(), &localapi.PaymentRequest{Amount: 100, CartID: "a"}) // 05-01 09:00
	sim.Advance(3 * time.Hour)
	pay(t, ctx, sim, c, Approve(), &localapi.PaymentRequest{Amount: 200, TransactionType: localapi.TypeRefund}) // 05-01 12:00
	sim.Advance(24 * time.Hour)
	d3 := pay(t, ctx, sim, c, Decline(), &localapi.PaymentRequest{Amount: 300}) // 05-02 12:00
	sim.Advance(30 * time.Minute)
	d4 := pay(t, ctx, sim, c, Approve(), &localapi.PaymentRequest{Amount: 400}) // 05-02 12:30
	sim.Advance(30 * time.Minute)
	if _, err := c.Reversal(ctx, &localapi.ReversalRequest{InitialTransactionID: d4.TransactionID, Amount: 400}); err != nil { // 05-02 13:00
		t.Fatal(err)
	}
	// Payments that never read a card are not in the history.
	pay(t, ctx, sim, c, NoCard(), &localapi.PaymentRequest{Amount: 500})

	list := func(req localapi.TransactionsRequest) *localapi.TransactionList {
		t.Helper()
		out, err := c.Transactions(ctx, &req)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	all := list(localapi.TransactionsRequest{})
	if all.Total != 5 || all.Count != 5 || all.Limit != 20 || all.Offset != 0 {
		t.Fatalf("list %+v", all)
	}
	wantTypes := []string{"reversal", "debit", "debit", "refund", "debit"} // newest first
	for i, e := range all.Transactions {
		if e.Type != wantTypes[i] {
			t.Errorf("entry %d type %s, want %s", i, e.Type, wantTypes[i])
		}
		at, err := e.Created()
		if err != nil || at.Location() != time.UTC || e.CreatedAt[len(e.CreatedAt)-1] != 'Z' {
			t.Errorf("createdAt %q: %v", e.CreatedAt, err)
		}
		if e.CurrencyCode != "EUR" || e.AppVersion == "" {
			t.Errorf("entry %+v", e)
		}
	}
	if e := all.Transactions[0]; e.Amount != 400 || e.Status != "ok" {
		t.Errorf("reversal entry %+v", e)
	}
	if e := all.Transactions[2]; e.TransactionID != d3.TransactionID || e.Status != "ko" {
		t.Errorf("declined entry %+v", e)
	}
	if e := all.Transactions[4]; e.TransactionID != d1.TransactionID || e.CartID != "a" || e.Status != "ok" || e.Scheme != "VISA" {
		t.Errorf("first entry %+v", e)
	}

	for _, tt := range []struct {
		name string
		req  localapi.TransactionsRequest
		want int
	}{
		{"one day, endDate exclusive", localapi.TransactionsRequest{StartDate: "2026-05-01", EndDate: "2026-05-02"}, 2},
		{"from a day", localapi.TransactionsRequest{StartDate: "2026-05-02"}, 3},
		{"until a day", localapi.TransactionsRequest{EndDate: "2026-05-02"}, 2},
		{"date and time", localapi.TransactionsRequest{StartDate: "2026-05-01", StartTime: "10:00:00", EndDate: "2026-05-02", EndTime: "12:30:00"}, 2},
		{"time today only", localapi.TransactionsRequest{StartTime: "12:30:00"}, 2},
		{"empty window", localapi.TransactionsRequest{StartDate: "2026-06-01"}, 0},
	} {
		if got := list(tt.req); got.Total != tt.want || got.Count != tt.want {
			t.Errorf("%s: total %d count %d, want %d", tt.name, got.Total, got.Count, tt.want)
		}
	}

	// Paging.
	p := list(localapi.TransactionsRequest{Limit: 3, Offset: 2})
	if p.Count != 3 || p.Total != 5 || p.Limit != 3 || p.Offset != 2 || p.Transactions[0].TransactionID != d3.TransactionID {
		t.Errorf("page %+v", p)
	}
	if p := list(localapi.TransactionsRequest{Offset: 10}); p.Count != 0 || p.Transactions == nil {
		t.Errorf("page past the end %+v", p)
	}
	m := rawJSON(t, sim, "POST", "/transactions", `{"limit": 500}`)
	if m["limit"] != 200.0 {
		t.Errorf("limit 500 answered limit %v", m["limit"])
	}
	wantKO(t, rawJSON(t, sim, "POST", "/transactions", `{"startDate": "01/05/2026"}`), MsgTransactionsParam("startDate"))
	wantKO(t, rawJSON(t, sim, "POST", "/transactions", `{"endTime": "25:00:00"}`), MsgTransactionsParam("endTime"))

	// Without filters: the last 30 days only.
	sim.Advance(HistoryWindow - 14*time.Hour) // 05-01 09:00 and 12:00 now over 30 days old
	if got := list(localapi.TransactionsRequest{}); got.Total != 3 {
		t.Errorf("last 30 days: total %d, want 3", got.Total)
	}
	if got := list(localapi.TransactionsRequest{StartDate: "2026-01-01"}); got.Total != 5 {
		t.Errorf("explicit window ignores the 30 days: total %d", got.Total)
	}
}

func TestTransactionsDefaultLimit(t *testing.T) {
	sim, c := newSim(t, Config{})
	ctx := testCtx(t)
	for i := range 25 {
		pay(t, ctx, sim, c, Approve().After(0), &localapi.PaymentRequest{Amount: int64(100 + i)})
		sim.Advance(time.Second)
	}
	out, err := c.Transactions(ctx, &localapi.TransactionsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if out.Count != 20 || out.Total != 25 || out.Transactions[0].Amount != 124 {
		t.Errorf("count %d total %d first %d", out.Count, out.Total, out.Transactions[0].Amount)
	}
	// The raw answer uses the specification's keys.
	var m map[string]json.RawMessage
	if err := json.Unmarshal(out.Raw, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"status", "count", "limit", "offset", "total", "transactions"} {
		if _, ok := m[k]; !ok {
			t.Errorf("key %s missing", k)
		}
	}
}

// The history faults, for tests of a hostile terminal: more than the limit
// asked, a history that never ends, huge pages; what was served is
// counted, and Reset ends the fault.
func TestHistoryFaults(t *testing.T) {
	sim, c := newSim(t, Config{})
	ctx := testCtx(t)
	pay(t, ctx, sim, c, Approve(), &localapi.PaymentRequest{Amount: 1000})
	page := func() localapi.TransactionList {
		t.Helper()
		var l localapi.TransactionList
		data, _ := json.Marshal(rawJSON(t, sim, "POST", "/transactions", `{"limit": 5, "offset": 5}`))
		if err := json.Unmarshal(data, &l); err != nil {
			t.Fatal(err)
		}
		return l
	}
	var served HistoryServed
	if code := control(t, sim, "POST", "/sim/history", `{"extra": 7}`, &served); code != 200 {
		t.Fatalf("POST /sim/history: HTTP %d", code)
	}
	if l := page(); len(l.Transactions) != 7 || l.Count != 7 || l.Total != 1 {
		t.Fatalf("extra: %d entries, count %d, total %d", len(l.Transactions), l.Count, l.Total)
	}
	if err := sim.SetHistoryFault(HistoryFault{Endless: true, Pad: 1000}); err != nil {
		t.Fatal(err)
	}
	l := page()
	if len(l.Transactions) != 5 || l.Total <= l.Offset+len(l.Transactions) || len(l.Transactions[0].Issuer) < 1000 || l.Transactions[0].TransactionID != "FAKE-00000005" {
		t.Fatalf("endless: %d entries, total %d, first %+v", len(l.Transactions), l.Total, l.Transactions[0])
	}
	if s := sim.HistoryServed(); s.Pages != 2 || s.Bytes < 5000 {
		t.Fatalf("served %+v", s)
	}
	if err := sim.SetHistoryFault(HistoryFault{Pad: -1}); err == nil {
		t.Fatal("a negative pad accepted")
	}
	sim.Reset()
	if s := sim.HistoryServed(); s != (HistoryServed{}) {
		t.Fatalf("after Reset: %+v", s)
	}
	if l := page(); len(l.Transactions) != 0 || l.Total != 0 {
		t.Fatalf("after Reset: %+v", l)
	}
}
