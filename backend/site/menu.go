package site

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Menu is what head office publishes to a restaurant: the catalog (as
// catalog.json holds it) and settings (key: JSON value). Version is head
// office's revision of it; 0 is no menu.
type Menu struct {
	Version  uint64                     `json:"version"`
	Catalog  json.RawMessage            `json:"catalog"`
	Settings map[string]json.RawMessage `json:"settings,omitempty"`
}

// MaxMenuVersion is the highest version a kiosk takes. Head office's
// versions are the revisions of its menu bucket, counted from 1, one per
// menu it publishes; 2^53 - 1 is also the largest a JSON number carries
// exactly to head office's page. A version beyond is no menu of head
// office's.
const MaxMenuVersion = 1<<53 - 1

// SiteMenuBucket is the site's key-value bucket holding the menu it got
// from head office (key "current"), which every kiosk of the restaurant
// watches: a kiosk gets it from its site even while head office is away.
const (
	SiteMenuBucket = "SITE_MENU"
	siteMenuKey    = "current"
)

func siteMenu(ctx context.Context, js jetstream.JetStream, create bool) (jetstream.KeyValue, error) {
	if create {
		return js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: SiteMenuBucket, History: 4,
			MaxValueSize: 1 << 20, Storage: jetstream.FileStorage})
	}
	return js.KeyValue(ctx, SiteMenuBucket)
}

// RelayMenu runs at the site's owner: it asks head office for the
// restaurant's menu at start, whenever head office says it changed, and
// every menuAskEvery, and keeps the newest in the site's bucket. nc has the
// restaurant's inbox prefix (HQ.Inbox).
func RelayMenu(ctx context.Context, nc *nats.Conn, js jetstream.JetStream, hq HQ, log *slog.Logger) {
	kv, err := siteMenu(ctx, js, true)
	if err != nil {
		log.Error("menu: the site's bucket", "err", err)
		return
	}
	changed := make(chan struct{}, 1)
	sub, err := nc.Subscribe(hq.MenuChanged(), func(*nats.Msg) {
		select {
		case changed <- struct{}{}:
		default:
		}
	})
	if err == nil {
		defer sub.Unsubscribe()
	}
	tick := time.NewTicker(menuAskEvery)
	defer tick.Stop()
	for {
		if err := relayOnce(ctx, nc, kv, hq); err != nil && ctx.Err() == nil {
			log.Debug("menu: head office not asked", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-changed:
		case <-tick.C:
		}
	}
}

// menuAskEvery is how often a site asks head office for its menu without
// being told it changed: a change notice can be lost (sent before the
// site's interest in it reached head office over the leaf connection).
const menuAskEvery = 10 * time.Second

func relayOnce(ctx context.Context, nc *nats.Conn, kv jetstream.KeyValue, hq HQ) error {
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	reply, err := nc.RequestWithContext(rctx, hq.MenuGet(), nil)
	if err != nil {
		return err
	}
	var m Menu
	if err := json.Unmarshal(reply.Data, &m); err != nil {
		return err
	}
	if m.Version == 0 {
		return nil
	}
	if cur, err := kv.Get(rctx, siteMenuKey); err == nil {
		var have Menu
		if json.Unmarshal(cur.Value(), &have) == nil && have.Version == m.Version {
			return nil
		}
	}
	_, err = kv.Put(rctx, siteMenuKey, reply.Data)
	return err
}

// FollowMenu runs at every kiosk: each menu the site's bucket holds is
// given to apply, newest only, until ctx ends. apply decides whether and
// when it takes it (between orders) and says why it refuses one.
func FollowMenu(ctx context.Context, js jetstream.JetStream, apply func(Menu) error, log *slog.Logger) {
	for ctx.Err() == nil {
		err := followOnce(ctx, js, apply)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			log.Debug("menu: the site's bucket not followed yet", "err", err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(2 * time.Second):
		}
	}
}

func followOnce(ctx context.Context, js jetstream.JetStream, apply func(Menu) error) error {
	kv, err := siteMenu(ctx, js, false)
	if err != nil {
		return err
	}
	w, err := kv.Watch(ctx, siteMenuKey)
	if err != nil {
		return err
	}
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case e, ok := <-w.Updates():
			if !ok {
				return errors.New("the watch ended")
			}
			if e == nil || e.Operation() != jetstream.KeyValuePut {
				continue
			}
			var m Menu
			if json.Unmarshal(e.Value(), &m) != nil || m.Version == 0 {
				continue
			}
			_ = apply(m)
		}
	}
}
