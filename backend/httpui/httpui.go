// Package httpui is browser mode: the kiosk Service over HTTP. The intents
// are POST /api/<Name> with a JSON array of arguments, the staff calls
// POST /api/staff/<Name> (backend/staffapi); the snapshots are
// server-sent events on GET /api/events; everything else is the built
// frontend.
//
// It listens on loopback unless told otherwise (comptoir serve
// --allow-lan). Even there, any web page the kiosk's browser opens could
// send requests to it, so: a request with an Origin header from another
// origin is refused, a POST must be application/json (which a plain HTML
// form cannot send, and a cross-origin fetch cannot send without a
// preflight this server never grants), and the Host must be a loopback
// name or a configured one (a DNS-rebound name is refused). A request from
// another machine is refused unless pairing is on (Options.Pairing), and
// then needs a paired browser's cookie for anything but the pairing page.
package httpui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"path"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/comptoir-pos/comptoir/backend/fault"
	"github.com/comptoir-pos/comptoir/backend/internal/webguard"
	"github.com/comptoir-pos/comptoir/backend/kiosk"
	"github.com/comptoir-pos/comptoir/backend/staffapi"
)

// DefaultHeartbeat is the interval of the SSE comments that keep proxies
// and the browser from closing an idle stream.
const DefaultHeartbeat = 15 * time.Second

// maxBody bounds an intent's arguments.
const maxBody = 64 << 10

// DefaultMaxEventStreams is how many event streams may be open at once. A
// kiosk has one browser, a PC perhaps a second screen and a staff tablet:
// past this, a stream is refused with 503 (the browser retries) rather
// than hold a goroutine and a connection each.
const DefaultMaxEventStreams = 16

// contentSecurityPolicy: the UI loads its scripts, styles, pictures (the
// catalog's, under /media/) and events from this server only, and runs no
// inline script or style (Svelte sets styles through the CSSOM, which a
// policy does not govern); no plugin, no <base>, no framing, and forms
// (the pairing page's) post here only.
const contentSecurityPolicy = "default-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// Options configures the handler.
type Options struct {
	Service *kiosk.Service
	// Staff serves the staff screens' calls; nil: none.
	Staff *staffapi.API
	// Events is the Broadcaster the Service emits to (its Config.Emitter).
	// Nil: the event stream sends the current snapshots, then heartbeats only.
	Events *Broadcaster
	// Assets is the built frontend (index.html at its root, hashed files
	// under assets/). Nil: only the API is served.
	Assets fs.FS
	// AllowedHosts are the Host names accepted besides localhost,
	// 127.0.0.1 and ::1: the name or address browsers on the LAN use.
	AllowedHosts []string
	// Pairing lets browsers on other machines in, once paired. Nil: only
	// this machine's requests are answered.
	Pairing *Pairing
	// Kitchen serves the kitchen screens' and the board's API
	// (/api/kitchen/..., /api/board: backend/kitchen); nil: none. The
	// pages themselves (/kitchen, /board) are the frontend's.
	Kitchen http.Handler
	// MaxEventStreams bounds the event streams open at once; 0:
	// DefaultMaxEventStreams.
	MaxEventStreams int
	Heartbeat       time.Duration // default DefaultHeartbeat
	Logger          *slog.Logger  // nil: discard
}

type server struct {
	opt     Options
	log     *slog.Logger
	streams atomic.Int64 // event streams open
}

// New returns the browser-mode handler.
func New(opt Options) http.Handler {
	if opt.Heartbeat <= 0 {
		opt.Heartbeat = DefaultHeartbeat
	}
	if opt.MaxEventStreams <= 0 {
		opt.MaxEventStreams = DefaultMaxEventStreams
	}
	log := opt.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &server{opt: opt, log: log}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/events", s.events)
	mux.HandleFunc("POST /api/{name}", s.intent)
	mux.HandleFunc("POST /api/staff/{name}", s.staff)
	if opt.Kitchen != nil {
		mux.Handle("/api/kitchen/", opt.Kitchen)
		mux.Handle("GET /api/board", opt.Kitchen)
	}
	mux.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "no such API endpoint: "+r.Method+" "+r.URL.Path)
	})
	if opt.Service != nil {
		mux.Handle("GET "+kiosk.MediaPrefix, opt.Service.Media())
	}
	if opt.Pairing != nil {
		mux.HandleFunc("/pair", s.pair)
	}
	mux.HandleFunc("/", s.assets)
	return s.guard(mux)
}

// guard applies the rules every request must pass.
func (s *server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Content-Security-Policy", contentSecurityPolicy)
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		h.Set("Cross-Origin-Resource-Policy", "same-origin")
		if !s.hostAllowed(r) {
			s.log.Warn("request refused: host not allowed", "host", r.Host, "remote", r.RemoteAddr)
			writeError(w, http.StatusForbidden, "host not allowed: browser mode answers to localhost, 127.0.0.1, [::1] and the names given to comptoir serve (--addr, --host)")
			return
		}
		if o := r.Header.Get("Origin"); o != "" && !webguard.SameOrigin(o, r) {
			s.log.Warn("cross-origin request refused", "origin", o, "path", r.URL.Path)
			writeError(w, http.StatusForbidden, "cross-origin requests are not allowed")
			return
		}
		if r.Header.Get("Sec-Fetch-Site") == "cross-site" {
			writeError(w, http.StatusForbidden, "cross-site requests are not allowed")
			return
		}
		if !webguard.FromLoopback(r) && !s.lanAllowed(w, r) {
			return
		}
		next.ServeHTTP(w, r)
	})
}

// lanAllowed decides a request from another machine: refused without
// pairing; with it, the pairing page is open, everything else needs a
// paired browser (the API answers 403, a page sends to /pair). It writes
// the answer itself when it returns false.
func (s *server) lanAllowed(w http.ResponseWriter, r *http.Request) bool {
	p := s.opt.Pairing
	if p == nil {
		s.log.Warn("request from another machine refused", "remote", r.RemoteAddr, "path", r.URL.Path)
		writeError(w, http.StatusForbidden, "browser mode answers this PC only (comptoir serve --allow-lan opens it to paired browsers)")
		return false
	}
	if r.URL.Path == "/pair" {
		return true
	}
	ok, renew := p.paired(r)
	switch {
	case ok:
		if renew {
			http.SetCookie(w, p.cookie())
		}
		return true
	case strings.HasPrefix(r.URL.Path, "/api/"):
		s.log.Warn("request from an unpaired browser refused", "remote", r.RemoteAddr, "path", r.URL.Path)
		writeError(w, http.StatusForbidden, "this browser is not paired with the kiosk: open /pair and enter the code shown on the PC")
	default:
		http.Redirect(w, r, "/pair", http.StatusSeeOther)
	}
	return false
}

// readArgs reads a call's body: a JSON array of the arguments. It writes the
// error response itself and returns false when the body does not fit.
func readArgs(w http.ResponseWriter, r *http.Request) ([]json.RawMessage, bool) {
	if !webguard.IsJSON(r) {
		writeError(w, http.StatusUnsupportedMediaType, "the body must be application/json")
		return nil, false
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		writeError(w, http.StatusBadRequest, "the body could not be read: "+err.Error())
		return nil, false
	}
	args := []json.RawMessage{}
	if len(strings.TrimSpace(string(body))) > 0 {
		if err := json.Unmarshal(body, &args); err != nil {
			writeError(w, http.StatusBadRequest, "the body must be a JSON array of the arguments")
			return nil, false
		}
	}
	return args, true
}

// intent calls the intent named in the path with the body's arguments.
func (s *server) intent(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	if !kiosk.IsIntent(name) {
		writeError(w, http.StatusNotFound, fmt.Sprintf("unknown intent %q", name))
		return
	}
	args, ok := readArgs(w, r)
	if !ok {
		return
	}
	if s.opt.Service == nil {
		writeError(w, http.StatusServiceUnavailable, "the kiosk service is not running")
		return
	}
	result, err := s.opt.Service.Call(name, args)
	if err != nil {
		var ae *fault.ArgError
		if !errors.As(err, &ae) {
			s.log.Error("intent failed", "intent", name, "err", err)
		}
		writeError(w, statusOf(err), err.Error())
		return
	}
	writeJSON(w, http.StatusOK, result)
}

// staff calls a staff call (backend/staffapi). Its answer is always the
// envelope, HTTP 200; a call that does not exist or whose arguments do not
// fit is a 404 or a 400.
func (s *server) staff(w http.ResponseWriter, r *http.Request) {
	args, ok := readArgs(w, r)
	if !ok {
		return
	}
	if s.opt.Staff == nil {
		writeError(w, http.StatusServiceUnavailable, "staff mode is not running")
		return
	}
	name := r.PathValue("name")
	// A staff action (a refund on the terminal) may take as long as the
	// payment core allows it: its answer is not cut by the server's write
	// timeout, which is for clients that do not read.
	_ = http.NewResponseController(w).SetWriteDeadline(time.Time{})
	// A staff action (a refund) must not be cancelled by a reload or a
	// dropped connection: the desktop runs them on the app's context too.
	result, err := s.opt.Staff.Call(context.WithoutCancel(r.Context()), name, args)
	if err != nil {
		status := statusOf(err)
		if !slices.Contains(staffapi.Names(), name) {
			status = http.StatusNotFound
		}
		writeError(w, status, err.Error())
		return
	}
	if result.Error != nil && result.Error.Code == fault.EINTERNAL {
		s.log.Error("staff call failed", "call", name, "err", result.Error.Message)
	}
	writeJSON(w, http.StatusOK, result)
}

// statusOf is the one mapping of a call's failure to an HTTP status, for
// the kiosk's intents and the staff calls alike (a staff call answers
// staff in its envelope, HTTP 200: only a call that does not fit comes
// here). The domain's codes say whose the failure is: the request's (4xx),
// or the machine's (503: a full or read-only disk, a data directory
// another process holds; 500: anything else).
func statusOf(err error) int {
	var ae *fault.ArgError
	if errors.As(err, &ae) {
		return http.StatusBadRequest
	}
	switch fault.CodeOf(err) {
	case fault.EINVALID:
		return http.StatusBadRequest
	case fault.ENOTFOUND:
		return http.StatusNotFound
	case fault.ECONFLICT:
		return http.StatusConflict
	case fault.ELOCKED, fault.EFULL, fault.EREADONLY:
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

// events streams the snapshots: the current ones first, then every event,
// with heartbeats, until the client leaves or falls behind.
func (s *server) events(w http.ResponseWriter, r *http.Request) {
	if n := s.streams.Add(1); n > int64(s.opt.MaxEventStreams) {
		s.streams.Add(-1)
		s.log.Warn("event stream refused: too many open", "max", s.opt.MaxEventStreams, "remote", r.RemoteAddr)
		w.Header().Set("Retry-After", "5")
		writeError(w, http.StatusServiceUnavailable, fmt.Sprintf("too many event streams open (at most %d)", s.opt.MaxEventStreams))
		return
	}
	defer s.streams.Add(-1)
	// The stream outlives the server's write timeout: each write has a
	// deadline of its own. (Its read timeout does not apply: net/http lifts
	// it once the request is read.)
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")

	var (
		latest []Event
		ch     <-chan Event
		cancel = func() {}
	)
	if s.opt.Events != nil {
		latest, ch, cancel = s.opt.Events.Subscribe()
	}
	defer cancel()
	// The latest events are the current state; a name not emitted yet is
	// read from the Service.
	have := map[string]bool{}
	for _, e := range latest {
		have[e.Name] = true
	}
	if s.opt.Service != nil {
		if !have[kiosk.EventCheckout] {
			latest = append([]Event{mustEvent(kiosk.EventCheckout, s.opt.Service.Checkout())}, latest...)
		}
		if !have[kiosk.EventTerminal] {
			latest = append([]Event{mustEvent(kiosk.EventTerminal, s.opt.Service.Terminal())}, latest...)
		}
	}
	w.WriteHeader(http.StatusOK)
	write := func(f func() error) bool {
		_ = rc.SetWriteDeadline(time.Now().Add(eventWriteTimeout))
		if err := f(); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	if !write(func() error { _, err := io.WriteString(w, "retry: 1000\n\n"); return err }) {
		return
	}
	for _, e := range latest {
		if !write(func() error { return writeEvent(w, e) }) {
			return
		}
	}
	beat := time.NewTicker(s.opt.Heartbeat)
	defer beat.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case e, ok := <-ch:
			if !ok {
				return // dropped for lagging: the browser reconnects
			}
			if !write(func() error { return writeEvent(w, e) }) {
				return
			}
		case <-beat.C:
			if !write(func() error { _, err := io.WriteString(w, ": heartbeat\n\n"); return err }) {
				return
			}
		}
	}
}

func mustEvent(name string, v any) Event {
	raw, _ := json.Marshal(v)
	return Event{Name: name, Data: raw}
}

func writeEvent(w io.Writer, e Event) error {
	// json.Marshal never writes a newline: the data is one line.
	_, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", e.Name, e.Data)
	return err
}

// assets serves the frontend; a path that is no file is the app's own
// route: index.html.
func (s *server) assets(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		writeError(w, http.StatusMethodNotAllowed, "method not allowed")
		return
	}
	if s.opt.Assets == nil {
		http.Error(w, "the frontend is not built", http.StatusNotFound)
		return
	}
	name := strings.TrimPrefix(path.Clean("/"+r.URL.Path), "/")
	if name == "" {
		name = "index.html"
	}
	if st, err := fs.Stat(s.opt.Assets, name); err != nil || st.IsDir() {
		if strings.HasPrefix(name, "assets/") {
			// A hashed file that does not exist: not a route.
			http.NotFound(w, r)
			return
		}
		name = "index.html"
	}
	if strings.HasPrefix(name, "assets/") {
		w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		w.Header().Set("Cache-Control", "no-cache")
	}
	http.ServeFileFS(w, r, s.opt.Assets, name)
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, map[string]string{"error": msg})
}
