package kiosk

import (
	"context"
	"errors"
	"github.com/comptoir-pos/comptoir/backend/device"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/internal/testenv/paytest"
	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/localapi"
	"github.com/comptoir-pos/comptoir/backend/payment"
	"github.com/comptoir-pos/comptoir/backend/receipt"
	"github.com/comptoir-pos/comptoir/backend/settings"
	"github.com/comptoir-pos/comptoir/backend/terminalsim"
)

func testLogger(t *testing.T) *slog.Logger {
	if os.Getenv("KIOSK_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

func TestPayByCard(t *testing.T) {
	e := newEnv(t)
	v := e.cart("croissant", 2, "cafe-creme", 1)
	if v.Total != 2*130+320 {
		t.Fatalf("total %d", v.Total)
	}
	v = e.must(e.s.Pay(MethodCard))
	if v.Phase != PhasePaying || v.OrderNumber != "1" || !strings.HasSuffix(v.OrderID, "-001") {
		t.Fatalf("after Pay: phase %s number %q id %q", v.Phase, v.OrderNumber, v.OrderID)
	}
	if v.Payment == nil || v.Payment.AttemptUUID == "" || v.Payment.Deadline.IsZero() || v.Payment.Amount != v.Total {
		t.Fatalf("payment view %+v", v.Payment)
	}
	v = e.waitPhase(PhaseApproved)
	if v.Payment.Paid != v.Total || v.Payment.Due != 0 || v.Payment.ChargedDespiteCancel {
		t.Fatalf("approved view %+v", v.Payment)
	}
	if d := e.debits(); len(d) != 1 || d[0].Amount != v.Total || d[0].CartID != v.OrderID {
		t.Fatalf("ledger %+v", d)
	}
	// The orchestrator settles the order just after the attempt's outcome.
	e.waitFor("order paid", func(CheckoutView) bool { return e.order(v.OrderID).Status == journal.OrderPaid })
	if o := e.order(v.OrderID); o.Total != v.Total || !strings.Contains(string(o.Data), `"croissant"`) {
		t.Fatalf("journal order %+v", o)
	}
	// The order ticket is printed by itself, with the number.
	e.waitFor("order ticket", func(CheckoutView) bool { return len(e.printedFrom("print")) == 1 })
	if tk := e.printedFrom("print")[0]; tk.Format != string(device.FormatESCPOS) || !strings.Contains(tk.Text, "Commande") || !strings.Contains(tk.Text, "Croissant") {
		t.Fatalf("order ticket %q", tk.Text)
	}
	// The payment carried the receipt with its tax breakdown.
	atts, _ := e.db.AttemptsForOrder(e.ctx, v.OrderID)
	if len(atts) != 1 || !strings.Contains(string(atts[0].RequestBody), `"tax_breakdown"`) || !strings.Contains(string(atts[0].RequestBody), `"enableGiftScreen":false`) {
		t.Fatalf("request body %s", atts[0].RequestBody)
	}
	v = e.must(e.s.Finish())
	if v.Phase != PhaseWelcome || len(v.Lines) != 0 || v.OrderID != "" {
		t.Fatalf("after Finish %+v", v)
	}
	// The next order has the next number of the day.
	e.cart("espresso", 1)
	v = e.must(e.s.Pay(MethodCard))
	if v.OrderNumber != "2" {
		t.Fatalf("second order number %q", v.OrderNumber)
	}
	e.waitPhase(PhaseApproved)
	// Every snapshot was published: the last event is the current view.
	evs := e.events.checkouts()
	if last := evs[len(evs)-1]; last.Phase != PhaseApproved || last.OrderNumber != "2" {
		t.Fatalf("last event %+v", last)
	}
}

func TestDeclineThenRetry(t *testing.T) {
	e := newEnv(t)
	e.sim.Script(terminalsim.Decline(), terminalsim.Approve())
	e.cart("jambon-beurre", 1)
	e.must(e.s.Pay(MethodCard))
	v := e.waitPhase(PhaseDeclined)
	if v.Payment.Paid != 0 || v.Payment.Due != 590 || v.Payment.Outcome != OutcomeDeclined {
		t.Fatalf("declined view %+v", v.Payment)
	}
	first := v.Payment.AttemptUUID
	v = e.must(e.s.Retry())
	if v.Phase != PhasePaying || v.Payment.AttemptUUID == first || v.Payment.AttemptUUID == "" {
		t.Fatalf("retry view %s %+v", v.Phase, v.Payment)
	}
	v = e.waitPhase(PhaseApproved)
	if d := e.debits(); len(d) != 1 || d[0].Amount != 590 || d[0].CartID != v.OrderID {
		t.Fatalf("ledger %+v", d)
	}
}

func TestCancelBeforeHandover(t *testing.T) {
	e := newEnv(t)
	e.payByCard(terminalsim.HoldBeforeHandover(), terminalsim.PhasePreparing, "croissant", 1)
	v := e.must(e.s.Cancel())
	if v.Phase != PhaseCanceling {
		t.Fatalf("after Cancel: %s", v.Phase)
	}
	v = e.outcome()
	if v.Phase != PhaseDeclined || v.Payment.Paid != 0 || v.Payment.ChargedDespiteCancel || v.Payment.Outcome != OutcomeCancelled {
		t.Fatalf("cancelled: phase %s payment %+v", v.Phase, v.Payment)
	}
	if d := e.debits(); len(d) != 0 {
		t.Fatalf("charged: %+v", d)
	}
	// Not charged: the order may be cancelled.
	v = e.must(e.s.CancelOrder())
	if v.Phase != PhaseWelcome {
		t.Fatalf("after CancelOrder: %s", v.Phase)
	}
	id := e.events.checkouts()
	orderID := ""
	for _, c := range id {
		if c.OrderID != "" {
			orderID = c.OrderID
		}
	}
	e.waitFor("order cancelled", func(CheckoutView) bool { return e.order(orderID).Status == journal.OrderCancelled })
}

func TestCancelTooLateIsApproved(t *testing.T) {
	e := newEnv(t)
	e.payByCard(terminalsim.Hold(), terminalsim.PhaseBanking, "croissant", 1)
	e.cancelHeld()
	// The abort is held by the terminal; the customer taps the card anyway.
	if err := e.sim.PresentCard(); err != nil {
		t.Fatal(err)
	}
	v := e.outcome()
	if v.Phase != PhaseApproved || !v.Payment.ChargedDespiteCancel || v.Payment.Paid != 130 || v.Payment.Outcome != OutcomeChargedDespiteCancel {
		t.Fatalf("charged despite cancel: phase %s payment %+v", v.Phase, v.Payment)
	}
	if d := e.debits(); len(d) != 1 {
		t.Fatalf("ledger %+v", d)
	}
	// Never "cancelled" in any snapshot once charged.
	for _, c := range e.events.checkouts() {
		if c.Phase == PhaseDeclined {
			t.Fatalf("a charged payment was shown declined: %+v", c)
		}
	}
}

func TestVoucherThenCard(t *testing.T) {
	e := newEnv(t)
	// 4 × 5.90 + 4.80 = 28.40 eligible, capped at 25.00; the cola is not.
	v := e.cart("jambon-beurre", 4, "quiche-lorraine", 1, "cola", 1)
	if v.Total != 4*590+480+280 || v.VoucherEligible != settings.DefaultVoucherCap {
		t.Fatalf("total %d eligible %d", v.Total, v.VoucherEligible)
	}
	v = e.must(e.s.Pay(MethodVoucherThenCard))
	if v.Payment.Step != StepVoucher || v.Payment.Amount != 2500 {
		t.Fatalf("first part %+v", v.Payment)
	}
	v = e.waitPhase(PhaseApproved)
	if v.Payment.Paid != v.Total || v.Payment.Step != StepCard {
		t.Fatalf("approved %+v", v.Payment)
	}
	d := e.debits()
	if len(d) != 2 || d[0].Amount != 2500 || d[1].Amount != v.Total-2500 {
		t.Fatalf("ledger %+v", d)
	}
	atts, err := e.db.AttemptsForOrder(e.ctx, v.OrderID)
	if err != nil || len(atts) != 2 {
		t.Fatalf("attempts %v %v", atts, err)
	}
	if !strings.Contains(string(atts[0].RequestBody), localapi.MediumTypeLunchVouchersOnly) ||
		!strings.Contains(string(atts[1].RequestBody), localapi.MediumTypeBankCardsOnly) {
		t.Fatalf("media: %s / %s", atts[0].RequestBody, atts[1].RequestBody)
	}
	// The printed receipt has both parts.
	e.waitFor("order ticket", func(CheckoutView) bool { return len(e.printedFrom("print")) == 1 })
	e.must(e.s.ChooseReceipt(ReceiptPrint))
	v = e.waitFor("receipt", func(v CheckoutView) bool { return v.Receipt != nil && v.Receipt.Status != ReceiptWorking })
	if v.Receipt.Status != ReceiptDone {
		t.Fatalf("receipt %+v", v.Receipt)
	}
	var text string
	for _, tk := range e.printedFrom("print") {
		text += tk.Text
	}
	if !strings.Contains(text, "Paiement 1/2") || !strings.Contains(text, "Paiement 2/2") {
		t.Fatalf("receipt text:\n%s", text)
	}
}

func TestVoucherDeclinedThenRestByCard(t *testing.T) {
	e := newEnv(t)
	e.sim.Script(terminalsim.Decline(), terminalsim.Approve())
	v := e.cart("croissant", 2, "cola", 1)
	v = e.must(e.s.Pay(MethodVoucherThenCard))
	if v.Payment.Amount != 260 {
		t.Fatalf("voucher part %+v", v.Payment)
	}
	v = e.waitPhase(PhaseDeclined)
	if v.Payment.Step != StepVoucher || v.Payment.Due != 540 {
		t.Fatalf("declined %+v", v.Payment)
	}
	v = e.must(e.s.PayRestByCard())
	if v.Payment.Step != StepCard || v.Payment.Amount != 540 {
		t.Fatalf("rest by card %+v", v.Payment)
	}
	e.waitPhase(PhaseApproved)
	if d := e.debits(); len(d) != 1 || d[0].Amount != 540 {
		t.Fatalf("ledger %+v", d)
	}
}

func TestPartlyPaidOrderIsNeverCancelled(t *testing.T) {
	e := newEnv(t)
	e.sim.Script(terminalsim.Approve(), terminalsim.Decline())
	e.cart("croissant", 2, "cola", 1)
	e.must(e.s.Pay(MethodVoucherThenCard))
	v := e.waitPhase(PhaseDeclined)
	if v.Payment.Paid != 260 || v.Payment.Due != 280 || v.Payment.Step != StepCard {
		t.Fatalf("card part declined %+v", v.Payment)
	}
	v, _ = e.s.CancelOrder()
	if v.Error != ErrPartlyPaid || v.Phase != PhaseDeclined {
		t.Fatalf("CancelOrder after a charged part: %s %s", v.Phase, v.Error)
	}
	// Walking away leaves the order to staff, never "cancelled".
	e.must(e.s.Abandon())
	if o := e.order(v.OrderID); o.Status != journal.OrderNeedsAttention {
		t.Fatalf("order status %s", o.Status)
	}
}

func TestUnknownOutcomeIsNeverDeclined(t *testing.T) {
	lim := paytest.Limits
	lim.KioskTimeout, lim.RequestOpen = 50*time.Millisecond, 300*time.Millisecond
	e := newEnv(t, withLimits(lim))
	e.sim.Script(terminalsim.Hold())
	e.cart("croissant", 1)
	e.must(e.s.Pay(MethodCard))
	v := e.waitFor("outcome", func(v CheckoutView) bool { return v.Phase != PhasePaying })
	if v.Phase != PhaseUnknown || v.Payment.Message == "" || v.OrderNumber == "" {
		t.Fatalf("unknown: phase %s payment %+v", v.Phase, v.Payment)
	}
	for _, c := range e.events.checkouts() {
		if c.Phase == PhaseDeclined || c.Phase == PhaseFailed {
			t.Fatalf("an unknown outcome was shown as %s", c.Phase)
		}
	}
	if v, _ := e.s.Abandon(); v.Error != ErrWrongPhase || v.Phase != PhaseUnknown {
		t.Fatalf("Abandon from unknown: %s %s", v.Phase, v.Error)
	}
	if v, _ := e.s.Retry(); v.Error != ErrWrongPhase {
		t.Fatalf("Retry from unknown: %s", v.Error)
	}
	e.waitFor("needs attention", func(CheckoutView) bool { return e.order(v.OrderID).Status == journal.OrderNeedsAttention })
	if v, _ := e.s.Finish(); v.Error != ErrWrongPhase || v.Phase != PhaseUnknown {
		t.Fatalf("Finish from unknown (the customer's button): %s %s", v.Phase, v.Error)
	}
	if v := e.must(e.s.Release()); v.Phase != PhaseWelcome {
		t.Fatalf("Release: %s", v.Phase)
	}
	if st := e.order(v.OrderID).Status; st != journal.OrderNeedsAttention {
		t.Fatalf("after staff released the screen the order is %s, want needs_attention", st)
	}
}

func TestAbandonRefusedWhilePaying(t *testing.T) {
	e := newEnv(t)
	e.payByCard(terminalsim.Hold(), terminalsim.PhaseBanking, "croissant", 1)
	v, err := e.s.Abandon()
	if err != nil || v.Error != ErrWrongPhase || v.Phase != PhasePaying {
		t.Fatalf("Abandon while paying: %s %q %v", v.Phase, v.Error, err)
	}
	if v, _ := e.s.Start("fr"); v.Error != ErrWrongPhase {
		t.Fatalf("Start while paying: %q", v.Error)
	}
	if err := e.sim.PresentCard(); err != nil {
		t.Fatal(err)
	}
	e.waitPhase(PhaseApproved)
	if v := e.must(e.s.Abandon()); v.Phase != PhaseWelcome {
		t.Fatalf("Abandon after approval: %s", v.Phase)
	}
}

func TestTerminalUnreachableFails(t *testing.T) {
	e := newEnv(t)
	e.cart("croissant", 1)
	e.sim.Close() // connection refused: nothing can have been sent
	e.must(e.s.Pay(MethodCard))
	v := e.waitFor("outcome", func(v CheckoutView) bool { return v.Phase != PhasePaying })
	if v.Phase != PhaseFailed || v.Payment.Message == "" || v.Payment.Paid != 0 {
		t.Fatalf("unreachable: %s %+v", v.Phase, v.Payment)
	}
	if v := e.must(e.s.CancelOrder()); v.Phase != PhaseWelcome {
		t.Fatalf("CancelOrder: %s", v.Phase)
	}
}

func TestReceiptChoices(t *testing.T) {
	e := newEnv(t)
	e.cart("eclair-cafe", 1)
	e.must(e.s.Pay(MethodCard))
	v := e.waitPhase(PhaseApproved)
	waitReceipt := func() *ReceiptView {
		return e.waitFor("receipt", func(v CheckoutView) bool { return v.Receipt != nil && v.Receipt.Status != ReceiptWorking }).Receipt
	}

	e.waitFor("order ticket", func(CheckoutView) bool { return len(e.printedFrom("print")) == 1 })
	e.must(e.s.ChooseReceipt(ReceiptPrint))
	if r := waitReceipt(); r.Status != ReceiptDone || r.Choice != ReceiptPrint {
		t.Fatalf("print: %+v", r)
	}
	printed := e.printedFrom("print")
	if len(printed) != 2 || !strings.Contains(printed[1].Text, "TOTAL") || !strings.Contains(printed[1].Text, "Transaction") {
		t.Fatalf("printed %d tickets", len(printed))
	}

	e.must(e.s.ChooseReceipt(ReceiptEmail))
	if r := waitReceipt(); r.Status != ReceiptDone {
		t.Fatalf("email: %+v", r)
	}
	sh := e.sim.Shares()
	if len(sh) != 1 || sh[0].Medium != string(device.ShareEmail) || sh[0].TransactionID == "" || !strings.Contains(sh[0].Text, "Éclair") {
		t.Fatalf("shares %+v", sh)
	}

	// A share the terminal refuses is said in words.
	e.printer.share = func(context.Context, *localapi.ShareReceiptRequest) (*localapi.StatusResponse, error) {
		return nil, &localapi.APIError{Endpoint: "/share-receipt", Message: localapi.MsgShareMedium, Code: localapi.CodeShareMedium}
	}
	e.must(e.s.ChooseReceipt(ReceiptSMS))
	if r := waitReceipt(); r.Status != ReceiptError || !strings.Contains(r.Message, "cannot send receipts this way") {
		t.Fatalf("share error: %+v", r)
	}
	e.must(e.s.ChooseReceipt(ReceiptNone))
	if v := e.must(e.s.Finish()); v.Phase != PhaseWelcome {
		t.Fatalf("finish %s", v.Phase)
	}
	_ = v
}

// The customer's receipt is printed once as the original. Printed again
// it is a copy, recorded before it prints and marked as staff's reprints
// are (DUPLICATA n° k, counted by the fiscal journal); a print the printer
// refused was no original, so the next is; and with no fiscal journal to
// count copies, a second print is refused.
func TestASecondPrintOfTheReceiptIsADuplicate(t *testing.T) {
	var (
		mu     sync.Mutex
		copies = map[string]int{}
	)
	sales := func(context.Context, string) (*receipt.Fiscal, error) {
		return &receipt.Fiscal{Ticket: 7, Till: "A", Software: "Comptoir test"}, nil
	}
	duplicate := func(_ context.Context, order string) (*receipt.Fiscal, error) {
		mu.Lock()
		defer mu.Unlock()
		copies[order]++
		return &receipt.Fiscal{Ticket: 7, Till: "A", Software: "Comptoir test", Duplicate: copies[order]}, nil
	}
	print := func(e *env, want string) *ReceiptView {
		t.Helper()
		e.must(e.s.ChooseReceipt(ReceiptPrint))
		return e.waitFor("receipt "+want, func(v CheckoutView) bool { return v.Receipt != nil && v.Receipt.Status == want }).Receipt
	}
	e := newEnv(t, withFiscal(sales, duplicate))
	e.cart("eclair-cafe", 1)
	e.must(e.s.Pay(MethodCard))
	order := e.waitPhase(PhaseApproved).OrderID
	e.waitFor("order ticket", func(CheckoutView) bool { return len(e.printedFrom("print")) == 1 })

	e.printer.print = func(context.Context, *localapi.PrintRequest) (*localapi.StatusResponse, error) {
		return nil, &localapi.APIError{Endpoint: "/print", Message: "Printer out of paper"}
	}
	print(e, ReceiptError)
	e.printer.print = nil
	print(e, ReceiptDone)
	for k := 1; k <= 2; k++ {
		print(e, ReceiptDone)
	}
	printed := e.printedFrom("print")
	if len(printed) != 4 {
		t.Fatalf("%d tickets printed, want the order ticket and three receipts", len(printed))
	}
	for i, want := range []string{"", "DUPLICATA n° 1", "DUPLICATA n° 2"} {
		text := printed[1+i].Text
		if !strings.Contains(text, "TOTAL") || (want == "") == strings.Contains(text, "DUPLICATA") || !strings.Contains(text, want) {
			t.Fatalf("receipt %d, want %q:\n%s", i+1, want, text)
		}
	}
	if copies[order] != 2 {
		t.Fatalf("%d copies recorded, want 2", copies[order])
	}

	// Without a fiscal journal to count it, no second print.
	e = newEnv(t)
	e.cart("eclair-cafe", 1)
	e.must(e.s.Pay(MethodCard))
	e.waitPhase(PhaseApproved)
	e.waitFor("order ticket", func(CheckoutView) bool { return len(e.printedFrom("print")) == 1 })
	print(e, ReceiptDone)
	if r := print(e, ReceiptError); !strings.Contains(r.Message, "printed already") {
		t.Fatalf("a second print without a fiscal journal: %+v", r)
	}
	if n := len(e.printedFrom("print")); n != 2 {
		t.Fatalf("%d tickets printed, want the order ticket and one receipt", n)
	}
}

func TestUnavailableAndBack(t *testing.T) {
	e := newEnv(t)
	e.cart("croissant", 1)
	e.state.Store(TerminalNone)
	e.s.RefreshTerminal()
	v := e.waitPhase(PhaseUnavailable)
	if len(v.Lines) != 0 || e.s.Terminal().Problem == "" {
		t.Fatalf("unavailable: %+v %+v", v, e.s.Terminal())
	}
	if v, _ := e.s.Start("fr"); v.Error != ErrTerminalUnavailable {
		t.Fatalf("Start while unavailable: %q", v.Error)
	}
	e.state.Store(TerminalConnected)
	e.s.RefreshTerminal()
	e.waitPhase(PhaseWelcome)
	if tv := e.s.Terminal(); tv.Problem != "" || !tv.Ready || tv.State != TerminalConnected {
		t.Fatalf("terminal %+v", tv)
	}
	// An unreachable terminal keeps the menu but refuses Pay.
	e.cart("croissant", 1)
	e.state.Store(TerminalUnreachable)
	e.s.RefreshTerminal()
	e.waitFor("unreachable", func(CheckoutView) bool { return e.s.Terminal().State == TerminalUnreachable })
	if v, _ := e.s.Pay(MethodCard); v.Error != ErrTerminalUnavailable || v.Phase != PhaseOrdering {
		t.Fatalf("Pay while unreachable: %s %q", v.Phase, v.Error)
	}
}

func TestRefusedIntents(t *testing.T) {
	e := newEnv(t)
	type step struct {
		name string
		do   func() (CheckoutView, error)
		want string
	}
	for _, st := range []step{
		{"pay before start", func() (CheckoutView, error) { return e.s.Pay(MethodCard) }, ErrWrongPhase},
		{"add before start", func() (CheckoutView, error) { return e.s.AddItem("croissant", 1) }, ErrWrongPhase},
		{"cancel while ordering", func() (CheckoutView, error) { return e.s.Cancel() }, ErrWrongPhase},
		{"start", func() (CheckoutView, error) { return e.s.Start("xx") }, ""},
		{"add before eat in or take away", func() (CheckoutView, error) { return e.s.AddItem("croissant", 1) }, ErrWrongPhase},
		{"pay before eat in or take away", func() (CheckoutView, error) { return e.s.Pay(MethodCard) }, ErrWrongPhase},
		{"eat in", func() (CheckoutView, error) { return e.s.ChooseDining(DiningEatIn) }, ""},
		{"pay an empty cart", func() (CheckoutView, error) { return e.s.Pay(MethodCard) }, ErrCartEmpty},
		{"unknown product", func() (CheckoutView, error) { return e.s.AddItem("caviar", 1) }, ErrUnknownProduct},
		{"zero qty", func() (CheckoutView, error) { return e.s.AddItem("croissant", 0) }, ErrQuantity},
		{"too many", func() (CheckoutView, error) { return e.s.AddItem("croissant", MaxQty+1) }, ErrQuantity},
		{"add", func() (CheckoutView, error) { return e.s.AddItem("cola", 2) }, ""},
		{"voucher without eligible items", func() (CheckoutView, error) { return e.s.Pay(MethodVoucherThenCard) }, ErrAmount},
		{"unknown line", func() (CheckoutView, error) { return e.s.SetQuantity("nope", 1) }, ErrUnknownProduct},
		{"negative qty", func() (CheckoutView, error) { return e.s.SetQuantity("cola", -1) }, ErrQuantity},
		{"retry while ordering", func() (CheckoutView, error) { return e.s.Retry() }, ErrWrongPhase},
		{"receipt while ordering", func() (CheckoutView, error) { return e.s.ChooseReceipt(ReceiptPrint) }, ErrWrongPhase},
		{"finish while ordering", func() (CheckoutView, error) { return e.s.Finish() }, ErrWrongPhase},
		{"remove", func() (CheckoutView, error) { return e.s.SetQuantity("cola", 0) }, ""},
		{"pay emptied cart", func() (CheckoutView, error) { return e.s.Pay(MethodCard) }, ErrCartEmpty},
	} {
		v, err := st.do()
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if v.Error != st.want {
			t.Fatalf("%s: error %q, want %q (phase %s)", st.name, v.Error, st.want, v.Phase)
		}
	}
	if v := e.s.Checkout(); v.Language != "fr" || v.Phase != PhaseOrdering {
		t.Fatalf("an unknown language is the default: %+v", v)
	}
}

func TestCartTotalsAndTaxes(t *testing.T) {
	e := newEnv(t)
	e.cart("croissant", 3, "cafe-creme", 2, "cidre", 1)
	e.must(e.s.ChooseDining(DiningTakeAway))
	v := e.must(e.s.SetQuantity("croissant", 2))
	// Taken away: 2×1.30 at 5.5 %, 2×3.20 at 10 %, 4.50 at 20 %.
	want := []TaxView{{550, 14}, {1000, 58}, {2000, 75}}
	if v.Total != 260+640+450 || len(v.Taxes) != 3 {
		t.Fatalf("total %d taxes %+v", v.Total, v.Taxes)
	}
	for i, w := range want {
		if v.Taxes[i] != w {
			t.Fatalf("tax %d: %+v, want %+v", i, v.Taxes[i], w)
		}
	}
	if v.VoucherEligible != 260 {
		t.Fatalf("eligible %d", v.VoucherEligible)
	}
	if v.Lines[0].ID != "croissant" || v.Lines[0].Qty != 2 || v.Lines[0].Total != 260 || v.Lines[0].Name["en"] != "Croissant" {
		t.Fatalf("line %+v", v.Lines[0])
	}
}

func TestSettingsFromJournal(t *testing.T) {
	e := newEnv(t, withSetup(func(_ string, db *journal.DB) {
		ctx := context.Background()
		for k, v := range map[string]string{
			settings.SettingMode: `"counter"`, settings.SettingLanguages: `["en","fr"]`, settings.SettingDefaultLanguage: `"en"`,
			settings.SettingIdleSeconds: `"soon"`, // does not parse: the default, with a warning
			settings.SettingVoucherCap:  `1900`, settings.SettingCurrency: `"EUR"`,
			settings.SettingMerchant: `{"name":"Boulangerie Test","address":["1 rue de la Paix"],"vatNumber":"FR00123456789"}`,
		} {
			if err := db.SetSetting(ctx, k, []byte(v)); err != nil {
				t.Fatal(err)
			}
		}
	}))
	info := e.s.Info()
	if info.Mode != "counter" || info.DefaultLanguage != "en" || len(info.Languages) != 2 || info.IdleSeconds != settings.DefaultIdleSeconds || info.Currency != "EUR" || info.Version != "test" {
		t.Fatalf("info %+v", info)
	}
	if v := e.s.Checkout(); v.Language != "en" {
		t.Fatalf("default language %q", v.Language)
	}
	v := e.cart("jambon-beurre", 4)
	if v.VoucherEligible != 1900 {
		t.Fatalf("eligible %d", v.VoucherEligible)
	}
	v = e.must(e.s.Pay(MethodCard))
	// Counter mode: the terminal's tip setting applies (enableGiftScreen left out).
	e.waitPhase(PhaseApproved)
	atts, _ := e.db.AttemptsForOrder(e.ctx, v.OrderID)
	if atts[0].Policy != journal.PolicyCounter || strings.Contains(string(atts[0].RequestBody), "enableGiftScreen") ||
		!strings.Contains(string(atts[0].RequestBody), "Boulangerie Test") {
		t.Fatalf("counter attempt %s %s", atts[0].Policy, atts[0].RequestBody)
	}
	if d := time.Until(v.Payment.Deadline); d < 100*time.Second {
		t.Fatalf("counter deadline only %s ahead", d)
	}
}

func TestNewNeedsJournalAndPayments(t *testing.T) {
	if _, err := New(Config{}); err == nil {
		t.Fatal("New without a journal accepted")
	}
}

var _ = errors.New

// TestHoldKeepsOrdersOut: while held, the kiosk is unavailable and says
// why; released, it takes orders again.
func TestHoldKeepsOrdersOut(t *testing.T) {
	e := newEnv(t)
	e.s.Hold("Staff: set the staff PIN before taking orders.")
	if v := e.s.Checkout(); v.Phase != PhaseUnavailable {
		t.Fatalf("held: phase %s", v.Phase)
	}
	if tv := e.s.Terminal(); tv.Problem != "Staff: set the staff PIN before taking orders." {
		t.Fatalf("held: problem %q", tv.Problem)
	}
	if v, _ := e.s.Start("en"); v.Phase == PhaseDining {
		t.Fatal("an order started while held")
	}
	e.s.Hold("")
	if v := e.must(e.s.Start("en")); v.Phase != PhaseDining {
		t.Fatalf("released: phase %s", v.Phase)
	}
}

// A Cancel after the handover, after which no card is presented, is the
// customer's cancel: "cancelled", never "declined".
func TestCancelAfterHandoverWithoutACardIsCancelled(t *testing.T) {
	e := newEnv(t)
	e.payByCard(terminalsim.Hold(), terminalsim.PhaseBanking, "croissant", 1)
	e.cancelHeld()
	if err := e.sim.Decline(); err != nil { // the card window ends without a card
		t.Fatal(err)
	}
	v := e.outcome()
	if v.Phase != PhaseDeclined || v.Payment.Outcome != OutcomeCancelled || v.Payment.Paid != 0 {
		t.Fatalf("phase %s payment %+v", v.Phase, v.Payment)
	}
}

// A decline at the end of the terminal's card window is "no card in
// time"; earlier it is the bank's no; after the customer's Cancel it is
// their cancel, whenever it came.
func TestNotChargedOutcomeInTheCustomersWords(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	s := &Service{cfg: Config{Now: func() time.Time { return now }}}
	end := now.Add(2 * time.Second) // the card window closes in 2 s
	tests := []struct {
		name      string
		att       attempt
		state     journal.State
		cancelled bool
		want      Outcome
	}{
		{"declined early", attempt{deadline: now.Add(40 * time.Second)}, journal.StateDeclined, false, OutcomeDeclined},
		{"declined at the window's end", attempt{deadline: end}, journal.StateDeclined, false, OutcomeNoCard},
		{"declined after the window", attempt{deadline: now.Add(-time.Second)}, journal.StateDeclined, false, OutcomeNoCard},
		{"cancelled by the journal", attempt{deadline: now.Add(40 * time.Second)}, journal.StateCancelled, false, OutcomeCancelled},
		{"declined after Cancel", attempt{deadline: end}, journal.StateDeclined, true, OutcomeCancelled},
		{"a link that ended", attempt{deadline: end, link: true}, journal.StateDeclined, false, OutcomeDeclined},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := s.notCharged(&tt.att, payment.View{State: tt.state}, tt.cancelled); got != tt.want {
				t.Fatalf("outcome %s, want %s", got, tt.want)
			}
		})
	}
}

// A terminal unreachable for longer than the grace, with no other way to
// pay, closes the welcome screen to new orders (saying why); a customer
// already ordering goes on; the terminal back, the welcome reopens.
func TestNoWayToPayClosesTheWelcomeScreen(t *testing.T) {
	e := newEnv(t)
	if tv := e.s.Terminal(); !tv.CardPay || tv.PhonePay {
		t.Fatalf("terminal %+v: want card payment offered, no phone", tv)
	}
	e.since.Store(time.Now().Add(-time.Minute))
	e.state.Store(TerminalUnreachable)
	e.s.RefreshTerminal()
	v := e.waitPhase(PhaseUnavailable)
	if tv := e.s.Terminal(); tv.CardPay || tv.Problem == "" {
		t.Fatalf("terminal %+v", tv)
	}
	if v, _ := e.s.Start("fr"); v.Error == "" {
		t.Fatalf("an order started with no way to pay: %s", v.Phase)
	}
	e.state.Store(TerminalConnected)
	e.s.RefreshTerminal()
	e.waitPhase(PhaseWelcome)
	// A customer already ordering is not thrown out by a blip or an outage.
	e.cart("croissant", 1)
	e.state.Store(TerminalUnreachable)
	e.s.RefreshTerminal()
	e.waitFor("unreachable", func(CheckoutView) bool { return e.s.Terminal().State == TerminalUnreachable })
	if v = e.s.Checkout(); v.Phase != PhaseOrdering || len(v.Lines) != 1 {
		t.Fatalf("the cart was lost: %s %+v", v.Phase, v.Lines)
	}
	// Within the grace, the welcome stays open.
	recent := time.Now()
	e.since.Store(recent)
	e.s.RefreshTerminal()
	e.waitFor("a recent outage", func(CheckoutView) bool { return e.s.Terminal().Since.Equal(recent) })
	if v = e.must(e.s.Abandon()); v.Phase != PhaseWelcome {
		t.Fatalf("a blip closed the welcome screen: %s", v.Phase)
	}
}

// An order ticket the terminal's printer does not take is told to staff
// (the audit trail staff mode shows), not only logged.
func TestAnOrderTicketNotPrintedIsToldToStaff(t *testing.T) {
	e := newEnv(t)
	e.printer.print = func(context.Context, *localapi.PrintRequest) (*localapi.StatusResponse, error) {
		return nil, errors.New("out of paper")
	}
	e.cart("croissant", 1)
	e.must(e.s.Pay(MethodCard))
	v := e.waitPhase(PhaseApproved)
	var recs []journal.AuditRecord
	e.waitFor("staff told", func(CheckoutView) bool {
		recs, _ = e.db.Audit(e.ctx, journal.AuditQuery{Action: ActionTicketNotPrinted})
		return len(recs) == 1
	})
	if recs[0].Subject != v.OrderID || !strings.Contains(recs[0].Detail, "out of paper") {
		t.Fatalf("audit %+v", recs[0])
	}
}
