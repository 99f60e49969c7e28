package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/comptoir-pos/comptoir/backend/httpui"
	"github.com/comptoir-pos/comptoir/backend/internal/webguard"
)

// cmdServe is browser mode: the kiosk UI and service over HTTP, for a
// Chromium kiosk, a second screen, and the end-to-end tests. It answers
// this PC only unless --allow-lan, and then other machines' browsers once
// paired with a code shown here.
func cmdServe(ctx context.Context, ui fs.FS, args []string, stdout, stderr io.Writer) int {
	fs, common, lf := newPaymentFlagSet("serve", stderr)
	addr := fs.String("addr", "127.0.0.1:8080", "listen address; one that is not loopback needs --allow-lan")
	allowLAN := fs.Bool("allow-lan", false, "answer browsers on other machines too, once paired with the code this command shows")
	hosts := fs.String("host", "", "names (comma-separated) browsers on the LAN use for this PC, besides its address")
	unpair := fs.Bool("unpair-all", false, "with --allow-lan: forget every paired browser (each pairs again)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	allowed, err := servedHosts(*addr, *allowLAN, *hosts)
	if err == nil && *unpair && !*allowLAN {
		err = errors.New("--unpair-all goes with --allow-lan")
	}
	if err != nil {
		fmt.Fprintln(stderr, "comptoir serve:", err)
		return 2
	}
	dist, err := frontendAssets(ui)
	if err != nil {
		return failed(stderr, "serve", err)
	}
	logger := slog.New(slog.NewJSONHandler(stderr, nil))
	dir, dirErr := common.resolveDataDir()
	if dirErr == nil {
		var closer io.Closer
		logger, closer = kioskLogger(dir, stderr)
		defer closer.Close()
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return failed(stderr, "serve", err)
	}
	defer ln.Close()
	var pairing *httpui.Pairing
	if *allowLAN {
		if dirErr != nil {
			fmt.Fprintln(stderr, "comptoir serve:", dirErr)
			return 1
		}
		if pairing, err = openPairing(dir, *unpair, ln.Addr(), stderr, logger); err != nil {
			return failed(stderr, "serve", err)
		}
	}
	events := httpui.NewBroadcaster()
	stack, err := startKiosk(ctx, *common, lf.limits(), events, logger)
	if err != nil {
		return failed(stderr, "serve", err)
	}
	defer stack.Close()
	srv := httpui.NewServer(httpui.New(httpui.Options{
		Service: stack.Svc, Staff: stack.Staff, Events: events, Assets: dist, Logger: logger,
		AllowedHosts: allowed, Pairing: pairing, Kitchen: stack.Kitchen,
	}), httpui.DefaultTimeouts)
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

// servedHosts checks the listen address against --allow-lan and returns
// the Host names browsers may use besides the loopback ones: --addr's
// host when it names one, and --host's.
func servedHosts(addr string, allowLAN bool, hosts string) ([]string, error) {
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return nil, fmt.Errorf("--addr %q: %w", addr, err)
	}
	if !allowLAN && !webguard.IsLoopback(addr) {
		return nil, fmt.Errorf("--addr %s is not a loopback address: browser mode takes payments and opens staff mode, so it answers this PC only unless started with --allow-lan (then a browser on another machine pairs once with a code shown here)", addr)
	}
	var out []string
	if n, ok := webguard.ServedName(addr); ok {
		out = append(out, n)
	}
	for _, h := range strings.Split(hosts, ",") {
		h = strings.TrimSpace(h)
		if h == "" {
			continue
		}
		if strings.ContainsAny(h, ":/[]% ") {
			return nil, fmt.Errorf("--host %q: a host name or IPv4 address, without a port", h)
		}
		out = append(out, h)
	}
	return out, nil
}

// pairingKeyFile keeps the key of browser pairing in the data folder.
const pairingKeyFile = "browser-pairing.key"

// openPairing starts browser pairing. The codes are written on stderr
// only: the log file keeps no secret.
func openPairing(dir string, reset bool, at net.Addr, stderr io.Writer, logger *slog.Logger) (*httpui.Pairing, error) {
	port := 0
	if a, ok := at.(*net.TCPAddr); ok {
		port = a.Port
	}
	var mu sync.Mutex
	return httpui.NewPairing(httpui.PairingConfig{
		KeyFile: filepath.Join(dir, pairingKeyFile), Reset: reset, Logger: logger,
		OnCode: func(code string) {
			mu.Lock()
			defer mu.Unlock()
			fmt.Fprintf(stderr, "Pairing code for a browser on the LAN: %s\n"+
				"  (open http://<this PC>:%d/pair on it and enter the code; it pairs one browser, then a new code is shown here)\n", code, port)
		},
	})
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
