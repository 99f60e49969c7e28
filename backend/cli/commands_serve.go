package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/comptoir-pos/comptoir/backend/httpui"
)

// cmdServe is browser mode: the kiosk UI and service over HTTP, for a
// Chromium kiosk, a second screen, and the end-to-end tests.
func cmdServe(ctx context.Context, ui fs.FS, args []string, stdout, stderr io.Writer) int {
	var common commonFlags
	var lf limitFlags
	fs := newFlagSet("serve", stderr, &common)
	lf.register(fs)
	addr := fs.String("addr", "127.0.0.1:8080", "listen address (the UI drives payments: keep it on loopback)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	dist, err := frontendAssets(ui)
	if err != nil {
		fmt.Fprintln(stderr, "comptoir serve:", err)
		return 1
	}
	logger := slog.New(slog.NewJSONHandler(stderr, nil))
	if dir, err := common.resolveDataDir(); err == nil {
		var closer io.Closer
		logger, closer = kioskLogger(dir, stderr)
		defer closer.Close()
	}
	events := httpui.NewBroadcaster()
	stack, err := startKiosk(ctx, common, lf.limits(), events, logger)
	if err != nil {
		fmt.Fprintln(stderr, "comptoir serve:", err)
		return 1
	}
	defer stack.Close()
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(stderr, "comptoir serve:", err)
		return 1
	}
	// No WriteTimeout: it would cut the event stream; the handler bounds
	// each write itself.
	// Shutdown waits for requests to end; the event streams end only when
	// their request's context does, so it is cancelled at shutdown.
	streams, endStreams := context.WithCancel(context.Background())
	defer endStreams()
	srv := &http.Server{
		Handler:           httpui.New(httpui.Options{Service: stack.Svc, Staff: stack.Staff, Events: events, Assets: dist, Logger: logger}),
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return streams },
	}
	srv.RegisterOnShutdown(endStreams)
	go srv.Serve(ln)
	fmt.Fprintf(stdout, "Comptoir at http://%s/ (terminal %s). Ctrl-C stops it.\n", ln.Addr(), stack.URL)
	<-ctx.Done()
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		fmt.Fprintln(stderr, "comptoir serve:", err)
	}
	return 0
}

// frontendAssets checks the built UI embedded in the binary (ui is
// frontend/dist).
func frontendAssets(dist fs.FS) (fs.FS, error) {
	if dist == nil {
		return nil, errors.New("this binary carries no frontend")
	}
	if _, err := fs.Stat(dist, "index.html"); err != nil {
		return nil, errors.New("the frontend is not built into this binary: run `npm run build` in frontend/ before `go build`")
	}
	return dist, nil
}
