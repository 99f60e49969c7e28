package payment

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/cloudapi"
	"github.com/comptoir-pos/comptoir/backend/cloudsim"
	"github.com/comptoir-pos/comptoir/backend/device"
	"github.com/comptoir-pos/comptoir/backend/journal"
)

// linkBody builds the link request of an order of amount with details d
// and customer cu, decoded.
func linkBody(t *testing.T, amount int64, d *LinkDetails, cu *device.Customer) cloudapi.LinkRequest {
	t.Helper()
	pol, _ := DefaultLimits.Policy(journal.PolicyCounter)
	body, err := Link(nil, LinkOptions{ReturnURL: "https://shop.example/"}).Body(NewAttempt{UUID: "u1", Policy: pol,
		Request: Request{OrderID: "O1", Amount: amount, Link: d, Customer: cu}})
	if err != nil {
		t.Fatal(err)
	}
	var lr cloudapi.LinkRequest
	if err := json.Unmarshal(body, &lr); err != nil {
		t.Fatal(err)
	}
	return lr
}

// A link's cart tells the provider what it sells, as the online-payment
// specification asks: each line with its total, its unit price when the
// total divides by the quantity, its VAT and its total without VAT; the
// order's VAT and amount without VAT when the lines' VAT is part of the
// amount; meal vouchers offered when a line is eligible.
func TestRuleALinksCartTellsTheProviderWhatItSells(t *testing.T) {
	lr := linkBody(t, 860, &LinkDetails{Items: []LinkItem{
		{Name: "Croissant", Quantity: 2, Total: 260, VATBasisPoints: 550, Tax: 14, VoucherEligible: true},
		{Name: "Cola", Quantity: 3, Total: 100, VATBasisPoints: 2000, Tax: 17},
		{Name: "Gift card", Quantity: 1, Total: 500},
	}}, nil)
	if len(lr.Items) != 3 {
		t.Fatalf("items %+v", lr.Items)
	}
	c, cola, gift := lr.Items[0], lr.Items[1], lr.Items[2]
	if c.UnitPrice != 130 || c.TotalAmount != 260 || c.Tax == nil || c.Tax.Amount != 14 || c.Tax.Rate != 550 ||
		c.TotalAmountWithoutTax != 246 || !c.EligibleTitreRestaurant {
		t.Fatalf("croissants %+v (tax %+v)", c, c.Tax)
	}
	if cola.UnitPrice != 0 || cola.Tax == nil || cola.Tax.Amount != 17 || cola.TotalAmountWithoutTax != 83 {
		t.Fatalf("three colas for 1.00: no unit price; %+v (tax %+v)", cola, cola.Tax)
	}
	if gift.UnitPrice != 500 || gift.Tax != nil || gift.TotalAmountWithoutTax != 0 {
		t.Fatalf("a line without VAT %+v", gift)
	}
	if lr.TaxAmount != 31 || lr.AmountWithoutTax != 829 {
		t.Fatalf("order tax %d, without tax %d", lr.TaxAmount, lr.AmountWithoutTax)
	}
	if lr.Features == nil || lr.Features.MealVouchers == nil || !*lr.Features.MealVouchers {
		t.Fatalf("features %+v: a line is eligible", lr.Features)
	}
	if q := linkBody(t, 100, &LinkDetails{Items: []LinkItem{{Name: "Delivery", Total: 100}}}, nil); q.Items[0].UnitPrice != 0 {
		t.Fatalf("a line without a quantity has no unit price: %+v", q.Items[0])
	}
	none := linkBody(t, 100, &LinkDetails{Items: []LinkItem{{Name: "Cola", Quantity: 1, Total: 100, VATBasisPoints: 2000, Tax: 17}}}, nil)
	if none.Features.MealVouchers == nil || *none.Features.MealVouchers {
		t.Fatalf("no line eligible: meal vouchers %v", none.Features.MealVouchers)
	}
	bare := linkBody(t, 100, nil, nil)
	if bare.Features.MealVouchers != nil || bare.TaxAmount != 0 || bare.AmountWithoutTax != 0 {
		t.Fatalf("without lines: the provider's defaults, no VAT: %+v", bare)
	}
	odd := linkBody(t, 100, &LinkDetails{Items: []LinkItem{{Name: "Odd", Quantity: 1, Total: 100, VATBasisPoints: 10000, Tax: 100}}}, nil)
	if odd.TaxAmount != 0 || odd.AmountWithoutTax != 0 {
		t.Fatalf("VAT that is the whole amount is no breakdown: %d, %d", odd.TaxAmount, odd.AmountWithoutTax)
	}
}

// A customer is named to the provider only with a first and a last name
// (both required by the specification), and a link shared by SMS needs
// the customer's phone.
func TestRuleALinksCustomerHasBothNames(t *testing.T) {
	if lr := linkBody(t, 100, nil, &device.Customer{FirstName: "Ana", Phone: "+33600000000"}); lr.Customer != nil {
		t.Fatalf("a customer without a last name was sent: %+v", lr.Customer)
	}
	if lr := linkBody(t, 100, nil, &device.Customer{LastName: "Lopez"}); lr.Customer != nil {
		t.Fatalf("a customer without a first name was sent: %+v", lr.Customer)
	}
	lr := linkBody(t, 100, &LinkDetails{ShareBySMS: true}, &device.Customer{FirstName: "Ana", LastName: "Lopez", Phone: "+33600000000"})
	if lr.Customer == nil || lr.Customer.Telephone != "+33600000000" || lr.Features.ShareBySMS == nil || !*lr.Features.ShareBySMS {
		t.Fatalf("customer %+v, features %+v", lr.Customer, lr.Features)
	}
	pol, _ := DefaultLimits.Policy(journal.PolicyCounter)
	if _, err := Link(nil, LinkOptions{ReturnURL: "https://shop.example/"}).Body(NewAttempt{UUID: "u1", Policy: pol,
		Request: Request{OrderID: "O1", Amount: 100, Link: &LinkDetails{ShareBySMS: true}, Customer: &device.Customer{FirstName: "Ana", LastName: "Lopez"}}}); err == nil {
		t.Fatal("a link shared by SMS without a phone was accepted")
	}
}

// What a cart's customers paid for the order is its paid amount without
// the tip, whether or not the provider's paid amount includes the tip.
func TestRuleATipPaidOnALinkNeverPaysForTheOrder(t *testing.T) {
	for _, tt := range []struct {
		name                 string
		requested, gift, got int64
		want                 int64
	}{
		{"paid amount with the tip in it", 1000, 200, 1200, 1000},
		{"paid amount without the tip", 1000, 200, 1000, 1000},
		{"no tip", 1000, 0, 1000, 1000},
		{"part paid, a tip beside it", 1000, 200, 500, 500},
		{"part paid and more than the tip", 1000, 200, 1100, 1100},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cart := &cloudapi.Cart{Status: cloudapi.CartOK, RequestedAmount: tt.requested, GiftAmount: tt.gift, PaidAmount: tt.got,
				Transactions: []cloudapi.CartTransaction{{TransactionID: "t1", Status: "ok"}}}
			if got := cartPaid(cart); got != tt.want {
				t.Fatalf("paid %d, want %d", got, tt.want)
			}
			if c := cartCharge(cart); c.Amount != tt.want || c.GiftAmount != tt.gift {
				t.Fatalf("charge %+v", c)
			}
		})
	}
}

// A paid cart's charge is its approved (or authorised) payments: their
// transactions named, the card details of the first of them; a refused
// payment into the cart is none of it.
func TestRuleAPaidCartIsItsApprovedPayments(t *testing.T) {
	cart := &cloudapi.Cart{Status: cloudapi.CartOK, RequestedAmount: 900, PaidAmount: 900, Transactions: []cloudapi.CartTransaction{
		{TransactionID: "t0", Status: "ko", CurrencyCode: "USD", Issuer: "Refused Bank"},
		{TransactionID: "t1", Status: "ok", CurrencyCode: "EUR", Issuer: "Bank One", Gateway: "VISA"},
		{TransactionID: "t2", Status: "AUTHORISED", CurrencyCode: "GBP", Issuer: "Bank Two"},
		{TransactionID: "t3", CurrencyCode: "CHF"},
	}}
	c := cartCharge(cart)
	if c.TransactionID != "t1,t2,t3" || c.Currency != "EUR" || c.Issuer != "Bank One" || c.Scheme != "VISA" || !c.Approved || c.Amount != 900 {
		t.Fatalf("charge %+v", c)
	}
}

// The customer cancels a link whose creation was never acknowledged (the
// provider made the cart, its answer was lost): the link is not asked for
// again after the cancel (the customer walked away from it), and once the
// provider says the cart is cancelled, the cart decides.
func TestRuleAfterTheCancelALinkNeverAcknowledgedIsNotAskedForAgain(t *testing.T) {
	e := newLinkEnv(t, LinkOptions{})
	lim := testLimits
	lim.ResendPause = time.Hour // the lost answer's resend waits: the cancel comes first
	e.restartOn(nil, lim)
	if err := e.cloud.Inject(cloudsim.Fault{Path: cloudsim.PathGenerateLink, After: true}); err != nil {
		t.Fatal(err)
	}
	h := e.kiosk("K9", 900)
	e.eventSaying(h, "no usable answer")
	h.Cancel()
	v := e.wait(h)
	if n := len(e.cloud.Requests("POST " + cloudsim.PathGenerateLink)); n != 1 {
		t.Fatalf("%d requests for the link: asked again after the cancel", n)
	}
	if v.State != journal.StateCancelled || v.OrderPaid {
		t.Fatalf("view %+v", v)
	}
	// Once the provider said the cart is cancelled, the cart decides: not
	// a cancel asked again and again.
	if n := len(e.cloud.Requests("POST " + cloudsim.PathCancelLink)); n != 1 {
		t.Fatalf("%d cancels of the link, want 1", n)
	}
}

// The statuses of a cart's payments are not shown: a payment is the
// cart's unless its status plainly says it failed, whatever its case. A
// paid cart whose payments say success or paid keeps their ids (to refund
// them) and their currency (to check it).
func TestRuleAPaidCartNamesEveryPaymentNotPlainlyFailed(t *testing.T) {
	var txs []cloudapi.CartTransaction
	for _, st := range []string{"KO", "refused", "Failed", "cancelled", "CANCELED", "declined", "rejected", "expired", "aborted"} {
		txs = append(txs, cloudapi.CartTransaction{TransactionID: "x-" + st, Status: st, CurrencyCode: "USD"})
	}
	for _, st := range []string{"success", "PAID", "succeeded", "captured", "pending", "ok", ""} {
		txs = append(txs, cloudapi.CartTransaction{TransactionID: "t-" + st, Status: st, CurrencyCode: "EUR"})
	}
	c := cartCharge(&cloudapi.Cart{Status: cloudapi.CartOK, RequestedAmount: 900, PaidAmount: 900, Transactions: txs})
	if c.TransactionID != "t-success,t-PAID,t-succeeded,t-captured,t-pending,t-ok,t-" || c.Currency != "EUR" || !c.Approved {
		t.Fatalf("charge %+v", c)
	}
}
