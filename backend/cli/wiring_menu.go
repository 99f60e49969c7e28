package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/kiosk"
	"github.com/comptoir-pos/comptoir/backend/settings"
	"github.com/comptoir-pos/comptoir/backend/site"
	"github.com/comptoir-pos/comptoir/backend/staff"
)

// settingMenuVersion is the version of head office's menu in force here.
const settingMenuVersion = "site.menu_version"

// menuApplier applies head office's menu at a kiosk: checked first (the
// catalog by the kiosk's own parser, each setting by the kiosk's own
// rules, only the settings staff may edit), then applied between orders,
// never in the middle of one. A refused menu leaves the one in force and
// says why in the kiosk's heartbeat, which head office shows.
type menuApplier struct {
	db  *journal.DB
	svc *kiosk.Service
	dir string
	log *slog.Logger

	// applied is called after a menu is applied (nil: nothing).
	applied func()
	// changed is signalled when the version in force or a refusal
	// changes, so that the heartbeat says it at once.
	changed chan struct{}

	mu      sync.Mutex
	version uint64
	refused string
}

func newMenuApplier(ctx context.Context, db *journal.DB, svc *kiosk.Service, dir string, log *slog.Logger) *menuApplier {
	a := &menuApplier{db: db, svc: svc, dir: dir, log: log, changed: make(chan struct{}, 1)}
	if raw, ok, err := db.Setting(ctx, settingMenuVersion); err == nil && ok {
		_ = json.Unmarshal(raw, &a.version)
	}
	return a
}

// state is the version in force and why the last one was refused.
func (a *menuApplier) state() (uint64, string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.version, a.refused
}

// apply takes the menu the site's bucket holds when it is not the one in
// force. The bucket holds one menu, the restaurant's current one, which
// the site's owner copies from head office; a kiosk follows it whether
// its number went up or down (head office's bucket made anew, a kiosk
// moved to another restaurant, a bad write over it), so that a value
// that should not be there is replaced by the next menu, never holds
// every later one off. A version no head office gives is refused.
func (a *menuApplier) apply(ctx context.Context, m site.Menu) error {
	if v, _ := a.state(); m.Version == v {
		return nil
	}
	var err error
	if m.Version > site.MaxMenuVersion {
		err = fmt.Errorf("version %d is not one head office gives (at most %d)", m.Version, uint64(site.MaxMenuVersion))
	} else {
		err = a.check(ctx, m)
	}
	if err != nil {
		a.refuse(fmt.Sprintf("menu %d refused: %v", m.Version, err))
		a.log.Error("menu from head office refused: the menu in force stays", "version", m.Version, "err", err)
		return err
	}
	// Between orders: a customer in the middle of one keeps the menu
	// they are ordering from.
	for a.svc != nil && !betweenOrders(a.svc.Checkout().Phase) {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
	if err := a.write(ctx, m); err != nil {
		a.refuse(fmt.Sprintf("menu %d not applied: %v", m.Version, err))
		a.log.Error("menu from head office not applied", "version", m.Version, "err", err)
		return err
	}
	a.mu.Lock()
	a.version, a.refused = m.Version, ""
	a.mu.Unlock()
	a.kick()
	a.log.Info("menu from head office applied", "version", m.Version)
	return nil
}

// refuse says why a menu from head office is not in force, and tells.
func (a *menuApplier) refuse(why string) {
	a.mu.Lock()
	a.refused = why
	a.mu.Unlock()
	a.kick()
}

func (a *menuApplier) kick() {
	select {
	case a.changed <- struct{}{}:
	default:
	}
}

func betweenOrders(p kiosk.Phase) bool {
	return p == kiosk.PhaseWelcome || p == ""
}

func (a *menuApplier) check(ctx context.Context, m site.Menu) error {
	if _, err := kiosk.ParseCatalog(fmt.Sprintf("menu %d", m.Version), m.Catalog); err != nil {
		return err
	}
	if len(m.Settings) == 0 {
		return nil
	}
	mem, err := journal.OpenMemory(ctx)
	if err != nil {
		return err
	}
	defer mem.Close()
	for k, v := range m.Settings {
		if !slices.Contains(staff.EditableSettings, k) {
			return fmt.Errorf("setting %s is not one head office may set", k)
		}
		if err := mem.SetSetting(ctx, k, v); err != nil {
			return fmt.Errorf("setting %s: %w", k, err)
		}
	}
	warn := &warnings{}
	if _, err := settings.LoadSettings(ctx, mem, slog.New(warn)); err != nil {
		return err
	}
	if w := warn.String(); w != "" {
		return fmt.Errorf("%s", w)
	}
	return nil
}

func (a *menuApplier) write(ctx context.Context, m site.Menu) error {
	p := filepath.Join(a.dir, kiosk.CatalogFile)
	tmp := p + ".new"
	if err := os.WriteFile(tmp, m.Catalog, 0o600); err != nil {
		return err
	}
	if err := os.Rename(tmp, p); err != nil {
		return err
	}
	for k, v := range m.Settings {
		if err := a.db.SetSetting(ctx, k, v); err != nil {
			return err
		}
	}
	v, _ := json.Marshal(m.Version)
	if err := a.db.SetSetting(ctx, settingMenuVersion, v); err != nil {
		return err
	}
	if a.applied != nil {
		defer a.applied()
	}
	if a.svc != nil {
		return a.svc.Reload()
	}
	return nil
}

// warnings collects the warnings a settings check logs.
type warnings struct {
	mu  sync.Mutex
	msg []string
}

func (w *warnings) Enabled(context.Context, slog.Level) bool { return true }
func (w *warnings) Handle(_ context.Context, r slog.Record) error {
	if r.Level < slog.LevelWarn {
		return nil
	}
	line := r.Message
	r.Attrs(func(at slog.Attr) bool {
		if at.Key == "key" || at.Key == "err" {
			line += " " + at.Key + "=" + at.Value.String()
		}
		return true
	})
	w.mu.Lock()
	w.msg = append(w.msg, line)
	w.mu.Unlock()
	return nil
}
func (w *warnings) WithAttrs([]slog.Attr) slog.Handler { return w }
func (w *warnings) WithGroup(string) slog.Handler      { return w }
func (w *warnings) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return strings.Join(w.msg, "; ")
}
