package terminalsim

import (
	"bytes"
	"errors"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/localapi"
	"github.com/google/uuid"
)

func TestApprovedPayment(t *testing.T) {
	sim, c := newSim(t, Config{})
	ctx := testCtx(t)
	id := uuid.NewString()
	tx := mustApproved(t, wait(t, ctx, payAsync(ctx, c, &localapi.PaymentRequest{Amount: 1250, IdempotentUUID: id, CartID: "order-1"})))
	if tx.Amount != 1250 || tx.GiftAmount != 0 || tx.IdempotentUUID != id || tx.CartID != "order-1" || tx.CurrencyCode != "EUR" || tx.TransactionType != "debit" {
		t.Errorf("transaction %s", tx.Raw)
	}
	charges := sim.ChargesFor(id)
	if len(charges) != 1 || charges[0].Total != 1250 || charges[0].Net != 1250 || charges[0].TransactionID != tx.TransactionID || charges[0].CartID != "order-1" {
		t.Errorf("ledger %+v", charges)
	}
}

// Rule 1: one payment at a time.
func TestBusy(t *testing.T) {
	sim, c := newSim(t, Config{})
	ctx := testCtx(t)
	sim.Script(Hold())
	a, b := uuid.NewString(), uuid.NewString()
	first := payAsync(ctx, c, &localapi.PaymentRequest{Amount: 1000, IdempotentUUID: a})
	mustPhase(t, ctx, sim, a, PhaseBanking)

	_, err := c.Payment(ctx, &localapi.PaymentRequest{Amount: 500, IdempotentUUID: b})
	if ae := mustCode(t, err, localapi.CodeBusy, localapi.BusyMessage(a)); ae.Arg != a {
		t.Errorf("busy names %q, want %q", ae.Arg, a)
	}
	_, err = c.Payment(ctx, &localapi.PaymentRequest{Amount: 500}) // no uuid: busy too
	mustCode(t, err, localapi.CodeBusy, localapi.BusyMessage(a))
	_, err = c.Abort(ctx, &localapi.AbortRequest{IdempotentUUID: b})
	mustCode(t, err, localapi.CodeBusy, localapi.BusyMessage(a))
	code, body := raw(t, sim, "GET", "/payment/700", "")
	if code != 200 || !bytes.Contains(body, []byte(a)) {
		t.Errorf("GET /payment while busy: %d %s", code, body)
	}

	if err := sim.PresentCard(); err != nil {
		t.Fatal(err)
	}
	mustApproved(t, wait(t, ctx, first))
	// The refused uuid was never started: it can be used now.
	mustApproved(t, wait(t, ctx, payAsync(ctx, c, &localapi.PaymentRequest{Amount: 500, IdempotentUUID: b})))
	if n := len(sim.Ledger()); n != 2 {
		t.Errorf("ledger has %d entries, want 2", n)
	}
}

// Rule 2: optional screens.
func TestGiftScreen(t *testing.T) {
	tests := []struct {
		name    string
		tips    bool
		enable  *bool
		refund  bool
		screens bool
	}{
		{"enabled by request", false, localapi.Bool(true), false, true},
		{"null follows terminal setting on", true, nil, false, true},
		{"null follows terminal setting off", false, nil, false, false},
		{"disabled by request despite setting", true, localapi.Bool(false), false, false},
		{"never for refunds", true, localapi.Bool(true), true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sim, c := newSim(t, Config{TipsEnabled: tt.tips})
			ctx := testCtx(t)
			sim.Script(Approve().WithTip(150).After(0))
			id := uuid.NewString()
			req := &localapi.PaymentRequest{Amount: 1000, IdempotentUUID: id, EnableGiftScreen: tt.enable}
			if tt.refund {
				req.TransactionType = localapi.TypeRefund
			}
			tx := mustApproved(t, wait(t, ctx, payAsync(ctx, c, req)))
			shown := sim.WaitPhase(ctx, id, PhaseScreens) == nil
			if shown != tt.screens {
				t.Fatalf("screens shown = %v, want %v", shown, tt.screens)
			}
			wantGift := int64(0)
			if tt.screens {
				wantGift = 150
			}
			if tx.GiftAmount != wantGift {
				t.Errorf("giftAmount %d, want %d", tx.GiftAmount, wantGift)
			}
			if l := sim.Ledger(); len(l) != 1 || l[0].Total != 1000+wantGift || l[0].GiftAmount != wantGift {
				t.Errorf("ledger %+v", l)
			}
		})
	}
}

func TestGiftScreenHeldTipAddsToPOSGift(t *testing.T) {
	sim, c := newSim(t, Config{})
	ctx := testCtx(t)
	sim.Script(Hold())
	id := uuid.NewString()
	res := payAsync(ctx, c, &localapi.PaymentRequest{Amount: 2000, GiftAmount: 100, IdempotentUUID: id, EnableGiftScreen: localapi.Bool(true)})
	mustPhase(t, ctx, sim, id, PhaseScreens)
	// A card presented on the gift screen skips it: no tip.
	if err := sim.PresentCard(); err != nil {
		t.Fatal(err)
	}
	tx := mustApproved(t, wait(t, ctx, res))
	if tx.GiftAmount != 100 {
		t.Errorf("card presented on the gift screen: giftAmount %d, want the POS's 100", tx.GiftAmount)
	}
	if err := sim.ChooseTip(1); !errors.Is(err, ErrNoPayment) {
		t.Errorf("ChooseTip without payment: %v", err)
	}

	sim.Script(Hold())
	id = uuid.NewString()
	res = payAsync(ctx, c, &localapi.PaymentRequest{Amount: 2000, GiftAmount: 100, IdempotentUUID: id, EnableGiftScreen: localapi.Bool(true)})
	mustPhase(t, ctx, sim, id, PhaseScreens)
	if err := sim.ChooseTip(250); err != nil {
		t.Fatal(err)
	}
	mustPhase(t, ctx, sim, id, PhaseBanking)
	if err := sim.ChooseTip(1); !errors.Is(err, ErrWrongStep) {
		t.Errorf("ChooseTip on the banking screen: %v", err)
	}
	if err := sim.PresentCard(); err != nil {
		t.Fatal(err)
	}
	tx = mustApproved(t, wait(t, ctx, res))
	if tx.GiftAmount != 350 || tx.Total() != 2350 {
		t.Errorf("giftAmount %d, want 100 from the POS + 250 chosen", tx.GiftAmount)
	}
	if ch := sim.ChargesFor(id); len(ch) != 1 || ch[0].Total != 2350 {
		t.Errorf("charges %+v", ch)
	}
}

func TestGiftScreenExpires(t *testing.T) {
	sim, c := newSim(t, Config{})
	ctx := testCtx(t)
	sim.Script(Approve().WithTipDelay(2 * time.Minute)) // longer than the 60 s window
	id := uuid.NewString()
	mustDeclined(t, wait(t, ctx, payAsync(ctx, c, &localapi.PaymentRequest{Amount: 1000, IdempotentUUID: id, EnableGiftScreen: localapi.Bool(true)})))
	if err := sim.WaitPhase(ctx, id, PhaseBanking); err == nil {
		t.Error("an expired gift screen reached the banking screen")
	}
	if n := len(sim.Ledger()); n != 0 {
		t.Errorf("charged %d times", n)
	}
}

// Rule 3: handover, then the card-read window.
func TestCardRead(t *testing.T) {
	tests := []struct {
		name     string
		b        Behaviour
		approved bool
		txID     bool // a card was read
	}{
		{"approved", Approve(), true, true},
		{"declined", Decline(), false, true},
		{"card never presented", NoCard(), false, false},
		{"card presented after the window", Approve().After(90 * time.Second), false, false},
		{"customer cancels", CustomerCancels(), false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sim, c := newSim(t, Config{})
			ctx := testCtx(t)
			sim.Script(tt.b)
			id := uuid.NewString()
			r := wait(t, ctx, payAsync(ctx, c, &localapi.PaymentRequest{Amount: 1000, IdempotentUUID: id}))
			var tx *localapi.Transaction
			if tt.approved {
				tx = mustApproved(t, r)
			} else {
				tx = mustDeclined(t, r)
			}
			if (tx.TransactionID != "") != tt.txID {
				t.Errorf("transactionId %q", tx.TransactionID)
			}
			mustPhase(t, ctx, sim, id, PhaseBanking)
			if want := map[bool]int{true: 1, false: 0}[tt.approved]; len(sim.ChargesFor(id)) != want {
				t.Errorf("charges %+v", sim.ChargesFor(id))
			}
		})
	}
}

func TestHandoverDelay(t *testing.T) {
	sim, c := newSim(t, Config{TimeScale: 0.01}) // handover 15 ms
	ctx := testCtx(t)
	sim.Script(Hold())
	id := uuid.NewString()
	start := time.Now()
	res := payAsync(ctx, c, &localapi.PaymentRequest{Amount: 1000, IdempotentUUID: id})
	mustPhase(t, ctx, sim, id, PhaseBanking)
	// Timers never fire early: a lower bound is safe to assert.
	if el := time.Since(start); el < 15*time.Millisecond {
		t.Errorf("handover after %v, want at least 15 ms", el)
	}
	sim.PresentCard()
	mustApproved(t, wait(t, ctx, res))
}

// Rule 4: idempotency.
func TestIdempotentReplay(t *testing.T) {
	sim, c := newSim(t, Config{})
	ctx := testCtx(t)

	id := uuid.NewString()
	req := &localapi.PaymentRequest{Amount: 990, IdempotentUUID: id}
	tx1 := mustApproved(t, wait(t, ctx, payAsync(ctx, c, req)))
	sim.Script(Decline()) // must not be consumed by replays
	tx2 := mustApproved(t, wait(t, ctx, payAsync(ctx, c, req)))
	if tx1.TransactionID != tx2.TransactionID || !bytes.Equal(tx1.Raw, tx2.Raw) {
		t.Errorf("replay differs:\n%s\n%s", tx1.Raw, tx2.Raw)
	}
	if n := len(sim.ChargesFor(id)); n != 1 {
		t.Errorf("charged %d times", n)
	}
	if n := len(sim.State().Script); n != 1 {
		t.Errorf("a replay consumed a scripted behaviour")
	}

	// A ko is replayed as is: a new uuid is needed to retry.
	ko := uuid.NewString()
	d1 := mustDeclined(t, wait(t, ctx, payAsync(ctx, c, &localapi.PaymentRequest{Amount: 990, IdempotentUUID: ko})))
	d2 := mustDeclined(t, wait(t, ctx, payAsync(ctx, c, &localapi.PaymentRequest{Amount: 990, IdempotentUUID: ko})))
	if !bytes.Equal(d1.Raw, d2.Raw) {
		t.Errorf("ko replay differs")
	}

	// 24 h of terminal time later the uuid is forgotten.
	sim.Advance(IdempotencyWindow - time.Second)
	if tx := mustApproved(t, wait(t, ctx, payAsync(ctx, c, req))); tx.TransactionID != tx1.TransactionID {
		t.Errorf("forgotten before 24 h")
	}
	sim.Advance(2 * time.Second)
	if tx := mustApproved(t, wait(t, ctx, payAsync(ctx, c, req))); tx.TransactionID == tx1.TransactionID {
		t.Errorf("still known after 24 h")
	}
	if n := len(sim.ChargesFor(id)); n != 2 {
		t.Errorf("charges after 24 h: %d, want 2", n)
	}
}

func TestAttachToPaymentInProgress(t *testing.T) {
	sim, c, ctx, req := newRequest(t, 4200, Hold())
	id := req.IdempotentUUID
	results := []<-chan payResult{payAsync(ctx, c, req)}
	mustPhase(t, ctx, sim, id, PhaseBanking)
	for range 3 {
		results = append(results, payAsync(ctx, c, req))
	}
	// All four requests wait for the payment before the card is presented.
	if err := sim.WaitFor(ctx, func(s State) bool { return s.Current != nil && s.Current.Waiters == 4 }); err != nil {
		t.Fatal(err)
	}
	sim.PresentCard()
	var txID string
	for i, ch := range results {
		tx := mustApproved(t, wait(t, ctx, ch))
		if i == 0 {
			txID = tx.TransactionID
		} else if tx.TransactionID != txID {
			t.Errorf("waiter %d got %s, want %s", i, tx.TransactionID, txID)
		}
	}
	if n := len(sim.ChargesFor(id)); n != 1 {
		t.Errorf("charged %d times", n)
	}
}

func TestPaymentWithoutUUID(t *testing.T) {
	sim, c := newSim(t, Config{})
	ctx := testCtx(t)
	tx1 := mustApproved(t, wait(t, ctx, payAsync(ctx, c, &localapi.PaymentRequest{Amount: 300})))
	tx2 := mustApproved(t, wait(t, ctx, payAsync(ctx, c, &localapi.PaymentRequest{Amount: 300})))
	if tx1.TransactionID == tx2.TransactionID {
		t.Error("two requests without uuid made one payment")
	}
	if tx1.IdempotentUUID != "" {
		t.Errorf("idempotentUuid %q echoed though none was sent", tx1.IdempotentUUID)
	}
	l := sim.Ledger()
	if len(l) != 2 || l[0].IdempotentUUID == "" || l[0].IdempotentUUID == l[1].IdempotentUUID {
		t.Errorf("ledger %+v: want two distinct internal uuids", l)
	}
}

// Rule 5: a request is held open at most 15 min.
func TestRequestHoldLimit(t *testing.T) {
	// 15 min at 0.0001 is 90 ms.
	sim, c := newSim(t, Config{TimeScale: 0.0001, Timings: Timings{RequestHold: 15 * time.Minute}})
	ctx := testCtx(t)
	sim.Script(Hold())
	id := uuid.NewString()
	r := wait(t, ctx, payAsync(ctx, c, &localapi.PaymentRequest{Amount: 1000, IdempotentUUID: id}))
	var te *localapi.TransportError
	if !errors.As(r.err, &te) || te.Timeout || te.Canceled {
		t.Fatalf("held request: %v %v, want the connection closed", r.tx, r.err)
	}
	if cur, ok := sim.Current(); !ok || cur.IdempotentUUID != id {
		t.Fatal("the payment stopped with its request")
	}
	sim.PresentCard()
	mustPhase(t, ctx, sim, id, PhaseDone)
	mustApproved(t, wait(t, ctx, payAsync(ctx, c, &localapi.PaymentRequest{Amount: 1000, IdempotentUUID: id})))
}

// Rule 8: refunds.
func TestRefund(t *testing.T) {
	sim, c := newSim(t, Config{TipsEnabled: true})
	ctx := testCtx(t)
	id := uuid.NewString()
	tx := mustApproved(t, wait(t, ctx, payAsync(ctx, c, &localapi.PaymentRequest{
		Amount: 700, TransactionType: localapi.TypeRefund, IdempotentUUID: id, CartID: "r-1",
	})))
	if tx.TransactionType != "refund" {
		t.Errorf("transactionType %q", tx.TransactionType)
	}
	l := sim.Ledger()
	if len(l) != 1 || l[0].Kind != "refund" || l[0].Net != -700 || l[0].IdempotentUUID != id {
		t.Errorf("ledger %+v", l)
	}
	if sim.WaitPhase(ctx, id, PhaseScreens) == nil {
		t.Error("a refund showed the optional screens")
	}
	// Any other transactionType is a debit.
	for _, tt := range []string{"credit", "DEBIT", "na"} {
		m := rawJSON(t, sim, "POST", "/payment", `{"amount": 100, "transactionType": "`+tt+`"}`)
		if m["status"] != "ok" || m["transactionType"] != "debit" {
			t.Errorf("transactionType %s: %v", tt, m)
		}
	}
	if l := sim.Ledger(); l[len(l)-1].Kind != "debit" {
		t.Errorf("last entry %+v", l[len(l)-1])
	}
}

// Rule 13: malformed requests and invalid amounts.
func TestMalformedRequests(t *testing.T) {
	sim, _ := newSim(t, Config{})
	for _, path := range []string{"/payment", "/print", "/share-receipt", "/reversal", "/abort", "/transactions"} {
		for _, body := range []string{`{"amount": 12`, `not json`, `{"a":1} trailing`} {
			code, data := raw(t, sim, "POST", path, body)
			if code != http.StatusBadRequest || len(data) != 0 {
				t.Errorf("POST %s %q: HTTP %d %q, want 400 with no body", path, body, code, data)
			}
		}
	}
	// JSON of the wrong shape is malformed too (except for /share-receipt,
	// tested with it).
	for _, body := range []string{`[]`, `"x"`, `{"amount": "12"}`, `{"amount": 1.5}`} {
		if code, _ := raw(t, sim, "POST", "/payment", body); code != http.StatusBadRequest {
			t.Errorf("payment %s: HTTP %d", body, code)
		}
	}
	for _, body := range []string{`{}`, `{"amount": 0}`, `{"amount": -5}`, `{"giftAmount": 5}`} {
		wantKO(t, rawJSON(t, sim, "POST", "/payment", body), MsgInvalidAmount)
	}
	wantKO(t, rawJSON(t, sim, "POST", "/payment", `{"amount": 5, "giftAmount": -1}`), MsgInvalidGiftAmount)
	wantKO(t, rawJSON(t, sim, "GET", "/payment/0", ""), MsgInvalidAmount)
	wantKO(t, rawJSON(t, sim, "GET", "/payment/abc", ""), MsgInvalidAmount)
	// Unknown keys are ignored.
	if m := rawJSON(t, sim, "POST", "/payment", `{"amount": 100, "surprise": {"a": [1]}, "medium": "card"}`); m["status"] != "ok" {
		t.Errorf("unknown keys: %v", m)
	}
	if n := len(sim.Ledger()); n != 1 {
		t.Errorf("ledger has %d entries, want 1", n)
	}
}

// Rule 14: the earlier form GET /payment/{amount}.
func TestSimplePayment(t *testing.T) {
	sim, c := newSim(t, Config{})
	tx, err := c.SimplePayment(testCtx(t), 1234)
	if err != nil || !tx.Approved() || tx.Amount != 1234 || tx.TransactionType != "debit" {
		t.Fatalf("%v %v", tx, err)
	}
	if l := sim.Ledger(); len(l) != 1 || l[0].Total != 1234 {
		t.Errorf("ledger %+v", l)
	}
}

// Rule 15: the answer's fields.
func TestTransactionFields(t *testing.T) {
	sim, _ := newSim(t, Config{CurrencyCode: "CHF"})
	id := uuid.NewString()
	m := rawJSON(t, sim, "POST", "/payment", `{"amount": 1500, "giftAmount": 50, "idempotentUuid": "`+id+`",
		"cartId": "c-9", "reference": "Alice", "customer": {"firstName": "Ada", "email": "ada@example.test", "phone": "+33600000000"},
		"checkoutExternalId": "chk-1", "externalTableNumber": "12", "externalOrderNumber": "A-7", "externalOrderId": "o-7",
		"enableGiftScreen": null, "acceptedPayment": {"acceptedMediumType": "all"}, "vendor": {"softwareName": "Comptoir"}}`)
	want := map[string]any{
		"status": "ok", "amount": 1500.0, "giftAmount": 50.0, "currencyCode": "CHF", "transactionType": "debit",
		"idempotentUuid": id, "cartId": "c-9", "reference": "Alice", "checkoutExternalId": "chk-1",
		"externalTableNumber": "12", "externalOrderNumber": "A-7", "externalOrderId": "o-7",
		"paymentApplication": "EMV_CONTACTLESS", "scheme": "VISA",
	}
	for k, v := range want {
		if m[k] != v {
			t.Errorf("%s = %v, want %v", k, m[k], v)
		}
	}
	for _, k := range []string{"transactionId", "appVersion", "cardToken", "clientCardTicket", "merchantCardTicket", "issuer"} {
		if s, _ := m[k].(string); s == "" {
			t.Errorf("%s missing", k)
		}
	}
	if cust, _ := m["customer"].(map[string]any); cust["firstName"] != "Ada" || cust["phone"] != "+33600000000" {
		t.Errorf("customer %v", m["customer"])
	}
	for k, v := range m {
		if v == nil {
			t.Errorf("null key %s", k)
		}
	}
	if _, ok := m["message"]; ok {
		t.Error("message in an ok answer")
	}
	pan := regexp.MustCompile(`\b[2-6]\d{12,18}\b`) // a card number; AIDs start with A0
	for _, k := range []string{"clientCardTicket", "merchantCardTicket"} {
		tk := m[k].(string)
		if !strings.Contains(tk, "**** **** **** 4242") || pan.MatchString(tk) || !strings.Contains(tk, "15.50 CHF") {
			t.Errorf("%s:\n%s", k, tk)
		}
	}

	// A checkoutExternalId used by a completed ok transaction is refused.
	wantKO(t, rawJSON(t, sim, "POST", "/payment", `{"amount": 100, "checkoutExternalId": "chk-1"}`), MsgCheckoutExternalIDUsed)
	wantKO(t, rawJSON(t, sim, "POST", "/payment", `{"amount": 100, "externalOrderId": "o-8"}`), MsgCheckoutExternalIDRequired)
	// A declined one does not use it up.
	sim.Script(Decline())
	if m := rawJSON(t, sim, "POST", "/payment", `{"amount": 100, "checkoutExternalId": "chk-2"}`); m["status"] != "ko" || m["message"] != nil {
		t.Fatalf("declined: %v", m)
	}
	if m := rawJSON(t, sim, "POST", "/payment", `{"amount": 100, "checkoutExternalId": "chk-2"}`); m["status"] != "ok" {
		t.Errorf("checkoutExternalId of a declined payment refused: %v", m)
	}
}

func TestCurrencies(t *testing.T) {
	for _, cur := range []string{"", "eur", "CHF", "GBP"} {
		if _, err := New(Config{CurrencyCode: cur}); err != nil {
			t.Errorf("%q: %v", cur, err)
		}
	}
	if _, err := New(Config{CurrencyCode: "USD"}); err == nil {
		t.Error("USD accepted")
	}
	if _, err := New(Config{TimeScale: -1}); err == nil {
		t.Error("negative time scale accepted")
	}
}

func TestMealVoucherRules(t *testing.T) {
	sim, c := newSim(t, Config{})
	ctx := testCtx(t)
	vouchers := &localapi.AcceptedPayment{AcceptedMediumType: localapi.MediumTypeLunchVouchersOnly}
	tx := mustApproved(t, wait(t, ctx, payAsync(ctx, c, &localapi.PaymentRequest{Amount: 1800, AcceptedPayment: vouchers})))
	if tx.PaymentApplication != "CONECS_CONTACTLESS" {
		t.Errorf("paymentApplication %q", tx.PaymentApplication)
	}
	// Over the voucher's cap: declined in full, never split.
	mustDeclined(t, wait(t, ctx, payAsync(ctx, c, &localapi.PaymentRequest{Amount: 3000, AcceptedPayment: vouchers})))
	// A bank card where only vouchers are accepted.
	sim.Script(Approve().WithCard("visa"))
	mustDeclined(t, wait(t, ctx, payAsync(ctx, c, &localapi.PaymentRequest{Amount: 1000, AcceptedPayment: vouchers})))
	if n := len(sim.Ledger()); n != 1 {
		t.Errorf("ledger has %d entries, want 1", n)
	}
}

func TestConcurrentPaymentsOneWins(t *testing.T) {
	sim, c := newSim(t, Config{})
	ctx := testCtx(t)
	sim.SetDefault(Hold())
	errs := make(chan error, 8)
	for range 8 {
		go func() {
			_, err := c.Payment(ctx, &localapi.PaymentRequest{Amount: 100, IdempotentUUID: uuid.NewString()})
			errs <- err
		}()
	}
	// Seven are refused while the eighth waits for the customer.
	for range 7 {
		mustCode(t, wait(t, ctx, errs), localapi.CodeBusy, "")
	}
	if err := sim.WaitPhase(ctx, "", PhaseBanking); err != nil {
		t.Fatal(err)
	}
	sim.PresentCard()
	if err := wait(t, ctx, errs); err != nil {
		t.Fatal(err)
	}
	if n := len(sim.Ledger()); n != 1 {
		t.Errorf("ledger has %d entries", n)
	}
}

// The customer presenting a card at once and the card-read window may both
// be due by the time the terminal looks (a loaded machine, a small time
// scale): the one due first decides, every time, not a random pick.
func TestTheCustomerDueFirstBeatsTheWindowDueAfter(t *testing.T) {
	sim, c := newSim(t, Config{TimeScale: 1, Timings: Timings{Handover: time.Nanosecond, CardRead: time.Nanosecond}})
	ctx := testCtx(t)
	for i := range 40 {
		tx := pay(t, ctx, sim, c, Behaviour{Outcome: OutcomeApprove}, &localapi.PaymentRequest{Amount: 100, IdempotentUUID: uuid.NewString()})
		if !tx.Approved() {
			t.Fatalf("payment %d: %s, the window taken for the customer due before it", i, tx.Raw)
		}
	}
}
