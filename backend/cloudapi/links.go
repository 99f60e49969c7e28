package cloudapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// Online payment: a payment link (a cart) the customer pays on their own
// phone, and its operations. Keys are snake_case, authentication is
// Service-Secret (sent with the bearer header, as every request of the
// client: Client.auth). The specification shows the path of link generation and
// of capture, not those of reading and cancelling a cart, nor the methods
// of capture, reading and cancelling: each is an Endpoint a setting can
// change, with a documented default (DefaultLinkEndpoints).

// PathGenerateLink creates a payment link; PathCheckouts a v5 checkout.
const (
	PathGenerateLink = "/v4/ecommerce/generate_link/"
	PathCheckouts    = "/v5/ecommerce/checkouts/"
)

// Endpoint is a method and a path relative to the base URL, written
// "METHOD /path" ("GET /v4/ecommerce/cart/"). A GET sends cart_id in the
// query; any other method in a JSON body.
type Endpoint struct {
	Method, Path string
}

// ParseEndpoint reads "METHOD /path".
func ParseEndpoint(s string) (Endpoint, error) {
	m, p, ok := strings.Cut(strings.TrimSpace(s), " ")
	m, p = strings.ToUpper(strings.TrimSpace(m)), strings.TrimSpace(p)
	switch {
	case !ok || !strings.HasPrefix(p, "/") || strings.ContainsAny(p, "?# "):
		return Endpoint{}, fmt.Errorf("cloudapi: %q is not \"METHOD /path\" (such as \"GET /v4/ecommerce/cart/\")", s)
	case m != http.MethodGet && m != http.MethodPost && m != http.MethodPut && m != http.MethodPatch && m != http.MethodDelete:
		return Endpoint{}, fmt.Errorf("cloudapi: %q: the method is GET, POST, PUT, PATCH or DELETE", s)
	}
	return Endpoint{Method: m, Path: p}, nil
}

func (e Endpoint) String() string { return e.Method + " " + e.Path }

// LinkEndpoints are the cart operations whose path or method the
// specification does not show.
type LinkEndpoints struct {
	Cart    Endpoint // read a cart
	Cancel  Endpoint // cancel a link
	Capture Endpoint // capture an authorised cart (path shown: /capture_transactions/)
}

// DefaultLinkEndpoints are the cart operations: capture at the path the
// specification writes (its method not shown: POST, as every other cart
// operation with a body), reading and cancelling a cart in the v4
// e-commerce path family of link generation (neither path is shown).
// AltCapture is capture in that family too, for a provider that serves it
// there (the cloud.link_capture setting).
var DefaultLinkEndpoints = LinkEndpoints{
	Cart:    Endpoint{http.MethodGet, "/v4/ecommerce/cart/"},
	Cancel:  Endpoint{http.MethodPost, "/v4/ecommerce/cancel_link/"},
	Capture: Endpoint{http.MethodPost, "/capture_transactions/"},
}

// AltCapture is the documented alternative capture endpoint.
var AltCapture = Endpoint{http.MethodPost, "/v4/ecommerce/capture_transactions/"}

// WithLinkEndpoints replaces the cart operations' endpoints.
func WithLinkEndpoints(e LinkEndpoints) Option { return func(c *Client) { c.links = e } }

// LinkRequest is the body of link generation.
type LinkRequest struct {
	CartID             string        `json:"cart_id"`
	ReturnURLSuccess   string        `json:"return_url_success"`
	ReturnURLCancelled string        `json:"return_url_cancelled"`
	Amount             int64         `json:"amount"`
	IsInstantCapture   *bool         `json:"is_instant_capture,omitempty"`
	CaptureMinDelay    int           `json:"capture_min_delay,omitempty"` // hours, 0 to 72
	OrderSource        string        `json:"order_source,omitempty"`      // pay_at_table, click_and_collect, delivery, ecommerce
	AmountWithoutTax   int64         `json:"amount_without_tax,omitempty"`
	TaxAmount          int64         `json:"tax_amount,omitempty"`
	WebhookURL         string        `json:"webhook_url,omitempty"`
	Message            string        `json:"message,omitempty"`
	Datetime           string        `json:"datetime,omitempty"`
	Currency           string        `json:"currency,omitempty"`
	Vendor             *LinkVendor   `json:"vendor,omitempty"`
	Customer           *LinkCustomer `json:"customer,omitempty"`
	Items              []LinkItem    `json:"items,omitempty"`
	Reference          string        `json:"reference,omitempty"`
	ClientReference    string        `json:"client_reference,omitempty"`
	Features           *LinkFeatures `json:"features,omitempty"`
}

// Order sources of a link.
const (
	OrderPayAtTable      = "pay_at_table"
	OrderClickAndCollect = "click_and_collect"
	OrderDelivery        = "delivery"
	OrderEcommerce       = "ecommerce"
)

// LinkVendor names the merchant and the software.
type LinkVendor struct {
	BrandName       string `json:"brand_name"`
	LegalName       string `json:"legal_name,omitempty"`
	Country         string `json:"country,omitempty"`
	SoftwareName    string `json:"software_name,omitempty"`
	SoftwareVersion string `json:"software_version,omitempty"`
}

// LinkCustomer is who the link is for; first and last names are required
// when a customer is given.
type LinkCustomer struct {
	FirstName string `json:"first_name"`
	LastName  string `json:"last_name"`
	Email     string `json:"email,omitempty"`
	Telephone string `json:"telephone,omitempty"`
}

// LinkItem is a line of the cart.
type LinkItem struct {
	Name                    string   `json:"name"`
	TotalAmount             int64    `json:"total_amount"`
	TotalAmountWithoutTax   int64    `json:"total_amount_without_tax,omitempty"`
	Quantity                int      `json:"quantity,omitempty"`
	UnitPrice               int64    `json:"unit_price,omitempty"`
	EligibleTitreRestaurant bool     `json:"eligible_titre_restaurant"`
	Tax                     *LinkTax `json:"tax,omitempty"`
}

// LinkTax is an item's VAT. The unit of rate is not shown; basis points
// are sent (1000 for 10 %).
type LinkTax struct {
	Amount int64 `json:"amount"`
	Rate   int   `json:"rate"`
}

// LinkFeatures switch the link's features; nil leaves the provider's
// defaults (tips, contacts and meal vouchers on, sharing off).
type LinkFeatures struct {
	Tips             *bool `json:"tips,omitempty"`
	CustomerContacts *bool `json:"customer_contacts,omitempty"`
	MealVouchers     *bool `json:"meal_vouchers,omitempty"`
	ShareByEmail     *bool `json:"share_by_email,omitempty"`
	ShareBySMS       *bool `json:"share_by_sms,omitempty"`
}

// Link is a generated payment link. Existing: the cart_id was known and
// this is its link, given back in the duplicate's error: the same cart.
type Link struct {
	URL      string
	Existing bool
	Raw      []byte
}

// FieldError is a link request refused field by field (HTTP 400).
type FieldError struct {
	Fields map[string][]string
	Body   []byte
}

func (e *FieldError) Error() string {
	var parts []string
	for f, msgs := range e.Fields {
		parts = append(parts, f+": "+strings.Join(msgs, "; "))
	}
	slices.Sort(parts)
	return "cloudapi: the request was refused: " + strings.Join(parts, ", ")
}

// GenerateLink asks for a payment link with this exact body, once. A
// duplicate cart_id is not an error: the provider answers with the
// existing link, which is returned with Existing set.
func (c *Client) GenerateLink(ctx context.Context, body []byte) (*Link, error) {
	raw, err := c.do(ctx, http.MethodPost, PathGenerateLink, nil, body)
	var ae *APIError
	if errors.As(err, &ae) {
		var ko struct {
			Errors map[string]json.RawMessage `json:"errors"`
		}
		if json.Unmarshal(ae.Body, &ko) == nil && len(ko.Errors) > 0 {
			fe := fieldError(ko.Errors, ae.Body)
			if ids := fe.Fields["cart_id"]; len(ids) >= 2 && isURL(ids[1]) {
				return &Link{URL: ids[1], Existing: true, Raw: ae.Body}, nil
			}
			return nil, fe
		}
	}
	if err != nil {
		return nil, err
	}
	var ok struct {
		PaymentLink string `json:"payment_link"`
	}
	if json.Unmarshal(raw, &ok) != nil || !isURL(ok.PaymentLink) {
		return nil, &DecodeError{Op: "generate_link", Body: raw, Err: errors.New("no payment_link")}
	}
	return &Link{URL: ok.PaymentLink, Raw: raw}, nil
}

// fieldError reads {field: [messages]}; a value that is not a list of
// strings is kept as its JSON.
func fieldError(fields map[string]json.RawMessage, body []byte) *FieldError {
	fe := &FieldError{Fields: map[string][]string{}, Body: body}
	for f, v := range fields {
		var msgs []string
		if json.Unmarshal(v, &msgs) != nil {
			msgs = []string{string(v)}
		}
		fe.Fields[f] = msgs
	}
	return fe
}

func isURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != ""
}

// Cart statuses.
const (
	CartPending    = "pending"    // not fully paid (partial payments may be in)
	CartOK         = "ok"         // paid
	CartAuthorised = "authorised" // paid, to capture
	CartKO         = "ko"         // cancelled or expired
)

// Cart is what the provider says of a cart: the cart webhook's fields
// (also the data of a capture, under other names, read alike).
type Cart struct {
	CartID          string            `json:"cart_id"`
	PaymentLink     string            `json:"payment_link"`
	Status          string            `json:"status"`
	RequestedAmount int64             `json:"requested_amount"`
	AskedAmount     int64             `json:"asked_amount"`
	PaidAmount      int64             `json:"paid_amount"`
	GiftAmount      int64             `json:"gift_amount"`
	Action          string            `json:"action,omitempty"`
	Reason          string            `json:"reason,omitempty"`
	Transactions    []CartTransaction `json:"transactions"`
	Raw             []byte            `json:"-"`
}

// CartTransaction is one payment into a cart.
type CartTransaction struct {
	TransactionID string `json:"transaction_id"`
	TotalAmount   int64  `json:"total_amount"`
	GiftAmount    int64  `json:"gift_amount"`
	CurrencyCode  string `json:"currency_code"`
	DateOfPayment string `json:"date_of_payment"` // YYYY-MM-DD HH:MM:SS, GMT
	Gateway       string `json:"gateway"`
	Issuer        string `json:"issuer"`
	PAN           string `json:"pan"` // first and last digits only
	Status        string `json:"status"`
}

// MaxCartTransactions bounds the payments a cart lists: a link is paid in
// one payment, or a few (a meal voucher, then a card).
const MaxCartTransactions = 100

// ParseCart reads a cart, whichever names its amounts carry (the webhook's
// requested_amount, paid_amount, gift_amount; a capture's amount_requested,
// amount_paid, tip_amount).
func ParseCart(raw []byte) (*Cart, error) {
	var c struct {
		Cart
		AmountRequested *int64 `json:"amount_requested"`
		AmountPaid      *int64 `json:"amount_paid"`
		TipAmount       *int64 `json:"tip_amount"`
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, err
	}
	if c.Status == "" {
		return nil, errors.New("a cart without a status")
	}
	if len(c.Transactions) > MaxCartTransactions {
		return nil, fmt.Errorf("%w: a cart with %d transactions (at most %d are believed)", ErrPageOverfull, len(c.Transactions), MaxCartTransactions)
	}
	for _, f := range []struct {
		from *int64
		to   *int64
	}{{c.AmountRequested, &c.RequestedAmount}, {c.AmountPaid, &c.PaidAmount}, {c.TipAmount, &c.GiftAmount}} {
		if f.from != nil && *f.to == 0 {
			*f.to = *f.from
		}
	}
	out := c.Cart
	out.Raw = raw
	return &out, nil
}

// cartCall runs a cart operation with this cart_id (and more body fields),
// through send: c.do for an operation that changes the cart, c.read for a
// read (retried when it fails for a passing reason, whatever its method).
func (c *Client) cartCall(ctx context.Context, send func(context.Context, string, string, url.Values, []byte) ([]byte, error),
	e Endpoint, cartID string, more map[string]any) ([]byte, error) {
	if e.Method == http.MethodGet {
		return send(ctx, e.Method, e.Path, url.Values{"cart_id": {cartID}}, nil)
	}
	body := map[string]any{"cart_id": cartID}
	for k, v := range more {
		body[k] = v
	}
	b, _ := json.Marshal(body)
	return send(ctx, e.Method, e.Path, nil, b)
}

// Cart reads a cart. An unknown cart is an *HTTPError with status 404.
func (c *Client) Cart(ctx context.Context, cartID string) (*Cart, error) {
	raw, err := c.cartCall(ctx, c.read, c.links.Cart, cartID, nil)
	return parsed("cart", raw, err, ParseCart)
}

// Why a cart could not be cancelled.
const (
	CancelPaid           = "paid"            // "Cart has already been paid in full"
	CancelCancelled      = "cancelled"       // "Cart has already been cancelled"
	CancelNonCancellable = "non_cancellable" // "Cart contains a non-cancellable transaction"
	CancelOther          = "other"
)

// CancelError is a cancel the provider refused, with the cart as it is.
type CancelError struct {
	Reason  string // Cancel*
	Message string
	Cart    *Cart // nil when the answer carried none
	Body    []byte
}

func (e *CancelError) Error() string { return "cloudapi: the link was not cancelled: " + e.Message }

// CancelLink cancels a cart. A refusal is a *CancelError that says why
// (paid in full, cancelled already, a transaction that cannot be
// cancelled) and carries the cart.
func (c *Client) CancelLink(ctx context.Context, cartID string) (message string, err error) {
	raw, err := c.cartCall(ctx, c.do, c.links.Cancel, cartID, nil)
	body, err := answerBody(raw, err)
	if body == nil && err != nil {
		return "", err
	}
	var ans struct {
		Message     string          `json:"message"`
		Error       string          `json:"error"`
		WebhookData json.RawMessage `json:"webhook_data"`
	}
	if json.Unmarshal(body, &ans) != nil || (ans.Error == "" && err != nil) {
		if err != nil {
			return "", err
		}
		return "", &DecodeError{Op: "cancel link", Body: raw, Err: errors.New("no message")}
	}
	if ans.Error == "" {
		return ans.Message, nil
	}
	ce := &CancelError{Reason: cancelReason(ans.Error), Message: ans.Error, Body: body}
	if len(ans.WebhookData) > 0 {
		ce.Cart, _ = ParseCart(ans.WebhookData)
	}
	return "", ce
}

// answerBody is the body of a cart operation's answer, a refusal's
// included (its error is kept, for when the body says nothing); nil when
// no answer came.
func answerBody(raw []byte, err error) ([]byte, error) {
	var ae *APIError
	var he *HTTPError
	switch {
	case errors.As(err, &ae):
		return ae.Body, err
	case errors.As(err, &he):
		return he.Body, err
	case err != nil:
		return nil, err
	}
	return raw, nil
}

func cancelReason(msg string) string {
	m := strings.ToLower(msg)
	switch {
	case strings.Contains(m, "paid in full"):
		return CancelPaid
	case strings.Contains(m, "already been cancelled") || strings.Contains(m, "already been canceled"):
		return CancelCancelled
	case strings.Contains(m, "non-cancellable") || strings.Contains(m, "non cancellable"):
		return CancelNonCancellable
	}
	return CancelOther
}

// Why a capture was refused.
const (
	CaptureDone      = "captured"  // "...already been validated and has no transactions that require capturing"
	CaptureCancelled = "cancelled" // "...already been cancelled..."
	CaptureNotPaid   = "not_paid"  // "This link has not yet been paid in full"
	CaptureRefused   = "refused"   // the issuer refused some: see Transactions
	CaptureOther     = "other"
)

// CaptureError is a capture the provider refused.
type CaptureError struct {
	Reason       string // Capture*
	Message      string
	Transactions map[string]string // transaction id → reason, when the issuer refused
	Body         []byte
}

func (e *CaptureError) Error() string { return "cloudapi: nothing captured: " + e.Message }

// Capture captures an authorised cart: all of it (amount 0) or amount
// cents, not above what was requested. It returns the cart as it is after.
func (c *Client) Capture(ctx context.Context, cartID string, amount int64) (*Cart, error) {
	var more map[string]any
	if amount > 0 {
		more = map[string]any{"amount_to_capture": amount}
	}
	raw, err := c.cartCall(ctx, c.do, c.links.Capture, cartID, more)
	body, err := answerBody(raw, err)
	if body == nil && err != nil {
		return nil, err
	}
	var ans struct {
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
		Errors  []struct {
			TransactionID string `json:"transaction_id"`
			Reason        string `json:"reason"`
		} `json:"errors"`
	}
	if json.Unmarshal(body, &ans) != nil {
		if err != nil {
			return nil, err
		}
		return nil, &DecodeError{Op: "capture", Body: raw, Err: errors.New("unreadable")}
	}
	if err == nil && strings.EqualFold(ans.Message, "ok") && len(ans.Data) > 0 {
		cart, perr := ParseCart(ans.Data)
		if perr != nil {
			return nil, &DecodeError{Op: "capture", Body: raw, Err: perr}
		}
		return cart, nil
	}
	if ans.Message == "" {
		if err != nil {
			return nil, err
		}
		return nil, &DecodeError{Op: "capture", Body: raw, Err: errors.New("no message")}
	}
	ce := &CaptureError{Reason: captureReason(ans.Message, len(ans.Errors) > 0), Message: ans.Message, Body: body}
	for _, e := range ans.Errors {
		if ce.Transactions == nil {
			ce.Transactions = map[string]string{}
		}
		ce.Transactions[e.TransactionID] = e.Reason
	}
	return nil, ce
}

func captureReason(msg string, perTransaction bool) string {
	m := strings.ToLower(msg)
	switch {
	case perTransaction || strings.Contains(m, "was not possible"):
		return CaptureRefused
	case strings.Contains(m, "already been validated"):
		return CaptureDone
	case strings.Contains(m, "already been cancelled") || strings.Contains(m, "already been canceled"):
		return CaptureCancelled
	case strings.Contains(m, "not yet been paid"):
		return CaptureNotPaid
	}
	return CaptureOther
}

// Checkout is a v5 checkout: a token for the card widget and its link.
type Checkout struct {
	Token string `json:"checkout_token"`
	Link  string `json:"payment_link"`
	Raw   []byte `json:"-"`
}

// ErrCheckoutExists is a checkout_external_id already claimed (HTTP 409):
// a replacement checkout needs another.
var ErrCheckoutExists = errors.New("cloudapi: this checkout_external_id is already used")

// CreateCheckout creates a v5 checkout with this exact body, once.
func (c *Client) CreateCheckout(ctx context.Context, body []byte) (*Checkout, error) {
	raw, err := c.do(ctx, http.MethodPost, PathCheckouts, nil, body)
	var he *HTTPError
	if errors.As(err, &he) && he.Status == http.StatusConflict {
		return nil, fmt.Errorf("%w (%s)", ErrCheckoutExists, he.Body)
	}
	if err != nil {
		return nil, err
	}
	var co Checkout
	if json.Unmarshal(raw, &co) != nil || co.Token == "" {
		return nil, &DecodeError{Op: "checkout", Body: raw, Err: errors.New("no checkout_token")}
	}
	co.Raw = raw
	return &co, nil
}
