package localapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// maxResponse bounds what the client reads of an answer. Card tickets are a
// few KiB.
const maxResponse = 4 << 20

// MaxHistoryPageBytes bounds one /transactions answer: 200 entries of a few
// hundred bytes each are a tenth of it. A larger page is refused, not read.
const MaxHistoryPageBytes = 1 << 20

// Answers that break the client's bounds, as the Err of a *DecodeError.
var (
	// ErrTooLarge: the answer is longer than the client reads.
	ErrTooLarge = errors.New("response too large")
	// ErrPageOverfull: a /transactions page lists more transactions than
	// the limit asked, or counts that cannot be.
	ErrPageOverfull = errors.New("the page does not keep to the limit asked")
)

// Client calls one terminal's Local API. It is safe for concurrent use; the
// terminal itself accepts one payment at a time.
type Client struct {
	base      *url.URL
	hc        *http.Client
	userAgent string
}

// Option configures a Client.
type Option func(*Client)

// WithHTTPClient replaces the HTTP client. Whoever supplies one takes on the
// guarantees NewHTTPClient gives: no connection reuse (so no silent replay of
// a request by net/http) and no redirects.
func WithHTTPClient(hc *http.Client) Option { return func(c *Client) { c.hc = hc } }

// WithUserAgent sets the User-Agent header.
func WithUserAgent(ua string) Option { return func(c *Client) { c.userAgent = ua } }

// NewHTTPClient returns the HTTP client the Local API needs. net/http resends
// a request by itself when a reused keep-alive connection turns out to be
// dead; for GET /payment/{amount} that would be a second payment. Every
// request therefore gets a fresh connection, which on a LAN costs well under
// a millisecond. Redirects are refused: following one would resend a POST.
// There is no overall timeout: each call's context carries it, because a
// payment may legitimately be held open for minutes.
func NewHTTPClient() *http.Client {
	return &http.Client{
		Transport: &http.Transport{
			Proxy:                  nil, // a terminal on the LAN is never behind the user's proxy
			DialContext:            (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 15 * time.Second}).DialContext,
			DisableKeepAlives:      true,
			TLSHandshakeTimeout:    5 * time.Second,
			MaxResponseHeaderBytes: 64 << 10,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// NewClient returns a client for the terminal at address: a URL
// ("http://10.0.0.5:16125/localapi/v4"), or host[:port] (port 16125 by
// default).
func NewClient(address string, opts ...Option) (*Client, error) {
	base, err := ParseBaseURL(address)
	if err != nil {
		return nil, err
	}
	c := &Client{base: base, hc: NewHTTPClient(), userAgent: "Comptoir"}
	for _, o := range opts {
		o(c)
	}
	return c, nil
}

// ParseBaseURL turns a terminal address into the Local API base URL. A URL
// without a path gets /localapi/v4; host[:port] gets http:// and port 16125.
func ParseBaseURL(address string) (*url.URL, error) {
	address = strings.TrimSpace(address)
	if address == "" {
		return nil, errors.New("localapi: empty terminal address")
	}
	if !strings.Contains(address, "://") {
		address = "http://" + address
	}
	u, err := url.Parse(address)
	if err != nil {
		return nil, fmt.Errorf("localapi: terminal address %q: %w", address, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("localapi: terminal address %q: scheme must be http or https", address)
	}
	if u.Hostname() == "" {
		return nil, fmt.Errorf("localapi: terminal address %q: no host", address)
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("localapi: terminal address %q: only scheme, host, port and path are allowed", address)
	}
	if u.Port() == "" {
		u.Host = net.JoinHostPort(u.Hostname(), strconv.Itoa(DefaultPort))
	} else if p, err := strconv.Atoi(u.Port()); err != nil || p < 1 || p > 65535 {
		return nil, fmt.Errorf("localapi: terminal address %q: bad port", address)
	}
	u.Path = strings.TrimRight(u.Path, "/")
	if u.Path == "" {
		u.Path = BasePath
	}
	u.RawPath = ""
	return u, nil
}

// BaseURL returns the base URL the client calls, ending in /localapi/v4.
func (c *Client) BaseURL() string { return c.base.String() }

// Ping checks that the terminal answers. With showMessage the terminal shows
// a greeting, which helps staff tell which terminal they are talking to.
func (c *Client) Ping(ctx context.Context, showMessage bool) (*PingResponse, error) {
	q := url.Values{}
	if showMessage {
		q.Set("showMessage", "true")
	}
	var out PingResponse
	if err := c.call(ctx, http.MethodGet, "/ping", q, nil, &out, &out.Raw); err != nil {
		return nil, err
	}
	return &out, statusErr("/ping", out.Status, out.Message, out.Raw)
}

// Payment starts a debit or a refund, or, with an idempotentUuid the terminal
// already knows, returns that transaction or attaches to it while in progress.
//
// A nil error with a non-nil Transaction means the terminal decided: check
// Approved or Declined. An *APIError means the terminal refused the request
// (busy, invalid); a *TransportError, *HTTPError or *DecodeError means the
// outcome is not known from this call.
func (c *Client) Payment(ctx context.Context, req *PaymentRequest) (*Transaction, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	return c.transaction(ctx, http.MethodPost, "/payment", req)
}

// PaymentBody sends a /payment body exactly as given, byte for byte: a
// resend must be the very request that was journaled. The body is checked
// as Payment checks a request, so nothing invalid is sent.
func (c *Client) PaymentBody(ctx context.Context, body []byte) (*Transaction, error) {
	var req PaymentRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, &ValidationError{Field: "body", Reason: err.Error()}
	}
	if err := req.Validate(); err != nil {
		return nil, err
	}
	return c.transaction(ctx, http.MethodPost, "/payment", json.RawMessage(body))
}

// SimplePayment is the earlier form GET /payment/{amount}: a debit with only
// an amount, and no idempotentUuid, so it has no protection against a double
// submission. Prefer Payment.
func (c *Client) SimplePayment(ctx context.Context, amount int64) (*Transaction, error) {
	if amount <= 0 {
		return nil, &ValidationError{Field: "amount", Reason: "must be greater than 0"}
	}
	return c.transaction(ctx, http.MethodGet, "/payment/"+strconv.FormatInt(amount, 10), nil)
}

func (c *Client) transaction(ctx context.Context, method, path string, body any) (*Transaction, error) {
	var tx Transaction
	if err := c.call(ctx, method, path, nil, body, &tx, &tx.Raw); err != nil {
		return nil, err
	}
	endpoint := "/payment"
	switch {
	case tx.Status == StatusOK, tx.Declined():
		return &tx, nil
	case tx.Status == StatusKO:
		return nil, newAPIError(endpoint, tx.Message, tx.Raw)
	default:
		return nil, &DecodeError{Endpoint: endpoint, Body: tx.Raw, Err: fmt.Errorf("status %q is neither ok nor ko", tx.Status)}
	}
}

// Print sends content to the terminal's printer. ok means accepted, not
// printed: a terminal without paper also answers ok.
func (c *Client) Print(ctx context.Context, req *PrintRequest) (*StatusResponse, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	var out StatusResponse
	if err := c.call(ctx, http.MethodPost, "/print", nil, req, &out, &out.Raw); err != nil {
		return nil, err
	}
	return &out, statusErr("/print", out.Status, out.Message, out.Raw)
}

// ShareReceipt asks the terminal to send a receipt; the terminal prompts the
// customer for the phone number or email address.
func (c *Client) ShareReceipt(ctx context.Context, req *ShareReceiptRequest) (*StatusResponse, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	var out StatusResponse
	if err := c.call(ctx, http.MethodPost, "/share-receipt", nil, req, &out, &out.Raw); err != nil {
		return nil, err
	}
	return &out, statusErr("/share-receipt", out.Status, out.Message, out.Raw)
}

// Reversal reverses a recent debit of this terminal. Amount must be the
// original amount + giftAmount.
func (c *Client) Reversal(ctx context.Context, req *ReversalRequest) (*ReversalResponse, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	var out ReversalResponse
	if err := c.call(ctx, http.MethodPost, "/reversal", nil, req, &out, &out.Raw); err != nil {
		return nil, err
	}
	return &out, statusErr("/reversal", out.Status, out.Message, out.Raw)
}

// ReversalBody sends a /reversal body exactly as given, byte for byte: a
// reversal journaled before it leaves is sent as journaled. The body is
// checked as Reversal checks a request.
func (c *Client) ReversalBody(ctx context.Context, body []byte) (*ReversalResponse, error) {
	var req ReversalRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, &ValidationError{Field: "body", Reason: err.Error()}
	}
	if err := req.Validate(); err != nil {
		return nil, err
	}
	var out ReversalResponse
	if err := c.call(ctx, http.MethodPost, "/reversal", nil, json.RawMessage(body), &out, &out.Raw); err != nil {
		return nil, err
	}
	return &out, statusErr("/reversal", out.Status, out.Message, out.Raw)
}

// Abort asks the terminal to abort the payment with req.IdempotentUUID. The
// answer may take as long as the payment itself: after the handover to the
// banking screen it comes only once the payment has completed, as an
// *APIError with CodeAbortNotPossible, and the answer to /payment decides.
func (c *Client) Abort(ctx context.Context, req *AbortRequest) (*AbortResponse, error) {
	if req == nil {
		req = &AbortRequest{} // the earlier form: {} rather than null
	}
	var out AbortResponse
	if err := c.call(ctx, http.MethodPost, "/abort", nil, req, &out, &out.Raw); err != nil {
		return nil, err
	}
	return &out, statusErr("/abort", out.Status, out.Message, out.Raw)
}

// Transactions fetches a page of the terminal's history.
func (c *Client) Transactions(ctx context.Context, req *TransactionsRequest) (*TransactionList, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	var out TransactionList
	if err := c.callMax(ctx, MaxHistoryPageBytes, http.MethodPost, "/transactions", nil, req, &out, &out.Raw); err != nil {
		return nil, err
	}
	asked := req.Limit
	if asked == 0 {
		asked = DefaultTransactionsLimit
	}
	if n := len(out.Transactions); n > asked || out.Total < 0 || out.Count < 0 || out.Offset < 0 {
		return nil, &DecodeError{Endpoint: "/transactions", Body: truncate(out.Raw, 4096),
			Err: fmt.Errorf("%w: %d transactions (total %d) for a limit of %d", ErrPageOverfull, n, out.Total, asked)}
	}
	// The earlier form lists the page without a status field.
	if out.Status == "" {
		return &out, nil
	}
	return &out, statusErr("/transactions", out.Status, out.Message, out.Raw)
}

// statusErr turns the status of a non-payment answer into an error: ko is an
// *APIError whatever its message, and a missing status is unreadable.
func statusErr(endpoint, status, message string, raw []byte) error {
	switch status {
	case StatusOK:
		return nil
	case StatusKO:
		return newAPIError(endpoint, message, raw)
	default:
		return &DecodeError{Endpoint: endpoint, Body: raw, Err: fmt.Errorf("status %q is neither ok nor ko", status)}
	}
}

func newAPIError(endpoint, message string, raw []byte) *APIError {
	e := &APIError{Endpoint: endpoint, Message: message, Raw: raw, Code: CodeUnspecified}
	if message != "" {
		e.Code, e.Arg = Classify(message)
	}
	return e
}

// call sends one request, exactly once, and decodes a 2xx JSON answer into
// out, keeping the raw body in *raw.
func (c *Client) call(ctx context.Context, method, path string, q url.Values, body any, out any, raw *json.RawMessage) error {
	return c.callMax(ctx, maxResponse, method, path, q, body, out, raw)
}

// callMax is call reading at most limit bytes of the answer.
func (c *Client) callMax(ctx context.Context, limit int, method, path string, q url.Values, body any, out any, raw *json.RawMessage) error {
	endpoint := path
	if strings.HasPrefix(path, "/payment/") {
		endpoint = "/payment"
	}
	u := *c.base
	u.Path += path
	u.RawQuery = q.Encode()

	var payload []byte
	if raw, ok := body.(json.RawMessage); ok {
		payload = raw
	} else if body != nil {
		var err error
		if payload, err = json.Marshal(body); err != nil {
			return fmt.Errorf("localapi %s: encode request: %w", endpoint, err)
		}
	}
	var sent atomic.Bool
	trace := &httptrace.ClientTrace{WroteRequest: func(info httptrace.WroteRequestInfo) {
		if info.Err == nil {
			sent.Store(true)
		}
	}}
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, trace), method, u.String(), bytes.NewReader(payload))
	if err != nil {
		return fmt.Errorf("localapi %s: %w", endpoint, err)
	}
	// Without GetBody net/http cannot replay the body, whatever the transport.
	req.GetBody = nil
	if body == nil {
		req.Body = http.NoBody
		req.ContentLength = 0
	} else {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	if c.userAgent != "" {
		req.Header.Set("User-Agent", c.userAgent)
	}

	resp, err := c.hc.Do(req)
	if err != nil {
		return transportError(ctx, endpoint, sent.Load(), err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, int64(limit)+1))
	if err != nil {
		// The status line arrived, so the request was certainly received.
		return transportError(ctx, endpoint, true, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return &HTTPError{Endpoint: endpoint, StatusCode: resp.StatusCode, Body: truncate(data, 4096)}
	}
	if len(data) > limit {
		return &DecodeError{Endpoint: endpoint, Body: truncate(data, 4096), Err: fmt.Errorf("%w (more than %d bytes)", ErrTooLarge, limit)}
	}
	if err := json.Unmarshal(data, out); err != nil {
		return &DecodeError{Endpoint: endpoint, Body: data, Err: err}
	}
	*raw = data
	return nil
}

func transportError(ctx context.Context, endpoint string, sent bool, err error) *TransportError {
	te := &TransportError{Endpoint: endpoint, Sent: sent, Err: err}
	var ue *url.Error
	if errors.As(err, &ue) {
		te.Err = ue.Err
	}
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		te.Timeout = true
	case errors.Is(ctx.Err(), context.Canceled):
		te.Canceled = true
	default:
		var ne net.Error
		te.Timeout = errors.As(err, &ne) && ne.Timeout()
	}
	return te
}

func truncate(b []byte, n int) []byte {
	if len(b) > n {
		return b[:n]
	}
	return b
}
