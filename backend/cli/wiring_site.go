package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"path/filepath"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/kiosk"
	"github.com/comptoir-pos/comptoir/backend/kitchen"
	"github.com/comptoir-pos/comptoir/backend/site"
)

// siteRun is a kiosk's part in the restaurant's site: its own embedded
// server, or a connection to the restaurant's; the outbox's publisher;
// its heartbeat; the kitchen screens and board it serves.
type siteRun struct {
	cfg     site.Settings
	srv     *site.Server // nil when joining another's
	nc      *nats.Conn
	js      jetstream.JetStream
	subj    site.Subjects
	kitchen *kitchen.Kitchen
	stop    func()
}

// siteDir is where an embedded site keeps its stream in the data folder.
const siteDir = "site"

// archiveShipEvery is how often a kiosk looks for a monthly archive to
// send to head office (at start, then this often).
const archiveShipEvery = time.Minute

// openSite starts this kiosk's site: nothing here ever holds a payment.
// A site that is misconfigured is logged and left out (nil): the outbox
// waits in the journal until it is set right.
func openSite(ctx context.Context, c commonFlags, db *journal.DB, dir string, logger *slog.Logger) *siteRun {
	all, err := db.Settings(ctx)
	if err != nil {
		logger.Error("site: settings not read: no site", "err", err)
		return nil
	}
	cfg, err := site.LoadSettings(all)
	if err != nil {
		logger.Warn("site: a setting ignored", "err", err)
	}
	if c.site != "" {
		cfg.URL = c.site
	}
	if cfg.Off && cfg.URL == "" {
		return nil
	}
	if cfg.URL != "" && !cfg.KioskNamed {
		// Two kiosks without a prefix number their orders alike: the
		// kitchen and head office could not tell them apart.
		logger.Error("site: this kiosk joins a restaurant's site without a name of its own: set kiosk.number_prefix (A, B...) on each kiosk")
	}
	s, err := connectSite(cfg, dir, logger)
	if err != nil {
		logger.Error("site: not started: orders wait in the journal until it is", "err", err)
		return nil
	}
	return s
}

func connectSite(cfg site.Settings, dir string, logger *slog.Logger) (*siteRun, error) {
	subj, err := site.NewSubjects(cfg.Restaurant)
	if err != nil {
		return nil, err
	}
	secret, err := site.ReadSecret(dir, site.SecretFile)
	if err != nil {
		return nil, err
	}
	s := &siteRun{cfg: cfg, subj: subj}
	if cfg.URL != "" {
		tlsc, err := site.ClientTLS(cfg.TLSCA)
		if err != nil {
			return nil, err
		}
		if s.nc, err = site.Dial(site.DialConfig{URL: cfg.URL, Secret: secret, TLS: tlsc, Name: "kiosk " + cfg.Kiosk, Logger: logger}); err != nil {
			return nil, err
		}
	} else {
		if s.srv, err = startOwnSite(cfg, dir, secret, logger); err != nil {
			return nil, err
		}
		if s.nc, err = s.srv.Conn("kiosk " + cfg.Kiosk); err != nil {
			s.srv.Close()
			return nil, err
		}
	}
	if s.js, err = jetstream.New(s.nc); err != nil {
		s.close()
		return nil, err
	}
	if s.srv != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := site.EnsureStreams(ctx, s.js, subj); err != nil {
			s.close()
			return nil, err
		}
	}
	return s, nil
}

// startOwnSite embeds the restaurant's server: for this process only
// unless site.listen says where others reach it (over TLS, with the
// secret, when that is not loopback), joined to head office when
// site.hub_url is set.
func startOwnSite(cfg site.Settings, dir, secret string, logger *slog.Logger) (*site.Server, error) {
	tlsc, err := site.ServerTLS(cfg.TLSCert, cfg.TLSKey)
	if err != nil {
		return nil, err
	}
	// JetStream makes its folders 0750: inside a folder of ours, 0700,
	// nobody else reaches them.
	if err := journal.PrivateDir(filepath.Join(dir, siteDir)); err != nil {
		return nil, err
	}
	sc := site.ServerConfig{Name: cfg.Restaurant + "-" + cfg.Kiosk, Domain: cfg.Restaurant, StoreDir: filepath.Join(dir, siteDir),
		Listen: cfg.Listen, TLS: tlsc, Secret: secret, Logger: logger}
	if cfg.HubURL != "" {
		if sc.Leaf, err = hubRemote(cfg, dir); err != nil {
			return nil, err
		}
	}
	return site.StartServer(sc)
}

// hubRemote is head office as this site joins it: its address and
// certificate from the settings, the restaurant's credentials from their
// file (never argv).
func hubRemote(cfg site.Settings, dir string) (*site.LeafRemote, error) {
	raw, err := site.ReadSecret(dir, site.HubSecretFile)
	if err != nil {
		return nil, err
	}
	var cred struct{ User, Password string }
	if raw == "" || json.Unmarshal([]byte(raw), &cred) != nil || cred.User == "" || cred.Password == "" {
		return nil, fmt.Errorf("head office: %s in the data folder holds {\"user\":...,\"password\":...}", site.HubSecretFile)
	}
	tlsc, err := site.ClientTLS(cfg.HubCA)
	if err != nil {
		return nil, err
	}
	return &site.LeafRemote{URL: cfg.HubURL, User: cred.User, Password: cred.Password, TLS: tlsc}, nil
}

// run starts what this process does for the site: for a kiosk (svc),
// the outbox's publisher, its heartbeat and head office's menu; for the
// site's owner, the link to head office; for all, the kitchen screens and
// the board. stop ends them.
func (s *siteRun) run(db *journal.DB, svc *kiosk.Service, dir string, logger *slog.Logger) {
	ctx, cancel := context.WithCancel(context.Background())
	var done []chan struct{}
	goRun := func(f func()) {
		ch := make(chan struct{})
		done = append(done, ch)
		go func() { defer close(ch); f() }()
	}
	cats := newCategories(svc, dir)
	menu := newMenuApplier(ctx, db, svc, dir, logger)
	menu.applied = cats.reload
	goRun(func() { site.FollowMenu(ctx, s.js, func(m site.Menu) error { return menu.apply(ctx, m) }, logger) })
	if svc != nil {
		p, err := site.NewPublisher(site.PublisherConfig{Outbox: db, JS: s.js, Subjects: s.subj, Kiosk: s.cfg.Kiosk, Logger: logger})
		if err != nil {
			logger.Error("site: no publisher", "err", err)
		} else {
			goRun(func() { p.Run(ctx) })
		}
		// The monthly archives closeDue writes go to head office too.
		ship := &site.ArchiveShipper{JS: s.js, Subjects: s.subj, Kiosk: s.cfg.Kiosk, Dir: filepath.Join(dir, archivesDir),
			State: filepath.Join(dir, site.ArchivesShippedFile), Logger: logger}
		goRun(func() { ship.Run(ctx, archiveShipEvery) })
		goRun(func() {
			site.RunPresence(ctx, s.js, s.subj, 0, func() site.Presence {
				p := presenceOf(ctx, s.cfg.Kiosk, db, svc)
				p.Menu, p.MenuError = menu.state()
				return p
			}, menu.changed)
		})
	}
	if s.srv != nil && s.cfg.HubURL != "" {
		s.runHeadOffice(ctx, goRun, logger)
	}
	k, err := kitchen.Start(kitchen.Config{JS: s.js, Subjects: s.subj, Stations: s.cfg.Stations, Category: cats.of,
		Lang: s.cfg.Language, Since: startOfDay(time.Now()), WarnAfter: s.cfg.WarnAfter, LateAfter: s.cfg.LateAfter,
		ReadyFor: s.cfg.ReadyFor, Chime: s.cfg.Chime, Logger: logger})
	if err != nil {
		logger.Error("site: no kitchen screen", "err", err)
	}
	s.kitchen = k
	s.stop = func() {
		cancel()
		for _, ch := range done {
			<-ch
		}
		if k != nil {
			k.Close()
		}
	}
}

// runHeadOffice forwards the site's facts to head office and relays its
// menu, on a connection whose replies come under the restaurant's own
// subjects (the only ones head office lets it use).
func (s *siteRun) runHeadOffice(ctx context.Context, goRun func(func()), logger *slog.Logger) {
	hq := site.HQ{Restaurant: s.subj.Restaurant}
	nc, err := s.srv.Conn("head office", nats.CustomInboxPrefix(hq.Inbox()))
	if err != nil {
		logger.Error("head office: no connection", "err", err)
		return
	}
	fw, err := site.NewForwarder(nc, s.subj, logger)
	if err != nil {
		nc.Close()
		logger.Error("head office: no forwarder", "err", err)
		return
	}
	js, _ := jetstream.New(nc)
	goRun(func() { fw.Run(ctx) })
	goRun(func() { site.RelayMenu(ctx, nc, js, hq, logger) })
	goRun(func() { <-ctx.Done(); nc.Close() })
}

// Kitchen is the kitchen screens' and the board's API, nil without a site.
func (s *siteRun) Kitchen() http.Handler {
	if s == nil || s.kitchen == nil {
		return nil
	}
	return kitchen.Handler(s.kitchen)
}

func (s *siteRun) close() {
	if s == nil {
		return
	}
	if s.stop != nil {
		s.stop()
	}
	if s.nc != nil {
		// What the publisher sent is acknowledged or still unpublished in
		// the journal: nothing to wait for.
		s.nc.Close()
	}
	if s.srv != nil {
		s.srv.Close()
	}
}

func presenceOf(ctx context.Context, kioskID string, db *journal.DB, svc *kiosk.Service) site.Presence {
	p := site.Presence{Kiosk: kioskID, Version: version}
	if svc != nil {
		t := svc.Terminal()
		p.Terminal, p.Ready = string(t.State), t.Ready
	}
	if un, err := db.UnknownAttempts(ctx); err == nil {
		p.NeedStaff = len(un)
	}
	return p
}

// categories is each product's category in the catalog in force, for
// the kitchen's stations: the kiosk's, or for the site's own process the
// catalog in its data folder (head office's menu), read again when a menu
// is applied.
type categories struct {
	svc       *kiosk.Service
	dir       string
	mu        sync.Mutex
	byProduct map[string]string
}

func newCategories(svc *kiosk.Service, dir string) *categories {
	c := &categories{svc: svc, dir: dir}
	c.reload()
	return c
}

func (c *categories) reload() {
	var view kiosk.CatalogView
	if c.svc != nil {
		view = c.svc.Catalog()
	} else if cat, err := kiosk.LoadCatalog(c.dir); err == nil {
		view = cat.View()
	}
	m := map[string]string{}
	for _, cat := range view.Categories {
		for _, p := range cat.Products {
			m[p.ID] = cat.ID
		}
	}
	c.mu.Lock()
	c.byProduct = m
	c.mu.Unlock()
}

func (c *categories) of(product string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.byProduct[product]
}

// startOfDay is the kitchen's day: from 4 in the morning, so that a late
// service's tickets stay on the screen past midnight.
func startOfDay(now time.Time) time.Time {
	d := time.Date(now.Year(), now.Month(), now.Day(), 4, 0, 0, 0, now.Location())
	if now.Before(d) {
		d = d.AddDate(0, 0, -1)
	}
	return d
}
