package cloudapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"
)

// The Webservices API sees every transaction of the company (every
// terminal, cloud and online payments) and refunds one without the card.
// Its base URL is its own setting; by default the cloud's followed by /v5
// (DefaultWebservicesURL). Service-Secret authenticates it (every request
// carries the key in both headers: see Client.auth).

// Paths relative to the Webservices base URL.
const (
	PathWSBatch       = "/pos/transactions/"
	PathWSTransaction = "/transaction/"
)

// DefaultWebservicesURL is the Webservices base URL of a cloud base URL.
func DefaultWebservicesURL(cloudBase string) string {
	return trimSlash(cloudBase) + "/v5"
}

func trimSlash(s string) string {
	for len(s) > 0 && s[len(s)-1] == '/' {
		s = s[:len(s)-1]
	}
	return s
}

// Webservices calls the Webservices API with one company's key.
type Webservices struct{ c *Client }

// NewWebservices returns a Webservices client on wsBaseURL.
func NewWebservices(wsBaseURL, key string, opts ...Option) (*Webservices, error) {
	c, err := New(wsBaseURL, key, opts...)
	if err != nil {
		return nil, err
	}
	return &Webservices{c: c}, nil
}

// BatchRequest filters a batch. Dates are yyyy-MM-dd, both inclusive;
// times HH:mm:ss without a zone designator, read in Timezone (00:00:00 and
// 23:59:59 when left out). Without dates, the last 30 days.
type BatchRequest struct {
	StartDate        string   `json:"startDate,omitempty"`
	EndDate          string   `json:"endDate,omitempty"`
	StartTime        string   `json:"startTime,omitempty"`
	EndTime          string   `json:"endTime,omitempty"`
	Timezone         string   `json:"timezone,omitempty"`
	Limit            int      `json:"limit,omitempty"` // default 20, at most 200
	Offset           int      `json:"offset,omitempty"`
	SerialNumbers    []string `json:"serialNumbers,omitempty"`
	References       []string `json:"references,omitempty"`
	Schemes          []string `json:"schemes,omitempty"`
	CurrencyCode     string   `json:"currencyCode,omitempty"`
	OnlyPending      bool     `json:"only_pending,omitempty"`
	ExcludeECommerce bool     `json:"exclude_e_commerce,omitempty"`
}

var (
	dateShape = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)
	timeShape = regexp.MustCompile(`^\d{2}:\d{2}:\d{2}$`) // no Z, no offset
)

// Validate checks the shapes the specification fixes, before anything is
// sent.
func (r BatchRequest) Validate() error {
	for _, f := range []struct{ name, v string }{{"startDate", r.StartDate}, {"endDate", r.EndDate}} {
		if f.v != "" && !dateShape.MatchString(f.v) {
			return fmt.Errorf("cloudapi: %s %q is not yyyy-MM-dd", f.name, f.v)
		}
	}
	for _, f := range []struct{ name, v string }{{"startTime", r.StartTime}, {"endTime", r.EndTime}} {
		if f.v != "" && !timeShape.MatchString(f.v) {
			return fmt.Errorf("cloudapi: %s %q is not HH:mm:ss (no time zone designator: the zone is timezone)", f.name, f.v)
		}
	}
	if r.Timezone != "" {
		if _, err := time.LoadLocation(r.Timezone); err != nil {
			return fmt.Errorf("cloudapi: timezone %q is not a time zone id", r.Timezone)
		}
	}
	if r.Limit < 0 || r.Limit > 200 || r.Offset < 0 {
		return errors.New("cloudapi: limit is 0 to 200, offset 0 or more")
	}
	return nil
}

// Batch fetches one page of the company's transactions, most recent first.
func (w *Webservices) Batch(ctx context.Context, r BatchRequest) (*TransactionsPage, error) {
	if err := r.Validate(); err != nil {
		return nil, err
	}
	body, _ := json.Marshal(r)
	raw, err := w.c.readMax(ctx, MaxPageBytes, http.MethodPost, PathWSBatch, nil, body)
	if err != nil {
		return nil, err
	}
	var p TransactionsPage
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, &DecodeError{Op: "batch", Body: raw, Err: err}
	}
	if err := checkPage("batch", r.Limit, len(p.Transactions), p.Total, p.Offset, raw); err != nil {
		return nil, err
	}
	p.Raw = raw
	return &p, nil
}

// The ceiling of one BatchAll: the company's list of a period (every
// terminal, every online payment). A provider that keeps saying "more"
// cannot keep a reader going, nor fill its memory: what a read holds
// stays under MaxPeriodBytes of entries plus one page (MaxPageBytes).
const (
	MaxPeriodEntries = 20_000   // entries fetched, kept or not
	MaxPeriodPages   = 200      // pages asked: short pages end a read too
	MaxPeriodBytes   = 16 << 20 // bytes of the entries' fields fetched
)

// size is what an entry holds in memory, near enough.
func (e HistoryEntry) size() int {
	return 16 + len(e.Status) + len(e.TransactionID) + len(e.CurrencyCode) + len(e.Type) + len(e.TransactionType) +
		len(e.CreatedAt) + len(e.SerialNumber) + len(e.Scheme) + len(e.Issuer) + len(e.CartID) + len(e.Reference) +
		len(e.CheckoutExternalID) + len(e.IdempotentUUID)
}

// BatchAll fetches every page of a period. A period left open at its end
// is closed at the end of now's day (in the request's time zone) before
// the first page: by its date alone, since whether the provider reads an
// endTime as the end of the period or as a time of day on every day is
// not shown, and the second reading would hide every earlier day's
// transactions made later in the day than now. The list is most recent
// first, so a transaction arriving while paging only repeats an entry on
// the next page: entries are de-duplicated by transactionId. A page with more
// entries than asked is refused (ErrPageOverfull), and a period past the
// ceiling (MaxPeriodEntries, MaxPeriodPages, MaxPeriodBytes) ends with
// ErrPeriodTooLong and nothing: a partial list would read as "no such
// transaction".
func (w *Webservices) BatchAll(ctx context.Context, r BatchRequest, now time.Time) ([]HistoryEntry, error) {
	if r.EndDate == "" {
		loc := time.UTC
		if r.Timezone != "" {
			if l, err := time.LoadLocation(r.Timezone); err == nil {
				loc = l
			}
		}
		r.EndDate = now.In(loc).Format(time.DateOnly)
	}
	if r.Limit == 0 {
		r.Limit = 200
	}
	r.Offset = 0
	var (
		out            []HistoryEntry
		seen           = map[string]bool{}
		fetched, bytes int
	)
	for range MaxPeriodPages {
		p, err := w.Batch(ctx, r)
		if err != nil {
			return nil, err
		}
		fetched += len(p.Transactions)
		for _, e := range p.Transactions {
			bytes += e.size()
		}
		if fetched > MaxPeriodEntries || bytes > MaxPeriodBytes {
			break
		}
		for _, e := range p.Transactions {
			if e.TransactionID != "" && seen[e.TransactionID] {
				continue
			}
			seen[e.TransactionID] = true
			out = append(out, e)
		}
		r.Offset += len(p.Transactions)
		if len(p.Transactions) == 0 || r.Offset >= p.Total {
			return out, nil
		}
	}
	return nil, fmt.Errorf("cloudapi: %w (more than %d entries, %d pages or %d MiB)", ErrPeriodTooLong, MaxPeriodEntries, MaxPeriodPages, MaxPeriodBytes>>20)
}

// TransactionDetails is one transaction as the Webservices fetch it.
type TransactionDetails struct {
	AskedAmount    int64  `json:"askedAmount"`
	GiftAmount     int64  `json:"giftAmount"`
	TotalAmount    int64  `json:"totalAmount"`
	ServerDatetime string `json:"serverDatetime"`
	DeviceDatetime string `json:"deviceDatetime"`
	Issuer         string `json:"issuer"`
	Scheme         string `json:"scheme"`
	Status         string `json:"status"`
	TransactionID  string `json:"transactionId"`
	Type           string `json:"type"`
	SerialNumber   string `json:"serialNumber"`
	ClientTicket   string `json:"clientTicket"`
	CompanyTicket  string `json:"companyTicket"`
	Reference      string `json:"reference"`
	Raw            []byte `json:"-"`
}

// Details fetches one transaction of the company.
func (w *Webservices) Details(ctx context.Context, id string) (*TransactionDetails, error) {
	raw, err := w.c.read(ctx, http.MethodGet, PathWSTransaction, url.Values{"transactionId": {id}}, nil)
	if err != nil {
		return nil, err
	}
	var ans struct {
		TransactionDetails *TransactionDetails `json:"transactionDetails"`
	}
	if json.Unmarshal(raw, &ans) != nil || ans.TransactionDetails == nil || ans.TransactionDetails.Status == "" {
		return nil, &DecodeError{Op: "transaction", Body: raw, Err: errors.New("no transactionDetails")}
	}
	ans.TransactionDetails.Raw = raw
	return ans.TransactionDetails, nil
}

// RefundRequest refunds a transaction without the card.
type RefundRequest struct {
	Amount        int64        `json:"amount"` // cents, > 0, not above the original
	UserEmail     string       `json:"user_email"`
	Vendor        RefundVendor `json:"vendor"`
	PrioritiseTip bool         `json:"prioritise_tip,omitempty"`
}

// RefundVendor names the software; both fields are required.
type RefundVendor struct {
	SoftwareName    string `json:"software_name"`
	SoftwareVersion string `json:"software_version"`
}

// Statuses of a refund's answer.
const (
	RefundRefunded    = "refunded"     // 201: done
	RefundPending     = "pending"      // 202: more checks; a webhook or a later fetch decides
	RefundWaiting     = "waiting"      // 202: a manager approves it at ApprovalURL
	RefundNotPossible = "not_possible" // 422: the issuer refused
)

// Refund is the provider's answer to a refund.
type Refund struct {
	Status        string // Refund*
	Message       string
	TransactionID string // the refund's
	ApprovalURL   string // with waiting
	Raw           []byte
}

// RefundError is a refund the provider found impossible (HTTP 400 with
// an error): nothing was refunded.
type RefundError struct {
	Message string
	Body    []byte
}

func (e *RefundError) Error() string { return "cloudapi: refund impossible: " + e.Message }

// Refund asks for a refund of the transaction originalID with this exact
// body, once. Each answer is its own outcome: refunded, pending, waiting
// and not possible come back as a *Refund; a malformed request as a
// *FieldError; an impossible refund as a *RefundError. Anything else (a
// lost answer, a 5xx) leaves the refund unknown: fetch the transaction,
// never ask again blindly.
func (w *Webservices) Refund(ctx context.Context, originalID string, body []byte) (*Refund, error) {
	if originalID == "" || strings.ContainsAny(originalID, "/?#") {
		return nil, fmt.Errorf("cloudapi: %q is not a transaction id", originalID)
	}
	path := PathWSTransaction + originalID + "/refund/" // escaped as the URL is written
	raw, err := w.c.do(ctx, http.MethodPost, path, nil, body)
	status := http.StatusOK
	var ae *APIError
	var he *HTTPError
	switch {
	case errors.As(err, &ae):
		var ko map[string]json.RawMessage
		if json.Unmarshal(ae.Body, &ko) == nil {
			if inner, ok := ko["errors"]; ok { // the link API's wrapper, tolerated
				_ = json.Unmarshal(inner, &ko)
			}
			if msg, ok := ko["error"]; ok {
				var m string
				_ = json.Unmarshal(msg, &m)
				return nil, &RefundError{Message: m, Body: ae.Body}
			}
			if fe := fieldError(ko, ae.Body); len(fe.Fields) > 0 {
				return nil, fe
			}
		}
		return nil, err
	case errors.As(err, &he) && he.Status == http.StatusUnprocessableEntity:
		raw, status = he.Body, he.Status
	case err != nil:
		return nil, err
	}
	var ans struct {
		Status        string `json:"status"`
		Message       string `json:"message"`
		TransactionID string `json:"transaction_id"`
		ApprovalURL   string `json:"approval_url"`
	}
	if json.Unmarshal(raw, &ans) != nil {
		return nil, &DecodeError{Op: "refund", Body: raw, Err: errors.New("unreadable")}
	}
	if status == http.StatusUnprocessableEntity {
		ans.Status = RefundNotPossible
	}
	switch ans.Status {
	case RefundRefunded, RefundPending, RefundWaiting, RefundNotPossible:
	default:
		return nil, &DecodeError{Op: "refund", Body: raw, Err: fmt.Errorf("status %q", ans.Status)}
	}
	return &Refund{Status: ans.Status, Message: ans.Message, TransactionID: ans.TransactionID, ApprovalURL: ans.ApprovalURL, Raw: raw}, nil
}
