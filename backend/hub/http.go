package hub

import (
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"net/http"
	"sort"

	"github.com/comptoir-pos/comptoir/backend/internal/webguard"
)

// Handler is head office's page and API, for head office's own PC (the
// command serves it on loopback). It answers to the loopback names and to
// names (the listen address's host), nothing else:
//
//	GET  /                      the page: kiosks, the day's sales, totals
//	GET  /api/hub               the same, JSON (Dashboard)
//	GET  /api/menu?restaurant=R the menu R gets now
//	POST /api/menu?restaurant=R publish a menu (body: {"catalog":...,"settings":...}); R may be "all"
//	POST /api/menu/rollback?restaurant=R  publish the previous menu again
//	GET  /api/fiscal?restaurant=R         the monthly archives kept, every version (R "": all)
//	GET  /api/fiscal/archive?restaurant=R&kiosk=K&period=yyyy-MM&sha256=S  one, as the kiosk wrote it
func Handler(h *Hub, names ...string) http.Handler {
	mux := http.NewServeMux()
	fiscalRoutes(mux, h)
	mux.HandleFunc("GET /api/hub", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, h.Ledger.Dashboard())
	})
	mux.HandleFunc("GET /api/menu", func(w http.ResponseWriter, r *http.Request) {
		m, err := h.Menus.Current(r.Context(), r.URL.Query().Get("restaurant"))
		if err != nil {
			writeJSON(w, http.StatusInternalServerError, map[string]string{"error": err.Error()})
			return
		}
		writeJSON(w, http.StatusOK, m)
	})
	mux.HandleFunc("POST /api/menu", func(w http.ResponseWriter, r *http.Request) {
		if !webguard.IsJSON(r) {
			writeJSON(w, http.StatusUnsupportedMediaType, map[string]string{"error": "a menu is sent as application/json"})
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxMenu+1))
		if err != nil {
			writeJSON(w, http.StatusRequestEntityTooLarge, map[string]string{"error": "a menu is at most 1 MiB"})
			return
		}
		v, err := h.Menus.Publish(r.Context(), r.URL.Query().Get("restaurant"), body)
		answerVersion(w, v, err)
	})
	mux.HandleFunc("POST /api/menu/rollback", func(w http.ResponseWriter, r *http.Request) {
		v, err := h.Menus.Rollback(r.Context(), r.URL.Query().Get("restaurant"))
		answerVersion(w, v, err)
	})
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
		v := pageData(h.Ledger.Dashboard())
		v.Archives, _ = h.Ledger.Archives(r.Context(), "")
		_ = page.Execute(w, v)
	})
	return guard(mux, webguard.Hosts{Names: names})
}

// guard refuses what head office's own page does not send: a Host that is
// not one of its names (a page whose name was rebound to this PC has its
// own origin, so only the Host tells it apart), or a request from another
// site's page. A page elsewhere in head office's browser must not publish
// a menu nor read the figures.
func guard(next http.Handler, hosts webguard.Hosts) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !hosts.Allowed(r) {
			writeJSON(w, http.StatusForbidden, map[string]string{"error": "host not allowed: head office answers to localhost, 127.0.0.1, [::1] and its --addr"})
			return
		}
		if webguard.CrossSite(r) {
			writeJSON(w, http.StatusForbidden, map[string]string{"error": "cross-origin requests are not allowed"})
			return
		}
		w.Header().Set("X-Frame-Options", "DENY")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		next.ServeHTTP(w, r)
	})
}

func fiscalRoutes(mux *http.ServeMux, h *Hub) {
	mux.HandleFunc("GET /api/fiscal", func(w http.ResponseWriter, r *http.Request) {
		list, err := h.Ledger.Archives(r.Context(), r.URL.Query().Get("restaurant"))
		if err != nil {
			writeJSON(w, http.StatusInternalServerError, map[string]string{"error": err.Error()})
			return
		}
		writeJSON(w, http.StatusOK, list)
	})
	mux.HandleFunc("GET /api/fiscal/archive", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		data, err := h.Ledger.Archive(r.Context(), q.Get("restaurant"), q.Get("kiosk"), q.Get("period"), q.Get("sha256"))
		switch {
		case errors.Is(err, ErrNoArchive):
			writeJSON(w, http.StatusNotFound, map[string]string{"error": err.Error()})
		case err != nil:
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
		default:
			w.Header().Set("Content-Type", "application/x-ndjson")
			w.Header().Set("Cache-Control", "no-store")
			_, _ = w.Write(data)
		}
	})
}

func answerVersion(w http.ResponseWriter, v uint64, err error) {
	if err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, map[string]uint64{"version": v})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

type restaurantTotals struct {
	ID string
	*Totals
}

type pageView struct {
	Dashboard
	Restaurants []restaurantTotals
	Archives    []ArchiveInfo
}

func pageData(d Dashboard) pageView {
	v := pageView{Dashboard: d}
	for id, t := range d.Totals {
		v.Restaurants = append(v.Restaurants, restaurantTotals{ID: id, Totals: t})
	}
	sort.Slice(v.Restaurants, func(i, j int) bool { return v.Restaurants[i].ID < v.Restaurants[j].ID })
	return v
}

func euros(cents int64) string { return fmt.Sprintf("%d.%02d", cents/100, abs(cents%100)) }

func abs(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

var page = template.Must(template.New("hub").Funcs(template.FuncMap{
	"euros": euros,
	"rate":  func(bp int) string { return fmt.Sprintf("%d.%02d %%", bp/100, bp%100) },
}).Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta http-equiv="refresh" content="10">
<title>Comptoir · head office</title>
<style>body{font-family:system-ui,sans-serif;margin:1.5rem}table{border-collapse:collapse;margin-bottom:1.5rem}
td,th{border:1px solid #ccc;padding:.3rem .6rem;text-align:left}.off{color:#b00}.on{color:#070}.warn{color:#b60}</style></head>
<body><h1>Head office</h1>
<h2>Kiosks</h2>
<table><tr><th>Restaurant</th><th>Kiosk</th><th>Online</th><th>Terminal</th><th>Last payment</th><th>Attempts needing staff</th><th>Menu</th></tr>
{{range .Kiosks}}<tr><td>{{.Restaurant}}</td><td>{{.Kiosk}}</td>
<td class="{{if .Online}}on{{else}}off{{end}}">{{if .Online}}online{{else}}offline{{end}}</td>
<td>{{.Terminal}}</td><td>{{if not .LastPayment.IsZero}}{{.LastPayment.Format "2006-01-02 15:04:05"}}{{end}}</td>
<td{{if .NeedStaff}} class="warn"{{end}}>{{.NeedStaff}}</td><td>{{.Menu}}{{if .MenuError}} <span class="warn">{{.MenuError}}</span>{{end}}</td></tr>
{{end}}</table>
<h2>Totals</h2>
<table><tr><th>Restaurant</th><th>Orders</th><th>Paid</th><th>Given back</th><th>Set aside for staff</th><th>Messages ignored</th></tr>
{{range .Restaurants}}<tr><td>{{.ID}}</td><td>{{.Orders}}</td><td>{{euros .Paid}}</td><td>{{euros .GivenBack}}</td><td>{{.Attention}}</td><td{{if .Ignored}} class="warn" title="on the restaurant's subjects, not facts as a kiosk sends them: see head office's log"{{end}}>{{.Ignored}}</td></tr>{{end}}
</table>
<h2>Sales by day, dining mode and VAT rate</h2>
<table><tr><th>Day</th><th>Restaurant</th><th>Dining</th><th>VAT</th><th>Amount (VAT incl.)</th></tr>
{{range .Sales}}<tr><td>{{.Day}}</td><td>{{.Restaurant}}</td><td>{{.Dining}}</td><td>{{rate .VATRate}}</td><td>{{euros .Amount}}</td></tr>{{end}}
</table>
<h2>Fiscal archives kept</h2>
<p>Check one with <code>comptoir verify --hub URL --restaurant R --kiosk K --period YYYY-MM --key PUB</code> (URL: this page's address; PUB: the key the restaurant exported at installation).</p>
<table><tr><th>Restaurant</th><th>Kiosk</th><th>Month</th><th>SHA-256</th><th>Bytes</th><th>Kept</th></tr>
{{range .Archives}}<tr><td>{{.Restaurant}}</td><td>{{.Kiosk}}</td><td>{{.Period}}</td><td><code>{{.SHA256}}</code></td><td>{{.Size}}</td><td>{{.Kept.Format "2006-01-02 15:04"}}</td></tr>{{end}}
</table></body></html>`))
