package localapi

import (
	"encoding/hex"
	"regexp"
	"strings"
)

// Validate checks what the specification forbids, so that a programming
// error never reaches the terminal as a payment.
func (r *PaymentRequest) Validate() error {
	switch {
	case r == nil:
		return &ValidationError{Field: "request", Reason: "missing"}
	case r.Amount <= 0:
		return &ValidationError{Field: "amount", Reason: "must be greater than 0"}
	case r.GiftAmount < 0:
		return &ValidationError{Field: "giftAmount", Reason: "must not be negative"}
	case r.TransactionType != "" && r.TransactionType != TypeDebit && r.TransactionType != TypeRefund:
		// The terminal would process it as a debit: say so instead.
		return &ValidationError{Field: "transactionType", Reason: "must be debit or refund"}
	case r.CheckoutExternalID == "" && (r.ExternalTableNumber != "" || r.ExternalOrderNumber != "" || r.ExternalOrderID != ""):
		return &ValidationError{Field: "checkoutExternalId", Reason: "required with externalTableNumber, externalOrderNumber or externalOrderId"}
	case r.AcceptedPayment != nil && r.TransactionType == TypeRefund:
		return &ValidationError{Field: "acceptedPayment", Reason: "applies to debit only"}
	case r.Customer != nil && r.Customer.Phone != "" && !strings.HasPrefix(r.Customer.Phone, "+"):
		return &ValidationError{Field: "customer.phone", Reason: "must be in international format, starting with +"}
	}
	if r.AcceptedPayment != nil {
		switch r.AcceptedPayment.AcceptedMediumType {
		case "", MediumTypeAll, MediumTypeLunchVouchersOnly, MediumTypeBankCardsOnly:
		default:
			return &ValidationError{Field: "acceptedPayment.acceptedMediumType", Reason: "must be all, lunch_vouchers_only or bank_cards_only"}
		}
	}
	if r.ReceiptTicket != nil {
		if err := r.ReceiptTicket.validate("receiptTicket", true); err != nil {
			return err
		}
	}
	return nil
}

func (t *ReceiptTicket) validate(field string, escposAllowed bool) error {
	if t.Data == "" {
		return &ValidationError{Field: field + ".data", Reason: "required"}
	}
	switch t.Format {
	case "", FormatText:
	case FormatESCPOS:
		if !escposAllowed {
			return &ValidationError{Field: field + ".format", Reason: "must be text"}
		}
		if _, err := hex.DecodeString(t.Data); err != nil {
			return &ValidationError{Field: field + ".data", Reason: "escpos data must be a hexadecimal string"}
		}
	default:
		return &ValidationError{Field: field + ".format", Reason: "must be text or escpos"}
	}
	for _, tax := range t.TaxBreakdown {
		if tax.TaxAmount < 0 || (tax.TaxPercentage != nil && *tax.TaxPercentage < 0) {
			return &ValidationError{Field: field + ".tax_breakdown", Reason: "amounts and rates must not be negative"}
		}
	}
	return nil
}

// Validate checks a print request.
func (r *PrintRequest) Validate() error {
	if r == nil {
		return &ValidationError{Field: "request", Reason: "missing"}
	}
	return (&ReceiptTicket{Data: r.Data, Format: r.Format}).validate("print", true)
}

// Validate checks a share-receipt request: the terminal shares text only.
func (r *ShareReceiptRequest) Validate() error {
	switch {
	case r == nil:
		return &ValidationError{Field: "request", Reason: "missing"}
	case r.ReceiptTicket == nil:
		return &ValidationError{Field: "receiptTicket", Reason: "required"}
	case r.TransactionID == "":
		return &ValidationError{Field: "transactionId", Reason: "required"}
	}
	switch r.Medium {
	case ShareService, ShareSMS, ShareEmail, SharePrint:
	default:
		return &ValidationError{Field: "medium", Reason: "must be service, sms, email or print"}
	}
	return r.ReceiptTicket.validate("receiptTicket", false)
}

// Validate checks a reversal request.
func (r *ReversalRequest) Validate() error {
	switch {
	case r == nil:
		return &ValidationError{Field: "request", Reason: "missing"}
	case r.InitialTransactionID == "":
		return &ValidationError{Field: "initialTransactionId", Reason: "required"}
	case r.Amount <= 0:
		return &ValidationError{Field: "amount", Reason: "must be greater than 0 (original amount + giftAmount)"}
	}
	return nil
}

var (
	datePattern = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)
	timePattern = regexp.MustCompile(`^\d{2}:\d{2}:\d{2}$`)
)

// Page sizes of /transactions: the specification's default (a request
// without a limit) and its largest page.
const (
	DefaultTransactionsLimit = 20
	MaxTransactionsLimit     = 200
)

// Validate checks a history request's formats and page bounds.
func (r *TransactionsRequest) Validate() error {
	if r == nil {
		return &ValidationError{Field: "request", Reason: "missing"}
	}
	for _, f := range []struct {
		name, v string
		re      *regexp.Regexp
	}{
		{"startDate", r.StartDate, datePattern}, {"endDate", r.EndDate, datePattern},
		{"startTime", r.StartTime, timePattern}, {"endTime", r.EndTime, timePattern},
	} {
		if f.v != "" && !f.re.MatchString(f.v) {
			return &ValidationError{Field: f.name, Reason: "bad format"}
		}
	}
	switch {
	case r.Limit < 0 || r.Limit > MaxTransactionsLimit:
		return &ValidationError{Field: "limit", Reason: "must be between 0 and 200"}
	case r.Offset < 0:
		return &ValidationError{Field: "offset", Reason: "must not be negative"}
	}
	return nil
}
