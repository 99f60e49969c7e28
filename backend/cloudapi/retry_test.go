package cloudapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// fastRetry retries quickly: the tests count requests, not wait for them.
var fastRetry = WithReadRetry(RetryPolicy{Tries: 4, First: time.Millisecond, Max: 4 * time.Millisecond})

// flaky answers each path's first fails requests with status (0: the
// connection dropped), then ok, and counts the requests by path.
type flaky struct {
	mu     sync.Mutex
	fails  int
	status int
	ok     string
	count  map[string]int
}

func (f *flaky) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.count[r.URL.Path]++
	n := f.count[r.URL.Path]
	f.mu.Unlock()
	if n <= f.fails {
		if f.status == 0 {
			hj, _ := w.(http.Hijacker)
			conn, _, _ := hj.Hijack()
			conn.Close()
			return
		}
		w.WriteHeader(f.status)
		fmt.Fprint(w, "<html>Bad gateway</html>")
		return
	}
	fmt.Fprint(w, f.ok)
}

func (f *flaky) requests(path string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.count[path]
}

func flakyServer(t *testing.T, fails, status int, ok string) (*flaky, string) {
	t.Helper()
	f := &flaky{fails: fails, status: status, ok: ok, count: map[string]int{}}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv.URL
}

const okPage = `{"total": 1, "limit": 20, "offset": 0, "count": 1, "transactions": [{"status": "ok", "transactionId": "T1", "amount": 100}]}`

// The provider's "occasional HTTP 502 on heavy Webservices calls is
// transient: retry with exponential backoff": a batch list answered 502,
// then the page, is read.
func TestABatchListReadAfterA502(t *testing.T) {
	f, url := flakyServer(t, 1, http.StatusBadGateway, okPage)
	ws, err := NewWebservices(url+"/v5", "k", fastRetry)
	if err != nil {
		t.Fatal(err)
	}
	p, err := ws.Batch(context.Background(), BatchRequest{})
	if err != nil || len(p.Transactions) != 1 {
		t.Fatalf("page %+v (%v)", p, err)
	}
	if n := f.requests("/v5" + PathWSBatch); n != 2 {
		t.Fatalf("%d requests", n)
	}
}

// Every read is retried on 502, 503, 504 and a dropped connection, up to
// its tries, and then says what the last answer was.
func TestReadsAreRetriedWithinTheirTries(t *testing.T) {
	reads := map[string]func(c *Client) error{
		PathTransaction: func(c *Client) error { _, err := c.Transaction(context.Background(), "T1"); return err },
		PathTransactions: func(c *Client) error {
			_, err := c.Transactions(context.Background(), TransactionsRequest{})
			return err
		},
		DefaultLinkEndpoints.Cart.Path: func(c *Client) error { _, err := c.Cart(context.Background(), "C1"); return err },
	}
	for _, status := range []int{http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout, 0} {
		for path, read := range reads {
			t.Run(fmt.Sprintf("%d %s", status, path), func(t *testing.T) {
				f, url := flakyServer(t, 100, status, "")
				c, err := New(url, "k", fastRetry)
				if err != nil {
					t.Fatal(err)
				}
				err = read(c)
				var he *HTTPError
				var te *TransportError
				if (status != 0 && (!errors.As(err, &he) || he.Status != status)) || (status == 0 && !errors.As(err, &te)) {
					t.Fatalf("err %v", err)
				}
				if n := f.requests(path); n != 4 {
					t.Fatalf("%d requests, want the policy's 4 tries", n)
				}
			})
		}
	}
}

// An answer of the provider (400, 401, 404, 500) is not transient: asked
// again, it would say the same.
func TestReadsAreNotRetriedOnAnAnswer(t *testing.T) {
	for _, status := range []int{http.StatusBadRequest, http.StatusUnauthorized, http.StatusNotFound, http.StatusInternalServerError} {
		f, url := flakyServer(t, 100, status, "")
		c, err := New(url, "k", fastRetry)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Transaction(context.Background(), "T1"); err == nil {
			t.Fatalf("%d: no error", status)
		}
		if n := f.requests(PathTransaction); n != 1 {
			t.Fatalf("%d: %d requests", status, n)
		}
	}
}

// A request that moves money or acts on the terminal is sent once, 502 or
// not: sending it again is the payment core's journaled decision.
func TestNoRequestThatMovesMoneyIsRetried(t *testing.T) {
	calls := map[string]func(c *Client, ws *Webservices) error{
		PathPayment: func(c *Client, _ *Webservices) error {
			_, err := c.Payment(context.Background(), []byte(`{}`))
			return err
		},
		PathAbort: func(c *Client, _ *Webservices) error { _, err := c.Abort(context.Background(), "SN", "u"); return err },
		PathReversal: func(c *Client, _ *Webservices) error {
			_, err := c.Reversal(context.Background(), []byte(`{}`))
			return err
		},
		PathPrint: func(c *Client, _ *Webservices) error {
			_, err := c.Print(context.Background(), "SN", "x", "text")
			return err
		},
		PathGenerateLink: func(c *Client, _ *Webservices) error {
			_, err := c.GenerateLink(context.Background(), []byte(`{}`))
			return err
		},
		DefaultLinkEndpoints.Cancel.Path: func(c *Client, _ *Webservices) error {
			_, err := c.CancelLink(context.Background(), "C1")
			return err
		},
		DefaultLinkEndpoints.Capture.Path: func(c *Client, _ *Webservices) error {
			_, err := c.Capture(context.Background(), "C1", 0)
			return err
		},
		"/v5" + PathWSTransaction + "T1/refund/": func(_ *Client, ws *Webservices) error {
			_, err := ws.Refund(context.Background(), "T1", []byte(`{}`))
			return err
		},
	}
	for path, call := range calls {
		for _, status := range []int{http.StatusBadGateway, 0} {
			f, url := flakyServer(t, 100, status, "")
			c, err := New(url, "k", fastRetry)
			if err != nil {
				t.Fatal(err)
			}
			ws, err := NewWebservices(url+"/v5", "k", fastRetry)
			if err != nil {
				t.Fatal(err)
			}
			if err := call(c, ws); err == nil {
				t.Fatalf("%s: no error", path)
			}
			if n := f.requests(path); n != 1 {
				t.Fatalf("%s answered %d: sent %d times", path, status, n)
			}
		}
	}
}

// A read never outlives its context: no pause that would end past the
// deadline is taken.
func TestAReadStopsAtItsDeadline(t *testing.T) {
	f, url := flakyServer(t, 100, http.StatusBadGateway, "")
	c, err := New(url, "k", WithReadRetry(RetryPolicy{Tries: 10, First: time.Hour, Max: time.Hour}))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := c.Transaction(ctx, "T1"); err == nil {
		t.Fatal("no error")
	}
	if n := f.requests(PathTransaction); n != 1 {
		t.Fatalf("%d requests", n)
	}
}

// The pause before retry n is between half and all of First·2^(n-1),
// capped at Max.
func TestRetryPausesGrowAndAreCapped(t *testing.T) {
	p := RetryPolicy{Tries: 8, First: 100 * time.Millisecond, Max: time.Second}
	for n, want := range map[int]time.Duration{1: 100 * time.Millisecond, 2: 200 * time.Millisecond, 3: 400 * time.Millisecond,
		4: 800 * time.Millisecond, 5: time.Second, 7: time.Second} {
		for range 200 {
			if d := p.pause(n); d < want/2 || d > want {
				t.Fatalf("pause %d: %s, want within [%s, %s]", n, d, want/2, want)
			}
		}
	}
}
