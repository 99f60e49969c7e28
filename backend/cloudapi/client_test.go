package cloudapi

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

const key = "sk_live_do-not-leak-9f8e7d"

// server answers every request with status and body, and records it.
func server(t *testing.T, status int, body string) (*Client, *[]*http.Request) {
	t.Helper()
	var got []*http.Request
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.Clone(context.Background()))
		w.WriteHeader(status)
		fmt.Fprint(w, body)
	}))
	t.Cleanup(srv.Close)
	c, err := New(srv.URL+"/api", key)
	if err != nil {
		t.Fatal(err)
	}
	return c, &got
}

// Every request carries the company's key in both of the provider's
// headers, and its JSON content type (a GET included: without it the
// cloud answers 400). The specification asks for the bearer header on the
// Cloud API v5, the v4 abort and cancel included, and Service-Secret on
// the earlier v4 forms and the Webservices, whose fetch is the v5 poll's
// path: a header chosen by path would be refused wherever the provider
// reads the other one.
func TestEveryRequestCarriesTheKeyInBothHeadersAndJSON(t *testing.T) {
	ctx := context.Background()
	c, got := server(t, 200, `{"status":"ok","transactionId":"T1","total":0,"transactions":[]}`)
	if _, err := c.Payment(ctx, []byte(`{"amount":100}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Transaction(ctx, "T1"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Abort(ctx, "SN1", "uuid-1"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Transactions(ctx, TransactionsRequest{SerialNumbers: []string{"SN1"}}); err != nil {
		t.Fatal(err)
	}
	ws, err := NewWebservices(c.BaseURL()+"/v5", key)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ws.Batch(ctx, BatchRequest{}); err != nil {
		t.Fatal(err)
	}
	want := []struct{ method, path string }{
		{"POST", "/api/v5/pos/payment"},
		{"GET", "/api/v5/transaction/"},
		{"POST", "/api/v4/pos/abort/"},
		{"POST", "/api/v4/pos/transactions/"},
		{"POST", "/api/v5/pos/transactions/"},
	}
	if len(*got) != len(want) {
		t.Fatalf("%d requests, want %d", len(*got), len(want))
	}
	for i, w := range want {
		r := (*got)[i]
		if r.Method != w.method || r.URL.Path != w.path || r.Header.Get("Content-Type") != "application/json" ||
			r.Header.Get("Authorization") != "Bearer "+key || r.Header.Get("Service-Secret") != key {
			t.Errorf("request %d: %s %s %v", i, r.Method, r.URL.Path, r.Header)
		}
	}
	if q := (*got)[1].URL.Query().Get("transactionId"); q != "T1" {
		t.Errorf("poll query %q", q)
	}
}

func TestAnswersAreClassifiedAndTheKeyNeverShows(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name   string
		status int
		body   string
		check  func(error) bool
	}{
		{"400 ko", 400, `{"status":"ko","message":"Terminal not found"}`, func(err error) bool {
			var ae *APIError
			return errors.As(err, &ae) && ae.Message == "Terminal not found"
		}},
		{"401", 401, `{"detail":"bad key ` + key + `"}`, func(err error) bool {
			var ae *AuthError
			return errors.As(err, &ae)
		}},
		{"500", 500, `oops`, func(err error) bool {
			var he *HTTPError
			return errors.As(err, &he) && he.Status == 500
		}},
		{"unreadable", 200, `<html>`, func(err error) bool {
			var de *DecodeError
			return errors.As(err, &de)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := server(t, tc.status, tc.body)
			_, err := c.Payment(ctx, []byte(`{}`))
			if !tc.check(err) {
				t.Fatalf("error %T %v", err, err)
			}
			if strings.Contains(err.Error(), key) || strings.Contains(fmt.Sprintf("%+v", err), key) {
				t.Fatalf("the key is in the error: %v", err)
			}
		})
	}
}

func TestARefusedConnectionWasNotSent(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	c, err := New("http://"+addr, key)
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Payment(context.Background(), []byte(`{}`))
	var te *TransportError
	if !errors.As(err, &te) || te.Sent || strings.Contains(err.Error(), key) {
		t.Fatalf("error %#v", err)
	}
}

func TestThePollReadsTheTransactionWhereverItIs(t *testing.T) {
	for _, body := range []string{
		`{"status":"ok","transactionId":"T1","amount":1250,"giftAmount":100}`,
		`{"transaction":{"status":"ok","transactionId":"T1","amount":1250,"giftAmount":100}}`,
		`{"transactionDetails":{"status":"ok","transactionId":"T1","askedAmount":1250,"giftAmount":100}}`,
		`{"status":"success","data":{"status":"ok","transactionId":"T1","amount":1250,"giftAmount":100}}`,
	} {
		c, _ := server(t, 200, body)
		tx, err := c.Transaction(context.Background(), "T1")
		if err != nil || tx.Status != StatusOK || tx.TransactionID != "T1" || tx.Amount != 1250 || tx.GiftAmount != 100 {
			t.Errorf("%s: %+v %v", body, tx, err)
		}
	}
}

// A status beside a wrapped transaction is its envelope's, never the
// transaction's: the wrapped object is read, and one without a status of
// its own is no transaction (an unreadable answer, not an approval).
func TestThePollNeverTakesTheEnvelopesStatusForTheTransactions(t *testing.T) {
	for body, want := range map[string]string{
		`{"status":"ok","transaction":{"status":"pending","transactionId":"T1"}}`:        StatusPending,
		`{"status":"ok","transactionDetails":{"status":"ko","transactionId":"T1"}}`:      StatusKO,
		`{"status":"ok","data":{"status":"pending","transactionId":"T1","amount":1250}}`: StatusPending,
		`{"status":"ok","transaction":{"transactionId":"T1"}}`:                           "",
	} {
		c, _ := server(t, 200, body)
		tx, err := c.Transaction(context.Background(), "T1")
		switch {
		case want == "" && err == nil:
			t.Errorf("%s: read as %+v", body, tx)
		case want != "" && (err != nil || tx.Status != want):
			t.Errorf("%s: %+v %v, want status %s", body, tx, err, want)
		}
	}
	tx, err := ParseTransaction([]byte(`{"transactionDetails":{"status":"ok","transactionId":"T1","askedAmount":900,"type":"debit"}}`))
	if err != nil || tx.TransactionType != "debit" || tx.Amount != 900 {
		t.Errorf("transactionDetails: %+v %v", tx, err)
	}
}

func TestTheCloudIsReachedOverHTTPS(t *testing.T) {
	for _, bad := range []string{"http://api.example.com", "ftp://x", "https://user:pw@api.example.com", "nohost"} {
		if _, err := New(bad, key); err == nil {
			t.Errorf("%s accepted", bad)
		} else if strings.Contains(err.Error(), "pw") {
			t.Errorf("%s: the credentials are in the error: %v", bad, err)
		}
	}
	if _, err := New("https://api.example.com/v1", ""); err == nil {
		t.Error("no key accepted")
	}
}
