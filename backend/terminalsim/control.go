package terminalsim

import (
	"encoding/json"
	"errors"
	"net/http"
	"time"
)

// controlRoutes registers the control API under /sim/. It answers JSON;
// errors are {"error": "..."} with HTTP 400 (bad request) or 409 (no payment
// in progress, wrong step).
func (t *Terminal) controlRoutes(mux *http.ServeMux, api func(string, http.HandlerFunc)) {
	api("GET /sim/{$}", t.handleHelp)
	api("GET /sim/state", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, t.State()) })
	api("GET /sim/ledger", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, nonNil(t.Ledger())) })
	api("GET /sim/printed", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, nonNil(t.Printed())) })
	api("GET /sim/shares", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, nonNil(t.Shares())) })
	api("POST /sim/script", t.handleScript)
	api("POST /sim/customer", t.handleCustomer)
	api("POST /sim/keypad", t.handleKeypad)
	api("POST /sim/clock", t.handleClock)
	api("POST /sim/settings", t.handleSettings)
	api("POST /sim/history", t.handleHistoryFault)
	api("POST /sim/reset", func(w http.ResponseWriter, r *http.Request) {
		t.Reset()
		writeJSON(w, t.State())
	})
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func controlError(w http.ResponseWriter, code int, err error) {
	body, _ := json.Marshal(map[string]string{"error": err.Error()})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(body)
}

// readControl decodes a control request strictly: a typo in a field name is
// an error here, unlike in the Local API.
func readControl(w http.ResponseWriter, r *http.Request, v any) bool {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		controlError(w, http.StatusBadRequest, err)
		return false
	}
	return true
}

func (t *Terminal) handleHelp(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, map[string]any{
		"localApi": t.URL(),
		"routes": []string{
			"GET /sim/state", "GET /sim/ledger", "GET /sim/printed", "GET /sim/shares",
			"POST /sim/script", "POST /sim/customer", "POST /sim/keypad", "POST /sim/clock",
			"POST /sim/settings", "POST /sim/history", "POST /sim/reset",
		},
		"presets":     PresetNames(),
		"testAmounts": TestAmounts,
		"actions":     []ActionKind{ActPresentCard, ActDecline, ActTip, ActCancel, ActHandover, ActTimeout},
	})
}

// scriptRequest is the body of POST /sim/script.
type scriptRequest struct {
	Clear          bool        `json:"clear"`          // empty the queue first
	Behaviours     []Behaviour `json:"behaviours"`     // appended to the queue
	Default        *Behaviour  `json:"default"`        // replaces the default behaviour
	ReversalErrors []string    `json:"reversalErrors"` // see FailNextReversal
	// ReversalAnswers and AbortAnswers: see FailNextReversalAnswers and
	// FailNextAbortAnswers.
	ReversalAnswers []Answer `json:"reversalAnswers"`
	AbortAnswers    []Answer `json:"abortAnswers"`
}

func (t *Terminal) handleScript(w http.ResponseWriter, r *http.Request) {
	var req scriptRequest
	if !readControl(w, r, &req) {
		return
	}
	if err := checkAnswers(req.ReversalAnswers); err != nil {
		controlError(w, http.StatusBadRequest, err)
		return
	}
	if err := checkAnswers(req.AbortAnswers); err != nil {
		controlError(w, http.StatusBadRequest, err)
		return
	}
	if req.Clear {
		t.ClearScript()
	}
	t.Script(req.Behaviours...)
	_ = t.FailNextReversalAnswers(req.ReversalAnswers...)
	_ = t.FailNextAbortAnswers(req.AbortAnswers...)
	if req.Default != nil {
		t.SetDefault(*req.Default)
	}
	for _, m := range req.ReversalErrors {
		t.FailNextReversal(m)
	}
	writeJSON(w, t.State())
}

func (t *Terminal) handleCustomer(w http.ResponseWriter, r *http.Request) {
	var a Action
	if !readControl(w, r, &a) {
		return
	}
	if err := t.Act(a); err != nil {
		code := http.StatusBadRequest
		if errors.Is(err, ErrNoPayment) || errors.Is(err, ErrWrongStep) {
			code = http.StatusConflict
		}
		controlError(w, code, err)
		return
	}
	writeJSON(w, map[string]string{"status": "ok"})
}

// keypadRequest is the body of POST /sim/keypad.
type keypadRequest struct {
	Amount    int64      `json:"amount"`
	Behaviour *Behaviour `json:"behaviour"`
}

func (t *Terminal) handleKeypad(w http.ResponseWriter, r *http.Request) {
	var req keypadRequest
	if !readControl(w, r, &req) {
		return
	}
	id, err := t.StartOnKeypad(req.Amount, req.Behaviour)
	if err != nil {
		controlError(w, http.StatusConflict, err)
		return
	}
	writeJSON(w, map[string]string{"idempotentUuid": id})
}

// clockRequest is the body of POST /sim/clock: advance by a duration, or set
// to an RFC 3339 time.
type clockRequest struct {
	Advance *duration  `json:"advance"`
	Set     *time.Time `json:"set"`
}

func (t *Terminal) handleClock(w http.ResponseWriter, r *http.Request) {
	var req clockRequest
	if !readControl(w, r, &req) {
		return
	}
	if req.Set != nil {
		t.SetClock(*req.Set)
	}
	if req.Advance != nil {
		t.Advance(time.Duration(*req.Advance))
	}
	writeJSON(w, map[string]time.Time{"now": t.Now()})
}

// settingsRequest is the body of POST /sim/settings; absent fields are left
// as they are.
type settingsRequest struct {
	TipsEnabled *bool `json:"tipsEnabled"`
	Paper       *bool `json:"paper"`
}

func (t *Terminal) handleSettings(w http.ResponseWriter, r *http.Request) {
	var req settingsRequest
	if !readControl(w, r, &req) {
		return
	}
	if req.TipsEnabled != nil {
		t.SetTipsEnabled(*req.TipsEnabled)
	}
	if req.Paper != nil {
		t.SetPaper(*req.Paper)
	}
	writeJSON(w, t.State())
}

// handleHistoryFault is POST /sim/history: a HistoryFault (the zero value
// ends it); the answer is what /transactions has served so far.
func (t *Terminal) handleHistoryFault(w http.ResponseWriter, r *http.Request) {
	var f HistoryFault
	if !readControl(w, r, &f) {
		return
	}
	if err := t.SetHistoryFault(f); err != nil {
		controlError(w, http.StatusBadRequest, err)
		return
	}
	writeJSON(w, t.HistoryServed())
}
