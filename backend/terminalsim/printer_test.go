package terminalsim

import (
	"encoding/hex"
	"net/http"
	"strings"
	"testing"

	"github.com/comptoir-pos/comptoir/backend/localapi"
)

// Rule 10: /print.
func TestPrint(t *testing.T) {
	sim, c := newSim(t, Config{})
	ctx := testCtx(t)

	wantKO(t, rawJSON(t, sim, "POST", "/print", `{}`), localapi.MsgPrintDataMissing)
	wantKO(t, rawJSON(t, sim, "POST", "/print", `{"data": "", "format": "text"}`), localapi.MsgPrintDataMissing)
	wantKO(t, rawJSON(t, sim, "POST", "/print", `{"data": null}`), localapi.MsgPrintDataMissing)
	wantKO(t, rawJSON(t, sim, "POST", "/print", `{"data": "x", "format": "pdf"}`), localapi.MsgPrintWrongFormat)
	wantKO(t, rawJSON(t, sim, "POST", "/print", `{"data": "x", "format": "TEXT"}`), localapi.MsgPrintWrongFormat)

	if _, err := c.Print(ctx, &localapi.PrintRequest{Data: "Hello\nWorld"}); err != nil {
		t.Fatal(err)
	}
	esc := append([]byte{0x1B, '@', 0x1B, 'a', 1, 0x1B, 'E', 1}, "TOTAL 12.50\n"...)
	esc = append(esc, 0x1D, 'V', 0)
	if _, err := c.Print(ctx, &localapi.PrintRequest{Data: hex.EncodeToString(esc), Format: "escpos"}); err != nil {
		t.Fatal(err)
	}
	p := sim.Printed()
	if len(p) != 2 {
		t.Fatalf("printed %+v", p)
	}
	if p[0].Text != "Hello\nWorld" || p[0].Format != "text" || p[0].Source != "print" {
		t.Errorf("text ticket %+v", p[0])
	}
	if p[1].Text != "TOTAL 12.50\n[CUT]\n" || p[1].Error != "" || len(p[1].Lines) != 2 || !p[1].Lines[0].Bold {
		t.Errorf("escpos ticket %+v", p[1])
	}

	// Undecodable ESC/POS is accepted; the log says what went wrong.
	if m := rawJSON(t, sim, "POST", "/print", `{"data": "1b5a", "format": "escpos"}`); m["status"] != "ok" {
		t.Errorf("bad escpos: %v", m)
	}
	if p := sim.Printed(); p[2].Error == "" {
		t.Errorf("bad escpos logged without error: %+v", p[2])
	}

	// Out of paper: still ok, nothing printed.
	sim.SetPaper(false)
	if _, err := c.Print(ctx, &localapi.PrintRequest{Data: "lost"}); err != nil {
		t.Fatal(err)
	}
	if n := len(sim.Printed()); n != 3 || sim.State().Dropped != 1 {
		t.Errorf("out of paper: printed %d, dropped %d", n, sim.State().Dropped)
	}
}

func TestReceiptTicketPrintedWithPayment(t *testing.T) {
	sim, c := newSim(t, Config{})
	ctx := testCtx(t)
	mustApproved(t, wait(t, ctx, payAsync(ctx, c, &localapi.PaymentRequest{
		Amount: 100, ReceiptTicket: &localapi.ReceiptTicket{Data: "Merci !"},
	})))
	if p := sim.Printed(); len(p) != 1 || p[0].Source != "payment" || p[0].Text != "Merci !" {
		t.Errorf("printed %+v", p)
	}
	sim.Script(Decline())
	mustDeclined(t, wait(t, ctx, payAsync(ctx, c, &localapi.PaymentRequest{
		Amount: 100, ReceiptTicket: &localapi.ReceiptTicket{Data: "Merci !"},
	})))
	if n := len(sim.Printed()); n != 1 {
		t.Errorf("a declined payment printed its receipt")
	}
}

// Rule 11: /share-receipt.
func TestShareReceipt(t *testing.T) {
	sim, c := newSim(t, Config{})
	ctx := testCtx(t)
	tx := mustApproved(t, wait(t, ctx, payAsync(ctx, c, &localapi.PaymentRequest{Amount: 100})))
	id := tx.TransactionID
	ticket := `"receiptTicket": {"data": "Receipt", "format": "text"}`

	for _, tt := range []struct {
		body, msg string
	}{
		{`{` + ticket + `, "medium": "email"}`, localapi.MsgShareTransactionID},
		{`{` + ticket + `, "medium": "email", "transactionId": null}`, localapi.MsgShareTransactionID},
		{`{` + ticket + `, "medium": "email", "transactionId": "unknown"}`, localapi.MsgShareTransactionID},
		{`{"transactionId": "` + id + `", "medium": "email"}`, localapi.MsgShareReceiptTicket},
		{`{"transactionId": "` + id + `", "medium": "email", "receiptTicket": null}`, localapi.MsgShareReceiptTicket},
		{`{"transactionId": "` + id + `", "medium": "email", "receiptTicket": {"data": null}}`, localapi.MsgShareReceiptTicket},
		{`{"transactionId": "` + id + `", "medium": "email", "receiptTicket": {"data": "1b40", "format": "escpos"}}`, localapi.MsgShareReceiptTicket},
		{`{"transactionId": "` + id + `", ` + ticket + `}`, localapi.MsgShareMedium},
		{`{"transactionId": "` + id + `", ` + ticket + `, "medium": "SMS"}`, localapi.MsgShareMedium},
		{`{"transactionId": "` + id + `", ` + ticket + `, "medium": "fax"}`, localapi.MsgShareMedium},
		{`{"transactionId": "` + id + `", "receiptTicket": "Receipt", "medium": "sms"}`, localapi.MsgShareBadRequest},
		{`{"transactionId": 12, ` + ticket + `, "medium": "sms"}`, localapi.MsgShareBadRequest},
		{`[]`, localapi.MsgShareBadRequest},
	} {
		wantKO(t, rawJSON(t, sim, "POST", "/share-receipt", tt.body), tt.msg)
	}
	if code, body := raw(t, sim, "POST", "/share-receipt", `{"transactionId": `); code != http.StatusBadRequest || len(body) != 0 {
		t.Errorf("malformed JSON: %d %q", code, body)
	}

	for _, medium := range []string{"service", "sms", "email", "print"} {
		_, err := c.ShareReceipt(ctx, &localapi.ShareReceiptRequest{
			TransactionID: id, Medium: medium, ReceiptTicket: &localapi.ReceiptTicket{Data: "Receipt " + medium},
		})
		if err != nil {
			t.Errorf("%s: %v", medium, err)
		}
	}
	sh := sim.Shares()
	if len(sh) != 4 || sh[1].Medium != "sms" || sh[1].TransactionID != id || sh[1].Text != "Receipt sms" {
		t.Errorf("shares %+v", sh)
	}
	if p := sim.Printed(); len(p) != 1 || p[0].Source != "share" {
		t.Errorf("medium print printed %+v", p)
	}
}

// Rule 12: /ping.
func TestPing(t *testing.T) {
	sim, c := newSim(t, Config{})
	ctx := testCtx(t)
	resp, err := c.Ping(ctx, false)
	if err != nil || resp.Status != "ok" || strings.TrimSpace(string(resp.Raw)) != `{"status":"ok"}` {
		t.Fatalf("ping %v %v", resp, err)
	}
	if sim.State().Greetings != 0 {
		t.Error("greeting without showMessage")
	}
	if _, err := c.Ping(ctx, true); err != nil {
		t.Fatal(err)
	}
	if sim.State().Greetings != 1 {
		t.Error("showMessage=true did not show the greeting")
	}
	if code, _ := raw(t, sim, "POST", "/ping", ""); code != http.StatusMethodNotAllowed {
		t.Errorf("POST /ping: %d", code)
	}
}
