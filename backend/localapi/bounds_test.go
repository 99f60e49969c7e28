package localapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// A /transactions page is believed only when it keeps to the limit asked
// (20 when none was) and its counts can be.
func TestTransactionsPageKeepsToTheLimit(t *testing.T) {
	entries := func(n int) string {
		var parts []string
		for i := range n {
			parts = append(parts, fmt.Sprintf(`{"status":"ok","transactionId":"t%d","amount":100,"type":"debit"}`, i))
		}
		return "[" + strings.Join(parts, ",") + "]"
	}
	for _, tc := range []struct {
		name  string
		limit int
		body  string
		ok    bool
	}{
		{"as asked", 5, `{"status":"ok","count":5,"limit":5,"offset":0,"total":9,"transactions":` + entries(5) + `}`, true},
		{"one more than asked", 5, `{"status":"ok","count":6,"limit":5,"offset":0,"total":9,"transactions":` + entries(6) + `}`, false},
		{"the default page", 0, `{"status":"ok","count":20,"limit":20,"offset":0,"total":20,"transactions":` + entries(20) + `}`, true},
		{"past the default page", 0, `{"status":"ok","count":21,"limit":20,"offset":0,"total":21,"transactions":` + entries(21) + `}`, false},
		{"a negative total", 5, `{"status":"ok","count":0,"limit":5,"offset":0,"total":-1,"transactions":[]}`, false},
		{"the earlier form", 5, `{"count":1,"limit":5,"offset":0,"total":1,"transactions":` + entries(1) + `}`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, mux := setup(t)
			mux.HandleFunc("POST /localapi/v4/transactions", reply(tc.body))
			_, err := c.Transactions(t.Context(), &TransactionsRequest{Limit: tc.limit})
			var de *DecodeError
			switch {
			case tc.ok && err != nil:
				t.Fatalf("refused: %v", err)
			case !tc.ok && (!errors.As(err, &de) || !errors.Is(err, ErrPageOverfull)):
				t.Fatalf("err = %v, want a *DecodeError with ErrPageOverfull", err)
			}
		})
	}
}

// countingTransport counts the bytes the client reads of the answers.
type countingTransport struct {
	base http.RoundTripper
	read atomic.Int64
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := c.base.RoundTrip(r)
	if err == nil {
		resp.Body = &countingBody{ReadCloser: resp.Body, n: &c.read}
	}
	return resp, err
}

type countingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n.Add(int64(n))
	return n, err
}

// A terminal whose /transactions answer never ends costs the client
// MaxHistoryPageBytes and one byte, then a clear error: it reads no more.
func TestAHistoryAnswerThatNeverEndsIsCutAtItsBound(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"status":"ok","count":1,"limit":1,"offset":0,"total":1,"transactions":[{"issuer":"`)
		chunk := strings.Repeat("X", 64<<10)
		for r.Context().Err() == nil && ctx.Err() == nil {
			if _, err := io.WriteString(w, chunk); err != nil {
				return
			}
		}
	}))
	t.Cleanup(srv.Close)
	hc := NewHTTPClient()
	ct := &countingTransport{base: hc.Transport}
	hc.Transport = ct
	c, err := NewClient(srv.URL, WithHTTPClient(hc))
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Transactions(ctx, &TransactionsRequest{Limit: 1})
	var de *DecodeError
	if !errors.As(err, &de) || !errors.Is(err, ErrTooLarge) || len(de.Body) > 4096 {
		t.Fatalf("err = %v", err)
	}
	if n := ct.read.Load(); n > MaxHistoryPageBytes+1 {
		t.Fatalf("%d bytes read of the answer, at most %d", n, MaxHistoryPageBytes+1)
	}
}
