package cloudsim

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"

	"github.com/comptoir-pos/comptoir/backend/terminalsim"
)

// TerminalState is a virtual terminal as the control API shows it.
type TerminalState struct {
	Serial string `json:"serial"`
	Online bool   `json:"online"`
	// LAN is its own Local API's base URL, when it serves one.
	LAN      string            `json:"lan,omitempty"`
	Terminal terminalsim.State `json:"terminal"`
}

// State is a snapshot of the cloud.
type State struct {
	URL          string          `json:"url,omitempty"`
	Terminals    []TerminalState `json:"terminals"`
	Transactions int             `json:"transactions"`
	Webhook      struct {
		URL         string `json:"url,omitempty"`
		Deactivated bool   `json:"deactivated"`
		Deliveries  int    `json:"deliveries"`
	} `json:"webhook"`
	Faults struct {
		Next        []Fault `json:"next"`
		Poll        string  `json:"poll"`
		ExpiredPoll string  `json:"expiredPoll"`
		HistoryIDs  bool    `json:"historyIds"`
		LANIDs      string  `json:"lanIds"`
		RecordLag   int     `json:"recordLag"`
	} `json:"faults"`
}

// State returns a snapshot of the cloud.
func (c *Cloud) State() State {
	var s State
	s.URL = c.URL()
	c.mu.Lock()
	terms := make([]*vterm, 0, len(c.terminals))
	for _, vt := range c.terminals {
		terms = append(terms, vt)
	}
	online, lan := map[string]bool{}, map[string]string{}
	for _, vt := range terms {
		online[vt.serial] = vt.online
		if l := c.lans[vt.serial]; l != nil {
			lan[vt.serial] = l.url()
		}
	}
	s.Transactions = len(c.order)
	s.Webhook.URL, s.Webhook.Deactivated, s.Webhook.Deliveries = c.webhook.url, c.webhook.deactivated, len(c.webhook.deliveries)
	s.Faults.Next = append([]Fault{}, c.faults.next...)
	s.Faults.Poll, s.Faults.ExpiredPoll, s.Faults.HistoryIDs = c.faults.poll, c.faults.expiredPoll, !c.faults.historyWithoutIDs
	s.Faults.LANIDs, s.Faults.RecordLag = c.faults.lanIDs, c.faults.recordLag
	if s.Faults.LANIDs == "" {
		s.Faults.LANIDs = LANIDsCloud
	}
	c.mu.Unlock()
	s.Terminals = []TerminalState{}
	for _, serial := range c.Serials() {
		for _, vt := range terms {
			if vt.serial == serial {
				s.Terminals = append(s.Terminals, TerminalState{Serial: serial, Online: online[serial], LAN: lan[serial], Terminal: vt.sim.State()})
			}
		}
	}
	return s
}

// controlRoutes serves the control API under /sim/: JSON, errors as
// {"error": "..."} with HTTP 400 or 404.
func (c *Cloud) controlRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /sim/{$}", c.handleHelp)
	mux.HandleFunc("GET /sim/state", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, c.State()) })
	mux.HandleFunc("GET /sim/transactions", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, c.Transactions()) })
	mux.HandleFunc("GET /sim/webhook", func(w http.ResponseWriter, r *http.Request) {
		url, off, ds := c.Webhook()
		if ds == nil {
			ds = []Delivery{}
		}
		writeJSON(w, map[string]any{"url": url, "deactivated": off, "deliveries": ds})
	})
	mux.HandleFunc("POST /sim/webhook", func(w http.ResponseWriter, r *http.Request) {
		var b struct {
			URL string `json:"url"`
		}
		if readControl(w, r, &b) {
			c.SetWebhook(b.URL)
			writeJSON(w, c.State())
		}
	})
	mux.HandleFunc("POST /sim/terminals", c.handleTerminal)
	mux.HandleFunc("POST /sim/faults", c.handleFaults)
	mux.HandleFunc("/sim/terminals/{serial}/sim/", c.handleTerminalControl)
	c.cartRoutes(mux)
	c.refundRoutes(mux)
}

// cartRoutes are the control API of the carts paid by link.
func (c *Cloud) cartRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /sim/carts", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, c.Carts()) })
	mux.HandleFunc("POST /sim/carts/{cart}/pay", func(w http.ResponseWriter, r *http.Request) {
		var b struct {
			Amount int64  `json:"amount"`
			Gift   int64  `json:"gift"`
			Kind   string `json:"kind"`
			Fail   bool   `json:"fail"`
		}
		if !readControl(w, r, &b) {
			return
		}
		v, err := c.PayCart(r.PathValue("cart"), b.Amount, b.Gift, b.Kind, b.Fail)
		if err != nil {
			controlError(w, http.StatusBadRequest, err.Error())
			return
		}
		writeJSON(w, v)
	})
	mux.HandleFunc("POST /sim/carts/{cart}/expire", func(w http.ResponseWriter, r *http.Request) {
		if err := c.ExpireCart(r.PathValue("cart")); err != nil {
			controlError(w, http.StatusNotFound, err.Error())
			return
		}
		writeJSON(w, map[string]string{"status": CartKO})
	})
	mux.HandleFunc("POST /sim/carts/refuse-next-capture", func(w http.ResponseWriter, r *http.Request) {
		c.mu.Lock()
		c.refuseCapture = true
		c.mu.Unlock()
		writeJSON(w, map[string]bool{"refuseNextCapture": true})
	})
}

// refundRoutes are the control API of the refunds by API: their list, the
// outcomes scripted for the next ones, a manager's decision.
func (c *Cloud) refundRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /sim/refunds", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, c.Refunds()) })
	mux.HandleFunc("POST /sim/refunds/script", func(w http.ResponseWriter, r *http.Request) {
		var b struct {
			Outcomes []string `json:"outcomes"`
		}
		if !readControl(w, r, &b) {
			return
		}
		for _, o := range b.Outcomes {
			if !slices.Contains([]string{ScriptRefunded, ScriptPending, ScriptWaiting, ScriptNotPossible, ScriptImpossible, ScriptLost}, o) {
				controlError(w, http.StatusBadRequest, "outcome "+o+": refunded, pending, waiting, not_possible, error or lost")
				return
			}
		}
		c.ScriptRefunds(b.Outcomes...)
		writeJSON(w, b)
	})
	mux.HandleFunc("POST /sim/refunds/{id}/{decision}", func(w http.ResponseWriter, r *http.Request) {
		d := r.PathValue("decision")
		if d != "approve" && d != "reject" {
			controlError(w, http.StatusNotFound, "approve or reject")
			return
		}
		v, err := c.DecideRefund(r.PathValue("id"), d == "approve")
		if err != nil {
			controlError(w, http.StatusBadRequest, err.Error())
			return
		}
		writeJSON(w, v)
	})
}

func controlError(w http.ResponseWriter, code int, msg string) {
	writeJSONCode(w, code, map[string]string{"error": msg})
}

// readControl decodes a control request strictly: a typo in a field name
// is an error here, unlike in the Cloud API.
func readControl(w http.ResponseWriter, r *http.Request, v any) bool {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		controlError(w, http.StatusBadRequest, err.Error())
		return false
	}
	return true
}

func (c *Cloud) handleHelp(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, map[string]any{
		"cloudApi": c.URL(),
		"key":      "Authorization: Bearer <key> on /v5, Service-Secret: <key> on /v4; the key is the simulator's --key",
		"routes": []string{
			"GET /sim/state", "GET /sim/transactions", "GET /sim/webhook",
			`POST /sim/webhook {"url": "http://127.0.0.1:9999/hook"}`,
			`POST /sim/terminals {"serial": "SN1", "online": false, "lan": false}: add a terminal, take it offline (actions expire after 5 s), or cut its LAN (its own Local API, when the cloud serves it: cloudsim --lan)`,
			`POST /sim/faults {"next": [{"path": "/v5/pos/payment", "status": 0, "after": true}], "poll": "pending|404|500|", "expiredPoll": "expired|pending|404", "historyIds": false, "list": {"extra": 0, "endless": false, "pad": 0}, "lanIds": "cloud|either|terminal", "recordLag": 2}`,
			"GET|POST /sim/terminals/{serial}/sim/...: that terminal's own control API (customer, script, clock, ledger)",
			"GET /sim/carts: the payment links and their payments",
			`POST /sim/carts/{cart_id}/pay {"amount": 500, "gift": 0, "kind": "card|meal_voucher", "fail": false}: the customer pays on their phone (amount 0: what is left)`,
			"POST /sim/carts/{cart_id}/expire: the link is 72 hours old",
			"POST /sim/carts/refuse-next-capture: the issuer refuses the next capture",
			"GET /pay/{token}: the page a link (or its QR code) opens; its button pays what is left by card",
			"GET /pay/done?cartId=...&status=...: a merchant's page a phone may return to after a link",
			"GET /sim/requests[?path=/v4/pos/transactions/]: the request log (method, path, status, time), oldest first; DELETE empties it",
			"GET /sim/refunds: the refunds asked through the Webservices (/v5/transaction/{id}/refund/)",
			`POST /sim/refunds/script {"outcomes": ["pending", "waiting", "not_possible", "error", "lost", "refunded"]}: the next refunds' answers, in order`,
			"POST /sim/refunds/{id}/approve|reject: end a pending or waiting refund",
		},
		"faults": map[string]string{
			"status 0":    "the connection is dropped without an answer; 502, 503 or 504: a transient gateway error (queue several for several requests)",
			"after true":  "the request is processed, then its answer replaced: a lost acknowledgement",
			"poll":        "how every poll answers; empty tells the truth",
			"expiredPoll": "how the poll of an action that expired (terminal offline beyond 5 s) answers: not shown in the specification",
			"historyIds":  "whether the history lists checkoutExternalId and idempotentUuid (not in the specification's list)",
			"list":        "how the history and the Webservices batch misbehave: extra made-up entries beyond the limit, endless pages, issuers padded by pad bytes",
			"lanIds":      "the ids of transactions a terminal made without the cloud (its Local API, its keypad): cloud (the cloud's own, the terminal's as localId; the fetch knows only the cloud's), either (the fetch answers both), terminal (the terminal's): not shown in the specification",
			"recordLag":   "how many reads of the Webservices a terminal's own transaction stays hidden from (the provider's record lagging)",
		},
	})
}

func (c *Cloud) handleTerminal(w http.ResponseWriter, r *http.Request) {
	var b struct {
		Serial string `json:"serial"`
		Online *bool  `json:"online"`
		LAN    *bool  `json:"lan"`
	}
	if !readControl(w, r, &b) {
		return
	}
	if _, err := c.AddTerminal(b.Serial); err != nil {
		controlError(w, http.StatusBadRequest, err.Error())
		return
	}
	if b.Online != nil {
		_ = c.SetOnline(strings.TrimSpace(b.Serial), *b.Online)
	}
	if b.LAN != nil {
		if err := c.SetLAN(strings.TrimSpace(b.Serial), *b.LAN); err != nil {
			controlError(w, http.StatusBadRequest, err.Error())
			return
		}
	}
	writeJSON(w, c.State())
}

func (c *Cloud) handleFaults(w http.ResponseWriter, r *http.Request) {
	var b struct {
		Next        []Fault    `json:"next"`
		Poll        *string    `json:"poll"`
		ExpiredPoll *string    `json:"expiredPoll"`
		HistoryIDs  *bool      `json:"historyIds"`
		List        *ListFault `json:"list"`
		LANIDs      *string    `json:"lanIds"`
		RecordLag   *int       `json:"recordLag"`
	}
	if !readControl(w, r, &b) {
		return
	}
	if b.List != nil {
		if err := c.SetListFault(*b.List); err != nil {
			controlError(w, http.StatusBadRequest, err.Error())
			return
		}
	}
	if err := c.Inject(b.Next...); err != nil {
		controlError(w, http.StatusBadRequest, err.Error())
		return
	}
	if b.Poll != nil {
		if err := c.SetPoll(*b.Poll); err != nil {
			controlError(w, http.StatusBadRequest, err.Error())
			return
		}
	}
	if b.ExpiredPoll != nil {
		if err := c.SetExpiredPoll(*b.ExpiredPoll); err != nil {
			controlError(w, http.StatusBadRequest, err.Error())
			return
		}
	}
	if b.HistoryIDs != nil {
		c.SetHistoryIDs(*b.HistoryIDs)
	}
	if b.LANIDs != nil {
		if err := c.SetLANIDs(*b.LANIDs); err != nil {
			controlError(w, http.StatusBadRequest, err.Error())
			return
		}
	}
	if b.RecordLag != nil {
		if err := c.SetRecordLag(*b.RecordLag); err != nil {
			controlError(w, http.StatusBadRequest, err.Error())
			return
		}
	}
	writeJSON(w, c.State())
}

// handleTerminalControl hands /sim/terminals/{serial}/sim/... to that
// terminal's own control API.
func (c *Cloud) handleTerminalControl(w http.ResponseWriter, r *http.Request) {
	sim, ok := c.Terminal(r.PathValue("serial"))
	if !ok {
		controlError(w, http.StatusNotFound, "no terminal "+r.PathValue("serial"))
		return
	}
	http.StripPrefix("/sim/terminals/"+r.PathValue("serial"), sim.Handler()).ServeHTTP(w, r)
}
