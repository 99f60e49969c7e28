package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"time"

	"github.com/comptoir-pos/comptoir/backend/hub"
	"github.com/comptoir-pos/comptoir/backend/internal/webguard"
	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/site"
)

// cmdHub is head office: the server restaurants join as leaf nodes (over
// TLS, each with its credentials from hub-restaurants.json in the data
// folder), and its page and API on this PC.
func cmdHub(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var common commonFlags
	fs := newFlagSet("hub", stderr, &common)
	leaf := fs.String("leaf-addr", "0.0.0.0:7422", "where restaurants join (TLS)")
	addr := fs.String("addr", "127.0.0.1:8090", "head office's page and API: a loopback address")
	cert := fs.String("tls-cert", "", "head office's certificate (PEM file)")
	key := fs.String("tls-key", "", "its key (PEM file)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	fail := func(err error) int { fmt.Fprintln(stderr, "comptoir hub:", err); return 1 }
	if !webguard.IsLoopback(*addr) {
		return fail(fmt.Errorf("--addr %s: head office's page publishes menus, so it answers this PC only", *addr))
	}
	dir, err := common.resolveDataDir()
	if err != nil {
		return fail(err)
	}
	if err := journal.PrivateDir(dir); err != nil {
		return fail(err)
	}
	tlsc, err := site.ServerTLS(*cert, *key)
	if err != nil || tlsc == nil {
		return fail(errors.Join(errors.New("restaurants join over TLS: --tls-cert and --tls-key"), err))
	}
	rs, err := hub.ReadRestaurants(filepath.Join(dir, hub.RestaurantsFile))
	if err != nil {
		return fail(err)
	}
	logger := slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	storeDir := filepath.Join(dir, "hub")
	if err := journal.PrivateDir(storeDir); err != nil {
		return fail(err)
	}
	h, err := hub.Start(hub.Config{StoreDir: storeDir, LeafListen: *leaf, TLS: tlsc, Restaurants: rs, Logger: logger})
	if err != nil {
		return fail(err)
	}
	defer h.Close()
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fail(err)
	}
	// The page answers to the loopback names and to --addr's host (a
	// DNS-rebound name is refused).
	var names []string
	if n, ok := webguard.ServedName(*addr); ok {
		names = append(names, n)
	}
	srv := &http.Server{Handler: hub.Handler(h, names...), ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second,
		WriteTimeout: 60 * time.Second, IdleTimeout: 120 * time.Second}
	go srv.Serve(ln)
	fmt.Fprintf(stdout, "Head office at http://%s/ (restaurants join at %s). Ctrl-C stops it.\n", ln.Addr(), h.LeafURL())
	<-ctx.Done()
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = srv.Shutdown(shutdown)
	return 0
}
