package cloudsim

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
)

// The Webservices API, under the cloud's /v5 (the default Webservices base
// URL is the cloud's followed by /v5). GET /v5/transaction/ is also the
// Cloud API's poll (handleTransactionGet).
const (
	PathWSBatch       = "/v5/pos/transactions/"
	PathWSTransaction = "/v5/transaction/"
)

// Refund outcomes a test can script for the next refund (RefundScript).
const (
	ScriptRefunded    = "refunded"     // 201
	ScriptPending     = "pending"      // 202, decided later (ApproveRefund)
	ScriptWaiting     = "waiting"      // 202, a manager approves it
	ScriptNotPossible = "not_possible" // 422
	ScriptImpossible  = "error"        // 400 {error}
	ScriptLost        = "lost"         // processed as refunded, the answer dropped
)

// nonRefundable are the schemes the Webservices never refund.
var nonRefundable = []string{"AMEX", "CUP", "ANCV", "CONECS", "CASH"}

// RefundView is a refund asked through the Webservices.
type RefundView struct {
	ID          string `json:"transaction_id"`
	Original    string `json:"original_transaction_id"`
	Amount      int64  `json:"amount"`
	Status      string `json:"status"` // refunded, pending, waiting, not_possible, success, rejected
	ApprovalURL string `json:"approval_url,omitempty"`
	UserEmail   string `json:"user_email"`
}

// wsBatchRequest is the Webservices batch filter: endDate inclusive.
type wsBatchRequest struct {
	historyRequest
	References       []string `json:"references"`
	Schemes          []string `json:"schemes"`
	CurrencyCode     string   `json:"currencyCode"`
	OnlyPending      bool     `json:"only_pending"`
	ExcludeECommerce bool     `json:"exclude_e_commerce"`
}

func (c *Cloud) handleWSBatch(w http.ResponseWriter, r *http.Request) {
	var h wsBatchRequest
	if !decode(w, r, &h) {
		return
	}
	limit, ok := h.limit()
	if !ok {
		fieldErrors(w, map[string][]string{"limit": {"1 to 200, and offset 0 or more."}})
		return
	}
	for field, t := range map[string]string{"startTime": h.StartTime, "endTime": h.EndTime} {
		if strings.ContainsAny(t, "Z+") {
			fieldErrors(w, map[string][]string{field: {"HH:mm:ss without a time zone designator."}})
			return
		}
	}
	// endDate is inclusive: the whole day unless endTime says otherwise.
	if h.EndDate != "" {
		if h.EndTime == "" {
			h.EndTime = "23:59:59"
		}
	}
	from, to, err := h.window(c.cfg.Now())
	if err != nil {
		fieldErrors(w, map[string][]string{"date": {err.Error()}})
		return
	}
	if h.EndDate != "" {
		to = to.Add(time.Second) // the end second is in
	}
	hide := c.webservicesRead()
	c.writePage(w, h.Offset, limit, false, func(t *txn) bool {
		switch {
		case hide[t]:
			return false
		case len(h.SerialNumbers) > 0 && !slices.Contains(h.SerialNumbers, t.SerialNumber),
			len(h.References) > 0 && !slices.Contains(h.References, t.Reference),
			len(h.Schemes) > 0 && !slices.Contains(h.Schemes, t.Scheme),
			h.CurrencyCode != "" && !strings.EqualFold(h.CurrencyCode, t.CurrencyCode),
			h.OnlyPending && t.Status != StatusPending,
			h.ExcludeECommerce && t.SerialNumber == "",
			t.CreatedAt.Before(from), !t.CreatedAt.Before(to):
			return false
		}
		return true
	})
}

// handleTransactionGet is the Cloud API's poll and the Webservices fetch:
// one path, since the default Webservices URL is the cloud's followed by
// /v5. A request with only the bearer header is the poll, with only
// Service-Secret the fetch. One with both (a client may send its key both
// ways: it is the same key) cannot be told apart, so it gets one answer
// either reads: the fetch's {transactionDetails}, holding the poll's
// fields too, under the poll's faults and the record's lag.
func (c *Cloud) handleTransactionGet() http.Handler {
	poll := c.faulty(PathTransaction, c.authorized(bearer, c.handlePoll))
	fetch := c.faulty(PathWSTransaction, c.authorized(serviceSecret, c.handleWSDetails))
	either := c.faulty(PathTransaction, c.authorized(bearer, c.authorized(serviceSecret, c.handleTransactionEither)))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		bearer, secret := r.Header.Get("Authorization") != "", r.Header.Get("Service-Secret") != ""
		switch {
		case secret && bearer:
			either.ServeHTTP(w, r)
		case secret:
			fetch.ServeHTTP(w, r)
		default:
			poll.ServeHTTP(w, r)
		}
	})
}

func (c *Cloud) handleWSDetails(w http.ResponseWriter, r *http.Request) {
	t, ok := c.fetched(r)
	if !ok {
		writeJSONCode(w, http.StatusNotFound, map[string]string{"detail": "Not found."})
		return
	}
	writeJSON(w, map[string]any{"transactionDetails": details(t)})
}

// fetched is the transaction the Webservices fetch answers for the
// request's transactionId, as this read of the record shows it.
func (c *Cloud) fetched(r *http.Request) (txn, bool) {
	id := strings.TrimSpace(r.URL.Query().Get("transactionId"))
	hide := c.webservicesRead()
	c.mu.Lock()
	defer c.mu.Unlock()
	var t txn // a copy: a refund's status changes when it is decided
	held := c.byIDLocked(id)
	found := held != nil && !hide[held]
	if found {
		t = *held
	}
	return t, found
}

// details is a transaction as the Webservices fetch gives it.
func details(t txn) map[string]any {
	return map[string]any{
		"askedAmount": t.Amount, "giftAmount": t.GiftAmount, "totalAmount": t.Amount + t.GiftAmount,
		"serverDatetime": t.CreatedAt.UTC().Format(time.RFC3339), "deviceDatetime": t.CreatedAt.UTC().Format(time.RFC3339),
		"issuer": t.Issuer, "scheme": t.Scheme, "status": t.Status, "transactionId": t.TransactionID, "type": t.TransactionType,
		"serialNumber": t.SerialNumber, "clientTicket": t.ClientTicket, "companyTicket": t.CompanyTicket, "reference": t.Reference,
	}
}

// handleTransactionEither answers a GET /v5/transaction/ that may be the
// poll or the fetch: the transaction under transactionDetails, with the
// fetch's fields and the webhook's (amount, currencyCode, transactionType,
// idempotentUuid...), which the specification lets a reader ignore.
func (c *Cloud) handleTransactionEither(w http.ResponseWriter, r *http.Request) {
	if strings.TrimSpace(r.URL.Query().Get("transactionId")) == "" {
		ko(w, http.StatusBadRequest, "Parameter 'transactionId' is missing")
		return
	}
	t, ok := c.fetched(r)
	c.mu.Lock()
	mode := c.faults.poll
	if ok && t.Status == StatusExpired && mode == PollNormal {
		mode = c.faults.expiredPoll
	}
	c.mu.Unlock()
	switch {
	case !ok || mode == PollNotFound:
		ko(w, http.StatusNotFound, "Transaction not found")
		return
	case mode == PollError:
		ko(w, http.StatusInternalServerError, "Server problem")
		return
	case mode == PollPending:
		t.Status = StatusPending
	}
	var both map[string]any
	raw, _ := json.Marshal(t.Transaction)
	_ = json.Unmarshal(raw, &both)
	for k, v := range details(t) {
		both[k] = v
	}
	writeJSON(w, map[string]any{"transactionDetails": both})
}

// wsRefundRequest is the body of a Webservices refund.
type wsRefundRequest struct {
	Amount    *int64 `json:"amount"`
	UserEmail string `json:"user_email"`
	Vendor    *struct {
		SoftwareName    string `json:"software_name"`
		SoftwareVersion string `json:"software_version"`
	} `json:"vendor"`
	PrioritiseTip bool `json:"prioritise_tip"`
}

// problems are the request's missing or bad fields, keyed by field.
func (b wsRefundRequest) problems() map[string][]string {
	errs := map[string][]string{}
	if b.Amount == nil || *b.Amount <= 0 {
		errs["amount"] = []string{"A positive whole number of cents is required."}
	}
	if strings.TrimSpace(b.UserEmail) == "" {
		errs["user_email"] = []string{"This field is required."}
	}
	if b.Vendor == nil || b.Vendor.SoftwareName == "" || b.Vendor.SoftwareVersion == "" {
		errs["vendor"] = []string{"software_name and software_version are required."}
	}
	return errs
}

func (c *Cloud) handleWSRefund(w http.ResponseWriter, r *http.Request) {
	var b wsRefundRequest
	if !decode(w, r, &b) {
		return
	}
	if errs := b.problems(); len(errs) > 0 {
		writeJSONCode(w, http.StatusBadRequest, errs) // keyed by field, no wrapper
		return
	}
	id := r.PathValue("id")
	c.waitRefundHold()
	c.mu.Lock()
	defer c.mu.Unlock()
	orig := c.txs[id]
	impossible := func(msg string) { writeJSONCode(w, http.StatusBadRequest, map[string]string{"error": msg}) }
	if c.refusedLocked(w, id, orig, *b.Amount, impossible) {
		return
	}
	outcome := ScriptRefunded
	if len(c.refundScript) > 0 {
		outcome, c.refundScript = c.refundScript[0], c.refundScript[1:]
	}
	rv := &RefundView{ID: uuid.NewString(), Original: id, Amount: *b.Amount, Status: outcome, UserEmail: b.UserEmail}
	switch outcome {
	case ScriptNotPossible:
		writeJSONCode(w, http.StatusUnprocessableEntity, map[string]string{"status": RefundStatusNotPossible, "message": "Refused by the issuer"})
		return
	case ScriptImpossible:
		impossible("Refunds by API are not activated for this point of sale")
		return
	case ScriptWaiting:
		rv.ApprovalURL = c.linkURLLocked("approve-" + rv.ID)
	}
	c.refundedBy[id] = rv.ID // one refund per transaction, whatever its amount
	c.refunds[rv.ID] = rv
	if outcome == ScriptRefunded || outcome == ScriptLost {
		rv.Status = ScriptRefunded
	}
	c.addRefundLocked(orig, rv)
	c.log.Info("refund by API", "original", id, "amount", rv.Amount, "outcome", outcome)
	switch outcome {
	case ScriptLost:
		panic(http.ErrAbortHandler) // processed; the answer never arrives
	case ScriptRefunded:
		writeJSONCode(w, http.StatusCreated, map[string]string{"status": "refunded", "message": "ok", "transaction_id": rv.ID})
	default:
		writeJSONCode(w, http.StatusAccepted, map[string]string{"status": outcome, "message": "ok", "transaction_id": rv.ID, "approval_url": rv.ApprovalURL})
	}
}

// waitRefundHold stops this refund, when a hold is set, until the hold is
// released; a release that drops it aborts the request unanswered.
func (c *Cloud) waitRefundHold() {
	c.mu.Lock()
	hold := c.refundHold
	c.refundHold = nil
	c.mu.Unlock()
	if hold != nil {
		close(hold.arrived)
		if !<-hold.release {
			panic(http.ErrAbortHandler) // never processed, never answered
		}
	}
}

// refusedLocked answers, and reports true, when the transaction id cannot
// be refunded by amount.
func (c *Cloud) refusedLocked(w http.ResponseWriter, id string, orig *txn, amount int64, impossible func(string)) bool {
	switch {
	case orig == nil:
		impossible("Transaction not found for this company")
	case orig.TransactionType != "debit" || orig.Status != StatusOK:
		impossible("Only an approved debit can be refunded")
	case slices.Contains(nonRefundable, strings.ToUpper(orig.Scheme)):
		impossible("Transactions of this payment method cannot be refunded by API")
	case c.refundedBy[id] != "":
		impossible("This transaction has already been refunded")
	case amount > orig.Amount+orig.GiftAmount:
		writeJSONCode(w, http.StatusBadRequest, map[string][]string{"amount": {"Must not be above the original amount."}})
	default:
		return false
	}
	return true
}

// RefundStatusNotPossible is the status of an HTTP 422 refund.
const RefundStatusNotPossible = "not_possible"

// addRefundLocked records the refund as a company transaction: ok once
// refunded, pending while it waits for its checks or a manager.
func (c *Cloud) addRefundLocked(orig *txn, rv *RefundView) {
	status := StatusOK
	if rv.Status != ScriptRefunded {
		status = StatusPending
	}
	t := &txn{Transaction: Transaction{Status: status, TransactionID: rv.ID, Amount: rv.Amount, CurrencyCode: orig.CurrencyCode,
		TransactionType: "refund", CreatedAt: c.cfg.Now(), SerialNumber: orig.SerialNumber, Scheme: orig.Scheme, Issuer: orig.Issuer,
		Reference: orig.Reference, CartID: orig.CartID, Initial: orig.TransactionID}}
	c.addLocked(t)
}

// refundHold stops the next refund on its arrival until it is released.
type refundHold struct {
	arrived chan struct{}
	release chan bool
}

// HoldNextRefund stops the next refund request as it arrives, before it is
// processed: arrived is closed then, and release(true) processes it (its
// answer goes to a client that may be gone), release(false) drops it
// unprocessed.
func (c *Cloud) HoldNextRefund() (arrived <-chan struct{}, release func(process bool)) {
	h := &refundHold{arrived: make(chan struct{}), release: make(chan bool, 1)}
	c.mu.Lock()
	c.refundHold = h
	c.mu.Unlock()
	return h.arrived, func(process bool) { h.release <- process }
}

// ScriptRefunds sets the outcomes of the next refunds, in order; then
// refunds are refunded at once.
func (c *Cloud) ScriptRefunds(outcomes ...string) {
	c.mu.Lock()
	c.refundScript = append(c.refundScript[:0], outcomes...)
	c.mu.Unlock()
}

// DecideRefund ends a pending or waiting refund: accepted (success, the
// refund transaction is made) or rejected.
func (c *Cloud) DecideRefund(id string, accept bool) (RefundView, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	rv := c.refunds[id]
	if rv == nil {
		return RefundView{}, fmt.Errorf("no refund %q", id)
	}
	if rv.Status != ScriptPending && rv.Status != ScriptWaiting {
		return *rv, fmt.Errorf("refund %q is %s", id, rv.Status)
	}
	rv.Status, c.txs[id].Status = "success", StatusOK
	if !accept {
		rv.Status, c.txs[id].Status = "rejected", StatusKO
		delete(c.refundedBy, rv.Original)
	}
	c.broadcastLocked()
	return *rv, nil
}

// Refunds are the refunds asked through the Webservices.
func (c *Cloud) Refunds() []RefundView {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := []RefundView{}
	for _, rv := range c.refunds {
		out = append(out, *rv)
	}
	slices.SortFunc(out, func(a, b RefundView) int { return strings.Compare(a.ID, b.ID) })
	return out
}
