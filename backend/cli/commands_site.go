package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"time"

	"github.com/comptoir-pos/comptoir/backend/httpui"
	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/site"
)

// siteRole is the restaurant's site run by a PC of its own (the kitchen's,
// say): the stream every kiosk joins, the link to head office, the
// kitchen screens and the board.
type siteRole struct {
	db  *journal.DB
	run *siteRun
}

// startSiteRole opens the site's data folder and starts its server on
// listen (the setting site.listen when ""; 127.0.0.1:4222 without one).
func startSiteRole(ctx context.Context, c commonFlags, listen string, logger *slog.Logger) (*siteRole, error) {
	db, dir, err := c.openJournal(ctx)
	if err != nil {
		return nil, err
	}
	all, err := db.Settings(ctx)
	if err != nil {
		db.Close()
		return nil, err
	}
	cfg, err := site.LoadSettings(all)
	if err != nil {
		logger.Warn("site: a setting ignored", "err", err)
	}
	cfg.URL = ""
	if listen != "" {
		cfg.Listen = listen
	}
	if cfg.Listen == "" {
		cfg.Listen = "127.0.0.1:4222"
	}
	cfg.Kiosk = "site"
	s, err := connectSite(cfg, dir, logger)
	if err != nil {
		db.Close()
		return nil, err
	}
	s.run(db, nil, dir, logger)
	return &siteRole{db: db, run: s}, nil
}

func (r *siteRole) close() {
	r.run.close()
	r.db.Close()
}

// cmdSite runs the restaurant's site (see siteRole) with the kitchen
// screens and the board in a browser: /kitchen, /board.
func cmdSite(ctx context.Context, ui fs.FS, args []string, stdout, stderr io.Writer) int {
	var common commonFlags
	fs := newFlagSet("site", stderr, &common)
	addr := fs.String("addr", "127.0.0.1:8080", "the kitchen screens and the board; one that is not loopback needs --allow-lan")
	listen := fs.String("listen", "", "where the kiosks join (default: the setting site.listen, else 127.0.0.1:4222); on the LAN, TLS and the site-secret file")
	allowLAN := fs.Bool("allow-lan", false, "answer browsers on other machines too, once paired with the code this command shows")
	hosts := fs.String("host", "", "names (comma-separated) browsers on the LAN use for this PC, besides its address")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	fail := func(err error) int { fmt.Fprintln(stderr, "comptoir site:", err); return 1 }
	allowed, err := servedHosts(*addr, *allowLAN, *hosts)
	if err != nil {
		fmt.Fprintln(stderr, "comptoir site:", err)
		return 2
	}
	dist, err := frontendAssets(ui)
	if err != nil {
		return fail(err)
	}
	logger := slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	role, err := startSiteRole(ctx, common, *listen, logger)
	if err != nil {
		return fail(err)
	}
	defer role.close()
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fail(err)
	}
	defer ln.Close()
	var pairing *httpui.Pairing
	if *allowLAN {
		dir, _ := common.resolveDataDir()
		if pairing, err = openPairing(dir, false, ln.Addr(), stderr, logger); err != nil {
			return fail(err)
		}
	}
	srv := httpui.NewServer(httpui.New(httpui.Options{Assets: dist, Logger: logger, AllowedHosts: allowed,
		Pairing: pairing, Kitchen: role.run.Kitchen()}), httpui.DefaultTimeouts)
	go srv.Serve(ln)
	fmt.Fprintf(stdout, "Restaurant site %s: kiosks join %s; kitchen at http://%s/kitchen, board at http://%s/board. Ctrl-C stops it.\n",
		role.run.cfg.Restaurant, role.run.srv.ClientURL(), ln.Addr(), ln.Addr())
	<-ctx.Done()
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		fmt.Fprintln(stderr, "comptoir site:", err)
	}
	return 0
}
