package cloudapi

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"net/url"
	"time"
)

// The provider says an occasional HTTP 502 on a heavy Webservices call is
// transient, to be retried with exponential backoff. Comptoir retries
// reads only: a poll, a history or batch page, a cart, a transaction's
// details. A request that moves money or acts on the terminal (a payment,
// a refund, a reversal, an abort, a link, a capture, a print) is sent once
// per call: whether to send it again is the payment core's journaled
// decision, never this client's.

// RetryPolicy bounds the retries of a read. The pause before retry n (1,
// 2, ...) is drawn at random between half and all of First·2^(n-1), capped
// at Max (exponential backoff with jitter, so that kiosks that failed
// together do not retry together). A read never outlives its context: a
// pause that would end past the context's deadline is not taken.
type RetryPolicy struct {
	// Tries is the number of requests of one read, the first included;
	// 1 (or less) never retries.
	Tries int
	First time.Duration
	Max   time.Duration
}

// DefaultReadRetry is four tries, about 0.5 s, 1 s and 2 s apart: a gateway
// hiccup passes, a provider that is down fails the read within ~4 s.
var DefaultReadRetry = RetryPolicy{Tries: 4, First: 500 * time.Millisecond, Max: 4 * time.Second}

// WithReadRetry replaces the retry policy of reads (DefaultReadRetry).
func WithReadRetry(p RetryPolicy) Option { return func(c *Client) { c.retry = p } }

// pause is the wait before retry n (n ≥ 1).
func (p RetryPolicy) pause(n int) time.Duration {
	d := p.First
	for i := 1; i < n && d < p.Max; i++ {
		d *= 2
	}
	if p.Max > 0 && d > p.Max {
		d = p.Max
	}
	if d <= 0 {
		return 0
	}
	return d/2 + rand.N(d/2+1)
}

// transient reports whether a failed read may succeed if asked again: a
// gateway that could not reach the provider's servers (502, 503, 504) or
// an exchange cut below HTTP. A 400, 401, 404 or 500 is the provider's
// answer, and asking again would get it again.
func transient(err error) bool {
	var he *HTTPError
	var te *TransportError
	switch {
	case errors.As(err, &he):
		return he.Status == http.StatusBadGateway || he.Status == http.StatusServiceUnavailable || he.Status == http.StatusGatewayTimeout
	case errors.As(err, &te):
		return !te.Timeout
	}
	return false
}

// read sends a request that changes nothing at the provider, retrying a
// transient failure under the client's RetryPolicy.
func (c *Client) read(ctx context.Context, method, path string, query url.Values, body []byte) ([]byte, error) {
	return c.readMax(ctx, maxAnswer, method, path, query, body)
}

// readMax is read of an answer bounded to limit bytes (doMax).
func (c *Client) readMax(ctx context.Context, limit int, method, path string, query url.Values, body []byte) ([]byte, error) {
	for n := 1; ; n++ {
		raw, err := c.doMax(ctx, limit, method, path, query, body)
		if err == nil || n >= c.retry.Tries || !transient(err) || ctx.Err() != nil {
			return raw, err
		}
		wait := c.retry.pause(n)
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
			return raw, err
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return raw, err
		}
	}
}
