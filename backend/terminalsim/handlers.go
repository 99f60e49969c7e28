package terminalsim

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/comptoir-pos/comptoir/backend/localapi"
	"github.com/google/uuid"
)

// maxBody bounds a request body: an ESC/POS receipt with a logo, as hex, is
// a few hundred KiB.
const maxBody = 8 << 20

func (t *Terminal) routes() *http.ServeMux {
	mux := http.NewServeMux()
	api := func(pattern string, h http.HandlerFunc) { mux.Handle(pattern, t.track(h)) }
	p := localapi.BasePath
	api("GET "+p+"/ping", t.handlePing)
	api("POST "+p+"/payment", t.handlePayment)
	api("GET "+p+"/payment/{amount}", t.handleSimplePayment)
	api("POST "+p+"/print", t.handlePrint)
	api("POST "+p+"/share-receipt", t.handleShare)
	api("POST "+p+"/reversal", t.handleReversal)
	api("POST "+p+"/abort", t.handleAbort)
	api("POST "+p+"/transactions", t.handleTransactions)
	t.controlRoutes(mux, api)
	return mux
}

// bodyKind classifies a request body.
type bodyKind int

const (
	bodyOK     bodyKind = iota
	bodySyntax          // not JSON at all
	bodyShape           // JSON, but not an object of the expected field types
)

// readBody decodes a JSON object into v, ignoring unknown keys. An empty
// body (or null) is {} when emptyOK.
func readBody(r *http.Request, v any, emptyOK bool) bodyKind {
	data, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil || len(data) > maxBody {
		return bodySyntax
	}
	data = bytes.TrimSpace(data)
	switch {
	case emptyOK && (len(data) == 0 || string(data) == "null"):
		return bodyOK
	case !json.Valid(data):
		return bodySyntax
	case data[0] != '{':
		return bodyShape
	}
	if err := json.Unmarshal(data, v); err != nil {
		return bodyShape
	}
	return bodyOK
}

// badRequest is the specification's answer to a malformed body: HTTP 400
// and no body at all.
func badRequest(w http.ResponseWriter) {
	w.Header().Set("Content-Length", "0")
	w.WriteHeader(http.StatusBadRequest)
}

func writeRaw(w http.ResponseWriter, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}

func writeJSON(w http.ResponseWriter, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	writeRaw(w, body)
}

func writeStatus(w http.ResponseWriter, status, message string) {
	writeJSON(w, localapi.StatusResponse{Status: status, Message: message})
}

// http500 answers HTTP 500 with no body.
func http500(w http.ResponseWriter) {
	w.Header().Set("Content-Length", "0")
	w.WriteHeader(http.StatusInternalServerError)
}

// dropConnection closes the client's connection without an answer.
func dropConnection(w http.ResponseWriter) { DropConnection(w) }

// DropConnection closes the client's connection without an answer (a
// lost answer, for simulators built on this one).
func DropConnection(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			_ = conn.Close()
			return
		}
	}
	// HTTP/2, or a recorder: net/http resets the stream or closes the
	// connection without writing a response.
	panic(http.ErrAbortHandler)
}

func (t *Terminal) handlePing(w http.ResponseWriter, r *http.Request) {
	if show, _ := strconv.ParseBool(r.URL.Query().Get("showMessage")); show {
		t.mu.Lock()
		t.greetings++
		t.mu.Unlock()
		t.log.Info("greeting shown on the terminal's screen")
	}
	writeJSON(w, localapi.PingResponse{Status: localapi.StatusOK})
}

func (t *Terminal) handlePayment(w http.ResponseWriter, r *http.Request) {
	var req localapi.PaymentRequest
	if readBody(r, &req, false) != bodyOK {
		t.log.Info("payment: malformed request")
		badRequest(w)
		return
	}
	t.pay(w, r, req)
}

// handleSimplePayment is the earlier form GET /payment/{amount}: a debit
// with only an amount.
func (t *Terminal) handleSimplePayment(w http.ResponseWriter, r *http.Request) {
	amount, err := strconv.ParseInt(r.PathValue("amount"), 10, 64)
	if err != nil {
		writeStatus(w, localapi.StatusKO, MsgInvalidAmount)
		return
	}
	t.pay(w, r, localapi.PaymentRequest{Amount: amount})
}

// validateLocked returns the message refusing a payment request, or "".
func (t *Terminal) validateLocked(req *localapi.PaymentRequest) string {
	switch {
	case req.Amount <= 0:
		return MsgInvalidAmount
	case req.GiftAmount < 0:
		return MsgInvalidGiftAmount
	case req.CheckoutExternalID == "" && (req.ExternalTableNumber != "" || req.ExternalOrderNumber != "" || req.ExternalOrderID != ""):
		return MsgCheckoutExternalIDRequired
	}
	if req.CheckoutExternalID != "" {
		if _, used := t.checkouts[req.CheckoutExternalID]; used {
			return MsgCheckoutExternalIDUsed
		}
	}
	return ""
}

// pay serves a payment request: a replay of a known transaction, an attach
// to the payment in progress, a refusal, or a new payment.
func (t *Terminal) pay(w http.ResponseWriter, r *http.Request, req localapi.PaymentRequest) {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		dropConnection(w)
		return
	}
	id := req.IdempotentUUID
	if id != "" {
		if k := t.known[id]; k != nil && t.nowLocked().Sub(k.at) < IdempotencyWindow {
			t.mu.Unlock()
			t.log.Info("payment: known idempotentUuid, transaction replayed", "uuid", id)
			writeRaw(w, k.body)
			return
		}
		if p := t.current; p != nil && p.uuid == id && !p.keypad {
			t.mu.Unlock()
			t.log.Info("payment: attached to the payment in progress", "uuid", id)
			t.awaitPayment(w, r, p)
			return
		}
	}
	if msg := t.validateLocked(&req); msg != "" {
		t.mu.Unlock()
		t.log.Info("payment refused", "uuid", id, "message", msg)
		writeStatus(w, localapi.StatusKO, msg)
		return
	}
	if p := t.current; p != nil {
		t.mu.Unlock()
		t.log.Info("payment refused: busy", "uuid", id, "inProgress", p.uuid)
		writeStatus(w, localapi.StatusKO, localapi.BusyMessage(p.uuid))
		return
	}
	if req.TransactionType != localapi.TypeRefund {
		req.TransactionType = localapi.TypeDebit // any other value is a debit
	}
	if id == "" {
		id = uuid.NewString()
	}
	b, from := t.pickBehaviourLocked(req.Amount)
	if b.answer() == AnswerHTTP500NotStarted {
		t.mu.Unlock()
		t.log.Info("payment: HTTP 500 before starting, nothing charged", "uuid", id)
		http500(w)
		return
	}
	p := t.startLocked(req, id, b, from, false)
	t.mu.Unlock()
	t.awaitPayment(w, r, p)
}

// hold bounds how long a request is kept open.
func (t *Terminal) hold() (<-chan time.Time, func() bool) {
	tm := time.NewTimer(t.scaled(t.cfg.Timings.RequestHold))
	return tm.C, tm.Stop
}

// awaitPayment holds the request until p's answer is due, then answers it
// the way the behaviour says.
func (t *Terminal) awaitPayment(w http.ResponseWriter, r *http.Request, p *payment) {
	t.mu.Lock()
	p.waiters++
	t.broadcastLocked()
	t.mu.Unlock()
	defer func() {
		t.mu.Lock()
		p.waiters--
		t.mu.Unlock()
	}()
	expired, stop := t.hold()
	defer stop()
	select {
	case <-p.answered:
	case <-expired:
		t.log.Info("payment: request held too long, connection closed without an answer", "uuid", p.uuid)
		dropConnection(w)
		return
	case <-r.Context().Done():
		return // the client went away; the payment goes on
	case <-t.closing:
		dropConnection(w)
		return
	}
	switch p.b.answer() {
	case AnswerLost:
		t.log.Info("payment: answer lost (connection closed)", "uuid", p.uuid)
		dropConnection(w)
	case AnswerHTTP500:
		t.log.Info("payment: answered HTTP 500 with no body", "uuid", p.uuid)
		http500(w)
	default:
		writeRaw(w, p.body)
	}
}

func (t *Terminal) handleAbort(w http.ResponseWriter, r *http.Request) {
	var req localapi.AbortRequest
	if readBody(r, &req, true) != bodyOK {
		badRequest(w)
		return
	}
	earlier := req.IdempotentUUID == ""
	t.mu.Lock()
	how := nextAnswerLocked(&t.abortAns)
	if how == AnswerHTTP500NotStarted {
		t.mu.Unlock()
		t.log.Info("abort: HTTP 500 before acting on it", "uuid", req.IdempotentUUID)
		http500(w)
		return
	}
	answer := func(status, message, id string) {
		switch how {
		case AnswerLost:
			t.log.Info("abort: answer lost (connection closed)", "uuid", req.IdempotentUUID, "message", message)
			dropConnection(w)
			return
		case AnswerHTTP500:
			t.log.Info("abort: answered HTTP 500 with no body", "uuid", req.IdempotentUUID, "message", message)
			http500(w)
			return
		}
		resp := localapi.AbortResponse{Status: status, Message: message}
		if earlier {
			resp.IdempotentUUID = id
		}
		writeJSON(w, resp)
	}
	p := t.current
	switch {
	case p == nil:
		t.mu.Unlock()
		answer(localapi.StatusKO, localapi.MsgNothingToAbort, "")
		return
	case !earlier && req.IdempotentUUID != p.uuid:
		t.mu.Unlock()
		answer(localapi.StatusKO, localapi.BusyMessage(p.uuid), "")
		return
	case p.keypad:
		t.mu.Unlock()
		answer(localapi.StatusKO, localapi.MsgAbortNotAllowed, "")
		return
	}
	before := p.phase.rank() < PhaseBanking.rank()
	switch {
	case before && !p.aborted:
		p.aborted = true
		close(p.abortCh)
	case !before:
		p.held++
	}
	t.broadcastLocked()
	t.mu.Unlock()
	t.log.Info("abort requested", "uuid", p.uuid, "beforeHandover", before)

	expired, stop := t.hold()
	defer stop()
	select {
	case <-p.done:
	case <-expired:
		dropConnection(w)
		return
	case <-r.Context().Done():
		return
	case <-t.closing:
		dropConnection(w)
		return
	}
	if before {
		answer(localapi.StatusOK, "", p.uuid)
		return
	}
	// After the handover the payment ran to its end: its own answer says
	// whether the customer paid.
	answer(localapi.StatusKO, localapi.MsgAbortNotPossible, p.uuid)
}

func (t *Terminal) handleReversal(w http.ResponseWriter, r *http.Request) {
	var req localapi.ReversalRequest
	if readBody(r, &req, false) != bodyOK {
		badRequest(w)
		return
	}
	// The answer goes out after the acquirer's round trip, the lock
	// released: the reversal itself is made (or refused) at once, so that a
	// second request meanwhile finds it made.
	var answer func()
	defer func() {
		if answer == nil {
			return
		}
		tm := time.NewTimer(t.scaled(t.cfg.Timings.Reversal))
		defer tm.Stop()
		select {
		case <-tm.C:
		case <-t.closing:
			dropConnection(w)
			return
		case <-r.Context().Done():
			return
		}
		answer()
	}()
	ko := func(msg string) {
		t.log.Info("reversal refused", "initialTransactionId", req.InitialTransactionID, "message", msg)
		answer = func() { writeJSON(w, localapi.ReversalResponse{Status: localapi.StatusKO, Message: msg}) }
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	how := nextAnswerLocked(&t.revAns)
	if how == AnswerHTTP500NotStarted {
		t.log.Info("reversal: HTTP 500 before acting on it", "initialTransactionId", req.InitialTransactionID)
		http500(w)
		return
	}
	orig, rev, refused := t.reverseLocked(req)
	if rev == nil {
		ko(refused)
		return
	}
	t.log.Info("reversal", "initialTransactionId", orig.id, "reversalTransactionId", rev.id, "amount", req.Amount, "answer", how)
	answer = func() {
		switch how {
		case AnswerLost:
			dropConnection(w)
		case AnswerHTTP500:
			http500(w)
		default:
			writeJSON(w, localapi.ReversalResponse{Status: localapi.StatusOK, ReversalTransactionID: rev.id, InitialTransactionID: orig.id})
		}
	}
}

// reverseLocked reverses the transaction req names, in the history and the
// ledger; rev is nil when it refuses, and refused the Local API's message.
func (t *Terminal) reverseLocked(req localapi.ReversalRequest) (orig, rev *txRecord, refused string) {
	if req.InitialTransactionID == "" {
		return nil, nil, localapi.MsgReversalIDMandatory
	}
	orig = t.byID[req.InitialTransactionID]
	now := t.nowLocked()
	switch {
	case orig == nil:
		return nil, nil, localapi.ReversalNotFoundMessage(req.InitialTransactionID)
	case orig.kind != localapi.TypeDebit || orig.status != localapi.StatusOK:
		return nil, nil, localapi.MsgReversalNotReversible
	case orig.reversedBy != "":
		return nil, nil, localapi.MsgReversalAlreadyReversed
	case now.Sub(orig.at) >= ReversalWindow:
		return nil, nil, localapi.MsgReversalNotReversible
	case req.Amount != orig.amount+orig.gift:
		return nil, nil, localapi.MsgReversalAmountMismatch
	case len(t.revErrs) > 0:
		msg := t.revErrs[0]
		t.revErrs = slices.Delete(t.revErrs, 0, 1)
		return nil, nil, msg
	}
	rev = &txRecord{
		id: uuid.NewString(), kind: "reversal", status: localapi.StatusOK,
		amount: req.Amount, uuid: orig.uuid, cartID: orig.cartID, reference: orig.reference,
		customer: orig.customer, scheme: orig.scheme, issuer: orig.issuer, at: now, initial: orig.id,
	}
	orig.reversedBy = rev.id
	t.txs = append(t.txs, rev)
	t.byID[rev.id] = rev
	t.ledger = append(t.ledger, LedgerEntry{
		Time: now, Kind: "reversal", TransactionID: rev.id, InitialTransactionID: orig.id,
		IdempotentUUID: orig.uuid, CartID: orig.cartID, Amount: req.Amount, Total: req.Amount,
		Net: -req.Amount, Currency: t.cfg.CurrencyCode,
	})
	t.broadcastLocked()
	return orig, rev, ""
}

func (t *Terminal) handlePrint(w http.ResponseWriter, r *http.Request) {
	var req localapi.PrintRequest
	if readBody(r, &req, false) != bodyOK {
		badRequest(w)
		return
	}
	switch {
	case req.Data == "":
		writeStatus(w, localapi.StatusKO, localapi.MsgPrintDataMissing)
		return
	case req.Format != "" && req.Format != localapi.FormatText && req.Format != localapi.FormatESCPOS:
		writeStatus(w, localapi.StatusKO, localapi.MsgPrintWrongFormat)
		return
	}
	t.mu.Lock()
	t.printLocked("print", req.Format, req.Data)
	t.broadcastLocked()
	t.mu.Unlock()
	// ok means accepted, printed or not.
	writeStatus(w, localapi.StatusOK, "")
}

func (t *Terminal) handleShare(w http.ResponseWriter, r *http.Request) {
	var req localapi.ShareReceiptRequest
	switch readBody(r, &req, false) {
	case bodySyntax:
		badRequest(w)
		return
	case bodyShape:
		writeStatus(w, localapi.StatusKO, localapi.MsgShareBadRequest)
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	rt := req.ReceiptTicket
	switch {
	case req.TransactionID == "" || t.byID[req.TransactionID] == nil:
		writeStatus(w, localapi.StatusKO, localapi.MsgShareTransactionID)
		return
	case rt == nil || rt.Data == "" || (rt.Format != "" && rt.Format != localapi.FormatText):
		writeStatus(w, localapi.StatusKO, localapi.MsgShareReceiptTicket)
		return
	}
	switch req.Medium {
	case localapi.ShareService, localapi.ShareSMS, localapi.ShareEmail, localapi.SharePrint:
	default:
		writeStatus(w, localapi.StatusKO, localapi.MsgShareMedium)
		return
	}
	t.shares = append(t.shares, Share{Time: t.nowLocked(), TransactionID: req.TransactionID, Medium: req.Medium, Text: rt.Data})
	if req.Medium == localapi.SharePrint {
		t.printLocked("share", localapi.FormatText, rt.Data)
	}
	t.broadcastLocked()
	t.log.Info("receipt shared", "transactionId", req.TransactionID, "medium", req.Medium)
	writeStatus(w, localapi.StatusOK, "")
}
