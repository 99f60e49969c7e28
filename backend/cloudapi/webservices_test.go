package cloudapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

func TestRefundAnswersAreEachTheirOwnOutcome(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		status int
		body   string
		check  func(*Refund, error) bool
	}{
		{"refunded", 201, `{"status": "refunded", "message": "ok", "transaction_id": "R1"}`, func(r *Refund, err error) bool {
			return err == nil && r.Status == RefundRefunded && r.TransactionID == "R1"
		}},
		{"pending", 202, `{"status": "pending", "message": "ok", "transaction_id": "R2"}`, func(r *Refund, err error) bool {
			return err == nil && r.Status == RefundPending
		}},
		{"waiting", 202, `{"status": "waiting", "message": "ok", "transaction_id": "R3", "approval_url": "https://bo.example/a/3"}`, func(r *Refund, err error) bool {
			return err == nil && r.Status == RefundWaiting && r.ApprovalURL == "https://bo.example/a/3"
		}},
		{"not possible", 422, `{"status": "not_possible", "message": "Refused"}`, func(r *Refund, err error) bool {
			return err == nil && r.Status == RefundNotPossible && r.Message == "Refused"
		}},
		{"impossible", 400, `{"error": "Already refunded"}`, func(_ *Refund, err error) bool {
			var re *RefundError
			return errors.As(err, &re) && re.Message == "Already refunded"
		}},
		{"fields", 400, `{"amount": ["Too much."]}`, func(_ *Refund, err error) bool {
			var fe *FieldError
			return errors.As(err, &fe) && fe.Fields["amount"][0] == "Too much."
		}},
		{"a status nobody listed is no outcome", 201, `{"status": "done"}`, func(_ *Refund, err error) bool {
			var de *DecodeError
			return errors.As(err, &de)
		}},
		{"a server error leaves it unknown", 502, `bad gateway`, func(_ *Refund, err error) bool {
			var he *HTTPError
			return errors.As(err, &he) && he.Status == 502
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var path, secret string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				path, secret = r.URL.Path, r.Header.Get("Service-Secret")
				w.WriteHeader(tc.status)
				io.WriteString(w, tc.body)
			}))
			defer srv.Close()
			ws, err := NewWebservices(DefaultWebservicesURL(srv.URL+"/"), key)
			if err != nil {
				t.Fatal(err)
			}
			r, err := ws.Refund(ctx, "T 1", []byte(`{}`))
			if !tc.check(r, err) {
				t.Fatalf("%+v %v", r, err)
			}
			if path != "/v5/transaction/T 1/refund/" || secret != key {
				t.Fatalf("asked %q with secret %q", path, secret)
			}
		})
	}
}

// A period open at its end is closed at the end of now's day in the
// caller's zone before the first page, by its date alone (no endTime: a
// time of day read on every day would hide the earlier days' later
// transactions), and a transaction arriving while paging only repeats an
// entry, read once.
func TestBatchAllFixesTheEndAndReadsEveryPage(t *testing.T) {
	var asked []BatchRequest
	total := 5
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b BatchRequest
		_ = json.NewDecoder(r.Body).Decode(&b)
		asked = append(asked, b)
		var page []map[string]any
		for i := b.Offset; i < min(b.Offset+b.Limit, total); i++ {
			page = append(page, map[string]any{"transactionId": fmt.Sprint("T", total-i), "status": "ok", "amount": 100})
		}
		total++ // a new transaction arrives: the next page repeats one
		json.NewEncoder(w).Encode(map[string]any{"total": total - 1, "limit": b.Limit, "offset": b.Offset, "transactions": page})
	}))
	defer srv.Close()
	ws, _ := NewWebservices(srv.URL, key)
	now := time.Date(2026, 11, 25, 23, 30, 0, 0, time.UTC)
	all, err := ws.BatchAll(context.Background(), BatchRequest{Limit: 2, Timezone: "Europe/Paris", StartDate: "2026-11-25"}, now)
	if err != nil {
		t.Fatal(err)
	}
	if asked[0].EndDate != "2026-11-26" || asked[0].EndTime != "" {
		t.Fatalf("end %s %s, want the Paris day of now, without a time", asked[0].EndDate, asked[0].EndTime)
	}
	seen := map[string]bool{}
	for _, e := range all {
		if seen[e.TransactionID] {
			t.Fatalf("%s twice", e.TransactionID)
		}
		seen[e.TransactionID] = true
	}
	if len(asked) < 3 {
		t.Fatalf("%d pages", len(asked))
	}
}
