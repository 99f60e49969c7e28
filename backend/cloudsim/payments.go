package cloudsim

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/comptoir-pos/comptoir/backend/localapi"
	"github.com/comptoir-pos/comptoir/backend/terminalsim"
	"github.com/google/uuid"
)

// Transaction types of the v5 payment.
const (
	TypeDebit         = "debit"
	TypeRefund        = "refund"
	TypeDebitAndEnrol = "debit_and_enrol"
)

// paymentBody is the v5 payment: the Local API's request and the serial
// number of the terminal.
type paymentBody struct {
	SerialNumber string `json:"serialNumber"`
	localapi.PaymentRequest
}

// handlePayment acknowledges a payment at once and delivers it to the
// terminal in the background. The same idempotentUuid on the same
// terminal is the same transaction: acknowledged again, never delivered
// twice.
func (c *Cloud) handlePayment(w http.ResponseWriter, r *http.Request) {
	var b paymentBody
	if !decode(w, r, &b) {
		return
	}
	req := b.PaymentRequest
	kind := TypeDebit // unknown values, credit included, are debits
	switch req.TransactionType {
	case TypeRefund, TypeDebitAndEnrol:
		kind = req.TransactionType
	}
	switch {
	case kind == TypeDebitAndEnrol && req.Amount < 0, kind != TypeDebitAndEnrol && req.Amount <= 0:
		ko(w, http.StatusBadRequest, terminalsim.MsgInvalidAmount)
		return
	case req.GiftAmount < 0:
		ko(w, http.StatusBadRequest, terminalsim.MsgInvalidGiftAmount)
		return
	case req.CheckoutExternalID == "" && (req.ExternalTableNumber != "" || req.ExternalOrderNumber != "" || req.ExternalOrderID != ""):
		ko(w, http.StatusBadRequest, terminalsim.MsgCheckoutExternalIDRequired)
		return
	}
	vt, ok := c.terminalFor(w, b.SerialNumber)
	if !ok {
		return
	}
	if req.IdempotentUUID == "" {
		req.IdempotentUUID = uuid.NewString()
	}
	c.mu.Lock()
	for _, t := range c.order {
		if t.SerialNumber == vt.serial && t.IdempotentUUID == req.IdempotentUUID && t.TransactionType != "reversal" {
			c.mu.Unlock()
			writeJSON(w, map[string]string{"status": StatusOK, "transactionId": t.TransactionID})
			return
		}
		if req.CheckoutExternalID != "" && t.CheckoutExternalID == req.CheckoutExternalID && t.Status == StatusOK {
			c.mu.Unlock()
			ko(w, http.StatusBadRequest, terminalsim.MsgCheckoutExternalIDUsed)
			return
		}
	}
	t := &txn{Transaction: Transaction{
		Status: StatusPending, TransactionID: newID("trs_"), Amount: req.Amount, GiftAmount: req.GiftAmount,
		TransactionType: kind, CreatedAt: c.cfg.Now().UTC(), SerialNumber: vt.serial, Reference: req.Reference,
		IdempotentUUID: req.IdempotentUUID, CartID: req.CartID, CheckoutExternalID: req.CheckoutExternalID,
		ExternalTableNum: req.ExternalTableNumber, ExternalOrderNum: req.ExternalOrderNumber, ExternalOrderID: req.ExternalOrderID,
	}, enrol: kind == TypeDebitAndEnrol}
	local := req
	if t.enrol {
		local.TransactionType = TypeDebit
	}
	t.request = local
	if c.closed {
		c.mu.Unlock()
		ko(w, http.StatusServiceUnavailable, "closing")
		return
	}
	c.addLocked(t)
	c.wg.Add(1)
	c.mu.Unlock()
	c.log.Info("payment acknowledged", "serial", vt.serial, "transactionId", t.TransactionID, "uuid", t.IdempotentUUID, "amount", t.Amount)
	go func() {
		defer c.wg.Done()
		c.deliver(t)
	}()
	writeJSON(w, map[string]string{"status": StatusOK, "transactionId": t.TransactionID})
}

// deliver notifies the terminal (the action expires when it stays offline
// beyond the notification's validity), runs the payment on it and records
// the outcome, then posts it on the webhook.
func (c *Cloud) deliver(t *txn) {
	vt, ok := c.reach(t.SerialNumber)
	if !ok {
		c.mu.Lock()
		t.Status, t.Message = StatusExpired, "the terminal was offline: the action expired"
		c.broadcastLocked()
		c.mu.Unlock()
		c.log.Info("payment expired: terminal offline", "serial", t.SerialNumber, "transactionId", t.TransactionID)
		return // never retransmitted, no webhook
	}
	var lt *localapi.Transaction
	if t.enrol && t.Amount == 0 {
		// Enrolment only: the card is read, nothing is charged.
		lt = &localapi.Transaction{Status: StatusOK, TransactionType: TypeDebitAndEnrol}
	} else {
		bg, _ := http.NewRequestWithContext(c.ctx, http.MethodPost, "/", nil)
		lt = paymentAnswer(forward(vt, bg, "/payment", t.request))
		if lt == nil {
			lt = c.settle(vt, t.IdempotentUUID)
		}
	}
	c.mu.Lock()
	t.Status, t.Message = lt.Status, lt.Message
	if t.Status != StatusOK && t.Status != StatusKO {
		t.Status = StatusKO
	}
	t.LocalID, t.CurrencyCode, t.AppVersion = lt.TransactionID, lt.CurrencyCode, lt.AppVersion
	t.Scheme, t.Issuer, t.PaymentApplication = lt.Scheme, lt.Issuer, lt.PaymentApplication
	t.ClientTicket, t.CompanyTicket = lt.ClientCardTicket, lt.MerchantCardTicket
	if lt.Status == StatusOK && lt.TransactionType != TypeDebitAndEnrol {
		t.Amount, t.GiftAmount = lt.Amount, lt.GiftAmount
	}
	if t.enrol && t.Status == StatusOK {
		t.CardToken = lt.CardToken
		if t.CardToken == "" {
			t.CardToken = newID("tok_")
		}
	}
	done := t.Transaction
	c.broadcastLocked()
	c.mu.Unlock()
	c.log.Info("payment finished", "serial", t.SerialNumber, "transactionId", t.TransactionID, "status", done.Status)
	c.notify(done)
}

// paymentAnswer reads the terminal's answer to /payment, nil when there
// was none to read (dropped, HTTP 500).
func paymentAnswer(code int, raw []byte) *localapi.Transaction {
	if code != http.StatusOK {
		return nil
	}
	var lt localapi.Transaction
	if json.Unmarshal(raw, &lt) != nil || lt.Status == "" {
		return nil
	}
	return &lt
}

// settle learns a payment's outcome from the terminal itself when its
// answer was lost: the transaction the terminal recorded, once it has
// finished; none means it never started.
func (c *Cloud) settle(vt *vterm, id string) *localapi.Transaction {
	for {
		if tx, ok := vt.sim.Transaction(id); ok {
			return tx
		}
		cur, running := vt.sim.Current()
		if !running || cur.IdempotentUUID != id {
			return &localapi.Transaction{Status: StatusKO, Message: "the terminal did not start the payment"}
		}
		err := vt.sim.WaitFor(c.ctx, func(s terminalsim.State) bool {
			return s.Current == nil || s.Current.IdempotentUUID != id
		})
		if err != nil {
			return &localapi.Transaction{Status: StatusKO, Message: "the cloud closed before the payment ended"}
		}
	}
}

// handlePoll answers GET /v5/transaction/?transactionId=: the transaction
// as the webhook delivers it, pending until it ends. How an expired action
// polls is not shown in the specification: "expired" by default, or what
// a control chose.
func (c *Cloud) handlePoll(w http.ResponseWriter, r *http.Request) {
	id := strings.TrimSpace(r.URL.Query().Get("transactionId"))
	if id == "" {
		ko(w, http.StatusBadRequest, "Parameter 'transactionId' is missing")
		return
	}
	c.mu.Lock()
	t := c.txs[id]
	var tx Transaction
	if t != nil {
		tx = t.Transaction
	}
	mode := c.faults.poll
	if t != nil && tx.Status == StatusExpired && mode == PollNormal {
		mode = c.faults.expiredPoll
	}
	c.mu.Unlock()
	if t == nil {
		ko(w, http.StatusNotFound, "Transaction not found")
		return
	}
	switch mode {
	case PollPending:
		tx.Status = StatusPending
		writeJSON(w, tx)
	case PollNotFound:
		ko(w, http.StatusNotFound, "Transaction not found")
	case PollError:
		ko(w, http.StatusInternalServerError, "Server problem")
	default:
		writeJSON(w, tx)
	}
}

// Wait blocks until the transaction with this idempotentUuid has ended
// (ok, ko or expired).
func (c *Cloud) Wait(ctx context.Context, uuid string) (Transaction, error) {
	var out Transaction
	err := c.WaitFor(ctx, func(txs []Transaction) bool {
		for _, t := range txs {
			if t.IdempotentUUID == uuid && t.Status != StatusPending {
				out = t
				return true
			}
		}
		return false
	})
	return out, err
}
