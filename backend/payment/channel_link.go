package payment

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/comptoir-pos/comptoir/backend/cloudapi"
	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/localapi"
)

// LinkAPI is the part of the provider's online payment the link channel
// uses; *cloudapi.Client satisfies it.
type LinkAPI interface {
	GenerateLink(ctx context.Context, body []byte) (*cloudapi.Link, error)
	Cart(ctx context.Context, cartID string) (*cloudapi.Cart, error)
	CancelLink(ctx context.Context, cartID string) (string, error)
}

// LinkLifetime is how long the provider keeps an unpaid link (72 h): it
// cancels it then.
const LinkLifetime = 72 * time.Hour

// LinkOptions are the merchant's words on every link.
type LinkOptions struct {
	// ReturnURL is where the customer's phone goes after paying or
	// cancelling (the provider adds cartId and status).
	ReturnURL string
	BrandName string
	Country   string
	Currency  string
	Vendor    *localapi.Vendor // the software's name and version
	PollEvery time.Duration    // how often a cart is read while it is open; 0: 3 s
	// Lifetime is the provider's life of an unpaid link (0: LinkLifetime),
	// and Margin how much longer the channel waits for the provider to end
	// it before cancelling it (0: an hour).
	Lifetime, Margin time.Duration
}

// LinkDetails are what a payment link shows the customer besides the
// amount: the lines of the order, where it comes from, and who it is for.
type LinkDetails struct {
	Items []LinkItem
	// Source is the provider's order_source: pay_at_table (the kiosk),
	// click_and_collect, delivery, ecommerce.
	Source  string
	Message string
	// ShareBySMS and ShareByEmail ask the provider to send the link to the
	// request's customer (who needs a phone or an email).
	ShareBySMS, ShareByEmail bool
	// Tips: nil leaves the provider's default; the kiosk policy turns them
	// off, as it turns off the terminal's optional screens.
	Tips *bool
	// Authorise only: the cart is paid but captured later by staff.
	AuthoriseOnly bool
	// MealVouchers: whether the customer may pay by meal voucher. nil:
	// when the link has lines, whether one of them is eligible; without
	// lines, the provider's default (on).
	MealVouchers *bool
}

// LinkItem is one line of the cart.
type LinkItem struct {
	Name            string
	Quantity        int
	Total           int64 // cents, VAT included
	VATBasisPoints  int   // 1000 for 10 %
	Tax             int64 // cents of VAT in Total
	VoucherEligible bool
}

// Link is the channel of a payment link the customer pays on their phone:
// a cart at the provider whose cart_id names the attempt (the order and
// the attempt's uuid), generated once (a lost answer is settled by asking
// again: a cart_id the provider knows answers with the same link), read
// every PollEvery until it is paid or ends, cancelled and then read.
// Attempts run side by side (a link printed for a table does not hold the
// kiosk) and may wait for their customer up to the provider's 72 h.
func Link(api LinkAPI, opts LinkOptions) Channel {
	if opts.PollEvery <= 0 {
		opts.PollEvery = 3 * time.Second
	}
	if opts.Lifetime <= 0 {
		opts.Lifetime = LinkLifetime
	}
	if opts.Margin <= 0 {
		opts.Margin = time.Hour
	}
	return &linkChannel{api: api, opts: opts}
}

type linkChannel struct {
	api  LinkAPI
	opts LinkOptions
}

func (c *linkChannel) Name() journal.Channel { return journal.ChannelLink }

func (c *linkChannel) Rules() ChannelRules {
	return ChannelRules{PollEvery: c.opts.PollEvery, Cadence: LinkCadence(c.opts.PollEvery), ResendUntilKnown: true, Concurrent: true,
		Lifetime: c.opts.Lifetime, LifetimeMargin: c.opts.Margin}
}

// LinkCartID is the cart_id of an attempt: unique per company, since the
// uuid is.
func LinkCartID(orderID, uuid string) string { return orderID + "-" + uuid }

func (c *linkChannel) Body(a NewAttempt) ([]byte, error) {
	req := a.Request
	if a.Policy.Kind != journal.KindDebit {
		return nil, &localapi.ValidationError{Field: "kind", Reason: "a payment link takes money; it gives none back"}
	}
	if req.GiftAmount != 0 || req.AcceptedMedium != "" {
		return nil, &localapi.ValidationError{Field: "amount", Reason: "a payment link asks for one amount, paid by any means its customer picks"}
	}
	if strings.TrimSpace(c.opts.ReturnURL) == "" {
		return nil, &localapi.ValidationError{Field: "return_url_success", Reason: "the links' return address is not set"}
	}
	brand := strings.TrimSpace(c.opts.BrandName)
	if brand == "" {
		brand = "Comptoir"
	}
	lr := cloudapi.LinkRequest{
		CartID: LinkCartID(req.OrderID, a.UUID), ReturnURLSuccess: c.opts.ReturnURL, ReturnURLCancelled: c.opts.ReturnURL,
		Amount: req.Amount, Currency: c.opts.Currency, Reference: req.OrderID, ClientReference: a.UUID,
		Vendor: &cloudapi.LinkVendor{BrandName: brand, Country: c.opts.Country},
	}
	if v := c.opts.Vendor; v != nil {
		lr.Vendor.SoftwareName, lr.Vendor.SoftwareVersion = v.SoftwareName, v.SoftwareVersion
	}
	if cu := req.Customer; cu != nil && strings.TrimSpace(cu.FirstName) != "" && strings.TrimSpace(cu.LastName) != "" {
		lr.Customer = &cloudapi.LinkCustomer{FirstName: cu.FirstName, LastName: cu.LastName, Email: cu.Email, Telephone: cu.Phone}
	}
	d := req.Link
	if d == nil {
		d = &LinkDetails{}
	}
	lr.OrderSource, lr.Message = d.Source, d.Message
	if d.AuthoriseOnly {
		off := false
		lr.IsInstantCapture = &off
	}
	vouchers := d.MealVouchers
	eligible := false
	var tax int64
	for _, it := range d.Items {
		li := cloudapi.LinkItem{Name: it.Name, TotalAmount: it.Total, Quantity: it.Quantity, EligibleTitreRestaurant: it.VoucherEligible}
		if it.Quantity > 0 && it.Total%int64(it.Quantity) == 0 {
			li.UnitPrice = it.Total / int64(it.Quantity)
		}
		if it.VATBasisPoints > 0 {
			li.Tax = &cloudapi.LinkTax{Amount: it.Tax, Rate: it.VATBasisPoints}
			li.TotalAmountWithoutTax = it.Total - it.Tax
		}
		tax += it.Tax
		eligible = eligible || it.VoucherEligible
		lr.Items = append(lr.Items, li)
	}
	if tax > 0 && tax < req.Amount {
		lr.TaxAmount, lr.AmountWithoutTax = tax, req.Amount-tax
	}
	if vouchers == nil && len(d.Items) > 0 {
		vouchers = &eligible
	}
	f := &cloudapi.LinkFeatures{Tips: d.Tips, MealVouchers: vouchers}
	if d.ShareBySMS {
		if lr.Customer == nil || lr.Customer.Telephone == "" {
			return nil, &localapi.ValidationError{Field: "customer.telephone", Reason: "sending the link by SMS needs the customer's name and phone"}
		}
		f.ShareBySMS = &d.ShareBySMS
	}
	if d.ShareByEmail {
		if lr.Customer == nil || lr.Customer.Email == "" {
			return nil, &localapi.ValidationError{Field: "customer.email", Reason: "sending the link by email needs the customer's name and email"}
		}
		f.ShareByEmail = &d.ShareByEmail
	}
	lr.Features = f
	return json.Marshal(lr)
}

// linkCartID is the cart_id an attempt was sent with.
func linkCartID(a journal.Attempt) string {
	var b struct {
		CartID string `json:"cart_id"`
	}
	if json.Unmarshal(a.RequestBody, &b) != nil {
		return ""
	}
	return b.CartID
}

// Send asks for the link with the journaled body. Asked again, the same
// cart_id answers with the same link.
func (c *linkChannel) Send(ctx context.Context, a journal.Attempt) Answer {
	l, err := c.api.GenerateLink(ctx, a.RequestBody)
	if err != nil {
		var fe *cloudapi.FieldError
		if errors.As(err, &fe) {
			return Answer{Outcome: OutcomeRefused, Raw: fe.Body, Message: fe.Error()}
		}
		return cloudError(err)
	}
	note := "link generated"
	if l.Existing {
		note = "link already generated"
	}
	return Answer{Outcome: OutcomePending, Known: true, ProviderID: l.URL, ProviderStatus: cloudapi.CartPending, Raw: l.Raw, Message: note}
}

// Follow reads the cart.
func (c *linkChannel) Follow(ctx context.Context, a journal.Attempt) Answer {
	cart, err := c.api.Cart(ctx, linkCartID(a))
	if err != nil {
		var he *cloudapi.HTTPError
		var ae *cloudapi.APIError
		switch {
		case errors.As(err, &he):
			// The link was given: an unknown cart (404) is a provider that
			// does not answer for it now, or a wrong cart path in the
			// settings, never a sign that nobody can pay it.
			return Answer{Outcome: OutcomeIndefinite, Raw: he.Body, Message: "the cart could not be read: " + he.Error()}
		case errors.As(err, &ae):
			return Answer{Outcome: OutcomeIndefinite, Raw: ae.Body, Message: "the cart could not be read: " + ae.Error()}
		}
		return pollError(err)
	}
	return c.cartAnswer(a, cart)
}

// cartAnswer says what a cart means for its attempt.
func (c *linkChannel) cartAnswer(a journal.Attempt, cart *cloudapi.Cart) Answer {
	ans := Answer{Known: true, ProviderID: a.ProviderID, ProviderStatus: strings.ToLower(cart.Status), Raw: cart.Raw, Paid: cartPaid(cart)}
	if ans.ProviderID == "" {
		ans.ProviderID = cart.PaymentLink
	}
	switch ans.ProviderStatus {
	case cloudapi.CartOK, cloudapi.CartAuthorised:
		ans.Outcome, ans.Charge = OutcomeCharged, cartCharge(cart)
	case cloudapi.CartKO:
		if ans.Paid > 0 {
			ans.Outcome = OutcomeUnclear
			ans.Message = fmt.Sprintf("the link ended cancelled with %d cents paid into it: whether they were given back is for the provider's back office to say", ans.Paid)
			break
		}
		ans.Outcome = OutcomeEnded
		ans.Message = "the link was cancelled or expired unpaid: nothing was charged"
	default:
		// pending, or a status the specification does not list: its
		// customer may still pay.
		ans.Outcome = OutcomePending
	}
	return ans
}

// cartPaid is what the cart's approved payments add up to, tips excluded
// (paid_amount, read whether or not it includes the tip).
func cartPaid(cart *cloudapi.Cart) int64 {
	paid := cart.PaidAmount
	if cart.GiftAmount > 0 && paid >= cart.RequestedAmount+cart.GiftAmount {
		paid -= cart.GiftAmount
	}
	return paid
}

// cartCharge is a paid cart as a Charge: its transactions' ids, and the
// first one's card details. The statuses of a cart's transactions are not
// shown: a transaction is the cart's payment unless its status plainly
// says it failed (ko, refused, failed, cancelled...: wsKO), so that a paid
// cart whose payments say success or paid keeps their ids (to refund
// them) and their currency (to check it).
func cartCharge(cart *cloudapi.Cart) *Charge {
	ch := &Charge{Amount: cartPaid(cart), GiftAmount: cart.GiftAmount, Approved: true}
	var ids []string
	for _, t := range cart.Transactions {
		if wsStatus(t.Status, wsKO) {
			continue
		}
		if t.TransactionID != "" {
			ids = append(ids, t.TransactionID)
		}
		if ch.Currency == "" {
			ch.Currency, ch.Issuer, ch.Scheme = t.CurrencyCode, t.Issuer, t.Gateway
		}
	}
	ch.TransactionID = strings.Join(ids, ",")
	return ch
}

// Cancel cancels the cart; the cart, read next, decides.
func (c *linkChannel) Cancel(ctx context.Context, a journal.Attempt) CancelAnswer {
	msg, err := c.api.CancelLink(ctx, linkCartID(a))
	if err == nil {
		return CancelAnswer{Outcome: CancelDelivered, Message: msg}
	}
	var (
		ce *cloudapi.CancelError
		he *cloudapi.HTTPError
		te *cloudapi.TransportError
	)
	switch {
	case errors.As(err, &ce) && ce.Reason == cloudapi.CancelPaid:
		return CancelAnswer{Outcome: CancelTooLate, Raw: ce.Body, Message: ce.Message}
	case errors.As(err, &ce) && ce.Reason == cloudapi.CancelNonCancellable:
		// Part of it is paid and stays paid: the cart's own end decides.
		return CancelAnswer{Outcome: CancelTooLate, Raw: ce.Body, Message: ce.Message}
	case errors.As(err, &ce) && ce.Reason == cloudapi.CancelCancelled:
		return CancelAnswer{Outcome: CancelDelivered, Raw: ce.Body, Message: ce.Message}
	case errors.As(err, &he) && he.Status == http.StatusNotFound && a.ProviderID == "":
		// No link was ever given for it, and the provider knows no cart.
		return CancelAnswer{Outcome: CancelNothingRuns, Raw: he.Body, Message: he.Error()}
	case errors.As(err, &te) && !te.Sent:
		return CancelAnswer{Outcome: CancelNotSent, Message: te.Error()}
	}
	return CancelAnswer{Outcome: CancelIndefinite, Message: err.Error()}
}

// Lookup reads the cart: the provider's whole history of a link.
func (c *linkChannel) Lookup(ctx context.Context, a journal.Attempt, _ time.Time, _ Holder) (Match, error) {
	cart, err := c.api.Cart(ctx, linkCartID(a))
	var he *cloudapi.HTTPError
	switch {
	case errors.As(err, &he) && he.Status == http.StatusNotFound && a.ProviderID == "":
		return Match{Verdict: NotInHistory}, nil
	case err != nil:
		return Match{}, lookupError(err)
	}
	ans := c.cartAnswer(a, cart)
	m := Match{Verdict: InHistory, Raw: cart.Raw, Candidates: 1}
	switch ans.Outcome {
	case OutcomeCharged:
		m.Charge = *ans.Charge
	case OutcomeEnded:
		m.Charge = Charge{Amount: 0}
	case OutcomeUnclear:
		m.Verdict = AmbiguousHistory
	default:
		m.Pending = true
		m.Charge = Charge{TransactionID: ans.ProviderID}
	}
	return m, nil
}

func (c *linkChannel) ReversalBody(journal.Attempt) ([]byte, error) {
	return nil, &localapi.ValidationError{Field: "initialTransactionId", Reason: "a payment link is not reversed on a terminal: refund it through the Webservices"}
}

func (c *linkChannel) Reverse(context.Context, journal.Attempt) Answer {
	return Answer{Outcome: OutcomeInvalid, Message: "a payment link cannot be reversed"}
}
