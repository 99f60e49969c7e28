package cloudsim

import (
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/google/uuid"
)

// Online payment as the simulated cloud serves it: the specification's
// paths for link generation and checkouts; for the cart operations whose
// path or method it does not show, the defaults Comptoir documents, with
// reading a cart answered on GET (?cart_id=) and POST alike.
const (
	PathGenerateLink = "/v4/ecommerce/generate_link/"
	PathCart         = "/v4/ecommerce/cart/"
	PathCancelLink   = "/v4/ecommerce/cancel_link/"
	PathCapture      = "/v4/ecommerce/capture_transactions/"
	// PathCaptureShort is capture at the path the specification writes
	// (/capture_transactions/), served as well as PathCapture.
	PathCaptureShort = "/capture_transactions/"
	PathCheckouts    = "/v5/ecommerce/checkouts/"
	// PathPayPage is where a link points: a page that plays the customer
	// on their phone (GET shows the cart, POST pays it).
	PathPayPage = "/pay/"
	// PathReturnPage plays the merchant's page a phone returns to after
	// paying or cancelling (with cartId and status).
	PathReturnPage = "/pay/done"
)

// LinkLifetime is how long an unpaid link lives before the provider
// cancels it.
const LinkLifetime = 72 * time.Hour

// Cart statuses.
const (
	CartPending    = "pending"
	CartOK         = "ok"
	CartAuthorised = "authorised"
	CartKO         = "ko"
)

// Kinds of a payment into a cart, for the control API.
const (
	PayCard        = "card"
	PayMealVoucher = "meal_voucher"
)

// CartPayment is one transaction into a cart, as the cart webhook lists it.
type CartPayment struct {
	TransactionID string `json:"transaction_id"`
	TotalAmount   int64  `json:"total_amount"`
	GiftAmount    int64  `json:"gift_amount"`
	CurrencyCode  string `json:"currency_code"`
	DateOfPayment string `json:"date_of_payment"`
	Gateway       string `json:"gateway"`
	Issuer        string `json:"issuer"`
	PAN           string `json:"pan"`
	Status        string `json:"status"` // ok, ko, cancelled
}

// CartView is a cart in the cart webhook's words.
type CartView struct {
	CartID          string        `json:"cart_id"`
	PaymentLink     string        `json:"payment_link"`
	Status          string        `json:"status"`
	RequestedAmount int64         `json:"requested_amount"`
	AskedAmount     int64         `json:"asked_amount"`
	PaidAmount      int64         `json:"paid_amount"`
	GiftAmount      int64         `json:"gift_amount"`
	Action          string        `json:"action,omitempty"`
	Reason          string        `json:"reason"`
	Transactions    []CartPayment `json:"transactions"`
	// Request is the link request as received, keys in snake_case.
	Request map[string]json.RawMessage `json:"-"`
}

// cart is a payment link the cloud holds.
type cart struct {
	view     CartView
	token    string
	instant  bool
	currency string
	success  string // return_url_success
	created  time.Time
}

// paidLocked sums the cart's approved payments.
func (ct *cart) paid() (amount, gift int64) {
	for _, p := range ct.view.Transactions {
		if p.Status == StatusOK {
			amount += p.TotalAmount - p.GiftAmount
			gift += p.GiftAmount
		}
	}
	return amount, gift
}

// expireLocked applies the 72 h rule: an unpaid link is cancelled.
func (c *Cloud) expireLocked(ct *cart) {
	if ct.view.Status != CartPending || c.cfg.Now().Sub(ct.created) < c.scaled(LinkLifetime) {
		return
	}
	if paid, _ := ct.paid(); paid == 0 {
		ct.view.Status, ct.view.Reason = CartKO, "expired"
		c.log.Info("link expired", "cart", ct.view.CartID)
	}
}

// snake turns a camelCase key into snake_case ("returnUrlSuccess" →
// "return_url_success"): link generation accepts both.
func snake(k string) string {
	var b strings.Builder
	for i, r := range k {
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// fieldErrors answers HTTP 400 {errors: {field: [messages]}}.
func fieldErrors(w http.ResponseWriter, errs map[string][]string) {
	writeJSONCode(w, http.StatusBadRequest, map[string]any{"errors": errs})
}

func (c *Cloud) handleGenerateLink(w http.ResponseWriter, r *http.Request) {
	var in map[string]json.RawMessage
	if !decode(w, r, &in) {
		return
	}
	req := map[string]json.RawMessage{}
	for k, v := range in {
		req[snake(k)] = v
	}
	str := func(k string) string {
		var s string
		_ = json.Unmarshal(req[k], &s)
		return strings.TrimSpace(s)
	}
	var amount int64
	errs := map[string][]string{}
	for _, k := range []string{"cart_id", "return_url_success", "return_url_cancelled"} {
		if str(k) == "" {
			errs[k] = []string{"This field is required."}
		}
	}
	if err := json.Unmarshal(req["amount"], &amount); err != nil || amount <= 0 {
		errs["amount"] = []string{"A positive whole number of cents is required."}
	}
	if u := str("webhook_url"); u != "" && !strings.HasPrefix(u, "http") {
		errs["webhook_url"] = []string{"Must start with http or https."}
	}
	instant := true
	if raw, ok := req["is_instant_capture"]; ok && json.Unmarshal(raw, &instant) != nil {
		errs["is_instant_capture"] = []string{"Must be a boolean."}
	}
	if src := str("order_source"); src != "" && !slices.Contains([]string{"pay_at_table", "click_and_collect", "delivery", "ecommerce"}, src) {
		errs["order_source"] = []string{fmt.Sprintf("%q is not a valid choice.", src)}
	}
	id := str("cart_id")
	c.mu.Lock()
	if existing := c.carts[id]; existing != nil && id != "" {
		link := existing.view.PaymentLink
		c.mu.Unlock()
		fieldErrors(w, map[string][]string{"cart_id": {"This cart_id already exists", link}})
		return
	}
	if len(errs) > 0 {
		c.mu.Unlock()
		fieldErrors(w, errs)
		return
	}
	ct := &cart{token: uuid.NewString(), instant: instant, currency: str("currency"), success: str("return_url_success"), created: c.cfg.Now()}
	if ct.currency == "" {
		ct.currency = "EUR"
	}
	ct.view = CartView{CartID: id, Status: CartPending, RequestedAmount: amount, AskedAmount: amount,
		PaymentLink: c.linkURLLocked(ct.token), Transactions: []CartPayment{}, Request: req}
	c.carts[id] = ct
	c.cartOrder = append(c.cartOrder, ct)
	c.broadcastLocked()
	c.mu.Unlock()
	c.log.Info("link generated", "cart", id, "amount", amount)
	writeJSONCode(w, http.StatusCreated, map[string]string{"payment_link": ct.view.PaymentLink})
}

// linkURLLocked is a link's page on this cloud.
func (c *Cloud) linkURLLocked(token string) string {
	base := "http://cloudsim.invalid"
	if c.ln != nil {
		base = "http://" + c.ln.Addr().String()
	}
	return base + PathPayPage + token
}

// cartID reads cart_id from the query or the JSON body.
func cartID(w http.ResponseWriter, r *http.Request, more any) (string, bool) {
	if id := r.URL.Query().Get("cart_id"); id != "" || r.Method == http.MethodGet {
		return id, true
	}
	var b struct {
		CartID string `json:"cart_id"`
	}
	raw, ok := readBody(w, r)
	if !ok || json.Unmarshal(raw, &b) != nil {
		ko(w, http.StatusBadRequest, "Malformed JSON body")
		return "", false
	}
	if more != nil {
		_ = json.Unmarshal(raw, more)
	}
	return b.CartID, true
}

// cartLocked is the cart with this id, expiry applied, or a 404.
func (c *Cloud) cartLocked(w http.ResponseWriter, id string) (*cart, bool) {
	ct := c.carts[id]
	if ct == nil {
		writeJSONCode(w, http.StatusNotFound, map[string]string{"detail": "Not found."})
		return nil, false
	}
	c.expireLocked(ct)
	return ct, true
}

// withCart runs a cart operation on the cart the request names, under the
// cloud's lock; more receives the body's other fields.
func (c *Cloud) withCart(w http.ResponseWriter, r *http.Request, more any, op func(ct *cart)) {
	id, ok := cartID(w, r, more)
	if !ok {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if ct, ok := c.cartLocked(w, id); ok {
		op(ct)
	}
}

func (c *Cloud) handleCart(w http.ResponseWriter, r *http.Request) {
	c.withCart(w, r, nil, func(ct *cart) { writeJSON(w, ct.view) })
}

func (c *Cloud) handleCancelLink(w http.ResponseWriter, r *http.Request) {
	c.withCart(w, r, nil, func(ct *cart) { c.cancelLocked(w, ct) })
}

func (c *Cloud) cancelLocked(w http.ResponseWriter, ct *cart) {
	id := ct.view.CartID
	refuse := func(msg string) {
		writeJSONCode(w, http.StatusBadRequest, map[string]any{"error": msg, "webhook_data": ct.view})
	}
	switch ct.view.Status {
	case CartOK, CartAuthorised:
		refuse("Cart has already been paid in full")
		return
	case CartKO:
		refuse("Cart has already been cancelled")
		return
	}
	for _, p := range ct.view.Transactions {
		if p.Status == StatusOK && p.Gateway == PayMealVoucher {
			refuse("Cart contains a non-cancellable transaction")
			return
		}
	}
	for i := range ct.view.Transactions {
		if ct.view.Transactions[i].Status == StatusOK {
			ct.view.Transactions[i].Status = "cancelled" // a card part is given back
		}
	}
	ct.view.PaidAmount, ct.view.GiftAmount = ct.paid()
	ct.view.Status, ct.view.Action, ct.view.Reason = CartKO, "cancel", ""
	c.broadcastLocked()
	c.log.Info("link cancelled", "cart", id)
	writeJSON(w, map[string]string{"message": "The cart " + id + " has been cancelled"})
}

func (c *Cloud) handleCapture(w http.ResponseWriter, r *http.Request) {
	var more struct {
		Amount *json.Number `json:"amount_to_capture"`
	}
	c.withCart(w, r, &more, func(ct *cart) { c.captureLocked(w, ct, more.Amount) })
}

func (c *Cloud) captureLocked(w http.ResponseWriter, ct *cart, amount *json.Number) {
	id := ct.view.CartID
	refuse := func(msg string) { writeJSONCode(w, http.StatusBadRequest, map[string]string{"message": msg}) }
	switch ct.view.Status {
	case CartOK:
		refuse("This link has already been validated and has no transactions that require capturing")
		return
	case CartKO:
		refuse("This link has already been cancelled and does not have any transactions that require capturing")
		return
	case CartPending:
		refuse("This link has not yet been paid in full")
		return
	}
	asked := ct.view.RequestedAmount
	if amount != nil {
		n, err := amount.Int64()
		if err != nil || n <= 0 || n > ct.view.RequestedAmount {
			refuse("amount_to_capture must be a whole number of cents, not above the requested amount")
			return
		}
		asked = n
	}
	if f := c.takeCaptureRefusal(); f {
		errs := []map[string]string{}
		for _, p := range ct.view.Transactions {
			if p.Status == StatusOK {
				errs = append(errs, map[string]string{"transaction_id": p.TransactionID, "reason": "refused by the issuer"})
			}
		}
		writeJSONCode(w, http.StatusBadRequest, map[string]any{"message": "The capture of one or more transaction(s) was not possible", "errors": errs})
		return
	}
	ct.view.Status, ct.view.AskedAmount, ct.view.Action = CartOK, asked, "capture"
	c.broadcastLocked()
	paid, gift := ct.paid()
	writeJSON(w, map[string]any{"message": "ok", "data": map[string]any{
		"cart_id": id, "amount_requested": ct.view.RequestedAmount, "amount_paid": paid, "tip_amount": gift,
		"status": ct.view.Status, "transactions": ct.view.Transactions,
	}})
}

// takeCaptureRefusal consumes a scripted issuer refusal of the next capture.
func (c *Cloud) takeCaptureRefusal() bool {
	if c.refuseCapture {
		c.refuseCapture = false
		return true
	}
	return false
}

func (c *Cloud) handleCheckout(w http.ResponseWriter, r *http.Request) {
	var b struct {
		CheckoutExternalID string `json:"checkout_external_id"`
		Amount             int64  `json:"amount"`
	}
	if !decode(w, r, &b) {
		return
	}
	switch {
	case strings.TrimSpace(b.CheckoutExternalID) == "":
		fieldErrors(w, map[string][]string{"checkout_external_id": {"This field is required."}})
		return
	case b.Amount < 100:
		fieldErrors(w, map[string][]string{"amount": {"Ensure this value is greater than or equal to 100."}})
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.checkouts[b.CheckoutExternalID] {
		writeJSONCode(w, http.StatusConflict, map[string]string{"detail": "This checkout_external_id is already used."})
		return
	}
	c.checkouts[b.CheckoutExternalID] = true
	token := uuid.NewString()
	writeJSONCode(w, http.StatusCreated, map[string]string{"checkout_token": token, "payment_link": c.linkURLLocked(token)})
}

// PayCart plays the customer on their phone: a payment of amount cents
// (0: what is left) into the cart, by card or meal voucher, approved or
// (failed) refused. A cart paid in full becomes ok, or authorised when its
// capture is not instant.
func (c *Cloud) PayCart(id string, amount, gift int64, kind string, failed bool) (CartView, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ct := c.carts[id]
	if ct == nil {
		return CartView{}, fmt.Errorf("no cart %q", id)
	}
	c.expireLocked(ct)
	if ct.view.Status != CartPending {
		return ct.view, fmt.Errorf("cart %q is %s: nothing more can be paid", id, ct.view.Status)
	}
	paid, _ := ct.paid()
	left := ct.view.RequestedAmount - paid
	if amount <= 0 || amount > left {
		amount = left
	}
	if kind == "" {
		kind = PayCard
	}
	if kind != PayCard && kind != PayMealVoucher {
		return ct.view, fmt.Errorf("kind %q: card or meal_voucher", kind)
	}
	p := CartPayment{TransactionID: uuid.NewString(), TotalAmount: amount + gift, GiftAmount: gift, CurrencyCode: ct.currency,
		DateOfPayment: c.cfg.Now().UTC().Format(time.DateTime), Gateway: kind, Issuer: "SIM", PAN: "4970********0042", Status: StatusOK}
	if failed {
		p.Status, p.GiftAmount, p.TotalAmount = StatusKO, 0, amount
	}
	ct.view.Transactions = append(ct.view.Transactions, p)
	// The company's transactions hold it too, as an online payment (no
	// terminal serial): the Webservices list it.
	c.addLocked(&txn{Transaction: Transaction{Status: p.Status, TransactionID: p.TransactionID, Amount: amount,
		GiftAmount: p.GiftAmount, CurrencyCode: ct.currency, TransactionType: "debit", CreatedAt: c.cfg.Now(),
		Scheme: strings.ToUpper(kind), Issuer: p.Issuer, CartID: id}})
	ct.view.PaidAmount, ct.view.GiftAmount = ct.paid()
	if !failed {
		ct.view.Action = "payment_received"
	}
	if ct.view.PaidAmount >= ct.view.RequestedAmount {
		ct.view.Status = CartOK
		if !ct.instant {
			ct.view.Status = CartAuthorised
		}
	}
	c.broadcastLocked()
	c.log.Info("cart payment", "cart", id, "amount", amount, "kind", kind, "failed", failed, "status", ct.view.Status)
	return ct.view, nil
}

// Carts are the links generated, oldest first.
func (c *Cloud) Carts() []CartView {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]CartView, 0, len(c.cartOrder))
	for _, ct := range c.cartOrder {
		c.expireLocked(ct)
		out = append(out, ct.view)
	}
	return out
}

// ExpireCart makes a cart as old as the provider's 72 hours.
func (c *Cloud) ExpireCart(id string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	ct := c.carts[id]
	if ct == nil {
		return fmt.Errorf("no cart %q", id)
	}
	ct.created = c.cfg.Now().Add(-c.scaled(LinkLifetime))
	c.expireLocked(ct)
	c.broadcastLocked()
	return nil
}

// cartByToken is the cart a link's page shows.
func (c *Cloud) cartByToken(token string) *cart {
	for _, ct := range c.cartOrder {
		if ct.token == token {
			return ct
		}
	}
	return nil
}

var payPage = template.Must(template.New("pay").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Pay {{.Amount}}</title></head>
<body style="font-family: sans-serif; max-width: 28rem; margin: 2rem auto; padding: 0 1rem">
<p>Simulated provider checkout: no money moves.</p>
<h1 data-testid="pay-amount">{{.Amount}}</h1>
<p data-testid="pay-status" data-status="{{.Status}}">{{.Said}}</p>
{{if .Open}}<form method="post"><button name="action" value="pay" data-testid="pay-now" style="font-size: 1.5rem; padding: 1rem 2rem">Pay {{.Left}} by card</button></form>{{end}}
</body></html>`))

func (c *Cloud) handlePayPage(w http.ResponseWriter, r *http.Request) {
	token := strings.TrimPrefix(r.URL.Path, PathPayPage)
	c.mu.Lock()
	ct := c.cartByToken(token)
	var id string
	if ct != nil {
		id = ct.view.CartID
	}
	c.mu.Unlock()
	if ct == nil {
		http.NotFound(w, r)
		return
	}
	if r.Method == http.MethodPost {
		view, err := c.PayCart(id, 0, 0, PayCard, false)
		if err != nil {
			http.Error(w, err.Error(), http.StatusConflict)
			return
		}
		if view.Status != CartPending && ct.success != "" {
			http.Redirect(w, r, ct.success+"?cartId="+id+"&status="+view.Status, http.StatusSeeOther)
			return
		}
		http.Redirect(w, r, r.URL.Path, http.StatusSeeOther)
		return
	}
	c.mu.Lock()
	c.expireLocked(ct)
	v := ct.view
	c.mu.Unlock()
	money := func(n int64) string { return fmt.Sprintf("%d.%02d %s", n/100, n%100, ct.currency) }
	said := map[string]string{CartPending: "Waiting for payment", CartOK: "Paid, thank you", CartAuthorised: "Paid, thank you", CartKO: "This link is no longer valid"}[v.Status]
	if v.Status == CartPending && v.PaidAmount > 0 {
		said = fmt.Sprintf("%s of %s paid", money(v.PaidAmount), money(v.RequestedAmount))
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_ = payPage.Execute(w, map[string]any{"Amount": money(v.RequestedAmount), "Left": money(v.RequestedAmount - v.PaidAmount),
		"Status": v.Status, "Said": said, "Open": v.Status == CartPending})
}
