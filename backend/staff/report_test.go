package staff

import (
	"database/sql"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/settings"
	"github.com/comptoir-pos/comptoir/backend/terminalsim"
)

func keypadCharge(e *env, amount int64) {
	e.t.Helper()
	b := terminalsim.Approve()
	if _, err := e.sim.StartOnKeypad(amount, &b); err != nil {
		e.t.Fatal(err)
	}
	if err := e.sim.WaitIdle(e.ctx); err != nil {
		e.t.Fatal(err)
	}
}

func TestCompareFindsBothSides(t *testing.T) {
	e := newEnv(t)
	s := e.unlock()
	paid := e.pay(e.order(1000), 1000, journal.PolicyKiosk, journal.StateApproved)
	keypadCharge(e, 777)

	cmp, err := e.st.Compare(e.ctx, s.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	if cmp.Matched != 1 || len(cmp.Terminal) != 2 || len(cmp.Journal) != 1 {
		t.Fatalf("compare %+v", cmp)
	}
	if len(cmp.Differences) != 1 {
		t.Fatalf("differences %+v", cmp.Differences)
	}
	d := cmp.Differences[0]
	if d.Kind != DiffTerminalOnly || d.TerminalAmount != 777 || d.TransactionID == "" || !strings.Contains(d.Message, "does not know") {
		t.Fatalf("difference %+v", d)
	}

	// Side by side: the history marks what the journal knows.
	page, err := e.st.History(e.ctx, s.ID, HistoryFilter{Date: time.Now().UTC().Format(time.DateOnly), Limit: 1})
	if err != nil || page.Total != 2 || len(page.Entries) != 1 {
		t.Fatalf("history page %+v, %v", page, err)
	}
	page2, err := e.st.History(e.ctx, s.ID, HistoryFilter{Limit: 1, Offset: 1})
	if err != nil || len(page2.Entries) != 1 {
		t.Fatalf("second page %+v, %v", page2, err)
	}
	known := 0
	for _, h := range append(page.Entries, page2.Entries...) {
		if h.InJournal {
			known++
			if h.AttemptUUID != paid.UUID {
				t.Fatalf("entry %+v", h)
			}
		}
	}
	if known != 1 {
		t.Fatalf("%d entries known to the journal, want 1", known)
	}
	_, err = e.st.History(e.ctx, s.ID, HistoryFilter{Limit: 201})
	wantCode(t, err, EINVALID)
	_, err = e.st.History(e.ctx, s.ID, HistoryFilter{StartTime: "9h"})
	wantCode(t, err, EINVALID)

	// A terminal that forgot the charge: the journal's approved attempt is
	// not listed.
	e.sim.Reset()
	cmp, err = e.st.Compare(e.ctx, s.ID, "")
	if err != nil || len(cmp.Differences) != 1 || cmp.Differences[0].Kind != DiffJournalOnly || cmp.Differences[0].AttemptUUID != paid.UUID {
		t.Fatalf("differences %+v, %v", cmp.Differences, err)
	}
	_, err = e.st.Compare(e.ctx, s.ID, "yesterday")
	wantCode(t, err, EINVALID)
}

func TestComparePaginatesEveryPage(t *testing.T) {
	e := newEnv(t)
	s := e.unlock()
	e.st.pageSize = 2 // five charges: three pages
	for range 5 {
		keypadCharge(e, 100)
	}
	e.pay(e.order(250), 250, journal.PolicyKiosk, journal.StateApproved)
	entries, err := e.st.historyRange(e.ctx, time.Now().Add(-time.Hour), time.Time{})
	if err != nil || len(entries) != 6 {
		t.Fatalf("history %d entries, %v", len(entries), err)
	}
	cmp, err := e.st.Compare(e.ctx, s.ID, "")
	if err != nil || len(cmp.Differences) != 5 || cmp.Matched != 1 {
		t.Fatalf("compare %+v, %v", cmp.Differences, err)
	}
}

func TestSettingsRefuseBadValues(t *testing.T) {
	changed := []string{}
	e := newEnv(t)
	e.cfg.OnSettingsChanged = func(k string) { changed = append(changed, k) }
	e.restart()
	s := e.unlock()

	if err := e.st.SaveSetting(e.ctx, s.ID, settings.SettingIdleSeconds, json.RawMessage(`90`)); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{`5`, `"abc"`, `null`, `{`, `99999`} {
		err := e.st.SaveSetting(e.ctx, s.ID, settings.SettingIdleSeconds, json.RawMessage(bad))
		se := wantCode(t, err, EINVALID)
		if !strings.Contains(se.Message, "previous value is kept") && !strings.Contains(se.Message, "nothing was changed") {
			t.Fatalf("message %q", se.Message)
		}
	}
	if raw, _, _ := e.db.Setting(e.ctx, settings.SettingIdleSeconds); string(raw) != `90` {
		t.Fatalf("stored %s, want the good value kept", raw)
	}
	wantCode(t, e.st.SaveSetting(e.ctx, s.ID, settings.SettingMode, json.RawMessage(`"drive-in"`)), EINVALID)
	if err := e.st.SaveSetting(e.ctx, s.ID, settings.SettingMode, json.RawMessage(`"counter"`)); err != nil {
		t.Fatal(err)
	}
	// The default language must stay among those offered.
	wantCode(t, e.st.SaveSetting(e.ctx, s.ID, settings.SettingLanguages, json.RawMessage(`["en","es"]`)), EINVALID)
	if err := e.st.SaveSetting(e.ctx, s.ID, settings.SettingLanguages, json.RawMessage(`["fr","en"]`)); err != nil {
		t.Fatal(err)
	}
	wantCode(t, e.st.SaveSetting(e.ctx, s.ID, settings.SettingDefaultLanguage, json.RawMessage(`"es"`)), EINVALID)
	wantCode(t, e.st.SaveSetting(e.ctx, s.ID, settings.SettingReceiptColumns, json.RawMessage(`40`)), EINVALID)
	// The PIN and the audit list are out of reach.
	wantCode(t, e.st.SaveSetting(e.ctx, s.ID, SettingPIN, json.RawMessage(`{}`)), EINVALID)
	wantCode(t, e.st.SaveSetting(e.ctx, s.ID, SettingPINFailures, json.RawMessage(`{}`)), EINVALID)

	list, err := e.st.Settings(e.ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Setting{}
	for _, st := range list {
		got[st.Key] = st
		if strings.HasPrefix(st.Key, "staff.") {
			t.Fatalf("staff setting listed: %+v", st)
		}
	}
	if string(got[settings.SettingMode].Value) != `"counter"` || string(got[settings.SettingIdleSeconds].Value) != `90` ||
		string(got[settings.SettingCurrency].Stored) != `null` || string(got[settings.SettingReceiptColumns].Value) != `48` {
		t.Fatalf("settings %+v", got)
	}
	if len(changed) != 3 {
		t.Fatalf("reload hook called for %v", changed)
	}
	if st, _ := e.st.Terminal(e.ctx, s.ID, false); st.Mode != "counter" || st.ClientTimeoutSeconds != testLimits.CounterTimeout.Seconds() {
		t.Fatalf("terminal screen %+v", st)
	}
	audit, _ := e.st.Audit(e.ctx, s.ID, 0)
	var saved, refused int
	for _, a := range audit {
		switch a.Action {
		case "setting":
			saved++
		case "setting_refused":
			refused++
		}
	}
	if saved != 3 || refused < 5 {
		t.Fatalf("audit: %d saved, %d refused", saved, refused)
	}
}

func TestEndOfDayReport(t *testing.T) {
	e := newEnv(t)
	s := e.unlock()
	first := e.order(1000)
	e.pay(first, 1000, journal.PolicyKiosk, journal.StateApproved)
	e.sim.SetTipsEnabled(true)
	e.sim.Script(terminalsim.Approve().WithTip(200))
	tipped := e.pay(e.order(1500), 1500, journal.PolicyCounter, journal.StateApproved)
	if _, err := e.st.Refund(e.ctx, s.ID, first, 300); err != nil {
		t.Fatal(err)
	}
	if _, err := e.st.Reverse(e.ctx, s.ID, tipped.UUID); err != nil {
		t.Fatal(err)
	}
	keypadCharge(e, 777)

	r, err := e.st.Report(e.ctx, s.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	byKind := func(ts Totals) map[string]Total {
		m := map[string]Total{}
		for _, t := range ts.ByKind {
			m[t.Kind] = t
		}
		return m
	}
	j, term := byKind(r.Journal), byKind(r.Terminal)
	if d := j[KindDebit]; d.Count != 2 || d.Amount != 2500 || d.Gift != 200 {
		t.Fatalf("journal debits %+v", d)
	}
	if j[KindRefund].Sum() != 300 || j[KindReversal].Sum() != 1700 || r.Journal.Net != 2700-300-1700 {
		t.Fatalf("journal totals %+v", r.Journal)
	}
	if d := term[KindDebit]; d.Count != 3 || d.Amount != 3277 || d.Gift != 200 {
		t.Fatalf("terminal debits %+v", d)
	}
	if term[KindRefund].Sum() != 300 || term[KindReversal].Sum() != 1700 || r.Terminal.Net != 3477-300-1700 {
		t.Fatalf("terminal totals %+v", r.Terminal)
	}
	for _, ts := range append(r.Journal.ByScheme, r.Terminal.ByScheme...) {
		if ts.Scheme == "" || ts.Scheme == "?" {
			t.Fatalf("a total without scheme: %+v", ts)
		}
	}
	if len(r.Differences) != 1 || r.Differences[0].Kind != DiffTerminalOnly || r.Differences[0].TerminalAmount != 777 {
		t.Fatalf("differences %+v", r.Differences)
	}
	if r.Currency != "EUR" || r.Day != time.Now().Format(time.DateOnly) {
		t.Fatalf("report %+v", r)
	}

	rd := csv.NewReader(strings.NewReader(string(r.CSV())))
	rd.FieldsPerRecord = -1
	if _, err := rd.ReadAll(); err != nil {
		t.Fatalf("CSV does not parse: %v", err)
	}
	text := string(r.CSV())
	for _, want := range []string{
		"by_kind,journal,debit,,2,25.00,2.00,27.00,EUR",
		"by_kind,terminal,debit,,3,32.77,2.00,34.77,EUR",
		"by_kind,journal,reversal,,1,17.00,0.00,17.00,EUR",
		"net,journal,,,,,,7.00,EUR",
		"difference,terminal_only,",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("CSV lacks %q:\n%s", want, text)
		}
	}
	for _, cols := range []int{32, 48} {
		out := r.Text(cols)
		for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
			if utf8.RuneCountInString(l) > cols {
				t.Fatalf("line longer than %d: %q", cols, l)
			}
		}
		if !strings.Contains(out, "DIFFERENCES: 1") || !strings.Contains(out, "NET") {
			t.Fatalf("text:\n%s", out)
		}
	}
	before := len(e.sim.Printed())
	if err := e.st.PrintReport(e.ctx, s.ID, r); err != nil {
		t.Fatal(err)
	}
	if p := e.sim.Printed(); len(p) != before+1 || !strings.Contains(p[len(p)-1].Text, "END OF DAY") {
		t.Fatalf("printed %+v", p)
	}
}

// A reversal of a transaction the journal did not know was, in earlier
// versions, an audit line only: the comparison and the report of its day
// still find it there, and another day's do not. Today's reversals are
// attempts, counted once.
func TestAuditReversalsFoundForTheirDayOnly(t *testing.T) {
	e := newEnv(t)
	s := e.unlock()
	keypadCharge(e, 430)
	cmp, err := e.st.Compare(e.ctx, s.ID, "")
	if err != nil || len(cmp.Differences) != 1 || cmp.Differences[0].Kind != DiffTerminalOnly {
		t.Fatalf("compare before the reversal %+v, %v", cmp, err)
	}
	res, err := e.st.ReverseTransaction(e.ctx, s.ID, cmp.Differences[0].TransactionID)
	if err != nil {
		t.Fatal(err)
	}

	// Reversals of other days, written as earlier versions wrote them.
	start, _, err := e.st.dayBounds("")
	if err != nil {
		t.Fatal(err)
	}
	line := func(at time.Time, action, reversalTx string, amount int64) {
		t.Helper()
		rec, _ := json.Marshal(reversalRecord{ReversalTransactionID: reversalTx, InitialTransactionID: "init-" + reversalTx, Amount: amount})
		if err := e.db.AppendAudit(e.ctx, journal.AuditRecord{At: at, Who: s.Who, Action: action, Subject: "init-" + reversalTx,
			Detail: reversalNotePrefix + string(rec) + "\nterminal answered: {}"}); err != nil {
			t.Fatal(err)
		}
	}
	yesterday := start.Add(-margin - time.Minute) // just outside today's window
	old := start.AddDate(0, 0, -3).Add(10 * time.Hour)
	line(yesterday, actionReversal, "rv-yesterday", 111)
	line(old, actionReversal, "rv-old", 999)
	line(old.Add(time.Minute), actionAttemptNote, "rv-old-note", 250)
	// Not a reversal: an ordinary note, and a refused reversal.
	if err := e.db.AppendAudit(e.ctx, journal.AuditRecord{At: old, Who: s.Who, Action: actionAttemptNote, Detail: "receipt reprinted"}); err != nil {
		t.Fatal(err)
	}
	if err := e.db.AppendAudit(e.ctx, journal.AuditRecord{At: old, Who: s.Who, Action: actionReversal, Detail: "reversal of x for 5 refused by the terminal (TOO_LATE)"}); err != nil {
		t.Fatal(err)
	}

	reversals := func(day string) map[string]int64 {
		t.Helper()
		d, err := e.st.readDay(e.ctx, day)
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]int64{}
		for _, r := range d.reversals {
			m[r.rec.ReversalTransactionID] = r.rec.Amount
		}
		return m
	}
	journalReversals := func(day string) Total {
		t.Helper()
		r, err := e.st.Report(e.ctx, s.ID, day)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range r.Differences {
			if d.Kind == DiffReversalUnknown {
				t.Fatalf("report of %q: %+v", day, d)
			}
		}
		for _, k := range r.Journal.ByKind {
			if k.Kind == KindReversal {
				return k
			}
		}
		return Total{}
	}
	dayOf := func(at time.Time) string { return at.Format(time.DateOnly) }

	// Today: the reversal made at the kiosk is an attempt, not an audit
	// line, and nothing of the other days.
	if got := reversals(""); len(got) != 0 {
		t.Fatalf("today's audit reversals %v, want none", got)
	}
	cmp, err = e.st.Compare(e.ctx, s.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range cmp.Differences {
		if d.Kind == DiffReversalUnknown {
			t.Fatalf("the kiosk's own reversal is unknown to the comparison: %+v", d)
		}
	}
	found := false
	for _, h := range cmp.Terminal {
		if h.TransactionID == res.ReversalTransactionID {
			found = h.InJournal
		}
	}
	if !found {
		t.Fatalf("the reversal %s is not marked as the kiosk's: %+v", res.ReversalTransactionID, cmp.Terminal)
	}
	if k := journalReversals(""); k.Count != 1 || k.Sum() != 430 {
		t.Fatalf("today's journal reversals %+v", k)
	}

	// The other days: their own lines only.
	if got := reversals(dayOf(yesterday)); len(got) != 1 || got["rv-yesterday"] != 111 {
		t.Fatalf("yesterday's reversals %v", got)
	}
	if k := journalReversals(dayOf(yesterday)); k.Count != 1 || k.Sum() != 111 {
		t.Fatalf("yesterday's journal reversals %+v", k)
	}
	if got := reversals(dayOf(old)); len(got) != 2 || got["rv-old"] != 999 || got["rv-old-note"] != 250 {
		t.Fatalf("reversals three days ago %v", got)
	}
	if k := journalReversals(dayOf(old)); k.Count != 2 || k.Sum() != 1249 {
		t.Fatalf("journal reversals three days ago %+v", k)
	}
	if got := reversals(dayOf(old.AddDate(0, 0, -1))); len(got) != 0 {
		t.Fatalf("reversals four days ago %v", got)
	}
}

// TestCurrencyCheckedAgainstTheTerminal: the kiosk's currency must be the
// one the terminal charges in (its history says which); a terminal that
// does not answer leaves the setting as it was.
func TestCurrencyCheckedAgainstTheTerminal(t *testing.T) {
	e := newEnv(t)
	s := e.unlock()
	// An empty history cannot disagree.
	if err := e.st.SaveSetting(e.ctx, s.ID, settings.SettingCurrency, json.RawMessage(`"CHF"`)); err != nil {
		t.Fatal(err)
	}
	e.pay(e.order(500), 500, journal.PolicyKiosk, journal.StateApproved) // the simulator charges in EUR
	se := wantCode(t, e.st.SaveSetting(e.ctx, s.ID, settings.SettingCurrency, json.RawMessage(`"GBP"`)), EINVALID)
	if !strings.Contains(se.Message, "in EUR") {
		t.Fatalf("message %q", se.Message)
	}
	wantCode(t, e.st.SaveSetting(e.ctx, s.ID, settings.SettingCurrency, json.RawMessage(`"USD"`)), EINVALID)
	if err := e.st.SaveSetting(e.ctx, s.ID, settings.SettingCurrency, json.RawMessage(`"EUR"`)); err != nil {
		t.Fatal(err)
	}
	e.sim.Close()
	wantCode(t, e.st.SaveSetting(e.ctx, s.ID, settings.SettingCurrency, json.RawMessage(`"CHF"`)), ETERMINAL)
	if raw, _, _ := e.db.Setting(e.ctx, settings.SettingCurrency); string(raw) != `"EUR"` {
		t.Fatalf("stored %s, want EUR kept", raw)
	}
}

// TestSettingsListWithADamagedRow: a stored value that is not JSON must not
// make the whole list unsendable: it is shown as text, marked ignored.
func TestSettingsListWithADamagedRow(t *testing.T) {
	e := newEnv(t)
	s := e.unlock()
	conn, err := sql.Open("sqlite", e.db.Path())
	if err != nil {
		t.Fatal(err)
	}
	// The table checks json_valid: only a damaged file gets such a row.
	_, err = conn.Exec(`PRAGMA ignore_check_constraints = ON;
		INSERT INTO settings (key, value, updated_at) VALUES ('` + settings.SettingIdleSeconds + `', '{9', 0)`)
	conn.Close()
	if err != nil {
		t.Fatal(err)
	}
	list, err := e.st.Settings(e.ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := json.Marshal(list); err != nil {
		t.Fatalf("the list cannot be sent: %v", err)
	}
	for _, st := range list {
		if st.Key == settings.SettingIdleSeconds && (!st.Ignored || string(st.Stored) != `"{9"`) {
			t.Fatalf("damaged row shown as %+v", st)
		}
	}
}

// The day's sales follow the dining mode each order was taken with: the
// same kind of product is taxed at its eat-in rate for one order and its
// take-away rate for the other; an unpaid order is no sale; an amount
// keyed at the counter is a sale whose VAT is not known.
func TestReportSalesByDiningAndRate(t *testing.T) {
	e := newEnv(t)
	s := e.unlock()
	order := func(dining string, total int64, lines ...map[string]any) string {
		e.orders++
		id := fmt.Sprintf("%s-%03d", time.Now().Format("20060102"), e.orders)
		data, _ := json.Marshal(map[string]any{"number": fmt.Sprint(e.orders), "language": "fr", "method": "card", "dining": dining, "lines": lines})
		if err := e.db.CreateOrder(e.ctx, journal.Order{ID: id, Currency: "EUR", Total: total, Data: data}); err != nil {
			t.Fatal(err)
		}
		return id
	}
	line := func(total int64, rate int) map[string]any {
		return map[string]any{"id": fmt.Sprint("l", total), "productId": "p", "name": map[string]string{"fr": "Plat"}, "qty": 1, "unitPrice": total, "total": total, "vatRate": rate}
	}
	e.pay(order("eat_in", 1100, line(1100, 1000)), 1100, journal.PolicyKiosk, journal.StateApproved)
	e.pay(order("take_away", 1555, line(1055, 550), line(500, 2000)), 1555, journal.PolicyKiosk, journal.StateApproved)
	e.sim.Script(terminalsim.Decline())
	e.pay(order("eat_in", 800, line(800, 1000)), 800, journal.PolicyKiosk, journal.StateDeclined)
	e.pay(order("", 700), 700, journal.PolicyCounter, journal.StateApproved)

	r, err := e.st.Report(e.ctx, s.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	want := []Sale{
		{Dining: "", Rate: -1, Orders: 1, Gross: 700, Tax: 0, Net: 700},
		{Dining: "eat_in", Rate: 1000, Orders: 1, Gross: 1100, Tax: 100, Net: 1000},
		{Dining: "take_away", Rate: 2000, Orders: 1, Gross: 500, Tax: 83, Net: 417},
		{Dining: "take_away", Rate: 550, Orders: 1, Gross: 1055, Tax: 55, Net: 1000},
	}
	if !reflect.DeepEqual(r.Sales, want) {
		t.Fatalf("sales\n got %+v\nwant %+v", r.Sales, want)
	}
	text := r.Text(48)
	for _, w := range []string{"SALES (VAT included)", "eat in 10 % x1", "take away 5.5 % x1", "not asked VAT ? x1"} {
		if !strings.Contains(text, w) {
			t.Errorf("printed report lacks %q:\n%s", w, text)
		}
	}
	if csvText := string(r.CSV()); !strings.Contains(csvText, "sales,take_away,5.5,1,10.55,0.55,10.00,EUR") {
		t.Errorf("CSV lacks the take-away 5.5 %% row:\n%s", csvText)
	}
}

// A payment link is paid on the provider's page, never on the terminal: the
// comparison with the terminal's history does not call it missing.
func TestCompareLeavesPaymentLinksOut(t *testing.T) {
	e := newEnv(t)
	s := e.unlock()
	id := e.order(1500)
	uuid := "0192f0c4-8b1e-7c3a-9d2e-00000000a11c"
	if _, err := e.db.PrepareAttempt(e.ctx, journal.Attempt{UUID: uuid, OrderID: id, Kind: journal.KindDebit, Channel: journal.ChannelLink,
		Amount: 1500, Policy: journal.PolicyKiosk, Terminal: "links/" + id, RequestBody: []byte(`{"cart_id":"x"}`)}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.db.MarkSent(e.ctx, uuid); err != nil {
		t.Fatal(err)
	}
	if _, err := e.db.Transition(e.ctx, uuid, journal.StateSent, journal.StateApproved, journal.TransitionInfo{
		TransactionID: "trs_a,trs_b", Charged: &journal.Charge{Amount: 1500}}); err != nil {
		t.Fatal(err)
	}
	cmp, err := e.st.Compare(e.ctx, s.ID, "")
	if err != nil || len(cmp.Journal) != 1 || len(cmp.Differences) != 0 {
		t.Fatalf("compare %+v, %v", cmp, err)
	}
	rep, err := e.st.Report(e.ctx, s.ID, "")
	if err != nil || len(rep.Differences) != 0 || len(rep.Journal.ByScheme) != 1 || rep.Journal.ByScheme[0].Scheme != "link" || rep.Journal.ByScheme[0].Amount != 1500 {
		t.Fatalf("report %+v, %v", rep, err)
	}
}

// The report is in the kiosk's currency: a payment the terminal made in
// another (a CHF kiosk whose terminal's merchant profile is in euros) is
// not added to its totals, and is a difference on both sides.
func TestReportLeavesAnotherCurrencyOutOfItsTotals(t *testing.T) {
	e := newEnv(t)
	s := e.unlock()
	if err := e.db.SetSetting(e.ctx, settings.SettingCurrency, json.RawMessage(`"CHF"`)); err != nil {
		t.Fatal(err)
	}
	if err := e.db.CreateOrder(e.ctx, journal.Order{ID: "chf-1", Currency: "CHF", Total: 500}); err != nil {
		t.Fatal(err)
	}
	e.pay("chf-1", 500, journal.PolicyKiosk, journal.StateApproved) // the simulator charges in EUR
	r, err := e.st.Report(e.ctx, s.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	if r.Currency != "CHF" || r.Journal.Net != 0 || r.Terminal.Net != 0 || len(r.Journal.ByKind) != 0 || len(r.Terminal.ByKind) != 0 {
		t.Fatalf("report %+v", r)
	}
	var journalSide, terminalSide bool
	for _, d := range r.Differences {
		if d.Kind == DiffCurrency && d.AttemptUUID != "" && strings.Contains(d.Message, "EUR") {
			journalSide = true
		}
		if d.Kind == DiffCurrency && d.AttemptUUID == "" && d.TerminalAmount == 500 {
			terminalSide = true
		}
	}
	if !journalSide || !terminalSide {
		t.Fatalf("differences %+v", r.Differences)
	}
	if out := r.Text(48); !strings.Contains(out, "CHF") || strings.Contains(out, "€") {
		t.Fatalf("text:\n%s", out)
	}
}
