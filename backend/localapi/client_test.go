package localapi

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// setup starts an httptest server whose mux the test fills, and a client
// pointed at it.
func setup(t *testing.T) (*Client, *http.ServeMux) {
	t.Helper()
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	c, err := NewClient(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	return c, mux
}

func reply(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, body)
	}
}

func TestParseBaseURL(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"10.0.0.5", "http://10.0.0.5:16125/localapi/v4"},
		{"10.0.0.5:8080", "http://10.0.0.5:8080/localapi/v4"},
		{" terminal.local ", "http://terminal.local:16125/localapi/v4"},
		{"http://10.0.0.5:16125/localapi/v4", "http://10.0.0.5:16125/localapi/v4"},
		{"http://10.0.0.5:16125/localapi/v4/", "http://10.0.0.5:16125/localapi/v4"},
		{"https://10.0.0.5", "https://10.0.0.5:16125/localapi/v4"},
		{"[fe80::1]", "http://[fe80::1]:16125/localapi/v4"},
		{"http://127.0.0.1:9/custom", "http://127.0.0.1:9/custom"},
	} {
		u, err := ParseBaseURL(tc.in)
		if err != nil {
			t.Errorf("ParseBaseURL(%q): %v", tc.in, err)
			continue
		}
		if u.String() != tc.want {
			t.Errorf("ParseBaseURL(%q) = %q, want %q", tc.in, u, tc.want)
		}
	}
	for _, bad := range []string{"", "ftp://10.0.0.5", "http://", "10.0.0.5:99999", "http://u:p@10.0.0.5", "http://10.0.0.5/?x=1"} {
		if _, err := ParseBaseURL(bad); err == nil {
			t.Errorf("ParseBaseURL(%q) accepted", bad)
		}
	}
}

func TestPaymentRequestEncoding(t *testing.T) {
	c, mux := setup(t)
	var got map[string]any
	var contentType string
	mux.HandleFunc("POST /localapi/v4/payment", func(w http.ResponseWriter, r *http.Request) {
		contentType = r.Header.Get("Content-Type")
		if err := json.NewDecoder(r.Body).Decode(&got); err != nil {
			t.Error(err)
		}
		reply(`{"status":"ok","transactionId":"T1","amount":1250,"idempotentUuid":"u-1"}`)(w, r)
	})
	req := &PaymentRequest{
		Amount: 1250, TransactionType: TypeDebit, IdempotentUUID: "u-1", CartID: "A042",
		Customer:         &Customer{FirstName: "Ana", Phone: "+33600000000"},
		EnableGiftScreen: Bool(false),
		AcceptedPayment:  &AcceptedPayment{AcceptedMediumType: MediumTypeBankCardsOnly},
		GiftAmount:       100,
		ReceiptTicket: &ReceiptTicket{Data: "1b40", Format: FormatESCPOS, TaxBreakdown: []Tax{
			{TaxAmount: 114, TaxPercentage: Int(10)}, {TaxAmount: 0, TaxPercentage: Int(0)}, {TaxAmount: 11},
		}},
		Reference: "Léa", Vendor: &Vendor{SoftwareName: "Comptoir", SoftwareVersion: "1.0"},
		CheckoutExternalID: "chk-1", ExternalTableNumber: "12", ExternalOrderNumber: "42", ExternalOrderID: "o-42",
		Medium: "card", ReceiptTicketJSON: `{"a":1}`,
	}
	if _, err := c.Payment(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if contentType != "application/json" {
		t.Errorf("Content-Type = %q", contentType)
	}
	want := map[string]any{
		"amount": 1250.0, "transactionType": "debit", "idempotentUuid": "u-1", "cartId": "A042",
		"enableGiftScreen": false, "giftAmount": 100.0, "reference": "Léa",
		"checkoutExternalId": "chk-1", "externalTableNumber": "12", "externalOrderNumber": "42",
		"externalOrderId": "o-42", "medium": "card", "receiptTicketJson": `{"a":1}`,
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("body[%q] = %#v, want %#v", k, got[k], v)
		}
	}
	ticket := got["receiptTicket"].(map[string]any)
	taxes := ticket["tax_breakdown"].([]any)
	first := taxes[0].(map[string]any)
	if first["tax_amount"] != 114.0 || first["tax_percentage"] != 10.0 {
		t.Errorf("tax_breakdown[0] = %v", first)
	}
	// A 0 % rate is a rate: it must be sent, not dropped as empty.
	if zero := taxes[1].(map[string]any); zero["tax_percentage"] != 0.0 || zero["tax_amount"] != 0.0 {
		t.Errorf("tax_breakdown[1] = %v", zero)
	}
	// A rate that is not a whole percent sends its amount alone.
	if frac := taxes[2].(map[string]any); frac["tax_amount"] != 11.0 || frac["tax_percentage"] != nil {
		t.Errorf("tax_breakdown[2] = %v", frac)
	}
	if _, camel := ticket["taxBreakdown"]; camel {
		t.Error("tax breakdown sent in camelCase")
	}
	if got["acceptedPayment"].(map[string]any)["acceptedMediumType"] != "bank_cards_only" {
		t.Errorf("acceptedPayment = %v", got["acceptedPayment"])
	}
	if got["customer"].(map[string]any)["phone"] != "+33600000000" {
		t.Errorf("customer = %v", got["customer"])
	}
	if got["vendor"].(map[string]any)["softwareName"] != "Comptoir" {
		t.Errorf("vendor = %v", got["vendor"])
	}
}

func TestEnableGiftScreenTriState(t *testing.T) {
	for _, tc := range []struct {
		name    string
		value   *bool
		present bool
		want    bool
	}{
		{"null leaves the terminal setting", nil, false, false},
		{"false skips the tip screen", Bool(false), true, false},
		{"true shows the tip screen", Bool(true), true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := json.Marshal(&PaymentRequest{Amount: 1, EnableGiftScreen: tc.value})
			if err != nil {
				t.Fatal(err)
			}
			var m map[string]any
			json.Unmarshal(b, &m)
			v, ok := m["enableGiftScreen"]
			if ok != tc.present || (ok && v != tc.want) {
				t.Errorf("body %s: enableGiftScreen present=%v value=%v", b, ok, v)
			}
		})
	}
}

func TestPaymentOutcomes(t *testing.T) {
	for _, tc := range []struct {
		name     string
		body     string
		approved bool
		declined bool
		code     Code
	}{
		{"approved", `{"status":"ok","transactionId":"T1","amount":500,"giftAmount":50,"transactionType":"debit"}`, true, false, ""},
		{"declined is ko without message", `{"status":"ko","transactionId":"T2","amount":500}`, false, true, ""},
		{"busy terminal", `{"status":"ko","message":"A transaction with the given idempotentUuid ` + "`abc-123`" + ` is already in progress"}`, false, false, CodeBusy},
		{"unlisted message is still an application error", `{"status":"ko","message":"Checkout already used"}`, false, false, CodeUnknown},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, mux := setup(t)
			mux.HandleFunc("POST /localapi/v4/payment", reply(tc.body))
			tx, err := c.Payment(context.Background(), &PaymentRequest{Amount: 500, IdempotentUUID: "u"})
			if tc.code != "" {
				var ae *APIError
				if !errors.As(err, &ae) || ae.Code != tc.code {
					t.Fatalf("err = %v, want APIError %s", err, tc.code)
				}
				if IsTransport(err) {
					t.Error("application error classified as transport")
				}
				if tc.code == CodeBusy && ae.Arg != "abc-123" {
					t.Errorf("busy uuid = %q", ae.Arg)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tx.Approved() != tc.approved || tx.Declined() != tc.declined {
				t.Errorf("approved=%v declined=%v", tx.Approved(), tx.Declined())
			}
			if string(tx.Raw) != tc.body {
				t.Errorf("Raw = %s", tx.Raw)
			}
		})
	}
}

func TestTolerantDecoding(t *testing.T) {
	c, mux := setup(t)
	mux.HandleFunc("POST /localapi/v4/payment", reply(`{"status":"ok","transactionId":"T9","amount":990,
		"transactionType":"na","somethingNew":{"nested":[1,2]},"currencyCode":"CHF",
		"paymentApplication":"SOMETHING_NEW","customer":{"firstName":"Ana","loyalty":7}}`))
	tx, err := c.Payment(context.Background(), &PaymentRequest{Amount: 990})
	if err != nil {
		t.Fatal(err)
	}
	if !tx.Approved() || tx.TransactionType != "na" || tx.CurrencyCode != "CHF" || tx.Customer.FirstName != "Ana" {
		t.Errorf("tx = %+v", tx)
	}
	// Null keys are omitted: the minimal answer decodes too.
	mux.HandleFunc("GET /localapi/v4/ping", reply(`{"status":"ok"}`))
	if _, err := c.Ping(context.Background(), false); err != nil {
		t.Fatal(err)
	}
}

func TestTransportLevelErrors(t *testing.T) {
	for _, tc := range []struct {
		name    string
		handler http.HandlerFunc
		check   func(t *testing.T, err error)
	}{
		{"HTTP 500 with no body", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusInternalServerError)
		}, func(t *testing.T, err error) {
			var he *HTTPError
			if !errors.As(err, &he) || he.StatusCode != 500 {
				t.Errorf("err = %v, want HTTPError 500", err)
			}
		}},
		{"HTTP 400 with no body", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusBadRequest)
		}, func(t *testing.T, err error) {
			var he *HTTPError
			if !errors.As(err, &he) || he.StatusCode != 400 {
				t.Errorf("err = %v, want HTTPError 400", err)
			}
		}},
		{"HTTP 500 with a JSON ko is still HTTP-level", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusInternalServerError)
			io.WriteString(w, `{"status":"ko","message":"boom"}`)
		}, func(t *testing.T, err error) {
			var he *HTTPError
			if !errors.As(err, &he) || string(he.Body) != `{"status":"ko","message":"boom"}` {
				t.Errorf("err = %v, want HTTPError keeping the body", err)
			}
		}},
		{"truncated JSON", reply(`{"status":"ok","transactionId":"T1","amo`), func(t *testing.T, err error) {
			var de *DecodeError
			if !errors.As(err, &de) || string(de.Body) != `{"status":"ok","transactionId":"T1","amo` {
				t.Errorf("err = %v, want DecodeError with the body", err)
			}
		}},
		{"no status", reply(`{"transactionId":"T1"}`), func(t *testing.T, err error) {
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Errorf("err = %v, want DecodeError", err)
			}
		}},
		{"wrong type", reply(`{"status":"ok","amount":"12.50"}`), func(t *testing.T, err error) {
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Errorf("err = %v, want DecodeError", err)
			}
		}},
		{"connection closed mid-response", func(w http.ResponseWriter, r *http.Request) {
			conn, buf, err := w.(http.Hijacker).Hijack()
			if err != nil {
				t.Error(err)
				return
			}
			buf.WriteString("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n{\"status\":\"ok\",\"trans")
			buf.Flush()
			conn.Close()
		}, func(t *testing.T, err error) {
			var te *TransportError
			if !errors.As(err, &te) || !te.Sent {
				t.Errorf("err = %#v, want TransportError sent", err)
			}
		}},
		{"connection closed with no answer", func(w http.ResponseWriter, r *http.Request) {
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.Close()
		}, func(t *testing.T, err error) {
			var te *TransportError
			if !errors.As(err, &te) || !te.Sent || te.Timeout {
				t.Errorf("err = %#v, want TransportError sent, no timeout", err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, mux := setup(t)
			mux.HandleFunc("POST /localapi/v4/payment", tc.handler)
			tx, err := c.Payment(context.Background(), &PaymentRequest{Amount: 100, IdempotentUUID: "u"})
			if tx != nil {
				t.Errorf("a transaction was returned: %+v", tx)
			}
			if !IsTransport(err) {
				t.Errorf("IsTransport(%v) = false", err)
			}
			tc.check(t, err)
		})
	}
}

func TestTimeoutBeyondDeadline(t *testing.T) {
	c, mux := setup(t)
	release := make(chan struct{})
	defer close(release)
	mux.HandleFunc("POST /localapi/v4/payment", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := c.Payment(ctx, &PaymentRequest{Amount: 100, IdempotentUUID: "u"})
	var te *TransportError
	if !errors.As(err, &te) || !te.Timeout || !te.Sent || te.Canceled {
		t.Fatalf("err = %#v, want a sent TransportError with Timeout", err)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("errors.Is(err, DeadlineExceeded) = false for %v", err)
	}

	ctx2, cancel2 := context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, cancel2)
	_, err = c.Payment(ctx2, &PaymentRequest{Amount: 100, IdempotentUUID: "u"})
	if !errors.As(err, &te) || !te.Canceled || te.Timeout {
		t.Fatalf("err = %#v, want a cancelled TransportError", err)
	}
}

func TestConnectionRefusedIsNotSent(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	c, err := NewClient(addr)
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Payment(context.Background(), &PaymentRequest{Amount: 100, IdempotentUUID: "u"})
	var te *TransportError
	if !errors.As(err, &te) || te.Sent {
		t.Fatalf("err = %#v, want a TransportError not sent", err)
	}
}

// A server that reads a request then drops the connection: if net/http
// replayed the request on its own, the server would count two.
func TestNoHiddenRetries(t *testing.T) {
	var count atomic.Int32
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				br := bufio.NewReader(conn)
				for {
					req, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					io.Copy(io.Discard, req.Body)
					// The first request on a connection is answered, keeping it
					// alive; the next one is read and dropped, the case where
					// net/http would replay an idempotent-looking request.
					if count.Add(1) == 1 {
						io.WriteString(conn, "HTTP/1.1 200 OK\r\nContent-Length: 15\r\n\r\n{\"status\":\"ok\"}")
						continue
					}
					return
				}
			}()
		}
	}()
	c, err := NewClient(l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Ping(context.Background(), false); err != nil {
		t.Fatal(err)
	}
	for _, call := range []func() error{
		func() error { _, err := c.SimplePayment(context.Background(), 100); return err },
		func() error {
			_, err := c.Payment(context.Background(), &PaymentRequest{Amount: 100, IdempotentUUID: "u"})
			return err
		},
	} {
		before := count.Load()
		if err := call(); !IsTransport(err) {
			t.Errorf("err = %v, want a transport error", err)
		}
		if n := count.Load() - before; n != 1 {
			t.Errorf("the server received %d requests for one call", n)
		}
	}
}

func TestRedirectIsNotFollowed(t *testing.T) {
	c, mux := setup(t)
	var followed atomic.Bool
	mux.HandleFunc("POST /localapi/v4/payment", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/localapi/v4/elsewhere", http.StatusTemporaryRedirect)
	})
	mux.HandleFunc("/localapi/v4/elsewhere", func(w http.ResponseWriter, r *http.Request) { followed.Store(true) })
	_, err := c.Payment(context.Background(), &PaymentRequest{Amount: 100, IdempotentUUID: "u"})
	var he *HTTPError
	if !errors.As(err, &he) || he.StatusCode != http.StatusTemporaryRedirect {
		t.Errorf("err = %v, want HTTPError 307", err)
	}
	if followed.Load() {
		t.Error("the redirect was followed: the payment was sent twice")
	}
}

func TestValidationSendsNothing(t *testing.T) {
	c, mux := setup(t)
	var hits atomic.Int32
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { hits.Add(1) })
	ctx := context.Background()
	for name, call := range map[string]func() error{
		"zero amount":  func() error { _, err := c.Payment(ctx, &PaymentRequest{}); return err },
		"negative tip": func() error { _, err := c.Payment(ctx, &PaymentRequest{Amount: 1, GiftAmount: -1}); return err },
		"credit type": func() error {
			_, err := c.Payment(ctx, &PaymentRequest{Amount: 1, TransactionType: "credit"})
			return err
		},
		"external without id": func() error { _, err := c.Payment(ctx, &PaymentRequest{Amount: 1, ExternalOrderID: "x"}); return err },
		"accepted on refund": func() error {
			_, err := c.Payment(ctx, &PaymentRequest{Amount: 1, TransactionType: TypeRefund, AcceptedPayment: &AcceptedPayment{}})
			return err
		},
		"bad medium type": func() error {
			_, err := c.Payment(ctx, &PaymentRequest{Amount: 1, AcceptedPayment: &AcceptedPayment{AcceptedMediumType: "cash"}})
			return err
		},
		"local phone": func() error {
			_, err := c.Payment(ctx, &PaymentRequest{Amount: 1, Customer: &Customer{Phone: "0600000000"}})
			return err
		},
		"escpos not hex": func() error {
			_, err := c.Payment(ctx, &PaymentRequest{Amount: 1, ReceiptTicket: &ReceiptTicket{Data: "zz", Format: FormatESCPOS}})
			return err
		},
		"simple zero":      func() error { _, err := c.SimplePayment(ctx, 0); return err },
		"print empty":      func() error { _, err := c.Print(ctx, &PrintRequest{}); return err },
		"print bad format": func() error { _, err := c.Print(ctx, &PrintRequest{Data: "x", Format: "pdf"}); return err },
		"share escpos": func() error {
			_, err := c.ShareReceipt(ctx, &ShareReceiptRequest{ReceiptTicket: &ReceiptTicket{Data: "00", Format: FormatESCPOS}, TransactionID: "T", Medium: ShareSMS})
			return err
		},
		"share medium": func() error {
			_, err := c.ShareReceipt(ctx, &ShareReceiptRequest{ReceiptTicket: &ReceiptTicket{Data: "x"}, TransactionID: "T", Medium: "SMS"})
			return err
		},
		"reversal without id": func() error { _, err := c.Reversal(ctx, &ReversalRequest{Amount: 1}); return err },
		"transactions limit":  func() error { _, err := c.Transactions(ctx, &TransactionsRequest{Limit: 201}); return err },
		"transactions date":   func() error { _, err := c.Transactions(ctx, &TransactionsRequest{StartDate: "22/11/2026"}); return err },
	} {
		var ve *ValidationError
		if err := call(); !errors.As(err, &ve) {
			t.Errorf("%s: err = %v, want ValidationError", name, err)
		}
	}
	if hits.Load() != 0 {
		t.Errorf("%d invalid requests reached the terminal", hits.Load())
	}
}

func TestOtherEndpoints(t *testing.T) {
	c, mux := setup(t)
	ctx := context.Background()
	var showMessage string
	mux.HandleFunc("GET /localapi/v4/ping", func(w http.ResponseWriter, r *http.Request) {
		showMessage = r.URL.Query().Get("showMessage")
		reply(`{"status":"ok"}`)(w, r)
	})
	if _, err := c.Ping(ctx, true); err != nil || showMessage != "true" {
		t.Errorf("ping: err=%v showMessage=%q", err, showMessage)
	}

	var amountPath string
	mux.HandleFunc("GET /localapi/v4/payment/{amount}", func(w http.ResponseWriter, r *http.Request) {
		amountPath = r.PathValue("amount")
		reply(`{"status":"ko"}`)(w, r)
	})
	if tx, err := c.SimplePayment(ctx, 1999); err != nil || !tx.Declined() || amountPath != "1999" {
		t.Errorf("simple payment: tx=%+v err=%v path=%q", tx, err, amountPath)
	}

	mux.HandleFunc("POST /localapi/v4/print", reply(`{"status":"ko","message":"Wrong parameter 'format'"}`))
	if _, err := c.Print(ctx, &PrintRequest{Data: "hello"}); ErrorCode(err) != CodePrintWrongFormat {
		t.Errorf("print: %v", err)
	}

	mux.HandleFunc("POST /localapi/v4/share-receipt", func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		json.NewDecoder(r.Body).Decode(&body)
		if body["medium"] != "email" || body["transactionId"] != "T1" || body["receiptTicket"].(map[string]any)["data"] != "Merci" {
			t.Errorf("share body = %v", body)
		}
		reply(`{"status":"ok","message":"shared"}`)(w, r)
	})
	if r, err := c.ShareReceipt(ctx, &ShareReceiptRequest{ReceiptTicket: &ReceiptTicket{Data: "Merci"}, TransactionID: "T1", Medium: ShareEmail}); err != nil || r.Message != "shared" {
		t.Errorf("share: r=%+v err=%v", r, err)
	}

	mux.HandleFunc("POST /localapi/v4/reversal", reply(`{"status":"ok","reversalTransactionId":"R1","initialTransactionId":"T1"}`))
	if r, err := c.Reversal(ctx, &ReversalRequest{Amount: 550, InitialTransactionID: "T1"}); err != nil || r.ReversalTransactionID != "R1" {
		t.Errorf("reversal: r=%+v err=%v", r, err)
	}

	mux.HandleFunc("POST /localapi/v4/abort", reply(`{"status":"ko","message":"Abort not possible"}`))
	if _, err := c.Abort(ctx, &AbortRequest{IdempotentUUID: "u"}); ErrorCode(err) != CodeAbortNotPossible {
		t.Errorf("abort: %v", err)
	}

	mux.HandleFunc("POST /localapi/v4/transactions", func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		json.NewDecoder(r.Body).Decode(&body)
		if body["limit"] != 200.0 || body["startDate"] != "2026-11-01" || body["offset"] != nil {
			t.Errorf("transactions body = %v", body)
		}
		reply(`{"count":1,"limit":200,"offset":0,"total":1,"transactions":[{"status":"ok","transactionId":"T1","amount":500,"type":"reversal","createdAt":"2026-11-21T10:15:30.123Z"}]}`)(w, r)
	})
	list, err := c.Transactions(ctx, &TransactionsRequest{StartDate: "2026-11-01", Limit: 200})
	if err != nil || list.Total != 1 || list.Transactions[0].Type != HistoryReversal {
		t.Fatalf("transactions: list=%+v err=%v", list, err)
	}
	if at, err := list.Transactions[0].Created(); err != nil || at.Minute() != 15 {
		t.Errorf("createdAt: %v %v", at, err)
	}
}

func TestNonPaymentKoWithoutMessage(t *testing.T) {
	c, mux := setup(t)
	mux.HandleFunc("POST /localapi/v4/abort", reply(`{"status":"ko"}`))
	_, err := c.Abort(context.Background(), &AbortRequest{})
	if ErrorCode(err) != CodeUnspecified {
		t.Errorf("err = %v, want CodeUnspecified", err)
	}
}

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		msg  string
		code Code
		arg  string
	}{
		{MsgPrintDataMissing, CodePrintDataMissing, ""},
		{MsgPrintWrongFormat, CodePrintWrongFormat, ""},
		{MsgShareTransactionID, CodeShareTransactionID, ""},
		{MsgShareReceiptTicket, CodeShareReceiptTicket, ""},
		{MsgShareMedium, CodeShareMedium, ""},
		{MsgShareBadRequest, CodeShareBadRequest, ""},
		{MsgReversalIDMandatory, CodeReversalIDMandatory, ""},
		{ReversalNotFoundMessage("TX-9"), CodeReversalNotFound, "TX-9"},
		{MsgReversalAmountMismatch, CodeReversalAmount, ""},
		{MsgReversalAlreadyReversed, CodeReversalAlready, ""},
		{MsgReversalNotReversible, CodeReversalNotEligible, ""},
		{MsgReversalNoGateway, CodeReversalNoGateway, ""},
		{MsgReversalUnexpected, CodeReversalUnexpected, ""},
		{MsgAbortNotPossible, CodeAbortNotPossible, ""},
		{MsgNothingToAbort, CodeNothingToAbort, ""},
		{MsgAbortNotAllowed, CodeAbortNotAllowed, ""},
		{AbortInternalMessage("socket closed"), CodeAbortInternal, "socket closed"},
		{BusyMessage("0193A-Bc"), CodeBusy, "0193A-Bc"},
		// Variations seen between versions: spacing around colons, case, a
		// final full stop, no backticks.
		{"Error: Transaction not found for ID: TX-9", CodeReversalNotFound, "TX-9"},
		{"error : amount  mismatch.", CodeReversalAmount, ""},
		{"abort not possible", CodeAbortNotPossible, ""},
		{"A transaction with the given idempotentUuid abc is already in progress", CodeBusy, "abc"},
		{"Something else entirely", CodeUnknown, ""},
	} {
		code, arg := Classify(tc.msg)
		if code != tc.code || arg != tc.arg {
			t.Errorf("Classify(%q) = %s, %q; want %s, %q", tc.msg, code, arg, tc.code, tc.arg)
		}
	}
	if !strings.Contains(BusyMessage("x"), "`x`") {
		t.Error("busy message does not wrap the uuid in backticks")
	}
}

func TestHistoryCreatedLayouts(t *testing.T) {
	want := time.Date(2026, 11, 21, 10, 15, 30, 0, time.UTC)
	for _, s := range []string{"2026-11-21T10:15:30Z", "2026-11-21T10:15:30.000Z", "2026-11-21T11:15:30+01:00", "2026-11-21T11:15:30+0100", "2026-11-21T10:15:30"} {
		got, err := HistoryEntry{CreatedAt: s}.Created()
		if err != nil || !got.Equal(want) {
			t.Errorf("Created(%q) = %v, %v", s, got, err)
		}
	}
	if _, err := (HistoryEntry{CreatedAt: "21/11/2026"}).Created(); err == nil {
		t.Error("a non-ISO date was accepted")
	}
}

func TestAbortEarlierFormSendsEmptyObject(t *testing.T) {
	c, mux := setup(t)
	var body string
	mux.HandleFunc("POST /localapi/v4/abort", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		body = string(b)
		reply(`{"status":"ok","idempotentUuid":"u-9"}`)(w, r)
	})
	resp, err := c.Abort(context.Background(), nil)
	if err != nil || body != "{}" || resp.IdempotentUUID != "u-9" {
		t.Errorf("abort: body=%q resp=%+v err=%v", body, resp, err)
	}
}

func TestPaymentBodyIsSentByteForByte(t *testing.T) {
	c, mux := setup(t)
	var got []byte
	mux.HandleFunc("POST /localapi/v4/payment", func(w http.ResponseWriter, r *http.Request) {
		got, _ = io.ReadAll(r.Body)
		reply(`{"status":"ok","idempotentUuid":"u-7"}`)(w, r)
	})
	// Key order and spacing differ from what json.Marshal would write.
	body := []byte(`{"idempotentUuid":"u-7", "amount":700,"enableGiftScreen":false}`)
	if _, err := c.PaymentBody(context.Background(), body); err != nil {
		t.Fatal(err)
	}
	if string(got) != string(body) {
		t.Errorf("sent %s, want %s", got, body)
	}
	for _, bad := range []string{`{"amount":0}`, `not json`, `{"amount":"7"}`} {
		var ve *ValidationError
		if _, err := c.PaymentBody(context.Background(), []byte(bad)); !errors.As(err, &ve) {
			t.Errorf("PaymentBody(%s): err = %v, want ValidationError", bad, err)
		}
	}
}
