package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/comptoir-pos/comptoir/backend/site"
)

// MenuBucket is head office's key-value bucket of menus: one key per
// restaurant, or AllRestaurants for every restaurant without one of its
// own. Each put is a new revision: the revision is the menu's version.
const (
	MenuBucket     = "MENU"
	AllRestaurants = "all"
	menuHistory    = 16
	maxMenu        = 1 << 20
)

// Menus publishes the menu to the restaurants and answers their requests.
type Menus struct {
	kv    jetstream.KeyValue
	nc    *nats.Conn
	rs    []Restaurant
	sub   *nats.Subscription
	watch jetstream.KeyWatcher
	log   *slog.Logger
	// strayReply: the restaurants already said to ask with a reply
	// outside their inbox.
	strayReply sync.Map
}

func openMenus(ctx context.Context, nc *nats.Conn, js jetstream.JetStream, rs []Restaurant, log *slog.Logger) (*Menus, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	kv, err := js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: MenuBucket, History: menuHistory,
		MaxValueSize: maxMenu, Storage: jetstream.FileStorage})
	if err != nil {
		return nil, fmt.Errorf("menu bucket: %w", err)
	}
	m := &Menus{kv: kv, nc: nc, rs: rs, log: log}
	if m.sub, err = nc.Subscribe("hq.*.menu.get", m.answer); err != nil {
		return nil, err
	}
	if m.watch, err = kv.WatchAll(context.Background(), jetstream.UpdatesOnly()); err != nil {
		return nil, err
	}
	go m.notify()
	return m, nil
}

func (m *Menus) close() {
	if m.sub != nil {
		_ = m.sub.Unsubscribe()
	}
	if m.watch != nil {
		_ = m.watch.Stop()
	}
}

// notify tells the restaurants concerned that their menu changed.
func (m *Menus) notify() {
	for e := range m.watch.Updates() {
		if e == nil {
			continue
		}
		for _, r := range m.rs {
			if e.Key() == r.ID || e.Key() == AllRestaurants {
				_ = m.nc.Publish(site.HQ{Restaurant: r.ID}.MenuChanged(), nil)
			}
		}
	}
}

// answer replies to hq.R.menu.get with R's menu, {"version":0} when none,
// into R's own inbox (hq.R.inbox.>) and nowhere else. Head office's
// connection may publish anywhere, and NATS lets whoever asks name any
// reply subject: answered as asked, r1 could make head office write into
// r2's facts (hq.r2.k.…), which head office's own stream keeps. Only R
// (its leaf permission, hq.R.>) or head office can publish hq.R.menu.get,
// so an answer into hq.R.inbox reaches R alone, which could ask anyway,
// and no stream keeps it (HQ: hq.*.k.>, HQ_PRESENCE: hq.*.presence.*).
func (m *Menus) answer(msg *nats.Msg) {
	parts := strings.Split(msg.Subject, ".")
	if len(parts) != 4 {
		return
	}
	if !(site.HQ{Restaurant: parts[1]}).InInbox(msg.Reply) {
		if _, said := m.strayReply.LoadOrStore(parts[1], true); !said {
			m.log.Warn("hub: a menu asked for with a reply outside the restaurant's inbox: not answered (said once)",
				"restaurant", parts[1], "reply", msg.Reply)
		}
		return
	}
	doc, err := m.Current(context.Background(), parts[1])
	if err != nil {
		doc = site.Menu{}
	}
	data, _ := json.Marshal(doc)
	_ = msg.Respond(data)
}

// Current is a restaurant's menu: its own, else every restaurant's.
func (m *Menus) Current(ctx context.Context, restaurant string) (site.Menu, error) {
	for _, key := range []string{restaurant, AllRestaurants} {
		e, err := m.kv.Get(ctx, key)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			continue
		}
		if err != nil {
			return site.Menu{}, err
		}
		var doc site.Menu
		if err := json.Unmarshal(e.Value(), &doc); err != nil {
			return site.Menu{}, err
		}
		doc.Version = e.Revision()
		return doc, nil
	}
	return site.Menu{}, nil
}

// Publish puts a menu for a restaurant (or AllRestaurants) and returns its
// version. What head office can check is checked here (a JSON document
// with a catalog); each kiosk checks the rest and refuses a menu it
// cannot apply, keeping its own.
func (m *Menus) Publish(ctx context.Context, restaurant string, doc []byte) (uint64, error) {
	if restaurant != AllRestaurants && !m.known(restaurant) {
		return 0, fmt.Errorf("no restaurant %q", restaurant)
	}
	var menu site.Menu
	if len(doc) > maxMenu || json.Unmarshal(doc, &menu) != nil || len(menu.Catalog) == 0 {
		return 0, errors.New(`a menu is {"catalog": {...}, "settings": {...}}, at most 1 MiB`)
	}
	menu.Version = 0
	data, _ := json.Marshal(menu)
	return m.kv.Put(ctx, restaurant, data)
}

// Rollback publishes again the menu before the current one, as a new
// version.
func (m *Menus) Rollback(ctx context.Context, restaurant string) (uint64, error) {
	hist, err := m.kv.History(ctx, restaurant)
	if err != nil {
		return 0, fmt.Errorf("no menu history for %q: %w", restaurant, err)
	}
	if len(hist) < 2 {
		return 0, fmt.Errorf("%q has no earlier menu", restaurant)
	}
	return m.kv.Put(ctx, restaurant, hist[len(hist)-2].Value())
}

func (m *Menus) known(r string) bool {
	for _, x := range m.rs {
		if x.ID == r {
			return true
		}
	}
	return false
}
