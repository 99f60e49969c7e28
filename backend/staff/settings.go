package staff

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"

	"github.com/comptoir-pos/comptoir/backend/device"
	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/settings"
)

// EditableSettings are the keys staff may change: the kiosk's settings.
// The staff.* keys (PIN, lockout, audit) and the kiosk's internal order
// sequence are never shown nor written here.
var EditableSettings = []string{
	settings.SettingMode, settings.SettingLanguages, settings.SettingDefaultLanguage, settings.SettingCurrency,
	settings.SettingIdleSeconds, settings.SettingVoucherCap, settings.SettingMerchant,
	settings.SettingReceiptFormat, settings.SettingReceiptColumns, settings.SettingDining,
}

// Setting is one setting as staff see it.
type Setting struct {
	Key string `json:"key"`
	// Value is what the kiosk uses now: the stored value, or the default
	// when none is stored or the stored one is not valid.
	Value json.RawMessage `json:"value"`
	// Stored is the value in the journal, null when none.
	Stored json.RawMessage `json:"stored"`
	// Ignored: a value is stored but is not valid, so the default applies.
	Ignored bool `json:"ignored,omitempty"`
}

// effective is the JSON of one key's value in st.
func effective(st settings.Settings, key string) json.RawMessage {
	var v any
	switch key {
	case settings.SettingMode:
		v = st.Mode
	case settings.SettingLanguages:
		v = st.Languages
	case settings.SettingDefaultLanguage:
		v = st.DefaultLanguage
	case settings.SettingCurrency:
		v = st.Currency
	case settings.SettingIdleSeconds:
		v = st.IdleSeconds
	case settings.SettingVoucherCap:
		v = st.VoucherCap
	case settings.SettingMerchant:
		m := st.Merchant
		v = map[string]any{"name": m.Name, "address": m.Address, "vatNumber": m.VATNumber, "footer": m.Footer, "qrUrl": m.QRURL}
	case settings.SettingReceiptFormat:
		v = st.ReceiptFormat
	case settings.SettingReceiptColumns:
		v = st.ReceiptColumns
	case settings.SettingDining:
		v = st.Dining
	}
	b, _ := json.Marshal(v)
	return b
}

// Settings returns the editable settings, as stored and as in force.
func (s *Staff) Settings(ctx context.Context, sessionID string) ([]Setting, error) {
	if _, err := s.session(sessionID); err != nil {
		return nil, err
	}
	all, err := s.cfg.Journal.Settings(ctx)
	if err != nil {
		return nil, journalErr(err, "Reading the settings")
	}
	warn := &warnings{}
	st, err := settings.LoadSettings(ctx, s.cfg.Journal, slog.New(warn))
	if err != nil {
		return nil, journalErr(err, "Reading the settings")
	}
	out := make([]Setting, 0, len(EditableSettings))
	for _, k := range EditableSettings {
		set := Setting{Key: k, Value: effective(st, k), Stored: json.RawMessage("null")}
		if raw, ok := all[k]; ok {
			set.Stored = raw
			set.Ignored = warn.about(k) != ""
			if !json.Valid(raw) {
				// A damaged row is shown as text, so that the list can
				// still be sent and the value set again.
				set.Stored, _ = json.Marshal(string(raw))
				set.Ignored = true
			}
		}
		out = append(out, set)
	}
	return out, nil
}

// SaveSetting validates value (JSON) for key by the kiosk's own rules and
// stores it only if the kiosk would take it: a bad value never replaces a
// good one. The change, old and new values, goes to the audit trail.
func (s *Staff) SaveSetting(ctx context.Context, sessionID, key string, value json.RawMessage) error {
	sess, err := s.session(sessionID)
	if err != nil {
		return err
	}
	if !slices.Contains(EditableSettings, key) {
		return errorf(EINVALID, "The setting %q cannot be changed from the staff screen.", key)
	}
	value = bytes.TrimSpace(value)
	if !json.Valid(value) || bytes.Equal(value, []byte("null")) {
		return errorf(EINVALID, "The value for %s is empty or not readable: nothing was changed.", key)
	}
	all, err := s.cfg.Journal.Settings(ctx)
	if err != nil {
		return journalErr(err, "Reading the settings")
	}
	if key == settings.SettingCurrency {
		if reason, err := s.checkCurrency(ctx, value); err != nil {
			return err
		} else if reason != "" {
			s.audit(ctx, sess.Who, "setting_refused", key, fmt.Sprintf("refused %s: %s", value, reason), nil)
			return errorf(EINVALID, "The value for %s was refused (%s): the previous value is kept.", key, reason)
		}
	}
	if reason, err := s.validate(ctx, all, key, value); err != nil {
		return err
	} else if reason != "" {
		s.audit(ctx, sess.Who, "setting_refused", key, fmt.Sprintf("refused %s: %s", value, reason), nil)
		return errorf(EINVALID, "The value for %s was refused (%s): the previous value is kept.", key, reason)
	}
	old, had := all[key]
	if err := s.cfg.Journal.SetSetting(ctx, key, value); err != nil {
		return journalErr(err, "Saving the setting")
	}
	if !had {
		old = json.RawMessage("null")
	}
	s.audit(ctx, sess.Who, "setting", key, fmt.Sprintf("%s → %s", old, value), nil)
	if s.cfg.OnSettingsChanged != nil {
		s.cfg.OnSettingsChanged(key)
	}
	return nil
}

// validate applies the kiosk's own LoadSettings to a copy of the settings
// with the new value, in a throw-away in-memory journal, and reports the
// kiosk's reason if it would ignore the value. (kiosk's validators are not
// exported: see the report.)
func (s *Staff) validate(ctx context.Context, all map[string]json.RawMessage, key string, value json.RawMessage) (string, error) {
	mem, err := journal.OpenMemory(ctx)
	if err != nil {
		return "", journalErr(err, "Checking the setting")
	}
	defer mem.Close()
	for _, k := range EditableSettings {
		v, ok := all[k]
		if k == key {
			v, ok = value, true
		}
		if !ok {
			continue
		}
		if err := mem.SetSetting(ctx, k, v); err != nil {
			return "", journalErr(err, "Checking the setting")
		}
	}
	warn := &warnings{}
	if _, err := settings.LoadSettings(ctx, mem, slog.New(warn)); err != nil {
		return "", journalErr(err, "Checking the setting")
	}
	if reason := warn.about(key); reason != "" {
		return reason, nil
	}
	if (key == settings.SettingLanguages || key == settings.SettingDefaultLanguage) && warn.languageMismatch() {
		return "the default language must be one of the languages offered", nil
	}
	return "", nil
}

// warnings is a slog.Handler keeping the kiosk's warnings about settings.
type warnings struct {
	mu      sync.Mutex
	records []map[string]string
}

func (w *warnings) Enabled(context.Context, slog.Level) bool { return true }

func (w *warnings) Handle(_ context.Context, r slog.Record) error {
	if r.Level < slog.LevelWarn {
		return nil
	}
	m := map[string]string{"msg": r.Message}
	r.Attrs(func(a slog.Attr) bool {
		m[a.Key] = a.Value.String()
		return true
	})
	w.mu.Lock()
	w.records = append(w.records, m)
	w.mu.Unlock()
	return nil
}

func (w *warnings) WithAttrs([]slog.Attr) slog.Handler { return w }
func (w *warnings) WithGroup(string) slog.Handler      { return w }

// about returns the reason of a warning about key, "" if none.
func (w *warnings) about(key string) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, r := range w.records {
		if r["key"] == key {
			if e := r["err"]; e != "" {
				return e
			}
			return "not valid"
		}
	}
	return ""
}

func (w *warnings) languageMismatch() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, r := range w.records {
		if _, ok := r["default"]; ok {
			if _, ok := r["offered"]; ok {
				return true
			}
		}
	}
	return false
}

// TerminalCurrencies are the currencies a terminal's merchant profile can
// have (the Local API specification).
var TerminalCurrencies = []string{"EUR", "CHF", "GBP"}

// checkCurrency checks a new kiosk currency against the terminal: the
// terminal charges in its merchant profile's currency, whatever the kiosk
// shows, so a kiosk in another currency would show prices it does not
// charge. Its recent history tells which currency that is; an empty history
// cannot disagree.
func (s *Staff) checkCurrency(ctx context.Context, value json.RawMessage) (string, error) {
	var cur string
	if err := json.Unmarshal(value, &cur); err != nil {
		return "not a currency code", nil
	}
	if !slices.Contains(TerminalCurrencies, cur) {
		return fmt.Sprintf("the terminal charges in %s only", strings.Join(TerminalCurrencies, ", ")), nil
	}
	tctx, cancel := s.terminalCtx(ctx)
	defer cancel()
	page, err := s.cfg.Terminal.History(tctx, device.HistoryQuery{Limit: 50})
	if err != nil {
		return "", &Error{Code: ETERMINAL, Err: err,
			Message: "The currency cannot be checked against the terminal, which does not answer: nothing was changed. Try again once it is on."}
	}
	for _, e := range page.Entries {
		if e.CurrencyCode != "" && !strings.EqualFold(e.CurrencyCode, cur) {
			return fmt.Sprintf("the terminal's payments are in %s, its merchant profile's currency", strings.ToUpper(e.CurrencyCode)), nil
		}
	}
	return "", nil
}
