package cloudapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/cloudsim"
)

func boundsCloud(t *testing.T) (*cloudsim.Cloud, *Client, *Webservices) {
	t.Helper()
	cloud, err := cloudsim.New(cloudsim.Config{Key: key, Serials: []string{"SN-B"}, TimeScale: 0.001})
	if err == nil {
		err = cloud.Start("127.0.0.1:0")
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cloud.Close() })
	c, err := New(cloud.URL(), key)
	if err != nil {
		t.Fatal(err)
	}
	ws, err := NewWebservices(DefaultWebservicesURL(cloud.URL()), key)
	if err != nil {
		t.Fatal(err)
	}
	return cloud, c, ws
}

// A page of the history or of the Webservices batch that lists more than
// the limit asked is refused.
func TestAListPageOverTheLimitIsRefused(t *testing.T) {
	cloud, c, ws := boundsCloud(t)
	if err := cloud.SetListFault(cloudsim.ListFault{Extra: 6}); err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if _, err := c.Transactions(ctx, TransactionsRequest{SerialNumbers: []string{"SN-B"}, Limit: 5}); !errors.Is(err, ErrPageOverfull) {
		t.Fatalf("history: %v", err)
	}
	if _, err := ws.Batch(ctx, BatchRequest{Limit: 5}); !errors.Is(err, ErrPageOverfull) {
		t.Fatalf("batch: %v", err)
	}
	var de *DecodeError
	if _, err := ws.BatchAll(ctx, BatchRequest{Limit: 5}, time.Now()); !errors.As(err, &de) || !errors.Is(err, ErrPageOverfull) {
		t.Fatalf("batch all: %v", err)
	}
	if err := cloud.SetListFault(cloudsim.ListFault{}); err != nil {
		t.Fatal(err)
	}
	if _, err := ws.BatchAll(ctx, BatchRequest{Limit: 5}, time.Now()); err != nil {
		t.Fatalf("the fault lifted: %v", err)
	}
}

// A provider whose list never ends stops a period's read at its ceiling,
// with ErrPeriodTooLong, having asked no more pages than the ceiling
// allows; so does one whose pages are fat.
func TestAnEndlessBatchStopsAtTheCeiling(t *testing.T) {
	for _, tc := range []struct {
		name     string
		fault    cloudsim.ListFault
		maxPages int
	}{
		{"full pages", cloudsim.ListFault{Endless: true}, MaxPeriodEntries/200 + 1},
		// 200 entries of ~4 KiB: under MaxPageBytes a page, past
		// MaxPeriodBytes within 21 pages.
		{"fat pages", cloudsim.ListFault{Endless: true, Pad: 4000}, MaxPeriodBytes/(200*4000) + 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cloud, _, ws := boundsCloud(t)
			if err := cloud.SetListFault(tc.fault); err != nil {
				t.Fatal(err)
			}
			_, err := ws.BatchAll(t.Context(), BatchRequest{}, time.Now())
			if !errors.Is(err, ErrPeriodTooLong) {
				t.Fatalf("err = %v", err)
			}
			if s := cloud.ListServed(); s.Pages > tc.maxPages {
				t.Fatalf("%d pages (%d bytes) read of an endless list, at most %d", s.Pages, s.Bytes, tc.maxPages)
			}
		})
	}
}

// A list's answer that never ends costs MaxPageBytes and a clear error;
// another answer keeps the old bound.
func TestAListAnswerThatNeverEndsIsCutAtItsBound(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"total":1,"limit":1,"offset":0,"count":1,"transactions":[{"issuer":"`)
		chunk := strings.Repeat("X", 64<<10)
		for r.Context().Err() == nil && ctx.Err() == nil {
			if _, err := io.WriteString(w, chunk); err != nil {
				return
			}
		}
	}))
	t.Cleanup(srv.Close)
	c, err := New(srv.URL, key)
	if err != nil {
		t.Fatal(err)
	}
	var de *DecodeError
	if _, err := c.Transactions(ctx, TransactionsRequest{Limit: 1}); !errors.As(err, &de) || !errors.Is(err, ErrTooLarge) || len(de.Body) > 4096 {
		t.Fatalf("err = %v", err)
	}
}

// A cart that lists more payments than any link takes is not believed.
func TestACartWithEndlessPaymentsIsRefused(t *testing.T) {
	var parts []string
	for i := range MaxCartTransactions + 1 {
		parts = append(parts, fmt.Sprintf(`{"transaction_id":"T%d","total_amount":100,"status":"ok"}`, i))
	}
	raw := `{"cart_id":"C1","status":"paid","transactions":[` + strings.Join(parts, ",") + `]}`
	if _, err := ParseCart([]byte(raw)); !errors.Is(err, ErrPageOverfull) {
		t.Fatalf("err = %v", err)
	}
	raw = `{"cart_id":"C1","status":"paid","transactions":[` + strings.Join(parts[:MaxCartTransactions], ",") + `]}`
	if _, err := ParseCart([]byte(raw)); err != nil {
		t.Fatalf("%d payments: %v", MaxCartTransactions, err)
	}
}
