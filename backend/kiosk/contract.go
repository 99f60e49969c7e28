// Package kiosk is the application service the UI talks to: the
// customer's checkout. The backend is the source of truth: the UI renders
// the snapshots published here and calls the intents; no payment logic
// lives in the UI.
//
// Its rooms, by file:
//
//   - service.go: the Service, its start (recovery first) and its settings;
//   - cart.go: the cart, its lines, options, menus' VAT and totals (limits.go:
//     the bounds of any amount);
//   - phases.go: the phase machine, as a table, and the ways back to welcome;
//   - checkout.go, split.go, follow.go, number.go: paying: an order and its
//     attempts, the split of means (meal voucher, card, phone), following
//     an attempt to its outcome, the order's number;
//   - link.go: paying by phone with a payment link;
//   - receipts.go: receipts and the kitchen's order ticket;
//   - catalog*.go, media*.go: the catalog, its checks and its pictures;
//   - terminal.go, relay.go: the terminal's status and what it allows, and
//     the relay of the payment core's and discovery's events;
//   - snapshots.go, intents.go, contract.go: what the UI reads and calls.
//
// This file is the contract with the UI, with the intents' table
// (intents.go). Its TypeScript, frontend/src/lib/contract.gen.ts, is
// generated from these types and that table by scripts/contractgen (go
// generate, or make contract); the tests fail when it is not current.
package kiosk

//go:generate sh -c "cd ../../scripts/contractgen && go run ."

import (
	"time"

	"github.com/comptoir-pos/comptoir/backend/orders"
	"github.com/comptoir-pos/comptoir/backend/receipt"
)

// Events the Service publishes through its Emitter, each carrying the full
// snapshot (never a diff), so a UI that missed one is right at the next.
const (
	EventCheckout = "kiosk:checkout" // CheckoutView
	EventTerminal = "kiosk:terminal" // TerminalView
	// EventStarted: the kiosk service (re)started under a page already
	// loaded (the desktop window opens before it): what the page read once
	// at start (the info, the catalog) must be read again.
	EventStarted = "kiosk:started" // InfoView
)

// Phase is where the checkout stands. Navigation inside the ordering phase
// (menu, category, product detail, cart, payment choice) belongs to the UI;
// everything from Pay on is decided here.
type Phase string

const (
	PhaseWelcome   Phase = "welcome"   // attract screen; no cart
	PhaseDining    Phase = "dining"    // eat in or take away? asked before the menu
	PhaseOrdering  Phase = "ordering"  // building the cart
	PhasePaying    Phase = "paying"    // an attempt is out: follow the terminal; Cancel
	PhaseCanceling Phase = "canceling" // Cancel pressed: waiting for the terminal's answer
	PhaseApproved  Phase = "approved"  // paid: order number, receipt choice
	PhaseDeclined  Phase = "declined"  // not charged: try again, other card, cancel order
	PhaseUnknown   Phase = "unknown"   // outcome unknown: call staff, with the order number
	PhaseFailed    Phase = "failed"    // the terminal refused or could not be reached: not charged
	// PhaseUnavailable: no terminal, recovery incomplete, journal unwritable:
	// the kiosk takes no orders and asks for staff.
	PhaseUnavailable Phase = "unavailable"
)

// Dining is where the customer eats the order: it decides the VAT rate of
// the products whose rate differs eaten in and taken away.
type Dining string

const (
	DiningEatIn    Dining = receipt.DiningEatIn
	DiningTakeAway Dining = receipt.DiningTakeAway
)

// PaymentMethod is the customer's choice of tender.
type PaymentMethod string

const (
	MethodCard PaymentMethod = "card"
	// MethodVoucherThenCard: a meal-voucher card for the eligible part (up
	// to the cap), then a bank card for the rest. The terminal never splits
	// a payment, so these are two attempts.
	MethodVoucherThenCard PaymentMethod = "voucher_then_card"
	// MethodPhone: a payment link the customer pays on their own phone,
	// shown as a QR code (InfoView.PhonePay says whether it is offered).
	MethodPhone PaymentMethod = "phone"
)

// Step is which part of a split tender an attempt pays.
type Step string

const (
	StepCard    Step = "card"
	StepVoucher Step = "voucher"
	StepPhone   Step = "phone" // a payment link
)

// ReceiptChoice is what the customer wants after paying.
type ReceiptChoice string

const (
	ReceiptPrint ReceiptChoice = "print"
	ReceiptEmail ReceiptChoice = "email" // the terminal asks for the address
	ReceiptSMS   ReceiptChoice = "sms"   // the terminal asks for the number
	ReceiptNone  ReceiptChoice = "none"
)

// The lines of an order are what the journal records of it
// (backend/orders), as the UI shows them.
type (
	Text       = orders.Text
	LineView   = orders.LineView
	LineChoice = orders.LineChoice
	VATPart    = orders.VATPart
)

// CatalogView is the menu, as the UI shows it.
type CatalogView struct {
	Currency   string         `json:"currency"` // EUR, CHF or GBP
	Categories []CategoryView `json:"categories"`
}

// CategoryView is one category of products.
type CategoryView struct {
	ID   string `json:"id"`
	Name Text   `json:"name"`
	// Image is the URL of the category's picture (under /media/), "" when
	// it has none.
	Image    string        `json:"image,omitempty"`
	Products []ProductView `json:"products"`
}

// ProductView is one product.
type ProductView struct {
	ID          string   `json:"id"`
	Name        Text     `json:"name"`
	Description Text     `json:"description,omitempty"`
	Price       int64    `json:"price"`   // cents, VAT included
	VATRate     int      `json:"vatRate"` // basis points: 550 = 5.5 %
	MealVoucher bool     `json:"mealVoucher"`
	Image       string   `json:"image,omitempty"`     // URL path the UI can load, "" when none
	Allergens   []string `json:"allergens,omitempty"` // keys of Allergens (milk, eggs...): the UI words them
	// Suggest are products offered with this one (a drink with a
	// sandwich): the cart shows them once, never in the way.
	Suggest []string `json:"suggest,omitempty"`
	// Options are the choices the customer makes for this product.
	Options []OptionGroupView `json:"options,omitempty"`
}

// OptionGroupView is one choice for a product: a size (one of, required:
// min 1, max 1), sauces (several: max > 1; optional: min 0).
type OptionGroupView struct {
	ID      string       `json:"id"`
	Name    Text         `json:"name"`
	Min     int          `json:"min"`
	Max     int          `json:"max"`
	Choices []OptionView `json:"choices"`
}

// OptionView is one option of a group.
type OptionView struct {
	ID    string `json:"id"`
	Name  Text   `json:"name"`
	Price int64  `json:"price"` // cents added to the product's price, VAT included
	// Product: the option is this product, as a part of a menu; Image is
	// its picture.
	Product string `json:"product,omitempty"`
	Image   string `json:"image,omitempty"`
}

// TaxView is the VAT of one rate, included in the total.
type TaxView struct {
	Rate   int   `json:"rate"`   // basis points
	Amount int64 `json:"amount"` // cents
}

// PaymentView is the payment in progress or just ended.
type PaymentView struct {
	Method PaymentMethod `json:"method"`
	Step   Step          `json:"step"`
	// Amount is what this attempt asks of the card, cents.
	Amount int64 `json:"amount"`
	// Paid and Due are the order's: approved so far, and still owed.
	Paid int64 `json:"paid"`
	Due  int64 `json:"due"`
	// AttemptUUID is the attempt's idempotentUuid (for staff).
	AttemptUUID string `json:"attemptUuid,omitempty"`
	// Deadline is when the terminal gives up waiting for a card: the UI's
	// countdown. Zero when not applicable.
	Deadline time.Time `json:"deadline,omitzero"`
	// ChargedDespiteCancel: Cancel came too late; the customer was charged
	// and the order is paid. The approved screen must say so.
	ChargedDespiteCancel bool `json:"chargedDespiteCancel,omitempty"`
	// Outcome is how the last attempt ended, in the customer's terms
	// (the declined and approved screens say it in their words).
	Outcome Outcome `json:"outcome,omitempty"`
	// Message is a sentence for staff (a terminal error, why unknown); the
	// customer screens use their own words.
	Message string `json:"message,omitempty"`
	// Link is the payment link to show as a QR code (paying by phone),
	// once the provider gave it; LinkPaid what its customer has paid so
	// far (a meal voucher for part, say); LinkPrinted: its QR code was
	// printed, so the customer may leave the kiosk and pay at their table.
	// Deadline is then when the kiosk stops showing it: cancelled if
	// nothing is paid and nothing printed, left to run otherwise.
	Link        string `json:"link,omitempty"`
	LinkPaid    int64  `json:"linkPaid,omitempty"`
	LinkPrinted bool   `json:"linkPrinted,omitempty"`
	// ThroughCloud: the card payment reached the terminal through the
	// provider's cloud (the terminal did not answer on the LAN), which the
	// customer is told; false before it left, and for a payment by phone.
	ThroughCloud bool `json:"throughCloud,omitempty"`
}

// Outcome is how an attempt ended, as the customer lived it.
type Outcome string

const (
	// OutcomeCancelled: the customer's Cancel stopped it; nothing charged.
	OutcomeCancelled Outcome = "cancelled"
	// OutcomeDeclined: the card or its bank said no; nothing charged.
	OutcomeDeclined Outcome = "declined"
	// OutcomeNoCard: no card was read before the terminal's window closed;
	// nothing charged.
	OutcomeNoCard Outcome = "no_card"
	// OutcomeCharged: paid.
	OutcomeCharged Outcome = "charged"
	// OutcomeChargedDespiteCancel: Cancel came after the card was read:
	// the customer was charged, and the order is theirs.
	OutcomeChargedDespiteCancel Outcome = "charged_despite_cancel"
)

// ReceiptView is the receipt after payment.
type ReceiptView struct {
	Choice ReceiptChoice `json:"choice,omitempty"`
	// Status: "" (not chosen), "working", "done", "error".
	Status  string `json:"status,omitempty"`
	Message string `json:"message,omitempty"`
}

// CheckoutView is the whole checkout, pushed at every change.
type CheckoutView struct {
	Phase    Phase  `json:"phase"`
	Language string `json:"language"` // fr, en or es
	Currency string `json:"currency"`
	// OrderNumber is the short number the customer collects with ("42");
	// OrderID is the order's id in the journal, sent as cartId.
	OrderNumber string `json:"orderNumber,omitempty"`
	OrderID     string `json:"orderId,omitempty"`
	// Dining is where the customer said the order is eaten ("" before they
	// said, or when the shop does not ask); DiningAsked: the shop asks, so
	// the UI offers to change it while ordering.
	Dining      Dining     `json:"dining,omitempty"`
	DiningAsked bool       `json:"diningAsked"`
	Lines       []LineView `json:"lines"`
	Total       int64      `json:"total"`
	Taxes       []TaxView  `json:"taxes"`
	// VoucherEligible is the part of the total meal vouchers may pay
	// (eligible products, capped by the setting); 0 hides the option.
	VoucherEligible int64        `json:"voucherEligible"`
	Payment         *PaymentView `json:"payment,omitempty"`
	Receipt         *ReceiptView `json:"receipt,omitempty"`
	// Error is the last refused intent, as a message key the UI translates
	// (e.g. "error.cart_empty"), "" when none.
	Error string `json:"error,omitempty"`
}

// TerminalState is the status indicator's state.
type TerminalState string

const (
	TerminalSearching   TerminalState = "searching"
	TerminalConnected   TerminalState = "connected"
	TerminalUnreachable TerminalState = "unreachable"
	TerminalChoose      TerminalState = "choose" // several found: staff must pick
	TerminalNone        TerminalState = "none"   // none configured or found
)

// TerminalView is the terminal's status, pushed at every change.
type TerminalView struct {
	State   TerminalState `json:"state"`
	Name    string        `json:"name,omitempty"`    // mDNS instance name, or the address
	Address string        `json:"address,omitempty"` // base URL
	Since   time.Time     `json:"since,omitzero"`    // unreachable since
	Demo    bool          `json:"demo"`              // the simulated terminal: no real payments
	// Ready is true once unfinished payments are recovered: orders may start.
	Ready bool `json:"ready"`
	// Problem is why the kiosk cannot take orders, a sentence for staff.
	Problem string `json:"problem,omitempty"`
	// CardPay and PhonePay say, before the customer's first touch, which
	// ways to pay work now: a card on the terminal, a link on a phone.
	CardPay  bool `json:"cardPay"`
	PhonePay bool `json:"phonePay"`
}

// InfoView is what the UI needs once at start.
type InfoView struct {
	Version         string   `json:"version"`
	Demo            bool     `json:"demo"`
	Languages       []string `json:"languages"` // offered, in order
	DefaultLanguage string   `json:"defaultLanguage"`
	Currency        string   `json:"currency"`
	// IdleSeconds: without a touch for this long the UI calls Abandon.
	IdleSeconds int `json:"idleSeconds"`
	// Mode is kiosk (self-service) or counter (staff).
	Mode string `json:"mode"`
	// PhonePay: paying with a payment link on the customer's phone is
	// offered (the provider's cloud is set up).
	PhonePay bool `json:"phonePay"`
}
