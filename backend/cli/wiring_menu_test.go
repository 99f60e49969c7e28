package cli

import (
	"context"
	"encoding/json"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/comptoir-pos/comptoir/backend/internal/testenv"
	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/kiosk"
	"github.com/comptoir-pos/comptoir/backend/site"
)

// A menu whose version head office never gives (2^64-1, 2^53) is
// refused, and no version holds later menus off: the kiosk takes the
// site's menu when it is not the one in force, lower or higher, and a
// kiosk left at 2^64-1 by an earlier bad write takes the next menu.
func TestNoMenuVersionHoldsLaterMenusOff(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	db, err := journal.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	a := newMenuApplier(ctx, db, nil, dir, warnLogger(io.Discard))
	price := func() int64 {
		t.Helper()
		cat, err := kiosk.LoadCatalog(dir)
		if err != nil {
			return -1
		}
		return cat.View().Categories[0].Products[0].Price
	}
	menu := func(v uint64, p int64) site.Menu { return site.Menu{Version: v, Catalog: demoMenuPriced(t, p)} }
	before := price()

	for _, v := range []uint64{math.MaxUint64, site.MaxMenuVersion + 1} {
		if err := a.apply(ctx, menu(v, 1)); err == nil {
			t.Fatalf("version %d applied", v)
		}
		if got, why := a.state(); got != 0 || !strings.Contains(why, "not one head office gives") || price() != before {
			t.Fatalf("after version %d: in force %d (%q), price %d", v, got, why, price())
		}
	}
	for _, step := range []struct {
		version uint64
		price   int64
	}{{5, 500}, {5, 999}, {3, 300}, {site.MaxMenuVersion, 700}, {6, 600}} {
		if err := a.apply(ctx, menu(step.version, step.price)); err != nil {
			t.Fatalf("version %d: %v", step.version, err)
		}
		want := step.price
		if step.price == 999 {
			want = 500 // the menu in force, sent again
		}
		if v, why := a.state(); v != step.version || why != "" || price() != want {
			t.Fatalf("after version %d: in force %d (%q), price %d", step.version, v, why, price())
		}
	}

	// A kiosk whose journal says 2^64-1 is in force.
	raw, _ := json.Marshal(uint64(math.MaxUint64))
	if err := db.SetSetting(ctx, settingMenuVersion, raw); err != nil {
		t.Fatal(err)
	}
	b := newMenuApplier(ctx, db, nil, dir, warnLogger(io.Discard))
	if err := b.apply(ctx, menu(7, 777)); err != nil {
		t.Fatal(err)
	}
	if v, _ := b.state(); v != 7 || price() != 777 {
		t.Fatalf("a kiosk left at 2^64-1: in force %d, price %d", v, price())
	}
}

// A kiosk of the restaurant, holding the site's secret like every other,
// cannot write the menu the kiosks apply: the menu bucket refuses it, and
// the kiosk owning the site keeps its catalog.
func TestASiteMemberCannotWriteTheMenu(t *testing.T) {
	dir := t.TempDir()
	addr := testenv.FreeAddr(t)
	configure(t, dir, map[string]any{"site.listen": addr, "kiosk.number_prefix": "A"},
		map[string]string{site.SecretFile: "the-site-secret-0123456789"})
	k := startTestKiosk(t, dir, "")
	defer k.stack.Close()
	before := firstPrice(k.stack)

	nc, err := site.Dial(site.DialConfig{URL: "nats://" + addr, Secret: "the-site-secret-0123456789", Name: "rogue"})
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	testenv.Eventually(t, "the member connected", nc.IsConnected)
	js, _ := jetstream.New(nc)
	rogue, _ := json.Marshal(site.Menu{Version: 5, Catalog: demoMenuPriced(t, 1)})
	put := func(ctx context.Context) error {
		kv, err := js.KeyValue(ctx, site.SiteMenuBucket)
		if err != nil {
			kv, err = js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: site.SiteMenuBucket, History: 4, MaxValueSize: 1 << 20})
			if err != nil {
				return err
			}
		}
		_, err = kv.Put(ctx, "current", rogue)
		return err
	}
	pctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	if err := put(pctx); err == nil {
		t.Fatal("a member wrote the menu")
	}
	time.Sleep(time.Second)
	if p := firstPrice(k.stack); p != before {
		t.Fatalf("the kiosk's first price %d -> %d", before, p)
	}
	if _, err := os.Stat(filepath.Join(dir, kiosk.CatalogFile)); err == nil {
		t.Fatal("a catalog was written from the site's bucket")
	}
}
