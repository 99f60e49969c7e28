package localapi

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"testing"
)

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// FuzzPaymentResponse feeds arbitrary bodies to the /payment decoding: it
// must never panic, and every answer must land in exactly one class, with a
// transaction only for ok or a decline.
func FuzzPaymentResponse(f *testing.F) {
	for _, seed := range []string{
		`{"status":"ok","transactionId":"T","amount":100,"giftAmount":0,"idempotentUuid":"u"}`,
		`{"status":"ko"}`,
		`{"status":"ko","message":"A transaction with the given idempotentUuid ` + "`x`" + ` is already in progress"}`,
		`{"status":"ok","transactionType":"na","extra":{"a":[1,2,{}]}}`,
		`{"status":"OK"}`, `{"status":null}`, `[]`, `null`, ``, `{"status":"ok","amount":1e400}`,
		`{"status":"ok","amount":"12"}`, "{\"status\":\"ok\"}\x00", `{"status":"ko","message":""}`,
	} {
		f.Add(200, []byte(seed))
	}
	f.Add(500, []byte(``))
	f.Add(400, []byte(`{"status":"ko","message":"x"}`))
	f.Fuzz(func(t *testing.T, code int, body []byte) {
		if code < 100 || code > 999 {
			code = 200
		}
		c, err := NewClient("127.0.0.1", WithHTTPClient(&http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			return &http.Response{StatusCode: code, Body: io.NopCloser(bytes.NewReader(body)), Header: http.Header{}, Request: r}, nil
		})}))
		if err != nil {
			t.Fatal(err)
		}
		tx, err := c.Payment(context.Background(), &PaymentRequest{Amount: 100, IdempotentUUID: "u"})
		if (tx == nil) == (err == nil) {
			t.Fatalf("tx=%v err=%v: exactly one must be set", tx, err)
		}
		if tx != nil {
			if !tx.Approved() && !tx.Declined() {
				t.Fatalf("a transaction that is neither approved nor declined: %+v", tx)
			}
			if !bytes.Equal(tx.Raw, body) {
				t.Fatalf("raw body not kept")
			}
			return
		}
		var ae *APIError
		if errors.As(err, &ae) == IsTransport(err) {
			t.Fatalf("err %v is both or neither application and transport", err)
		}
	})
}

// FuzzClassify: any message gets a code, and never panics.
func FuzzClassify(f *testing.F) {
	for _, m := range []string{MsgAbortNotPossible, BusyMessage("u-1"), ReversalNotFoundMessage("T"), AbortInternalMessage("x"), "", "`", "A transaction with the given idempotentUuid `"} {
		f.Add(m)
	}
	f.Fuzz(func(t *testing.T, msg string) {
		if code, _ := Classify(msg); code == "" {
			t.Fatalf("no code for %q", msg)
		}
	})
}
