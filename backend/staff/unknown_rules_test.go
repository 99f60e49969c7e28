package staff

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/device"
	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/localapi"
	"github.com/comptoir-pos/comptoir/backend/payment"
	"github.com/comptoir-pos/comptoir/backend/terminalsim"
	"github.com/google/uuid"
)

// The rules of payments whose outcome is unknown, and of accepting an
// order that needs staff, each a test named after it.

// journaledUnknown journals an attempt as the orchestrator leaves one whose
// request may have reached the terminal and whose answer never came:
// prepared, sent, then unknown.
func (e *env) journaledUnknown(a journal.Attempt) journal.Attempt {
	e.t.Helper()
	a.UUID = uuid.Must(uuid.NewV7()).String()
	if a.Terminal == "" {
		a.Terminal = "sim"
	}
	if a.RequestBody == nil {
		a.RequestBody = []byte(fmt.Sprintf(`{"amount":%d}`, a.Amount))
		if a.InitialTransactionID != "" {
			a.RequestBody = []byte(fmt.Sprintf(`{"amount":%d,"initialTransactionId":%q}`, a.Amount, a.InitialTransactionID))
		}
	}
	if _, err := e.db.PrepareAttempt(e.ctx, a); err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.db.MarkSent(e.ctx, a.UUID); err != nil {
		e.t.Fatal(err)
	}
	att, err := e.db.Transition(e.ctx, a.UUID, journal.StateSent, journal.StateUnknown, journal.TransitionInfo{})
	if err != nil {
		e.t.Fatal(err)
	}
	return att
}

// tippedKeypadCharge is a charge of amount with a tip made on the
// terminal's keypad; it returns its history entry.
func (e *env) tippedKeypadCharge(amount, tip int64) device.HistoryEntry {
	e.t.Helper()
	e.sim.SetTipsEnabled(true)
	b := terminalsim.Approve().WithTip(tip)
	if _, err := e.sim.StartOnKeypad(amount, &b); err != nil {
		e.t.Fatal(err)
	}
	if err := e.sim.WaitIdle(e.ctx); err != nil {
		e.t.Fatal(err)
	}
	entries, err := e.st.historyRange(e.ctx, e.clock.Now().Add(-time.Hour), time.Time{})
	if err != nil {
		e.t.Fatal(err)
	}
	for _, h := range entries {
		if h.Type == device.HistoryDebit && h.Amount == amount && h.GiftAmount == tip && h.Status == device.StatusOK {
			return h
		}
	}
	e.t.Fatalf("no charge of %d with a tip of %d in the history %+v", amount, tip, entries)
	return device.HistoryEntry{}
}

// An order is accepted only once none of its payments is still open
// (prepared, sent) or of unknown outcome: each is settled first. Here the
// reversal of the flagged approval is on its way when staff would accept.
func TestRuleAnOrderIsAcceptedOnlyWhenNoneOfItsPaymentsIsOpenOrUnknown(t *testing.T) {
	e := newEnv(t)
	s := e.unlock()
	id := e.order(1300)
	e.sim.Script(terminalsim.Approve().After(0).Misreporting(terminalsim.Misreport{Amount: 1200}))
	flagged := e.pay(id, 1300, journal.PolicyCounter, journal.StateApproved)
	if v := e.debitView(s.ID, flagged.UUID); !v.CanAccept {
		t.Fatalf("the flagged approval cannot be accepted: %+v", v)
	}
	rev := uuid.Must(uuid.NewV7()).String()
	if _, err := e.db.PrepareAttempt(e.ctx, journal.Attempt{UUID: rev, OrderID: id, Kind: journal.KindReversal, Amount: 1200,
		Policy: journal.PolicyReversal, Terminal: "sim", InitialTransactionID: flagged.TransactionID,
		RequestBody: []byte(fmt.Sprintf(`{"amount":1200,"initialTransactionId":%q}`, flagged.TransactionID))}); err != nil {
		t.Fatal(err)
	}
	refused := func(state journal.State) {
		t.Helper()
		_, err := e.st.AcceptOrder(e.ctx, s.ID, flagged.UUID, "checked the ticket")
		if se := wantCode(t, err, EINVALID); !strings.Contains(se.Message, "settle it first") {
			t.Fatalf("with a payment %s: %q", state, se.Message)
		}
	}
	refused(journal.StatePrepared)
	if _, err := e.db.MarkSent(e.ctx, rev); err != nil {
		t.Fatal(err)
	}
	refused(journal.StateSent)
	if _, err := e.db.Transition(e.ctx, rev, journal.StateSent, journal.StateUnknown, journal.TransitionInfo{}); err != nil {
		t.Fatal(err)
	}
	refused(journal.StateUnknown)
	if n := len(e.auditLines("accept_order")); n != 0 {
		t.Fatalf("%d acceptances audited", n)
	}
	if _, err := e.st.ConfirmUnknown(e.ctx, s.ID, rev, Decision{Note: "not on the terminal"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.st.AcceptOrder(e.ctx, s.ID, flagged.UUID, "checked the ticket"); err != nil {
		t.Fatalf("once every payment is settled: %v", err)
	}
}

// The evidence for an unknown payment is every entry of the history of its
// amount and type around its send, whatever other transactions come
// before or after it in the history.
func TestRuleTheEvidenceIsEveryEntryOfTheAmountAndTypeAmongOthers(t *testing.T) {
	lim := testLimits
	lim.KioskTimeout, lim.RequestOpen = 50*time.Millisecond, 300*time.Millisecond
	e := newEnv(t, withLimits(lim))
	s := e.unlock()
	keypadCharge(e, 990)
	ord := e.order(1300)
	v := unknownAttempt(e, ord, 1300)
	if err := e.sim.PresentCard(); err != nil {
		t.Fatal(err)
	}
	if err := e.sim.WaitIdle(e.ctx); err != nil {
		t.Fatal(err)
	}
	keypadCharge(e, 770)
	ev, err := e.st.ResolveUnknown(e.ctx, s.ID, v.UUID)
	if err != nil {
		t.Fatal(err)
	}
	if len(ev.Entries) != 1 || len(ev.Charged) != 1 || ev.Charged[0].Amount != 1300 || ev.Charged[0].CartID != ord {
		t.Fatalf("evidence %+v, want the one charge of 13.00 among the others", ev)
	}
}

// A payment of unknown outcome settled as paid by the transaction staff
// name records what that transaction charged, its tip included.
func TestRuleASettledPaymentChargesWhatItsTransactionChargedTipIncluded(t *testing.T) {
	e := newEnv(t)
	s := e.unlock()
	ord := e.order(1300)
	att := e.journaledUnknown(journal.Attempt{OrderID: ord, Kind: journal.KindDebit, Amount: 1300, Policy: journal.PolicyCounter})
	h := e.tippedKeypadCharge(1300, 200)
	got, err := e.st.ConfirmUnknown(e.ctx, s.ID, att.UUID, Decision{Paid: true, TransactionID: h.TransactionID, Note: "ticket"})
	if err != nil {
		t.Fatal(err)
	}
	a, err := e.db.Attempt(e.ctx, got.UUID)
	if err != nil || a.State != journal.StateApproved || a.ChargedAmount != 1300 || a.ChargedGift != 200 || a.Total() != 1500 {
		t.Fatalf("settled %+v, %v; want 13.00 charged with a tip of 2.00", a, err)
	}
}

// unknownReversalOfATippedDebit is an order of 15.00 paid with 2.00 of
// tip, and a reversal of it (17.00) whose outcome is unknown.
func (e *env) unknownReversalOfATippedDebit() (order string, debit payment.View, reversal journal.Attempt) {
	e.t.Helper()
	e.sim.SetTipsEnabled(true)
	e.sim.Script(terminalsim.Approve().WithTip(200))
	order = e.order(1500)
	debit = e.pay(order, 1500, journal.PolicyCounter, journal.StateApproved)
	reversal = e.journaledUnknown(journal.Attempt{OrderID: order, Kind: journal.KindReversal, Amount: 1700, Policy: journal.PolicyReversal,
		InitialTransactionID: debit.TransactionID})
	return order, debit, reversal
}

// A reversal of unknown outcome is matched with the history by its whole
// amount, the debit's tip included, and settled as given back for that
// whole amount.
func TestRuleASettledReversalGivesBackItsWholeAmountTipIncluded(t *testing.T) {
	e := newEnv(t)
	s := e.unlock()
	ord, debit, rev := e.unknownReversalOfATippedDebit()
	// The request reached the terminal; its answer was lost.
	if _, err := e.client.Reversal(e.ctx, &localapi.ReversalRequest{Amount: 1700, InitialTransactionID: debit.TransactionID}); err != nil {
		t.Fatal(err)
	}
	ev, err := e.st.ResolveUnknown(e.ctx, s.ID, rev.UUID)
	if err != nil || len(ev.Charged) != 1 {
		t.Fatalf("evidence %+v, %v", ev, err)
	}
	got, err := e.st.ConfirmUnknown(e.ctx, s.ID, rev.UUID, Decision{Paid: true, TransactionID: ev.Charged[0].TransactionID})
	if err != nil {
		t.Fatal(err)
	}
	a, err := e.db.Attempt(e.ctx, got.UUID)
	if err != nil || a.State != journal.StateApproved || a.ChargedAmount != 1700 || a.ChargedGift != 0 {
		t.Fatalf("settled %+v, %v; want 17.00 given back", a, err)
	}
	if m, _ := e.db.OrderMoney(e.ctx, ord); m.Givable() != 0 {
		t.Fatalf("the order's money after its reversal %+v", m)
	}
}

// A terminal that lists a reversal split into amount and tip still shows
// it as the evidence of a reversal of the whole: its two parts are added
// before they are compared with what the reversal asked.
func TestRuleAReversalListedInTwoPartsIsEvidenceOfTheWhole(t *testing.T) {
	st := &scriptedTerminal{}
	e := newEnv(t, withScriptedTerminal(st))
	s := e.unlock()
	_, _, rev := e.unknownReversalOfATippedDebit()
	st.mu.Lock()
	st.extra = []device.HistoryEntry{{Status: device.StatusOK, TransactionID: "rv-split", Amount: 1500, GiftAmount: 200, CurrencyCode: "EUR",
		Type: device.HistoryReversal, CreatedAt: e.clock.Now().UTC().Format(time.RFC3339)}}
	st.mu.Unlock()
	ev, err := e.st.ResolveUnknown(e.ctx, s.ID, rev.UUID)
	if err != nil || len(ev.Charged) != 1 || ev.Charged[0].TransactionID != "rv-split" {
		t.Fatalf("evidence %+v, %v: want the reversal listed in two parts", ev, err)
	}
}
