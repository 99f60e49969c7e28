package cloudsim

import (
	"time"

	"github.com/comptoir-pos/comptoir/backend/localapi"
)

// Statuses of a cloud transaction. StatusExpired is an action whose
// terminal was offline beyond the notification's validity: the
// specification names the state, not how a poll shows it.
const (
	StatusPending = "pending"
	StatusOK      = "ok"
	StatusKO      = "ko"
	StatusExpired = "expired"
)

// Transaction is a cloud transaction as the webhook delivers it (the v5
// form), with the request's ids.
type Transaction struct {
	Status             string    `json:"status"`
	TransactionID      string    `json:"transactionId"`
	LocalID            string    `json:"localId,omitempty"`
	Amount             int64     `json:"amount"`
	GiftAmount         int64     `json:"giftAmount"`
	CurrencyCode       string    `json:"currencyCode,omitempty"`
	TransactionType    string    `json:"transactionType"`
	CreatedAt          time.Time `json:"createdAt"`
	AppVersion         string    `json:"appVersion,omitempty"`
	SerialNumber       string    `json:"serialNumber"`
	ClientTicket       string    `json:"clientTicket,omitempty"`
	CompanyTicket      string    `json:"companyTicket,omitempty"`
	PaymentApplication string    `json:"paymentApplication,omitempty"`
	Scheme             string    `json:"scheme,omitempty"`
	Issuer             string    `json:"issuer,omitempty"`
	Reference          string    `json:"reference,omitempty"`
	CardToken          string    `json:"cardToken,omitempty"`
	IdempotentUUID     string    `json:"idempotentUuid,omitempty"`
	CartID             string    `json:"cartId,omitempty"`
	CheckoutExternalID string    `json:"checkoutExternalId,omitempty"`
	ExternalTableNum   string    `json:"externalTableNumber,omitempty"`
	ExternalOrderNum   string    `json:"externalOrderNumber,omitempty"`
	ExternalOrderID    string    `json:"externalOrderId,omitempty"`
	Message            string    `json:"message,omitempty"`
	// Initial is the transaction a reversal reverses.
	Initial string `json:"initialTransactionId,omitempty"`
	// Via is ViaTerminal for a transaction the terminal made without the
	// cloud (over its Local API, on its keypad), "" for the cloud's own.
	Via string `json:"via,omitempty"`
}

// txn is a transaction the cloud holds.
type txn struct {
	Transaction
	request localapi.PaymentRequest // as forwarded to the terminal
	enrol   bool
	// hidden: the provider's record does not show it to this many more
	// reads of the Webservices (SetRecordLag).
	hidden int
}

// transactionsLocked copies the transactions, oldest first.
func (c *Cloud) transactionsLocked() []Transaction {
	out := make([]Transaction, len(c.order))
	for i, t := range c.order {
		out[i] = t.Transaction
	}
	return out
}

// Transactions is every transaction the cloud holds, oldest first.
func (c *Cloud) Transactions() []Transaction {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.syncLocked()
	return c.transactionsLocked()
}

// addLocked records a new transaction.
func (c *Cloud) addLocked(t *txn) {
	c.txs[t.TransactionID] = t
	c.order = append(c.order, t)
	c.broadcastLocked()
}

// historyEntry is a transaction as the history lists it: the fields the
// specification lists, and the request's ids unless a control hides them.
type historyEntry struct {
	Amount             int64  `json:"amount"`
	GiftAmount         int64  `json:"giftAmount"`
	CreatedAt          string `json:"createdAt"`
	CurrencyCode       string `json:"currencyCode,omitempty"`
	Status             string `json:"status"`
	TransactionID      string `json:"transactionId"`
	Type               string `json:"type"`
	SerialNumber       string `json:"serialNumber"`
	Scheme             string `json:"scheme,omitempty"`
	Issuer             string `json:"issuer,omitempty"`
	Reference          string `json:"reference,omitempty"`
	CartID             string `json:"cartId,omitempty"`
	AppVersion         string `json:"appVersion,omitempty"`
	CheckoutExternalID string `json:"checkoutExternalId,omitempty"`
	IdempotentUUID     string `json:"idempotentUuid,omitempty"`
}

func (t *txn) entry(withIDs bool) historyEntry {
	e := historyEntry{
		Amount: t.Amount, GiftAmount: t.GiftAmount, CreatedAt: t.CreatedAt.UTC().Format(time.RFC3339),
		CurrencyCode: t.CurrencyCode, Status: t.Status, TransactionID: t.TransactionID, Type: t.TransactionType,
		SerialNumber: t.SerialNumber, Scheme: t.Scheme, Issuer: t.Issuer, Reference: t.Reference, CartID: t.CartID,
		AppVersion: t.AppVersion,
	}
	if withIDs {
		e.CheckoutExternalID, e.IdempotentUUID = t.CheckoutExternalID, t.IdempotentUUID
	}
	return e
}
