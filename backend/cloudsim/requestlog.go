package cloudsim

import (
	"bufio"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// The request log keeps every request the cloud received (the control API
// under /sim/ aside), in order: what a client asked, when, and what it was
// answered. Tests count a client's polls and retries in it; `GET
// /sim/requests` serves it. It holds no header, body or key.

// RequestRecord is one request of the log.
type RequestRecord struct {
	At     time.Time `json:"at"` // when it arrived, by the cloud's clock
	Method string    `json:"method"`
	Path   string    `json:"path"`
	// Status is the HTTP status answered; 0 when the connection was
	// dropped without an answer.
	Status int `json:"status"`
	// Auth is the credential's kind: "bearer", "service-secret", "both"
	// (the key in both headers) or "".
	Auth string `json:"auth,omitempty"`
}

// maxRequestLog bounds the log: the oldest records go first.
const maxRequestLog = 50_000

type requestLog struct {
	mu      sync.Mutex
	records []RequestRecord
}

func (l *requestLog) add(r RequestRecord) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.records) >= maxRequestLog {
		l.records = append(l.records[:0], l.records[len(l.records)-maxRequestLog/2:]...)
	}
	l.records = append(l.records, r)
}

// Requests is the request log, oldest first: every request whose method
// and path match filter ("METHOD /path", "/path" for any method; "" for
// all).
func (c *Cloud) Requests(filter string) []RequestRecord {
	method, path, ok := strings.Cut(filter, " ")
	if !ok {
		method, path = "", filter
	}
	c.requests.mu.Lock()
	defer c.requests.mu.Unlock()
	out := []RequestRecord{}
	for _, r := range c.requests.records {
		if (method == "" || r.Method == method) && (path == "" || r.Path == path) {
			out = append(out, r)
		}
	}
	return out
}

// ResetRequests empties the request log.
func (c *Cloud) ResetRequests() {
	c.requests.mu.Lock()
	c.requests.records = nil
	c.requests.mu.Unlock()
}

// requestLogRoutes serve the request log: GET /sim/requests[?path=],
// DELETE /sim/requests empties it.
func (c *Cloud) requestLogRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /sim/requests", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, c.Requests(r.URL.Query().Get("path"))) })
	mux.HandleFunc("DELETE /sim/requests", func(w http.ResponseWriter, r *http.Request) { c.ResetRequests(); writeJSON(w, []RequestRecord{}) })
}

// logged records each request h serves in the request log.
func (c *Cloud) logged(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := RequestRecord{At: c.cfg.Now(), Method: r.Method, Path: r.URL.Path}
		switch {
		case r.Header.Get("Authorization") != "" && r.Header.Get("Service-Secret") != "":
			rec.Auth = "both"
		case r.Header.Get("Authorization") != "":
			rec.Auth = "bearer"
		case r.Header.Get("Service-Secret") != "":
			rec.Auth = "service-secret"
		}
		// The record goes into the log as soon as the answer is known, before
		// it reaches the client: a client that saw an answer (or a dropped
		// connection) finds its request in the log.
		sw := &statusWriter{ResponseWriter: w, logged: func(status int) {
			rec.Status = status
			c.requests.add(rec)
		}}
		defer func() {
			p := recover()
			if p != nil {
				sw.settle(0) // aborted before an answer
				panic(p)
			}
			sw.settle(http.StatusOK) // a handler that wrote nothing
		}()
		h.ServeHTTP(sw, r)
	})
}

// statusWriter logs the answer once it is known (its status, 0 for a
// dropped connection), and lets a fault drop the connection (Hijack).
type statusWriter struct {
	http.ResponseWriter
	logged func(status int)
}

// settle logs the request with status, the first time only.
func (w *statusWriter) settle(status int) {
	if w.logged == nil {
		return
	}
	w.logged(status)
	w.logged = nil
}

func (w *statusWriter) WriteHeader(code int) {
	w.settle(code)
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	w.settle(http.StatusOK)
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *statusWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	hj, ok := w.ResponseWriter.(http.Hijacker)
	if !ok {
		return nil, nil, http.ErrNotSupported
	}
	w.settle(0) // dropped without an answer
	return hj.Hijack()
}
