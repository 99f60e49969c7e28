// Package localapi is a typed client for the payment terminal's Local API v4.
//
// It speaks the protocol and classifies what comes back; it makes no policy
// decision. In particular it never retries: a resend of a payment is a
// deliberate act of the caller, who journals it first.
package localapi

import (
	"encoding/json"
	"time"
)

// DefaultPort is the port every terminal serves the Local API on.
const DefaultPort = 16125

// BasePath is the path prefix of every Local API v4 endpoint.
const BasePath = "/localapi/v4"

// The two values of the status field.
const (
	StatusOK = "ok"
	StatusKO = "ko"
)

// Transaction types. The terminal may answer other values (for example "na");
// TransactionType is therefore a plain string and unknown values are kept.
const (
	TypeDebit  = "debit"
	TypeRefund = "refund"
)

// Accepted medium types for AcceptedPayment (debit only).
const (
	MediumTypeAll               = "all"
	MediumTypeLunchVouchersOnly = "lunch_vouchers_only"
	MediumTypeBankCardsOnly     = "bank_cards_only"
)

// Receipt formats.
const (
	FormatText   = "text"
	FormatESCPOS = "escpos"
)

// Share-receipt media.
const (
	ShareService = "service"
	ShareSMS     = "sms"
	ShareEmail   = "email"
	SharePrint   = "print"
)

// Customer is the optional customer of a payment; the terminal echoes it back.
type Customer struct {
	FirstName string `json:"firstName,omitempty"`
	LastName  string `json:"lastName,omitempty"`
	Email     string `json:"email,omitempty"`
	Phone     string `json:"phone,omitempty"` // international format, starting with +
	BirthDate string `json:"birthDate,omitempty"`
}

// Tax is one entry of a receipt's tax breakdown. Its keys are snake_case,
// unlike everything else in the API. Both are sent even when zero: a 0 % rate
// is a real rate.
type Tax struct {
	TaxAmount int64 `json:"tax_amount"` // cents
	// TaxPercentage is an integer in the specification (20 means 20 %):
	// absent for a rate that is not a whole percent (5.5 %), whose
	// tax_amount says it exactly.
	TaxPercentage *int `json:"tax_percentage,omitempty"`
}

// ReceiptTicket is content printed with the card ticket, or shared.
type ReceiptTicket struct {
	Data         string `json:"data"`
	Format       string `json:"format,omitempty"` // text (default) or escpos (hex string)
	TaxBreakdown []Tax  `json:"tax_breakdown,omitempty"`
}

// Vendor names the software driving the terminal, for the provider's support.
type Vendor struct {
	SoftwareName    string `json:"softwareName,omitempty"`
	SoftwareVersion string `json:"softwareVersion,omitempty"`
}

// AcceptedPayment restricts the payment methods of a debit.
type AcceptedPayment struct {
	AcceptedMediumType string `json:"acceptedMediumType,omitempty"`
}

// PaymentRequest is the body of POST /payment, for a debit or a refund.
type PaymentRequest struct {
	Amount          int64     `json:"amount"` // cents, > 0, excluding GiftAmount
	TransactionType string    `json:"transactionType,omitempty"`
	IdempotentUUID  string    `json:"idempotentUuid,omitempty"`
	CartID          string    `json:"cartId,omitempty"`
	Customer        *Customer `json:"customer,omitempty"`
	// EnableGiftScreen is a tri-state: nil leaves the terminal's tip setting in
	// force, true shows the tip screen, false skips it.
	EnableGiftScreen    *bool            `json:"enableGiftScreen,omitempty"`
	AcceptedPayment     *AcceptedPayment `json:"acceptedPayment,omitempty"`
	GiftAmount          int64            `json:"giftAmount,omitempty"`
	ReceiptTicket       *ReceiptTicket   `json:"receiptTicket,omitempty"`
	Reference           string           `json:"reference,omitempty"`
	Vendor              *Vendor          `json:"vendor,omitempty"`
	CheckoutExternalID  string           `json:"checkoutExternalId,omitempty"`
	ExternalTableNumber string           `json:"externalTableNumber,omitempty"`
	ExternalOrderNumber string           `json:"externalOrderNumber,omitempty"`
	ExternalOrderID     string           `json:"externalOrderId,omitempty"`
	// Medium and ReceiptTicketJSON belong to the earlier form of the API.
	Medium            string `json:"medium,omitempty"`
	ReceiptTicketJSON string `json:"receiptTicketJson,omitempty"`
}

// Bool returns a pointer to b, for the tri-state EnableGiftScreen.
func Bool(b bool) *bool { return &b }

// Int returns a pointer to n, for optional integer fields.
func Int(n int) *int { return &n }

// Transaction is the answer to POST /payment and GET /payment/{amount}.
type Transaction struct {
	Status              string    `json:"status"`
	TransactionID       string    `json:"transactionId,omitempty"`
	Amount              int64     `json:"amount"`
	GiftAmount          int64     `json:"giftAmount"`
	CurrencyCode        string    `json:"currencyCode,omitempty"`
	TransactionType     string    `json:"transactionType,omitempty"`
	AppVersion          string    `json:"appVersion,omitempty"`
	CardToken           string    `json:"cardToken,omitempty"`
	ClientCardTicket    string    `json:"clientCardTicket,omitempty"`
	MerchantCardTicket  string    `json:"merchantCardTicket,omitempty"`
	PaymentApplication  string    `json:"paymentApplication,omitempty"`
	Scheme              string    `json:"scheme,omitempty"`
	Issuer              string    `json:"issuer,omitempty"`
	IdempotentUUID      string    `json:"idempotentUuid,omitempty"`
	CartID              string    `json:"cartId,omitempty"`
	Reference           string    `json:"reference,omitempty"`
	Customer            *Customer `json:"customer,omitempty"`
	CheckoutExternalID  string    `json:"checkoutExternalId,omitempty"`
	ExternalTableNumber string    `json:"externalTableNumber,omitempty"`
	ExternalOrderNumber string    `json:"externalOrderNumber,omitempty"`
	ExternalOrderID     string    `json:"externalOrderId,omitempty"`
	Message             string    `json:"message,omitempty"`

	// Raw is the body exactly as received, for the journal.
	Raw json.RawMessage `json:"-"`
}

// Approved reports a successful payment: the customer was charged
// Amount + GiftAmount (or refunded Amount).
func (t *Transaction) Approved() bool { return t.Status == StatusOK }

// Declined reports a payment refused by the card or the bank: status ko with
// no message. A ko with a message is an application error, never a decline.
func (t *Transaction) Declined() bool { return t.Status == StatusKO && t.Message == "" }

// Total is what the customer was debited: Amount + GiftAmount.
func (t *Transaction) Total() int64 { return t.Amount + t.GiftAmount }

// PingResponse is the answer to GET /ping.
type PingResponse struct {
	Status  string          `json:"status"`
	Message string          `json:"message,omitempty"`
	Raw     json.RawMessage `json:"-"`
}

// PrintRequest is the body of POST /print.
type PrintRequest struct {
	Data   string `json:"data"`
	Format string `json:"format,omitempty"`
}

// StatusResponse is the answer of the endpoints that return a status and an
// optional message: /print and /share-receipt. For /print, ok means accepted,
// not printed.
type StatusResponse struct {
	Status  string          `json:"status"`
	Message string          `json:"message,omitempty"`
	Raw     json.RawMessage `json:"-"`
}

// ShareReceiptRequest is the body of POST /share-receipt.
type ShareReceiptRequest struct {
	ReceiptTicket *ReceiptTicket `json:"receiptTicket"`
	TransactionID string         `json:"transactionId"`
	Medium        string         `json:"medium"`
}

// ReversalRequest is the body of POST /reversal.
type ReversalRequest struct {
	Amount               int64  `json:"amount"` // original amount + giftAmount
	InitialTransactionID string `json:"initialTransactionId"`
}

// ReversalResponse is the answer to POST /reversal.
type ReversalResponse struct {
	Status                string          `json:"status"`
	ReversalTransactionID string          `json:"reversalTransactionId,omitempty"`
	InitialTransactionID  string          `json:"initialTransactionId,omitempty"`
	Message               string          `json:"message,omitempty"`
	Raw                   json.RawMessage `json:"-"`
}

// AbortRequest is the body of POST /abort. An empty IdempotentUUID is the
// earlier form, which aborts whatever payment is in progress.
type AbortRequest struct {
	IdempotentUUID string `json:"idempotentUuid,omitempty"`
}

// AbortResponse is the answer to POST /abort.
type AbortResponse struct {
	Status         string          `json:"status"`
	Message        string          `json:"message,omitempty"`
	IdempotentUUID string          `json:"idempotentUuid,omitempty"`
	Raw            json.RawMessage `json:"-"`
}

// TransactionsRequest is the body of POST /transactions. Dates are
// yyyy-MM-dd (EndDate exclusive), times hh:mm:ss. Zero values are omitted.
type TransactionsRequest struct {
	StartDate string `json:"startDate,omitempty"`
	EndDate   string `json:"endDate,omitempty"`
	StartTime string `json:"startTime,omitempty"`
	EndTime   string `json:"endTime,omitempty"`
	Limit     int    `json:"limit,omitempty"` // default 20, max 200
	Offset    int    `json:"offset,omitempty"`
}

// History entry types of /transactions.
const (
	HistoryDebit            = "debit"
	HistoryReversal         = "reversal"
	HistoryRefund           = "refund"
	HistoryPreauthorisation = "preauthorisation"
	HistoryClosingBatch     = "closingbatch"
)

// HistoryEntry is one transaction of the terminal's history.
type HistoryEntry struct {
	Status        string    `json:"status,omitempty"`
	TransactionID string    `json:"transactionId,omitempty"`
	Amount        int64     `json:"amount,omitempty"`
	GiftAmount    int64     `json:"giftAmount,omitempty"`
	CurrencyCode  string    `json:"currencyCode,omitempty"`
	Issuer        string    `json:"issuer,omitempty"`
	Scheme        string    `json:"scheme,omitempty"`
	Type          string    `json:"type,omitempty"`
	Customer      *Customer `json:"customer,omitempty"`
	Reference     string    `json:"reference,omitempty"`
	CartID        string    `json:"cartId,omitempty"`
	AppVersion    string    `json:"appVersion,omitempty"`
	CreatedAt     string    `json:"createdAt,omitempty"` // UTC, ISO 8601
}

// createdLayouts are the shapes of createdAt seen in ISO 8601 timestamps:
// RFC 3339 (any fraction), a zone without a colon as Java writes it, and no
// zone at all, which the specification says is UTC.
var createdLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05.999999999Z0700",
	"2006-01-02T15:04:05.999999999",
}

// Created parses CreatedAt.
func (h HistoryEntry) Created() (time.Time, error) {
	var err error
	for _, layout := range createdLayouts {
		var t time.Time
		if t, err = time.Parse(layout, h.CreatedAt); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, err
}

// TransactionList is the answer to POST /transactions.
type TransactionList struct {
	Status       string          `json:"status,omitempty"`
	Count        int             `json:"count"`
	Limit        int             `json:"limit"`
	Offset       int             `json:"offset"`
	Total        int             `json:"total"`
	Transactions []HistoryEntry  `json:"transactions"` // never null when encoded by NewTransactionList
	Message      string          `json:"message,omitempty"`
	Raw          json.RawMessage `json:"-"`
}
