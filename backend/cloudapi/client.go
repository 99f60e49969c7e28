// Package cloudapi is a typed client for the provider's Cloud API: a
// terminal reached by its serial number through the provider's servers, for
// terminals the kiosk cannot reach on the LAN (4G, a guest Wi-Fi).
//
// The Cloud API answers a payment with an acknowledgement only; the outcome
// is polled (a desktop kiosk has no public address for the webhook). Every
// call takes a context. A call that moves money or acts on the terminal is
// made once: no hidden retries, the payment core decides what to do with
// each answer. A read (a poll, a history or batch page, a cart) is retried
// on a transient failure, within a RetryPolicy (retry.go). Errors are
// typed and say whether the request may have reached the provider. The API
// key is never in an error, a log line or anything this package returns.
package cloudapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Paths, relative to the base URL (the provider's cloud or its sandbox: a
// setting, never a constant).
const (
	PathPayment      = "/v5/pos/payment"
	PathTransaction  = "/v5/transaction/"
	PathAbort        = "/v4/pos/abort/"
	PathReversal     = "/v4/pos/reversal"
	PathTransactions = "/v4/pos/transactions/"
	PathPrint        = "/v4/pos/print/"
	PathShareReceipt = "/v4/pos/share-receipt"
)

// Statuses of a cloud transaction.
const (
	StatusOK      = "ok"
	StatusKO      = "ko"
	StatusPending = "pending"
)

// Client calls the Cloud API with one company's key.
type Client struct {
	base *url.URL
	key  string
	hc   *http.Client
	// userAgent goes with every request, for the provider's support.
	userAgent string
	links     LinkEndpoints
	retry     RetryPolicy // of reads only
}

// Option configures a Client.
type Option func(*Client)

// WithHTTPClient replaces the HTTP client (tests, a proxy).
func WithHTTPClient(hc *http.Client) Option { return func(c *Client) { c.hc = hc } }

// WithUserAgent sets the User-Agent header.
func WithUserAgent(ua string) Option { return func(c *Client) { c.userAgent = ua } }

// New returns a client for the cloud at baseURL (https://, or http:// on
// the loopback interface for a simulated cloud) with this API key.
func New(baseURL, key string, opts ...Option) (*Client, error) {
	u, err := url.Parse(strings.TrimRight(strings.TrimSpace(baseURL), "/"))
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return nil, fmt.Errorf("cloudapi: %q is not a cloud base URL (https://host[/path])", baseURL)
	}
	if u.Scheme == "http" && !isLoopback(u.Hostname()) {
		return nil, fmt.Errorf("cloudapi: %s: the provider's cloud is reached over HTTPS only (plain HTTP is for a simulated cloud on this machine)", u.Redacted())
	}
	if u.User != nil || u.RawQuery != "" {
		return nil, errors.New("cloudapi: the base URL holds no credentials and no query")
	}
	if strings.TrimSpace(key) == "" {
		return nil, errors.New("cloudapi: no API key (COMPTOIR_CLOUD_KEY, or the cloud.key setting)")
	}
	c := &Client{base: u, key: key, userAgent: "Comptoir", links: DefaultLinkEndpoints, retry: DefaultReadRetry,
		hc: &http.Client{Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	for _, o := range opts {
		o(c)
	}
	return c, nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// BaseURL is the cloud's base URL.
func (c *Client) BaseURL() string { return c.base.String() }

// auth puts the company's one key in both of the provider's headers, on
// every request. The specification asks for Authorization: Bearer on the
// Cloud API v5 (every request, the v4 abort and cancel included) and
// Service-Secret on the earlier v4 forms, the Webservices and online
// payment; the two overlap (GET /v5/transaction/ is the Cloud API's poll
// and, under the default Webservices URL, the Webservices fetch), so a
// choice by path is a guess the provider may not share. It is the same
// key: the cloud reads the header it expects, and the other is ignored.
func (c *Client) auth(h http.Header) {
	h.Set("Authorization", "Bearer "+c.key)
	h.Set("Service-Secret", c.key)
}

// Bounds of what the client reads of an answer: a transaction with its
// tickets is a few KiB; a list's page of 200 entries a tenth of a MiB.
const (
	maxAnswer = 4 << 20
	// MaxPageBytes bounds a page of a list (the history, the Webservices
	// batch): a larger one is refused, not read.
	MaxPageBytes = 1 << 20
	// defaultPageLimit is a list's page size when the request names none.
	defaultPageLimit = 20
)

// do sends one request and returns the body of a 2xx answer.
func (c *Client) do(ctx context.Context, method, path string, query url.Values, body []byte) ([]byte, error) {
	return c.doMax(ctx, maxAnswer, method, path, query, body)
}

// doMax is do reading at most limit bytes of the answer. A 2xx answer
// past it is a *DecodeError (ErrTooLarge); another status keeps its
// class, with the body cut at the limit.
func (c *Client) doMax(ctx context.Context, limit int, method, path string, query url.Values, body []byte) ([]byte, error) {
	u := *c.base
	u.Path = strings.TrimRight(u.Path, "/") + path
	if query != nil {
		u.RawQuery = query.Encode()
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), rd)
	if err != nil {
		return nil, &TransportError{Op: method + " " + path, Err: err}
	}
	// Every request, a GET included: without it the cloud answers 400.
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", c.userAgent)
	c.auth(req.Header)
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, transportError(method+" "+path, err, ctx)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, int64(limit)+1))
	if err != nil {
		return nil, &TransportError{Op: method + " " + path, Err: err, Sent: true}
	}
	tooLarge := len(raw) > limit
	if tooLarge {
		raw = raw[:limit]
	}
	switch {
	case resp.StatusCode == http.StatusUnauthorized:
		return nil, &AuthError{Body: raw}
	case resp.StatusCode == http.StatusBadRequest:
		var ko struct {
			Status  string `json:"status"`
			Message string `json:"message"`
		}
		_ = json.Unmarshal(raw, &ko)
		return nil, &APIError{Status: resp.StatusCode, Message: ko.Message, Body: raw}
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		return nil, &HTTPError{Status: resp.StatusCode, Body: raw}
	case tooLarge:
		return nil, &DecodeError{Op: method + " " + path, Body: raw[:min(len(raw), 4096)], Err: fmt.Errorf("%w (more than %d bytes)", ErrTooLarge, limit)}
	}
	return raw, nil
}

// checkPage refuses a list's page that holds more entries than asked
// (limit 0: the default page) or counts that cannot be.
func checkPage(op string, asked, n, total, offset int, raw []byte) error {
	if asked <= 0 {
		asked = defaultPageLimit
	}
	if n > asked || total < 0 || offset < 0 {
		return &DecodeError{Op: op, Body: raw[:min(len(raw), 4096)],
			Err: fmt.Errorf("%w: %d entries (total %d) for a limit of %d", ErrPageOverfull, n, total, asked)}
	}
	return nil
}

// transportError classifies a failed exchange: a request that never left
// this machine (no route, refused, a name that does not resolve) is not
// sent; anything later may have reached the provider.
func transportError(op string, err error, ctx context.Context) error {
	te := &TransportError{Op: op, Err: err, Sent: true}
	var dnsErr *net.DNSError
	var opErr *net.OpError
	switch {
	case errors.As(err, &dnsErr):
		te.Sent = false
	case errors.As(err, &opErr) && opErr.Op == "dial":
		te.Sent = false
	}
	if ctx.Err() != nil || isTimeout(err) {
		te.Timeout = true
	}
	return te
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// Ack is the Cloud API's answer to a payment: the request was accepted
// (ok) or not (ko), and the server's id of the transaction to poll.
type Ack struct {
	Status        string `json:"status"`
	TransactionID string `json:"transactionId"`
	Message       string `json:"message,omitempty"`
	Raw           []byte `json:"-"`
}

// Payment sends a v5 payment request (debit, refund, debit_and_enrol), the
// exact body given, once.
func (c *Client) Payment(ctx context.Context, body []byte) (*Ack, error) {
	raw, err := c.do(ctx, http.MethodPost, PathPayment, nil, body)
	if err != nil {
		return nil, err
	}
	var a Ack
	if err := json.Unmarshal(raw, &a); err != nil || a.Status == "" {
		return nil, &DecodeError{Op: "payment", Body: raw, Err: err}
	}
	a.Raw = raw
	return &a, nil
}

// Transaction is a cloud transaction as the poll or the webhook gives it.
type Transaction struct {
	Status             string `json:"status"`
	TransactionID      string `json:"transactionId"`
	LocalID            string `json:"localId,omitempty"`
	Amount             int64  `json:"amount"`
	GiftAmount         int64  `json:"giftAmount"`
	CurrencyCode       string `json:"currencyCode,omitempty"`
	TransactionType    string `json:"transactionType,omitempty"`
	CreatedAt          string `json:"createdAt,omitempty"`
	SerialNumber       string `json:"serialNumber,omitempty"`
	ClientTicket       string `json:"clientTicket,omitempty"`
	CompanyTicket      string `json:"companyTicket,omitempty"`
	PaymentApplication string `json:"paymentApplication,omitempty"`
	Scheme             string `json:"scheme,omitempty"`
	Issuer             string `json:"issuer,omitempty"`
	CheckoutExternalID string `json:"checkoutExternalId,omitempty"`
	IdempotentUUID     string `json:"idempotentUuid,omitempty"`
	CartID             string `json:"cartId,omitempty"`
	// Message is an application error's text (ko with a message).
	Message string `json:"message,omitempty"`
	Raw     []byte `json:"-"`
}

// Transaction polls a transaction by the server's id. The answer's shape
// around the transaction is not specified: the transaction itself, or
// under "transaction", "transactionDetails" or "data", are all read.
func (c *Client) Transaction(ctx context.Context, id string) (*Transaction, error) {
	raw, err := c.read(ctx, http.MethodGet, PathTransaction, url.Values{"transactionId": {id}}, nil)
	return parsed("transaction", raw, err, ParseTransaction)
}

// parsed is the answer raw of op, read by parse once the call succeeded;
// an answer parse cannot read is a *DecodeError.
func parsed[T any](op string, raw []byte, err error, parse func([]byte) (*T, error)) (*T, error) {
	if err != nil {
		return nil, err
	}
	v, err := parse(raw)
	if err != nil {
		return nil, &DecodeError{Op: op, Body: raw, Err: err}
	}
	return v, nil
}

// ParseTransaction reads a transaction as the cloud gives it: the poll's
// answer (the transaction itself, or wrapped in transaction,
// transactionDetails or data), or the webhook's body. A wrapped object is
// the transaction whenever there is one: a status beside it is the
// envelope's ({"status":"ok","transaction":{"status":"pending"}} is a
// pending transaction), and a wrapped object without a status of its own
// is not read as one.
func ParseTransaction(raw []byte) (*Transaction, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil {
		return nil, err
	}
	body := raw
	for _, k := range []string{"transaction", "transactionDetails", "data"} {
		if v, ok := top[k]; ok && len(v) > 0 && v[0] == '{' {
			body = v
			break
		}
	}
	var tx Transaction
	if err := json.Unmarshal(body, &tx); err != nil {
		return nil, err
	}
	if tx.Status == "" {
		return nil, errors.New("no status")
	}
	// TransactionDetails names its amount and type differently.
	var d struct {
		AskedAmount int64  `json:"askedAmount"`
		Type        string `json:"type"`
	}
	if json.Unmarshal(body, &d) == nil {
		if tx.Amount == 0 {
			tx.Amount = d.AskedAmount
		}
		if tx.TransactionType == "" {
			tx.TransactionType = d.Type
		}
	}
	tx.Raw = raw
	return &tx, nil
}

// Status is the answer of the v4 forms: ok means the request reached the
// terminal, nothing more.
type Status struct {
	Status  string `json:"status"`
	Message string `json:"message,omitempty"`
	Raw     []byte `json:"-"`
}

// Abort asks the terminal to stop the payment with this idempotentUuid.
// Its ok only says the request reached the terminal: the payment's own
// outcome decides.
func (c *Client) Abort(ctx context.Context, serial, uuid string) (*Status, error) {
	body, _ := json.Marshal(map[string]string{"serialNumber": serial, "idempotentUuid": uuid})
	return c.status(ctx, PathAbort, body)
}

// Print prints on the terminal's printer (format text or escpos).
func (c *Client) Print(ctx context.Context, serial, data, format string) (*Status, error) {
	body, _ := json.Marshal(map[string]string{"serialNumber": serial, "data": data, "format": format})
	return c.status(ctx, PathPrint, body)
}

// ShareReceipt shares a transaction's receipt from the terminal (medium
// print, email, sms or service; the terminal asks for the recipient).
func (c *Client) ShareReceipt(ctx context.Context, serial string, receiptTicket any, transactionID, medium string) (*Status, error) {
	body, err := json.Marshal(map[string]any{"serialNumber": serial, "receiptTicket": receiptTicket, "transactionId": transactionID, "medium": medium})
	if err != nil {
		return nil, err
	}
	return c.status(ctx, PathShareReceipt, body)
}

func (c *Client) status(ctx context.Context, path string, body []byte) (*Status, error) {
	raw, err := c.do(ctx, http.MethodPost, path, nil, body)
	if err != nil {
		return nil, err
	}
	var s Status
	if err := json.Unmarshal(raw, &s); err != nil || s.Status == "" {
		return nil, &DecodeError{Op: path, Body: raw, Err: err}
	}
	s.Raw = raw
	if s.Status != StatusOK {
		return &s, &APIError{Status: http.StatusOK, Message: s.Message, Body: raw}
	}
	return &s, nil
}

// ReversalRequest reverses a debit: its whole amount, tip included.
type ReversalRequest struct {
	Amount               int64  `json:"amount"`
	InitialTransactionID string `json:"initialTransactionId"`
}

// ReversalResponse is a reversal's answer.
type ReversalResponse struct {
	Status                string `json:"status"`
	InitialTransactionID  string `json:"initialTransactionId"`
	ReversalTransactionID string `json:"reversalTransactionId"`
	Message               string `json:"message,omitempty"`
	Raw                   []byte `json:"-"`
}

// Reversal sends a reversal's exact body once.
func (c *Client) Reversal(ctx context.Context, body []byte) (*ReversalResponse, error) {
	raw, err := c.do(ctx, http.MethodPost, PathReversal, nil, body)
	if err != nil {
		return nil, err
	}
	var r ReversalResponse
	if err := json.Unmarshal(raw, &r); err != nil || r.Status == "" {
		return nil, &DecodeError{Op: "reversal", Body: raw, Err: err}
	}
	r.Raw = raw
	if r.Status != StatusOK {
		return &r, &APIError{Status: http.StatusOK, Message: r.Message, Body: raw}
	}
	return &r, nil
}

// TransactionsRequest filters the history (v4 form): dates yyyy-MM-dd,
// times HH:mm:ss in Timezone, endDate exclusive.
type TransactionsRequest struct {
	SerialNumbers []string `json:"serialNumbers,omitempty"`
	Timezone      string   `json:"timezone,omitempty"`
	StartDate     string   `json:"startDate,omitempty"`
	EndDate       string   `json:"endDate,omitempty"`
	StartTime     string   `json:"startTime,omitempty"`
	EndTime       string   `json:"endTime,omitempty"`
	Limit         int      `json:"limit,omitempty"`
	Offset        int      `json:"offset,omitempty"`
}

// HistoryEntry is one transaction of the history.
type HistoryEntry struct {
	Status             string `json:"status"`
	TransactionID      string `json:"transactionId"`
	Amount             int64  `json:"amount"`
	GiftAmount         int64  `json:"giftAmount"`
	CurrencyCode       string `json:"currencyCode,omitempty"`
	Type               string `json:"type,omitempty"`
	TransactionType    string `json:"transactionType,omitempty"`
	CreatedAt          string `json:"createdAt,omitempty"`
	SerialNumber       string `json:"serialNumber,omitempty"`
	Scheme             string `json:"scheme,omitempty"`
	Issuer             string `json:"issuer,omitempty"`
	CartID             string `json:"cartId,omitempty"`
	Reference          string `json:"reference,omitempty"`
	CheckoutExternalID string `json:"checkoutExternalId,omitempty"`
	IdempotentUUID     string `json:"idempotentUuid,omitempty"`
}

// Kind is the entry's type, whichever name the answer used.
func (e HistoryEntry) Kind() string {
	if e.Type != "" {
		return e.Type
	}
	return e.TransactionType
}

// TransactionsPage is one page of the history.
type TransactionsPage struct {
	Total        int            `json:"total"`
	Limit        int            `json:"limit"`
	Offset       int            `json:"offset"`
	Count        int            `json:"count"`
	Transactions []HistoryEntry `json:"transactions"`
	Raw          []byte         `json:"-"`
}

// Transactions reads one page of the history.
func (c *Client) Transactions(ctx context.Context, r TransactionsRequest) (*TransactionsPage, error) {
	body, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	raw, err := c.readMax(ctx, MaxPageBytes, http.MethodPost, PathTransactions, nil, body)
	if err != nil {
		return nil, err
	}
	var p TransactionsPage
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, &DecodeError{Op: "transactions", Body: raw, Err: err}
	}
	if err := checkPage("transactions", r.Limit, len(p.Transactions), p.Total, p.Offset, raw); err != nil {
		return nil, err
	}
	p.Raw = raw
	return &p, nil
}
