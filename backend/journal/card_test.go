package journal

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestSplitCardKeepsTheRestByteForByte(t *testing.T) {
	tests := []struct {
		name, raw, kept, card string
	}{
		{"local answer", `{"status":"ok","cardToken":"tok-1","amount":130,"clientCardTicket":"CARTE\nVISA","scheme":"VISA"}`,
			`{"status":"ok","amount":130,"scheme":"VISA"}`, `{"cardToken":"tok-1","clientCardTicket":"CARTE\nVISA"}`},
		{"nothing to take", `{"status":"ok", "amount": 130}`, `{"status":"ok", "amount": 130}`, ""},
		{"nested values kept as written", `{"cart":{"transactions":[{"pan":"4970**1234"}]},"companyTicket":"X"}`,
			`{"cart":{"transactions":[{"pan":"4970**1234"}]}}`, `{"companyTicket":"X"}`},
		{"a transaction one level down", `{"transactionDetails":{"askedAmount":1800,"clientTicket":"C","pan":"4970**1234"},"status":"ok"}`,
			`{"transactionDetails":{"askedAmount":1800,"pan":"4970**1234"},"status":"ok"}`, `{"transactionDetails":{"clientTicket":"C"}}`},
		{"at both levels", `{"cardToken":"t","data":{"transaction":{"companyTicket":"M","id":1}},"more":{"x":1}}`,
			`{"data":{"transaction":{"id":1}},"more":{"x":1}}`, `{"cardToken":"t","data":{"transaction":{"companyTicket":"M"}}}`},
		{"deeper than looked for", `{"a":{"b":{"c":{"d":{"e":{"cardToken":"t"}}}}}}`, `{"a":{"b":{"c":{"d":{"e":{"cardToken":"t"}}}}}}`, ""},
		{"not an object", `[1,2]`, `[1,2]`, ""},
		{"not JSON", `Internal Server Error`, `Internal Server Error`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kept, card := splitCard([]byte(tt.raw))
			if string(kept) != tt.kept || string(card) != tt.card {
				t.Fatalf("split %s\n kept %s\n card %s", tt.raw, kept, card)
			}
			if tt.card != "" {
				back := withCard(kept, nullStr(string(card)))
				var a, b map[string]any
				if json.Unmarshal(back, &a) != nil || json.Unmarshal([]byte(tt.raw), &b) != nil || !reflect.DeepEqual(a, b) {
					t.Fatalf("merged back %s", back)
				}
			}
		})
	}
}

func nullStr(s string) sql.NullString { return sql.NullString{String: s, Valid: true} }

// Card details (the card's token, the card tickets) are kept apart from
// the append-only journal: the events and the attempt row hold none of
// them, the attempt read back carries them for receipts while they are
// kept, and a purge removes them without touching money, states, events
// or fiscal records.
func TestCardDetailsAreKeptApartAndPurged(t *testing.T) {
	ctx := t.Context()
	db := openMemory(t)
	newOrder(t, db, "card", "EUR", 130)
	id := newUUID(t)
	a, err := db.PrepareAttempt(ctx, Attempt{UUID: id, OrderID: "card", Kind: KindDebit, Amount: 130,
		Policy: PolicyKiosk, Terminal: "T1", RequestBody: debitBody(id, "card", 130)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.MarkSent(ctx, a.UUID); err != nil {
		t.Fatal(err)
	}
	raw := `{"status":"ok","transactionId":"tx-9","amount":130,"currencyCode":"EUR","cardToken":"tok-secret",` +
		`"clientCardTicket":"CLIENT TICKET","merchantCardTicket":"MERCHANT TICKET","scheme":"VISA"}`
	if _, err := db.Transition(ctx, a.UUID, StateSent, StateApproved, TransitionInfo{Response: []byte(raw),
		TransactionID: "tx-9", Charged: &Charge{Amount: 130, Currency: "EUR"}}); err != nil {
		t.Fatal(err)
	}
	stored := func(q string) string {
		t.Helper()
		var out strings.Builder
		rows, err := db.r.QueryContext(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var s *string
			if err := rows.Scan(&s); err != nil {
				t.Fatal(err)
			}
			if s != nil {
				out.WriteString(*s)
			}
		}
		return out.String()
	}
	journaled := stored(`SELECT raw_response FROM attempt_events`) + stored(`SELECT response FROM attempts`)
	for _, secret := range []string{"tok-secret", "CLIENT TICKET", "MERCHANT TICKET"} {
		if strings.Contains(journaled, secret) {
			t.Fatalf("%q is in the append-only journal: %s", secret, journaled)
		}
	}
	if !strings.Contains(journaled, `"transactionId":"tx-9"`) || !strings.Contains(journaled, `"scheme":"VISA"`) {
		t.Fatalf("the money's facts are not journaled: %s", journaled)
	}
	got, _ := db.Attempt(ctx, a.UUID)
	if !strings.Contains(string(got.Response), "CLIENT TICKET") {
		t.Fatalf("the receipt's card ticket is not read back while kept: %s", got.Response)
	}

	eventsBefore := countEvents(t, db, a.UUID)
	moneyBefore, _ := db.OrderMoney(ctx, "card")
	if n, err := db.PurgeCardDetails(ctx, time.Now().Add(-time.Hour)); err != nil || n != 0 {
		t.Fatalf("purge of what is within the retention: %d, %v", n, err)
	}
	if n, err := db.PurgeCardDetails(ctx, time.Now().Add(time.Hour)); err != nil || n != 1 {
		t.Fatalf("purge: %d, %v", n, err)
	}
	got, _ = db.Attempt(ctx, a.UUID)
	if strings.Contains(string(got.Response), "TICKET") || got.State != StateApproved || got.ChargedAmount != 130 || got.TransactionID != "tx-9" {
		t.Fatalf("after the purge %+v (%s)", got, got.Response)
	}
	if m, _ := db.OrderMoney(ctx, "card"); m != moneyBefore {
		t.Fatalf("money changed by the purge: %+v → %+v", moneyBefore, m)
	}
	if n := countEvents(t, db, a.UUID); n != eventsBefore {
		t.Fatalf("events changed by the purge: %d → %d", eventsBefore, n)
	}
	if o, _ := db.Order(ctx, "card"); o.Status != OrderPaid {
		t.Fatalf("order after the purge: %s", o.Status)
	}
}

// A provider's record adopted as a charge or as money given back, and a
// raw answer kept on an audit line, carry card tickets too (the
// Webservices nest them under transactionDetails): the adopted attempt
// keeps them apart until the purge, as for an answer, and the audit line,
// which belongs to no attempt, never keeps them.
func TestAdoptedRecordsAndAuditLinesKeepNoCardData(t *testing.T) {
	ctx := t.Context()
	db := openMemory(t)
	record := func(id, typ string, amount int) []byte {
		return fmt.Appendf(nil, `{"transactionDetails":{"transactionId":%q,"type":%q,"askedAmount":%d,"status":"ok",`+
			`"clientTicket":"CLIENT TICKET %s","companyTicket":"COMPANY TICKET %s"}}`, id, typ, amount, id, id)
	}
	charge, err := db.AdoptCharge(ctx, AdoptedCharge{TransactionID: "ws-1", Amount: 900, Currency: "EUR", Terminal: "T1",
		Who: "staff:ab", Raw: record("ws-1", "debit", 900)})
	if err != nil {
		t.Fatal(err)
	}
	back, err := db.AdoptGiveBack(ctx, AdoptedGiveBack{OrderID: charge.OrderID, Kind: KindRefund, TransactionID: "ws-2",
		InitialTransactionID: "ws-1", Amount: 300, Who: "system:reconcile", Raw: record("ws-2", "refund", 300)})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.AppendAudit(ctx, AuditRecord{Who: "staff:ab", Action: "charge_adopted", Subject: "ws-1", Raw: record("ws-1", "debit", 900)}); err != nil {
		t.Fatal(err)
	}
	for _, a := range []Attempt{charge, back} {
		got, _ := db.Attempt(ctx, a.UUID)
		if !strings.Contains(string(got.Response), "CLIENT TICKET "+a.TransactionID) {
			t.Fatalf("the card ticket of %s is not read back while kept: %s", a.TransactionID, got.Response)
		}
	}
	if n, err := db.PurgeCardDetails(ctx, time.Now().Add(time.Hour)); err != nil || n != 2 {
		t.Fatalf("purge: %d, %v", n, err)
	}
	var kept strings.Builder
	for _, q := range []string{`SELECT raw_response FROM attempt_events`, `SELECT response FROM attempts`,
		`SELECT request_body FROM attempts`, `SELECT raw FROM audit`} {
		rows, err := db.r.QueryContext(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var s sql.NullString
			if err := rows.Scan(&s); err != nil {
				t.Fatal(err)
			}
			kept.WriteString(s.String)
		}
		rows.Close()
	}
	if strings.Contains(kept.String(), "TICKET") {
		t.Fatalf("card tickets kept after the purge: %s", kept.String())
	}
	if !strings.Contains(kept.String(), `"askedAmount":900`) || !strings.Contains(kept.String(), `"transactionId":"ws-2"`) {
		t.Fatalf("the money's facts are not kept: %s", kept.String())
	}
}

// A journal of the build before card details were kept apart is split
// once by the upgrade: its events and attempts lose the card fields, kept
// apart until the purge.
func TestUpgradeFromVersion6MovesCardDetails(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	old := openOldBuild(t, dir, "0001_initial.sql", "0002_audit.sql", "0003_no_replace.sql", "0004_money_back.sql",
		"0005_fiscal.sql", "0006_order_truth.sql")
	a := oldAttemptIn(t, old, StateApproved, 0)
	raw := `{"status":"ok","amount":1250,"cardToken":"tok-old","clientCardTicket":"OLD CLIENT TICKET"}`
	for _, q := range []string{
		`DROP TRIGGER attempt_events_append_only_update`,
		`UPDATE attempt_events SET raw_response = '` + raw + `' WHERE attempt_id = ` + strconv.FormatInt(a.ID, 10) + ` AND to_state = 'approved'`,
		`UPDATE attempts SET response = '` + raw + `' WHERE id = ` + strconv.FormatInt(a.ID, 10),
		`CREATE TRIGGER attempt_events_append_only_update BEFORE UPDATE ON attempt_events
		 BEGIN SELECT RAISE(ABORT, 'the audit trail is append-only'); END`,
	} {
		if _, err := old.w.ExecContext(ctx, q); err != nil {
			t.Fatal(q, err)
		}
	}
	if err := old.w.Close(); err != nil {
		t.Fatal(err)
	}
	db := openDir(t, dir)
	var leaked int
	if err := db.r.QueryRowContext(ctx, `SELECT count(*) FROM attempt_events WHERE raw_response LIKE '%tok-old%'`).Scan(&leaked); err != nil || leaked != 0 {
		t.Fatalf("%d events still hold the card token (%v)", leaked, err)
	}
	got, err := db.Attempt(ctx, a.UUID)
	if err != nil || !strings.Contains(string(got.Response), "OLD CLIENT TICKET") || !strings.Contains(string(got.Response), `"amount":1250`) {
		t.Fatalf("after the upgrade: %s, %v", got.Response, err)
	}
	// The append-only rule is back.
	_, err = db.w.ExecContext(ctx, `UPDATE attempt_events SET detail = 'x'`)
	wantCode(t, mapErr(err, "raw write"), EINVALID)
	if n, err := db.PurgeCardDetails(context.Background(), time.Now().Add(time.Hour)); err != nil || n != 1 {
		t.Fatalf("purge after the upgrade: %d, %v", n, err)
	}
}
