package terminalsim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/localapi"
	"github.com/google/uuid"
)

func TestAnswerLost(t *testing.T) {
	sim, c, ctx, req := newRequest(t, 1053, AnswerLostAfterCharge())
	id := req.IdempotentUUID
	r := wait(t, ctx, payAsync(ctx, c, req))
	var te *localapi.TransportError
	if !errors.As(r.err, &te) || !te.Sent {
		t.Fatalf("lost answer: %v %v, want a transport error after sending", r.tx, r.err)
	}
	// The charge happened and the ledger knows it.
	ch := sim.ChargesFor(id)
	if len(ch) != 1 || ch[0].Answer != "lost" {
		t.Fatalf("charges %+v", ch)
	}
	tx := mustApproved(t, wait(t, ctx, payAsync(ctx, c, req)))
	if tx.TransactionID != ch[0].TransactionID {
		t.Errorf("resend got %s, ledger has %s", tx.TransactionID, ch[0].TransactionID)
	}
	if n := len(sim.ChargesFor(id)); n != 1 {
		t.Errorf("charged %d times", n)
	}
}

func TestAnswerLate(t *testing.T) {
	t.Run("arrives late", func(t *testing.T) {
		sim, c := newSim(t, Config{TimeScale: 0.001})
		ctx := testCtx(t)
		sim.Script(AnswerLateAfterCharge(70 * time.Second)) // 70 ms
		id := uuid.NewString()
		start := time.Now()
		res := payAsync(ctx, c, &localapi.PaymentRequest{Amount: 1054, IdempotentUUID: id})
		mustPhase(t, ctx, sim, id, PhaseDone)
		if len(sim.ChargesFor(id)) != 1 {
			t.Fatal("not charged when decided")
		}
		mustApproved(t, wait(t, ctx, res))
		// The delay starts after the decision, itself after the request: a
		// lower bound from the request is safe.
		if el := time.Since(start); el < 70*time.Millisecond {
			t.Errorf("answered %v after the request, want at least 70 ms", el)
		}
	})
	t.Run("resend answered at once", func(t *testing.T) {
		sim, c := newSim(t, Config{TimeScale: 0.001})
		ctx := testCtx(t)
		sim.Script(AnswerLateAfterCharge(time.Hour)) // 3.6 s
		id := uuid.NewString()
		req := &localapi.PaymentRequest{Amount: 1054, IdempotentUUID: id}
		firstCtx, cancel := context.WithCancel(ctx)
		first := payAsync(firstCtx, c, req)
		mustPhase(t, ctx, sim, id, PhaseDone)
		// The terminal is free and knows the transaction.
		tx := mustApproved(t, wait(t, ctx, payAsync(ctx, c, req)))
		select {
		case r := <-first:
			t.Fatalf("late answer arrived early: %v %v", r.tx, r.err)
		default:
		}
		mustApproved(t, wait(t, ctx, payAsync(ctx, c, &localapi.PaymentRequest{Amount: 100})))
		cancel()
		if r := wait(t, ctx, first); r.err == nil {
			t.Errorf("cancelled request answered %s", r.tx.Raw)
		}
		if ch := sim.ChargesFor(id); len(ch) != 1 || ch[0].TransactionID != tx.TransactionID || ch[0].Answer != "late" {
			t.Errorf("charges %+v", ch)
		}
	})
}

func TestHTTP500(t *testing.T) {
	t.Run("charged", func(t *testing.T) {
		sim, c, ctx, req := newRequest(t, 1055, HTTP500Charged())
		id := req.IdempotentUUID
		r := wait(t, ctx, payAsync(ctx, c, req))
		var he *localapi.HTTPError
		if !errors.As(r.err, &he) || he.StatusCode != 500 || len(he.Body) != 0 {
			t.Fatalf("%v %v, want HTTP 500 with no body", r.tx, r.err)
		}
		if len(sim.ChargesFor(id)) != 1 {
			t.Fatal("not charged")
		}
		tx := mustApproved(t, wait(t, ctx, payAsync(ctx, c, req)))
		if tx.TransactionID != sim.ChargesFor(id)[0].TransactionID {
			t.Error("resend got another transaction")
		}
	})
	t.Run("not charged", func(t *testing.T) {
		sim, c, ctx, req := newRequest(t, 1058, HTTP500NotCharged(), Decline())
		id := req.IdempotentUUID
		r := wait(t, ctx, payAsync(ctx, c, req))
		var he *localapi.HTTPError
		if !errors.As(r.err, &he) || he.StatusCode != 500 || len(he.Body) != 0 {
			t.Fatalf("%v %v, want HTTP 500 with no body", r.tx, r.err)
		}
		if n := len(sim.Ledger()); n != 0 {
			t.Fatal("charged")
		}
		if _, ok := sim.Transaction(id); ok {
			t.Fatal("uuid remembered")
		}
		// The uuid is unknown: a resend starts a payment, with the next
		// behaviour.
		mustDeclined(t, wait(t, ctx, payAsync(ctx, c, req)))
	})
}

func TestOddResponse(t *testing.T) {
	sim, c, ctx, req := newRequest(t, 1056, OddResponse())
	id := req.IdempotentUUID
	tx := mustApproved(t, wait(t, ctx, payAsync(ctx, c, req)))
	var m map[string]any
	if err := json.Unmarshal(tx.Raw, &m); err != nil {
		t.Fatal(err)
	}
	if m["transactionType"] != "na" || m["batchNumber"] == nil || m["extensions"] == nil {
		t.Errorf("odd answer %s", tx.Raw)
	}
	for _, k := range []string{"cardToken", "clientCardTicket", "merchantCardTicket", "appVersion"} {
		if _, ok := m[k]; ok {
			t.Errorf("odd answer has %s", k)
		}
	}
	if tx.TransactionID == "" || tx.Amount != 1056 || tx.IdempotentUUID != id {
		t.Errorf("odd answer lacks essentials: %s", tx.Raw)
	}
	again := mustApproved(t, wait(t, ctx, payAsync(ctx, c, req)))
	if string(again.Raw) != string(tx.Raw) {
		t.Error("odd answer not replayed verbatim")
	}
	if l := sim.Ledger(); len(l) != 1 || l[0].Kind != "debit" {
		t.Errorf("ledger %+v", l)
	}
}

// mustLostAnswer checks that the answer to a /payment was lost.
func mustLostAnswer(t *testing.T, r payResult) {
	t.Helper()
	var te *localapi.TransportError
	if !errors.As(r.err, &te) {
		t.Errorf("want a lost answer, got %v", r.err)
	}
}

// mustHTTP500 checks that a /payment was answered HTTP 500.
func mustHTTP500(t *testing.T, r payResult) {
	t.Helper()
	var he *localapi.HTTPError
	if !errors.As(r.err, &he) || he.StatusCode != 500 {
		t.Errorf("want HTTP 500, got %v", r.err)
	}
}

// The cents of an amount select a behaviour; scripted behaviours come first.
func TestTestAmounts(t *testing.T) {
	tests := []struct {
		amount  int64
		check   func(t *testing.T, r payResult)
		charged bool
	}{
		{1000, func(t *testing.T, r payResult) { mustApproved(t, r) }, true},
		{1051, func(t *testing.T, r payResult) { mustDeclined(t, r) }, false},
		{1052, func(t *testing.T, r payResult) { mustDeclined(t, r) }, false},
		{1053, mustLostAnswer, true},
		{1054, func(t *testing.T, r payResult) { mustApproved(t, r) }, true},
		{1055, mustHTTP500, true},
		{1056, func(t *testing.T, r payResult) {
			if tx := mustApproved(t, r); tx.TransactionType != "na" {
				t.Errorf("want an odd answer, got %s", tx.Raw)
			}
		}, true},
		{1057, func(t *testing.T, r payResult) { mustApproved(t, r) }, true},
		{1058, mustHTTP500, false},
		{1059, func(t *testing.T, r payResult) { mustDeclined(t, r) }, false},
	}
	sim, c := newSim(t, Config{})
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.amount), func(t *testing.T) {
			ctx := testCtx(t)
			id := uuid.NewString()
			tt.check(t, wait(t, ctx, payAsync(ctx, c, &localapi.PaymentRequest{Amount: tt.amount, IdempotentUUID: id})))
			if got := len(sim.ChargesFor(id)) == 1; got != tt.charged {
				t.Errorf("charged = %v, want %v", got, tt.charged)
			}
		})
	}
	if len(tests)-1 != len(TestAmounts) {
		t.Errorf("table has %d rows, test covers %d", len(TestAmounts), len(tests)-1)
	}

	t.Run("script first", func(t *testing.T) {
		ctx := testCtx(t)
		sim.Script(Approve())
		mustApproved(t, wait(t, ctx, payAsync(ctx, c, &localapi.PaymentRequest{Amount: 1051})))
	})
	t.Run("table off", func(t *testing.T) {
		_, c := newSim(t, Config{NoTestAmounts: true})
		ctx := testCtx(t)
		mustApproved(t, wait(t, ctx, payAsync(ctx, c, &localapi.PaymentRequest{Amount: 1051})))
	})
	t.Run("default", func(t *testing.T) {
		d := Decline()
		_, c := newSim(t, Config{Default: &d})
		ctx := testCtx(t)
		mustDeclined(t, wait(t, ctx, payAsync(ctx, c, &localapi.PaymentRequest{Amount: 1000})))
	})
}

func TestBehaviourJSON(t *testing.T) {
	var b Behaviour
	if err := json.Unmarshal([]byte(`{"preset": "answer_late", "late": "5s", "tip": 120, "delay": 1.5}`), &b); err != nil {
		t.Fatal(err)
	}
	if b.Answer != AnswerLate || b.Late != 5*time.Second || b.Tip != 120 || b.Delay != 1500*time.Millisecond || b.outcome() != OutcomeApprove {
		t.Errorf("%+v", b)
	}
	out, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	var back Behaviour
	if err := json.Unmarshal(out, &back); err != nil || back != b {
		t.Errorf("round trip %s: %+v %v", out, back, err)
	}
	for _, bad := range []string{`{"preset": "nope"}`, `{"outcome": "maybe"}`, `{"answer": "never"}`, `{"card": "diners"}`, `{"delai": "3s"}`, `{"delay": "soon"}`, `{"tip": -1}`} {
		if err := json.Unmarshal([]byte(bad), &b); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
	for _, name := range PresetNames() {
		if _, ok := Preset(name); !ok {
			t.Errorf("preset %s", name)
		}
	}
	for _, ta := range TestAmounts {
		if _, ok := Preset(ta.Preset); !ok {
			t.Errorf("test amount %d names unknown preset %s", ta.Cents, ta.Preset)
		}
	}
}

func TestHoldDrivenOverControlAPI(t *testing.T) {
	sim, c := newSim(t, Config{})
	ctx := testCtx(t)
	base := sim.URL()[:len(sim.URL())-len(localapi.BasePath)]
	post := func(path, body string) (int, map[string]any) {
		t.Helper()
		resp, err := http.Post(base+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var m map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&m)
		return resp.StatusCode, m
	}
	if code, m := post("/sim/script", `{"behaviours": [{"preset": "hold"}]}`); code != 200 || len(m["script"].([]any)) != 1 {
		t.Fatalf("script: %d %v", code, m)
	}
	id := uuid.NewString()
	res := payAsync(ctx, c, &localapi.PaymentRequest{Amount: 1000, IdempotentUUID: id, EnableGiftScreen: localapi.Bool(true)})
	mustPhase(t, ctx, sim, id, PhaseScreens)
	if code, m := post("/sim/customer", `{"action": "present_card"}`); code != 200 {
		t.Fatalf("customer: %d %v", code, m)
	}
	tx := mustApproved(t, wait(t, ctx, res))
	if tx.GiftAmount != 0 {
		t.Errorf("gift %d", tx.GiftAmount)
	}
	if code, _ := post("/sim/customer", `{"action": "decline"}`); code != http.StatusConflict {
		t.Errorf("action without payment: HTTP %d", code)
	}
}
