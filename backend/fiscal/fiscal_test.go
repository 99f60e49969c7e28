package fiscal

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/receipt"
	"github.com/google/uuid"
	_ "modernc.org/sqlite"
)

type env struct {
	t      *testing.T
	ctx    context.Context
	dir    string
	db     *journal.DB
	ledger *Ledger
	n      int
}

func newEnv(t *testing.T) *env {
	e := &env{t: t, ctx: t.Context(), dir: t.TempDir()}
	e.open()
	return e
}

func (e *env) open() {
	e.t.Helper()
	db, err := journal.Open(e.ctx, e.dir)
	if err != nil {
		e.t.Fatal(err)
	}
	key, err := LoadOrCreateKey(e.dir)
	if err != nil {
		e.t.Fatal(err)
	}
	e.db, e.ledger = db, NewLedger(db, key, "kiosk-1", "test")
	e.t.Cleanup(func() { db.Close() })
}

// attempt journals an attempt of kind on the order, approved for amount.
func (e *env) attempt(order string, kind journal.Kind, amount int64, initial string) journal.Attempt {
	e.t.Helper()
	e.n++
	id := uuid.Must(uuid.NewV7()).String()
	policy := map[journal.Kind]journal.Policy{journal.KindDebit: journal.PolicyKiosk, journal.KindRefund: journal.PolicyRefund,
		journal.KindReversal: journal.PolicyReversal}[kind]
	body, _ := json.Marshal(map[string]any{"amount": amount})
	if _, err := e.db.PrepareAttempt(e.ctx, journal.Attempt{UUID: id, OrderID: order, Kind: kind, Amount: amount, Policy: policy,
		Terminal: "sim", InitialTransactionID: initial, RequestBody: body}); err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.db.MarkSent(e.ctx, id); err != nil {
		e.t.Fatal(err)
	}
	a, err := e.db.Transition(e.ctx, id, journal.StateSent, journal.StateApproved, journal.TransitionInfo{
		TransactionID: "TX-" + id[len(id)-6:], Charged: &journal.Charge{Amount: amount}})
	if err != nil {
		e.t.Fatal(err)
	}
	return a
}

// sale records a paid order of the kiosk's shape: a coffee at 10 % and a
// beer at 20 %.
func (e *env) sale(id string) journal.Attempt {
	e.t.Helper()
	data := `{"number":"7","language":"fr","dining":"eat_in","lines":[
		{"name":{"fr":"Café"},"qty":2,"unitPrice":250,"total":500,"vatRate":1000},
		{"name":{"fr":"Bière"},"qty":1,"unitPrice":600,"total":600,"vatRate":2000}]}`
	if err := e.db.CreateOrder(e.ctx, journal.Order{ID: id, Currency: "EUR", Total: 1100, Data: json.RawMessage(data)}); err != nil {
		e.t.Fatal(err)
	}
	a := e.attempt(id, journal.KindDebit, 1100, "")
	return a
}

func (e *env) record() int {
	e.t.Helper()
	n, err := e.ledger.RecordTickets(e.ctx, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	return n
}

func (e *env) tickets() []Ticket { return payloads[Ticket](e, journal.FiscalTicket) }

// payloads decodes the payloads of a chain's records, oldest first.
func payloads[T any](e *env, kind string) []T {
	e.t.Helper()
	rs, err := e.db.FiscalRecords(e.ctx, kind, 0, 0)
	if err != nil {
		e.t.Fatal(err)
	}
	var out []T
	for _, r := range rs {
		var v T
		if err := json.Unmarshal(r.Payload, &v); err != nil {
			e.t.Fatal(err)
		}
		out = append(out, v)
	}
	return out
}

func (e *env) verify() Verification {
	e.t.Helper()
	v, err := e.ledger.Verify(e.ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	return v
}

// A paid order is a sale ticket with everything its receipt says, a
// refund a negative ticket referring to it; each is written once, numbered
// without gaps, and the chain verifies.
func TestTicketsOfSalesAndCredits(t *testing.T) {
	e := newEnv(t)
	debit := e.sale("o-1")
	e.sale("o-2")
	if n := e.record(); n != 2 {
		t.Fatalf("%d tickets", n)
	}
	e.attempt("o-1", journal.KindRefund, 550, "")
	e.attempt("o-2", journal.KindReversal, 1100, debitOf(t, e, "o-2").TransactionID)
	if n := e.record(); n != 2 {
		t.Fatalf("%d credits", n)
	}
	if n := e.record(); n != 0 {
		t.Fatalf("recorded again: %d", n)
	}
	ts := e.tickets()
	s := ts[0]
	if s.Number != 1 || s.Type != TicketSale || s.TotalInclTax != 1100 || len(s.Lines) != 2 || s.Lines[0].VATRate != 1000 ||
		s.Payments[0].Amount != 1100 || s.Payments[0].TransactionID != debit.TransactionID || s.Kiosk != "kiosk-1" || s.Dining != "eat_in" {
		t.Fatalf("sale %+v", s)
	}
	if len(s.VAT) != 2 || s.VAT[0] != (VAT{Rate: 1000, Gross: 500, Tax: 45, Net: 455}) || s.VAT[1] != (VAT{Rate: 2000, Gross: 600, Tax: 100, Net: 500}) ||
		s.TotalExclTax != 955 {
		t.Fatalf("sale VAT %+v excl %d", s.VAT, s.TotalExclTax)
	}
	refund := ts[2]
	if refund.Number != 3 || refund.Type != TicketRefund || refund.RefersTo != 1 || refund.TotalInclTax != -550 {
		t.Fatalf("refund %+v", refund)
	}
	var gross int64
	for _, v := range refund.VAT {
		gross += v.Gross
		if v.Gross > 0 || v.Gross != v.Net+v.Tax {
			t.Fatalf("refund VAT %+v", refund.VAT)
		}
	}
	if gross != -550 {
		t.Fatalf("refund VAT adds up to %d", gross)
	}
	// One line for what was given back, its net the rates' nets, the
	// money going back the way it came.
	if l := refund.Lines; len(l) != 1 || l[0].Qty != -1 || l[0].UnitPrice != 550 || l[0].Total != -550 {
		t.Fatalf("refund lines %+v", l)
	}
	if net := refund.VAT[0].Net + refund.VAT[1].Net; refund.TotalExclTax != net || net >= 0 {
		t.Fatalf("refund excl. tax %d, the rates' nets %d", refund.TotalExclTax, net)
	}
	if p := refund.Payments; len(p) != 1 || p[0].Amount != -550 || p[0].Means != "card" {
		t.Fatalf("refund payments %+v", p)
	}
	if rev := ts[3]; rev.Type != TicketReversal || rev.RefersTo != 2 || rev.TotalInclTax != -1100 || rev.VAT[0].Gross != -500 {
		t.Fatalf("reversal %+v", rev)
	}
	if v := e.verify(); !v.OK || v.Records[journal.FiscalTicket] != 4 {
		t.Fatalf("verify %+v", v)
	}
}

func debitOf(t *testing.T, e *env, order string) journal.Attempt {
	atts, err := e.db.AttemptsForOrder(e.ctx, order)
	if err != nil || len(atts) == 0 {
		t.Fatal(err)
	}
	return atts[0]
}

// tamper changes the database file behind the journal's back, as a SQL
// client would: the journal closed, its triggers dropped first.
func (e *env) tamper(sqls ...string) {
	e.t.Helper()
	path := e.db.Path()
	e.db.Close()
	raw, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		e.t.Fatal(err)
	}
	for _, q := range append([]string{"DROP TRIGGER fiscal_records_no_update", "DROP TRIGGER fiscal_records_no_delete"}, sqls...) {
		if _, err := raw.Exec(q); err != nil {
			e.t.Fatalf("%s: %v", q, err)
		}
	}
	raw.Close()
	e.open()
}

// Any change to the records shows, and Verify names the first record it
// breaks: an amount changed, a record deleted, two swapped, the last ones
// removed.
func TestTamperedRecordsAreNamed(t *testing.T) {
	for _, tc := range []struct {
		name string
		sql  []string
		seq  int64
		why  string
	}{
		{"an amount changed", []string{`UPDATE fiscal_records SET payload = replace(payload, '"totalInclTax":1100', '"totalInclTax":100') WHERE kind = 'ticket' AND seq = 2`}, 2, "signature"},
		{"a record deleted", []string{`DELETE FROM fiscal_records WHERE kind = 'ticket' AND seq = 2`}, 3, "numbered 3 where 2"},
		{"two records swapped", []string{
			`UPDATE fiscal_records SET seq = 1001 WHERE kind = 'ticket' AND seq = 1`,
			`UPDATE fiscal_records SET seq = 1 WHERE kind = 'ticket' AND seq = 2`,
			`UPDATE fiscal_records SET seq = 2 WHERE kind = 'ticket' AND seq = 1001`,
		}, 2, "numbered 2 where 1"},
		{"the last ones removed", []string{`DELETE FROM fiscal_records WHERE kind = 'ticket' AND seq >= 3`}, 3, "removed from its end"},
		// The last signature is followed by no record whose previous
		// signature would differ: only its own check can see it. Its final
		// character before the padding carries four bits that decode to
		// nothing; a lenient decoder would read the same signature.
		{"the last signature respelled", []string{`UPDATE fiscal_records SET sig = substr(sig, 1, length(sig) - 3) || substr(` + b64Alphabet + `,
			(((instr(` + b64Alphabet + `, substr(sig, -3, 1)) - 1) & 48) | (instr(` + b64Alphabet + `, substr(sig, -3, 1)) & 15)) + 1, 1) || '=='
			WHERE kind = 'ticket' AND seq = 4`}, 4, "signature"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			for i := range 4 {
				e.sale("o-" + string(rune('a'+i)))
			}
			e.record()
			if _, err := e.ledger.Event(e.ctx, EventStart, "", ""); err != nil {
				t.Fatal(err)
			}
			if v := e.verify(); !v.OK {
				t.Fatalf("before %+v", v.Broken)
			}
			e.tamper(tc.sql...)
			v := e.verify()
			if v.OK || v.Broken == nil || v.Broken.Kind != journal.FiscalTicket || v.Broken.Seq != tc.seq || !strings.Contains(v.Broken.Why, tc.why) {
				t.Fatalf("verify %+v %+v", v, v.Broken)
			}
		})
	}
}

// b64Alphabet is the standard base64 alphabet as a SQL string.
const b64Alphabet = `'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'`

// The journal refuses to change or remove a record.
func TestRecordsAreInalterable(t *testing.T) {
	e := newEnv(t)
	e.sale("o-1")
	e.record()
	path := e.db.Path()
	raw, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	for _, q := range []string{`UPDATE fiscal_records SET payload = '{}'`, `DELETE FROM fiscal_records`,
		`INSERT OR REPLACE INTO fiscal_records (id, kind, seq, at, payload, prev_sig, sig) SELECT id, kind, seq, at, '{}', prev_sig, sig FROM fiscal_records`} {
		if _, err := raw.Exec(q); err == nil || !strings.Contains(err.Error(), "inalterable") {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// The key is made once, private, and read back the same; a damaged key
// file is an error, never a new key.
func TestSigningKey(t *testing.T) {
	dir := t.TempDir()
	k1, err := LoadOrCreateKey(dir)
	if err != nil {
		t.Fatal(err)
	}
	k2, err := LoadOrCreateKey(dir)
	if err != nil || !k1.Equal(k2) {
		t.Fatalf("read back %v", err)
	}
	if fi, err := os.Stat(filepath.Join(dir, PrivateKeyFile)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("private key file %v %v", fi.Mode(), err)
	}
	pubRaw, err := os.ReadFile(filepath.Join(dir, PublicKeyFile))
	if err != nil {
		t.Fatal(err)
	}
	if pub, err := ParsePublicKey(pubRaw); err != nil || !pub.Equal(k1.Public()) {
		t.Fatalf("public key %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, PrivateKeyFile), []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadOrCreateKey(dir); err == nil {
		t.Fatal("a damaged key was replaced")
	}
}

// A receipt's ticket number is recorded when it is printed, once; a
// reprint is recorded and numbered as a copy.
func TestRecordSaleAndDuplicates(t *testing.T) {
	e := newEnv(t)
	if err := e.db.CreateOrder(e.ctx, journal.Order{ID: "open", Currency: "EUR", Total: 500}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.ledger.RecordSale(e.ctx, "open"); err == nil {
		t.Fatal("an order not paid has a sale ticket")
	}
	e.sale("o-1")
	f, err := e.ledger.RecordSale(e.ctx, "o-1")
	if err != nil || f.Ticket != 1 || f.Till != "kiosk-1" || f.Duplicate != 0 {
		t.Fatalf("sale %+v %v", f, err)
	}
	if again, err := e.ledger.RecordSale(e.ctx, "o-1"); err != nil || again.Ticket != 1 {
		t.Fatalf("again %+v %v", again, err)
	}
	if n := e.record(); n != 0 {
		t.Fatalf("recorded twice: %d", n)
	}
	for k := 1; k <= 2; k++ {
		d, err := e.ledger.Duplicate(e.ctx, "o-1")
		if err != nil || d.Ticket != 1 || d.Duplicate != k {
			t.Fatalf("copy %d: %+v %v", k, d, err)
		}
	}
	if v := e.verify(); !v.OK || v.Records[journal.FiscalTicket] != 1 || v.Records[journal.FiscalEvent] != 2 {
		t.Fatalf("verify %+v", v)
	}
}

// A start says what changed since the last one: the software's version, a
// clock moved back.
func TestStartRecordsUpdatesAndClockJumps(t *testing.T) {
	clock := &testClock{t: time.Date(2026, 11, 24, 9, 0, 0, 0, paris)}
	e := newClockedEnv(t, clock)
	if err := e.ledger.Start(e.ctx, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := e.ledger.Event(e.ctx, EventStop, "", ""); err != nil {
		t.Fatal(err)
	}
	e.ledger.Software = "Comptoir 2"
	clock.Set(clock.Now().Add(-time.Hour))
	if err := e.ledger.Start(e.ctx, ""); err != nil {
		t.Fatal(err)
	}
	rs, err := e.db.FiscalRecords(e.ctx, journal.FiscalEvent, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, r := range rs {
		var ev Event
		if err := json.Unmarshal(r.Payload, &ev); err != nil {
			t.Fatal(err)
		}
		types = append(types, ev.Type)
	}
	if strings.Join(types, ",") != "start,stop,clock,update,start" {
		t.Fatalf("events %v", types)
	}
}

// A credit's VAT is the sale's, rate by rate, in the proportion given
// back, negative; the cents rounding leaves go to the largest rate so the
// rates add up to exactly what was given back; all of it gives back each
// rate whole; nothing to share shares nothing.
func TestProrateSharesACreditByRate(t *testing.T) {
	neg := func(rate int, gross int64) VAT {
		tax := receipt.TaxIncluded(gross, rate)
		return VAT{Rate: rate, Gross: -gross, Tax: -tax, Net: -(gross - tax)}
	}
	sale := []VAT{{Rate: 1000, Gross: 202}, {Rate: 550, Gross: 101}}
	tests := []struct {
		name        string
		vat         []VAT
		part, whole int64
		want        []VAT
	}{
		{"a third, a cent of rounding to the largest rate", sale, 100, 303, []VAT{neg(550, 33), neg(1000, 67)}},
		{"half", []VAT{{Rate: 1000, Gross: 500}, {Rate: 2000, Gross: 600}}, 550, 1100, []VAT{neg(1000, 250), neg(2000, 300)}},
		{"all of it", sale, 303, 303, []VAT{neg(550, 101), neg(1000, 202)}},
		// The same sale shares a credit the same way every time: of two
		// rates as large, the cents go to the first in the sale's order.
		{"a tie, the cents to the first of the largest", []VAT{{Rate: 550, Gross: 500}, {Rate: 2000, Gross: 500}, {Rate: 1000, Gross: 100}},
			367, 1100, []VAT{neg(550, 168), neg(1000, 33), neg(2000, 166)}},
		{"nothing given back", sale, 0, 303, []VAT{}},
		{"a sale of nothing", sale, 100, 0, []VAT{}},
		{"no rate", nil, 100, 303, []VAT{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := prorate(tt.vat, tt.part, tt.whole)
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Fatalf("prorate(%d of %d) = %+v, want %+v", tt.part, tt.whole, got, tt.want)
			}
		})
	}
}
