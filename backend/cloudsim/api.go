package cloudsim

import (
	"bytes"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/comptoir-pos/comptoir/backend/localapi"
)

// Paths of the Cloud API.
const (
	PathPayment      = "/v5/pos/payment"
	PathTransaction  = "/v5/transaction/"
	PathPrint        = "/v4/pos/print/"
	PathShareReceipt = "/v4/pos/share-receipt"
	PathAbort        = "/v4/pos/abort/"
	PathReversal     = "/v4/pos/reversal"
	PathTransactions = "/v4/pos/transactions/"
	PathCancel       = "/v4/pos/cancel/"
)

// auth is how an endpoint authenticates.
type auth int

const (
	bearer        auth = iota // v5: Authorization: Bearer <key>
	serviceSecret             // v4 forms and the Webservices: Service-Secret: <key>
)

func (c *Cloud) routes() *http.ServeMux {
	mux := http.NewServeMux()
	api := func(pattern, path string, a auth, h http.HandlerFunc) {
		mux.Handle(pattern, c.faulty(path, c.authorized(a, h)))
	}
	api("POST "+PathPayment, PathPayment, bearer, c.handlePayment)
	mux.Handle("GET "+PathTransaction, c.handleTransactionGet()) // the poll, or the Webservices fetch
	api("POST "+PathWSBatch, PathWSBatch, serviceSecret, c.handleWSBatch)
	api("POST "+PathWSTransaction+"{id}/refund/", PathWSTransaction+"refund", serviceSecret, c.handleWSRefund)
	api("POST "+PathAbort, PathAbort, serviceSecret, c.handleAbort)
	api("POST "+PathCancel, PathCancel, serviceSecret, c.handleCancel)
	api("POST "+PathPrint, PathPrint, serviceSecret, c.handlePrint)
	api("POST "+PathShareReceipt, PathShareReceipt, serviceSecret, c.handleShare)
	api("POST "+PathReversal, PathReversal, serviceSecret, c.handleReversal)
	api("POST "+PathTransactions, PathTransactions, serviceSecret, c.handleTransactions)
	api("POST "+PathGenerateLink, PathGenerateLink, serviceSecret, c.handleGenerateLink)
	api("GET "+PathCart, PathCart, serviceSecret, c.handleCart)
	api("POST "+PathCart, PathCart, serviceSecret, c.handleCart)
	api("POST "+PathCancelLink, PathCancelLink, serviceSecret, c.handleCancelLink)
	api("POST "+PathCapture, PathCapture, serviceSecret, c.handleCapture)
	api("POST "+PathCaptureShort, PathCapture, serviceSecret, c.handleCapture)
	api("POST "+PathCheckouts, PathCheckouts, serviceSecret, c.handleCheckout)
	mux.HandleFunc("GET "+PathPayPage+"{token}", c.handlePayPage)
	mux.HandleFunc("POST "+PathPayPage+"{token}", c.handlePayPage)
	mux.HandleFunc("GET "+PathReturnPage, c.handleReturnPage)
	// Every request but the control API's goes through the request log.
	outer := http.NewServeMux()
	outer.Handle("/", c.logged(mux))
	c.controlRoutes(outer)
	c.requestLogRoutes(outer)
	return outer
}

// ko answers {status: ko, message} with an HTTP status.
func ko(w http.ResponseWriter, code int, message string) {
	writeJSONCode(w, code, map[string]string{"status": StatusKO, "message": message})
}

func writeJSON(w http.ResponseWriter, v any) { writeJSONCode(w, http.StatusOK, v) }

func writeJSONCode(w http.ResponseWriter, code int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(body)
}

// authorized checks the key (401) and the Content-Type (400), in that
// order, on every request: a GET included.
func (c *Cloud) authorized(a auth, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var key string
		if a == bearer {
			key, _ = strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		} else {
			key = r.Header.Get("Service-Secret")
		}
		if key == "" || subtle.ConstantTimeCompare([]byte(key), []byte(c.cfg.Key)) != 1 {
			c.log.Info("refused: API key", "path", r.URL.Path)
			ko(w, http.StatusUnauthorized, "Invalid API key")
			return
		}
		if ct := strings.ToLower(r.Header.Get("Content-Type")); !strings.HasPrefix(ct, "application/json") {
			ko(w, http.StatusBadRequest, "Content-Type must be application/json")
			return
		}
		h(w, r)
	}
}

// decode reads a JSON body, or answers 400.
func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	raw, ok := readBody(w, r)
	if ok && json.Unmarshal(raw, v) != nil {
		ko(w, http.StatusBadRequest, "Malformed JSON body")
		return false
	}
	return ok
}

// readBody reads a request's body, at most 1 MiB.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<20))
	if err != nil {
		ko(w, http.StatusBadRequest, "Malformed JSON body")
		return nil, false
	}
	return raw, true
}

// terminalFor is the company's terminal with this serial number, or a 400
// (no serial number) or 401 (not accessible with this key).
func (c *Cloud) terminalFor(w http.ResponseWriter, serial string) (*vterm, bool) {
	if strings.TrimSpace(serial) == "" {
		ko(w, http.StatusBadRequest, "Parameter 'serialNumber' is missing")
		return nil, false
	}
	c.mu.Lock()
	vt := c.terminals[serial]
	c.mu.Unlock()
	if vt == nil {
		ko(w, http.StatusUnauthorized, "Terminal not accessible with this API key")
		return nil, false
	}
	return vt, true
}

// forward serves one Local API request on a virtual terminal, in process,
// and returns its status and body. A dropped answer is status 0.
func forward(vt *vterm, r *http.Request, path string, body any) (code int, raw []byte) {
	b, err := json.Marshal(body)
	if err != nil {
		return 0, nil
	}
	req, err := http.NewRequestWithContext(r.Context(), http.MethodPost, localapi.BasePath+path, bytes.NewReader(b))
	if err != nil {
		return 0, nil
	}
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	defer func() {
		// A dropped answer: the terminal simulator aborts its handler.
		if p := recover(); p != nil && p != http.ErrAbortHandler {
			panic(p)
		}
	}()
	vt.sim.Handler().ServeHTTP(rec, req)
	return rec.Code, rec.Body.Bytes()
}

// terminalStatus reads a Local API {status, message} answer.
func terminalStatus(code int, raw []byte) (status, message string) {
	var s localapi.StatusResponse
	if code != http.StatusOK || json.Unmarshal(raw, &s) != nil || s.Status == "" {
		return StatusKO, fmt.Sprintf("the terminal answered HTTP %d", code)
	}
	return s.Status, s.Message
}

// msgNotReached is the answer of a v4 form whose terminal stayed offline.
const msgNotReached = "The terminal did not receive the request (offline)"

// reachable is the company's terminal with this serial number once it is
// online (at most the notification's validity), or false with the answer
// written: 400, 401, or 200 ko when the terminal stayed offline.
func (c *Cloud) reachable(w http.ResponseWriter, serial string) (*vterm, bool) {
	vt, ok := c.terminalFor(w, serial)
	if !ok {
		return nil, false
	}
	if _, ok := c.reach(vt.serial); !ok {
		writeJSON(w, map[string]string{"status": StatusKO, "message": msgNotReached})
		return nil, false
	}
	return vt, true
}

// statusForm serves a v4 form that the terminal answers with a status: ok
// means the request reached the terminal.
func (c *Cloud) statusForm(w http.ResponseWriter, r *http.Request, serial, path string, body any) {
	vt, ok := c.reachable(w, serial)
	if !ok {
		return
	}
	status, message := terminalStatus(forward(vt, r, path, body))
	out := map[string]string{"status": status}
	if message != "" {
		out["message"] = message
	}
	writeJSON(w, out)
}

func (c *Cloud) handlePrint(w http.ResponseWriter, r *http.Request) {
	var b struct {
		SerialNumber string `json:"serialNumber"`
		localapi.PrintRequest
	}
	if !decode(w, r, &b) {
		return
	}
	if b.Data == "" {
		ko(w, http.StatusBadRequest, "Parameter 'data' is missing")
		return
	}
	c.statusForm(w, r, b.SerialNumber, "/print", b.PrintRequest)
}

// shareMedia are the media of /share-receipt, lowercase only.
var shareMedia = map[string]bool{"service": true, "sms": true, "email": true, "print": true}

func (c *Cloud) handleShare(w http.ResponseWriter, r *http.Request) {
	var b struct {
		SerialNumber  string                  `json:"serialNumber"`
		ReceiptTicket *localapi.ReceiptTicket `json:"receiptTicket"`
		TransactionID string                  `json:"transactionId"`
		Medium        string                  `json:"medium"`
	}
	if !decode(w, r, &b) {
		return
	}
	switch {
	case b.ReceiptTicket == nil:
		ko(w, http.StatusBadRequest, "Parameter 'receiptTicket' is missing")
		return
	case b.TransactionID == "":
		ko(w, http.StatusBadRequest, "Parameter 'transactionId' is missing")
		return
	case !shareMedia[b.Medium]:
		ko(w, http.StatusBadRequest, "Parameter 'medium' is invalid")
		return
	}
	id := b.TransactionID
	c.mu.Lock()
	if t := c.txs[id]; t != nil && t.LocalID != "" {
		id = t.LocalID
	}
	c.mu.Unlock()
	c.statusForm(w, r, b.SerialNumber, "/share-receipt",
		localapi.ShareReceiptRequest{ReceiptTicket: b.ReceiptTicket, TransactionID: id, Medium: b.Medium})
}

// handleAbort sends the abort to the terminal: its ok says only that the
// terminal received it. The terminal's own abort answer (held until the
// end after the handover) is not waited for: the payment's outcome
// decides.
func (c *Cloud) handleAbort(w http.ResponseWriter, r *http.Request) {
	var b struct {
		SerialNumber   string `json:"serialNumber"`
		IdempotentUUID string `json:"idempotentUuid"`
	}
	if !decode(w, r, &b) {
		return
	}
	c.abort(w, b.SerialNumber, localapi.AbortRequest{IdempotentUUID: b.IdempotentUUID})
}

// handleCancel is the earlier form: whatever runs on the terminal stops.
func (c *Cloud) handleCancel(w http.ResponseWriter, r *http.Request) {
	var b struct {
		SerialNumber string `json:"serialNumber"`
	}
	if !decode(w, r, &b) {
		return
	}
	c.abort(w, b.SerialNumber, localapi.AbortRequest{})
}

func (c *Cloud) abort(w http.ResponseWriter, serial string, req localapi.AbortRequest) {
	vt, ok := c.reachable(w, serial)
	if !ok {
		return
	}
	if !c.goLater(func() {
		bg, _ := http.NewRequestWithContext(c.ctx, http.MethodPost, "/", nil)
		code, raw := forward(vt, bg, "/abort", req)
		c.log.Info("abort delivered", "serial", vt.serial, "uuid", req.IdempotentUUID, "terminal", fmt.Sprint(code, " ", string(raw)))
	}) {
		ko(w, http.StatusServiceUnavailable, "closing")
		return
	}
	writeJSON(w, map[string]string{"status": StatusOK})
}

// goLater runs f in the background until Close, unless closing.
func (c *Cloud) goLater(f func()) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return false
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		f()
	}()
	return true
}

// handleReversal reverses an ok debit: the cloud's transaction id names
// it, the terminal that made it reverses it.
func (c *Cloud) handleReversal(w http.ResponseWriter, r *http.Request) {
	var b localapi.ReversalRequest
	if !decode(w, r, &b) {
		return
	}
	if b.InitialTransactionID == "" || b.Amount <= 0 {
		ko(w, http.StatusBadRequest, "Parameters 'amount' and 'initialTransactionId' are required")
		return
	}
	c.mu.Lock()
	orig := c.txs[b.InitialTransactionID]
	var local, serial string
	if orig != nil {
		local, serial = orig.LocalID, orig.SerialNumber
	}
	c.mu.Unlock()
	if orig == nil || local == "" {
		ko(w, http.StatusBadRequest, "Unknown initialTransactionId")
		return
	}
	vt, ok := c.terminalFor(w, serial)
	if !ok {
		return
	}
	if _, ok := c.reach(serial); !ok {
		writeJSON(w, map[string]string{"status": StatusKO, "message": msgNotReached, "initialTransactionId": b.InitialTransactionID})
		return
	}
	// The reversal runs to its end even if the caller goes: the cloud
	// records what the terminal did, as its own.
	c.mu.Lock()
	c.claims[serial+"/"+local] = true
	c.mu.Unlock()
	bg, _ := http.NewRequestWithContext(c.ctx, http.MethodPost, "/", nil)
	code, raw := forward(vt, bg, "/reversal", localapi.ReversalRequest{Amount: b.Amount, InitialTransactionID: local})
	var lr localapi.ReversalResponse
	if code != http.StatusOK || json.Unmarshal(raw, &lr) != nil || lr.Status == "" {
		// The terminal's answer was lost: its ledger says whether it
		// reversed.
		lr = localapi.ReversalResponse{Status: StatusKO, Message: fmt.Sprintf("the terminal answered HTTP %d", code)}
		for _, e := range vt.sim.Ledger() {
			if e.Kind == "reversal" && e.InitialTransactionID == local {
				lr = localapi.ReversalResponse{Status: StatusOK, ReversalTransactionID: e.TransactionID}
			}
		}
		if lr.Status != StatusOK {
			ko(w, http.StatusInternalServerError, lr.Message)
			return
		}
	}
	if lr.Status != StatusOK {
		writeJSONCode(w, http.StatusBadRequest, map[string]string{"status": StatusKO, "message": lr.Message, "initialTransactionId": b.InitialTransactionID})
		return
	}
	c.mu.Lock()
	rev := &txn{Transaction: Transaction{
		Status: StatusOK, TransactionID: newID("rev_"), LocalID: lr.ReversalTransactionID, Amount: b.Amount,
		CurrencyCode: orig.CurrencyCode, TransactionType: "reversal", CreatedAt: c.cfg.Now().UTC(),
		SerialNumber: serial, Initial: b.InitialTransactionID, CartID: orig.CartID,
	}}
	c.addLocked(rev)
	c.mu.Unlock()
	c.notify(rev.Transaction)
	writeJSON(w, map[string]string{"status": StatusOK, "initialTransactionId": b.InitialTransactionID, "reversalTransactionId": rev.TransactionID})
}
