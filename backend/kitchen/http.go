package kitchen

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/comptoir-pos/comptoir/backend/internal/webguard"
)

// longPoll bounds how long a GET with ?since= waits for a change: under
// browser mode's write timeout, and short enough for a proxy.
const longPoll = 20 * time.Second

// Handler serves the kitchen's API: GET /api/kitchen/orders, POST
// /api/kitchen/bump, GET /api/board. A GET with ?since=VERSION waits
// until the view changes (or 20 s), so a screen shows a paid order as
// soon as the stream brings it without polling.
func Handler(k *Kitchen) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/kitchen/orders", func(w http.ResponseWriter, r *http.Request) {
		station := r.URL.Query().Get("station")
		if !k.Station(station) {
			writeJSON(w, http.StatusNotFound, map[string]string{"error": "no such station: " + station})
			return
		}
		waitChange(r, k)
		writeJSON(w, http.StatusOK, k.Orders(station))
	})
	mux.HandleFunc("GET /api/board", func(w http.ResponseWriter, r *http.Request) {
		waitChange(r, k)
		writeJSON(w, http.StatusOK, k.Board())
	})
	mux.HandleFunc("POST /api/kitchen/bump", func(w http.ResponseWriter, r *http.Request) {
		// As browser mode's other POSTs: a form cannot send JSON, nor a
		// script of another origin without a preflight never granted.
		if !webguard.IsJSON(r) {
			writeJSON(w, http.StatusUnsupportedMediaType, map[string]string{"error": "a bump is sent as application/json"})
			return
		}
		var b Bump
		dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 4<<10))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&b); err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "a bump is {key, line, action, station}: " + err.Error()})
			return
		}
		switch err := k.Bump(r.Context(), b); {
		case errors.Is(err, ErrUnknownTicket):
			writeJSON(w, http.StatusNotFound, map[string]string{"error": err.Error()})
		case errors.Is(err, ErrBadBump):
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
		case err != nil:
			writeJSON(w, http.StatusServiceUnavailable, map[string]string{"error": err.Error()})
		default:
			writeJSON(w, http.StatusOK, k.Orders(b.Station))
		}
	})
	mux.HandleFunc("/api/kitchen/", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "no such kitchen endpoint: " + r.Method + " " + r.URL.Path})
	})
	return mux
}

func waitChange(r *http.Request, k *Kitchen) {
	raw := r.URL.Query().Get("since")
	if raw == "" {
		return
	}
	since, err := strconv.ParseUint(raw, 10, 64)
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), longPoll)
	defer cancel()
	k.Wait(ctx, since)
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}
