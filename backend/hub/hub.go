// Package hub is head office: a NATS server with JetStream that each
// restaurant's site joins as a leaf node (over TLS, with the restaurant's
// own credentials, allowed only its own subjects hq.R.>), the figures
// folded from what the restaurants send (Ledger), and the menu published
// to them through a key-value bucket (Menus).
package hub

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/comptoir-pos/comptoir/backend/site"
)

// Restaurant is one restaurant's credentials at head office.
type Restaurant struct {
	ID       string `json:"id"`
	Password string `json:"password"`
}

// FiscalBucket is head office's object store of fiscal records.
const FiscalBucket = "FISCAL"

// RestaurantsFile holds the restaurants in head office's data folder
// (0600): [{"id":"r1","password":"..."}].
const RestaurantsFile = "hub-restaurants.json"

// ReadRestaurants reads and checks the restaurants' file.
func ReadRestaurants(path string) ([]Restaurant, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if st.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("%s: readable by others (mode %v): chmod 600 it", path, st.Mode().Perm())
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var rs []Restaurant
	if err := json.Unmarshal(raw, &rs); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	seen := map[string]bool{}
	for _, r := range rs {
		if !site.ValidToken(r.ID) || len(r.Password) < 16 || seen[r.ID] {
			return nil, fmt.Errorf("%s: restaurant %q: a unique token and a password of 16 characters or more", path, r.ID)
		}
		seen[r.ID] = true
	}
	return rs, nil
}

// Config is head office.
type Config struct {
	StoreDir    string
	LeafListen  string // where restaurants join: host:port, over TLS
	TLS         *tls.Config
	Restaurants []Restaurant
	Logger      *slog.Logger
}

// Hub is head office running.
type Hub struct {
	srv    *site.Server
	nc     *nats.Conn
	js     jetstream.JetStream
	Ledger *Ledger
	Menus  *Menus
	rs     []Restaurant
}

// Start starts head office's server, its streams and bucket, the ledger
// and the menu service.
func Start(c Config) (*Hub, error) {
	if len(c.Restaurants) == 0 {
		return nil, errors.New("hub: no restaurant: list them in " + RestaurantsFile)
	}
	users := make([]*server.User, 0, len(c.Restaurants))
	for _, r := range c.Restaurants {
		hq := site.HQ{Restaurant: r.ID}
		own := &server.SubjectPermission{Allow: []string{hq.All()}}
		users = append(users, &server.User{Username: r.ID, Password: r.Password,
			Permissions:            &server.Permissions{Publish: own, Subscribe: own},
			AllowedConnectionTypes: map[string]struct{}{"LEAFNODE": {}}})
	}
	self, err := ownUser()
	if err != nil {
		return nil, err
	}
	srv, err := site.StartServer(site.ServerConfig{Name: "hub", Domain: "hub", StoreDir: c.StoreDir,
		LeafListen: c.LeafListen, Users: users, InProcess: self, TLS: c.TLS, Logger: c.Logger})
	if err != nil {
		return nil, err
	}
	h := &Hub{srv: srv, rs: c.Restaurants}
	if err := h.open(c.Logger); err != nil {
		h.Close()
		return nil, err
	}
	return h, nil
}

func (h *Hub) open(log *slog.Logger) error {
	var err error
	if h.nc, err = h.srv.Conn("hub"); err != nil {
		return err
	}
	if h.js, err = jetstream.New(h.nc); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := h.js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name: site.StreamHQ, Subjects: []string{"hq.*.k.>"}, Storage: jetstream.FileStorage,
		Duplicates: site.DuplicateWindow, MaxAge: 400 * 24 * time.Hour, MaxMsgSize: 256 << 10,
	}); err != nil {
		return fmt.Errorf("hub stream: %w", err)
	}
	if _, err := h.js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name: site.StreamHQPresence, Subjects: []string{"hq.*.presence.*"}, Storage: jetstream.FileStorage,
		MaxMsgsPerSubject: 1, MaxMsgSize: 16 << 10,
	}); err != nil {
		return fmt.Errorf("hub presence stream: %w", err)
	}
	if h.Menus, err = openMenus(ctx, h.nc, h.js, h.rs, log); err != nil {
		return err
	}
	fiscal, err := h.js.CreateOrUpdateObjectStore(ctx, jetstream.ObjectStoreConfig{Bucket: FiscalBucket,
		Description: "closings and archives of every restaurant, as signed", Storage: jetstream.FileStorage})
	if err != nil {
		return fmt.Errorf("fiscal object store: %w", err)
	}
	h.Ledger = startLedger(h.js, fiscal, log)
	return nil
}

// ownUser is head office's own connection, in this process only: a
// random password made at each start, never written anywhere.
func ownUser() (*server.User, error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return nil, err
	}
	return &server.User{Username: "hub-" + hex.EncodeToString(b[:4]), Password: hex.EncodeToString(b),
		AllowedConnectionTypes: map[string]struct{}{"IN_PROCESS": {}}}, nil
}

// LeafURL is where restaurants join.
func (h *Hub) LeafURL() string { return h.srv.LeafURL() }

// Restaurants connected now.
func (h *Hub) Leaves() int { return h.srv.Leaves() }

// Close stops head office.
func (h *Hub) Close() {
	if h.Ledger != nil {
		h.Ledger.close()
	}
	if h.Menus != nil {
		h.Menus.close()
	}
	if h.nc != nil {
		h.nc.Close()
	}
	h.srv.Close()
}
