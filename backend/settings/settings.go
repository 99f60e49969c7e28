// Package settings is the shop's settings as the journal keeps them: their
// keys, their checks and their defaults. The kiosk, staff mode, the fiscal
// journal and the command line read them here, so that none of them needs
// another to know what a setting means.
package settings

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/comptoir-pos/comptoir/backend/device"
	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/receipt"
)

// Keys of the settings the kiosk reads from the journal's settings table.
// Values are JSON. A missing value is the default below; one that does not
// parse (or is out of range) is the default too, with a warning in the log.
const (
	SettingMode            = "kiosk.mode"             // "kiosk" or "counter"
	SettingLanguages       = "kiosk.languages"        // ["fr","en","es"]
	SettingDefaultLanguage = "kiosk.default_language" // "fr"
	SettingCurrency        = "kiosk.currency"         // "EUR"; unset: the catalog's, else EUR
	SettingIdleSeconds     = "kiosk.idle_seconds"     // 60
	SettingVoucherCap      = "kiosk.meal_voucher_cap" // 2500 cents
	SettingMerchant        = "receipt.merchant"       // {"name","address":[],"vatNumber","footer":[],"qrUrl"}
	SettingReceiptFormat   = "receipt.format"         // receiptTicket of /payment: "text" or "escpos"
	SettingReceiptColumns  = "receipt.columns"        // 48 (80 mm) or 32 (58 mm)
	SettingDining          = "kiosk.dining"           // "ask", or "eat_in" or "take_away" for a shop that has only one
	// SettingNumberPrefix starts every order number of this kiosk ("A":
	// A1, A2...; its ids 20261122-A001...): each kiosk of a restaurant has
	// its own, so that numbers are unique in the restaurant without any
	// kiosk asking another. "" (the default): numbers alone.
	SettingNumberPrefix = "kiosk.number_prefix"
)

// Defaults of the settings.
const (
	DefaultMode           = "kiosk"
	DefaultLanguage       = "fr"
	DefaultCurrency       = "EUR"
	DefaultIdleSeconds    = 60
	DefaultVoucherCap     = 2500 // 25.00 €: the French daily meal-voucher cap
	DefaultReceiptFormat  = device.FormatText
	DefaultReceiptColumns = 48
	minIdleSeconds        = 10
	maxIdleSeconds        = 3600
	maxVoucherCap         = 100_000
	defaultMerchantName   = "Comptoir"
	defaultMerchantFooter = "Merci de votre visite !"
	receiptColumnsNarrow  = 32
	receiptColumnsWide    = 48
	// WarningMessage is the log's message for a stored value that is not
	// used: the default applies.
	WarningMessage = "setting ignored: the default applies"
)

// ModeCounter is the counter's mode (staff take the orders), beside
// DefaultMode, the self-service kiosk.
const ModeCounter = "counter"

// DefaultLanguages are the languages offered when the setting is unset.
var DefaultLanguages = []string{"fr", "en", "es"}

// Settings are the kiosk's settings, defaults applied.
type Settings struct {
	Mode            string
	Languages       []string
	DefaultLanguage string
	Currency        string // "" when unset: the catalog's currency applies
	IdleSeconds     int
	VoucherCap      int64
	Merchant        receipt.Merchant
	ReceiptFormat   device.Format
	ReceiptColumns  int
	// Dining is DiningAsk (the customer says, before the menu) or the one
	// way this shop serves.
	Dining string
	// NumberPrefix starts this kiosk's order numbers (SettingNumberPrefix).
	NumberPrefix string
}

// DiningAsk: the customer says whether the order is eaten in or taken away.
const DiningAsk = "ask"

// MerchantSetting is the stored form of receipt.Merchant (no logo): the
// value of SettingMerchant, as staff's settings form edits it.
type MerchantSetting struct {
	Name      string   `json:"name"`
	Address   []string `json:"address"`
	VATNumber string   `json:"vatNumber"`
	// SIRET is the French establishment number printed on receipts;
	// Country the merchant's (ISO 3166 alpha-2: FR applies the French
	// cash-register rules to the receipt's mentions).
	SIRET   string   `json:"siret,omitempty"`
	Country string   `json:"country,omitempty"`
	Footer  []string `json:"footer"`
	QRURL   string   `json:"qrUrl"`
}

// DefaultSettings are the settings of an empty settings table.
func DefaultSettings() Settings {
	return Settings{
		Mode: DefaultMode, Languages: slices.Clone(DefaultLanguages), DefaultLanguage: DefaultLanguage,
		IdleSeconds: DefaultIdleSeconds, VoucherCap: DefaultVoucherCap,
		Merchant:      receipt.Merchant{Name: defaultMerchantName, Footer: []string{defaultMerchantFooter}},
		ReceiptFormat: DefaultReceiptFormat, ReceiptColumns: DefaultReceiptColumns, Dining: DiningAsk,
	}
}

// LoadSettings reads the settings from the journal. Only a journal that
// cannot be read is an error; a bad value falls back to its default.
func LoadSettings(ctx context.Context, db *journal.DB, log *slog.Logger) (Settings, error) {
	s := DefaultSettings()
	if db == nil {
		return s, nil
	}
	all, err := db.Settings(ctx)
	if err != nil {
		return s, err
	}
	r := reader{all: all, log: log}
	r.screens(&s)
	r.orders(&s)
	return s, nil
}

// reader reads the stored values, each checked before it is believed.
type reader struct {
	all map[string]json.RawMessage
	log *slog.Logger
}

// read decodes one value and checks it; an error keeps the default.
func (r reader) read(key string, into any, ok func() error) {
	raw, found := r.all[key]
	if !found {
		return
	}
	if err := json.Unmarshal(raw, into); err != nil {
		r.log.Warn(WarningMessage, "key", key, "value", string(raw), "err", err)
		return
	}
	if ok != nil {
		if err := ok(); err != nil {
			r.log.Warn(WarningMessage, "key", key, "value", string(raw), "err", err)
			return
		}
	}
}

// screens reads what the customer screens show: the mode, the languages,
// the currency, the idle timeout and the meal-voucher cap.
func (r reader) screens(s *Settings) {
	read := r.read
	var mode string
	read(SettingMode, &mode, func() error {
		if mode != DefaultMode && mode != ModeCounter {
			return fmt.Errorf("mode must be kiosk or counter")
		}
		s.Mode = mode
		return nil
	})
	var langs []string
	read(SettingLanguages, &langs, func() error {
		if len(langs) == 0 {
			return fmt.Errorf("no language")
		}
		for _, l := range langs {
			if !slices.Contains(DefaultLanguages, l) {
				return fmt.Errorf("language %q is not one of fr, en, es", l)
			}
		}
		s.Languages = slices.Compact(langs)
		return nil
	})
	var def string
	read(SettingDefaultLanguage, &def, func() error {
		if !slices.Contains(DefaultLanguages, def) {
			return fmt.Errorf("language %q is not one of fr, en, es", def)
		}
		s.DefaultLanguage = def
		return nil
	})
	if !slices.Contains(s.Languages, s.DefaultLanguage) {
		r.log.Warn("the default language is not offered: the first offered one is the default", "default", s.DefaultLanguage, "offered", s.Languages)
		s.DefaultLanguage = s.Languages[0]
	}
	var cur string
	read(SettingCurrency, &cur, func() error {
		if !IsCurrency(cur) {
			return fmt.Errorf("not an ISO 4217 code")
		}
		s.Currency = cur
		return nil
	})
	var idle int
	read(SettingIdleSeconds, &idle, func() error {
		if idle < minIdleSeconds || idle > maxIdleSeconds {
			return fmt.Errorf("must be between %d and %d seconds", minIdleSeconds, maxIdleSeconds)
		}
		s.IdleSeconds = idle
		return nil
	})
	var vcap int64
	read(SettingVoucherCap, &vcap, func() error {
		if vcap < 0 || vcap > maxVoucherCap {
			return fmt.Errorf("must be between 0 and %d cents", maxVoucherCap)
		}
		s.VoucherCap = vcap
		return nil
	})
}

// orders reads what an order and its receipt say: the merchant, the
// receipt's format and width, where orders are eaten, and the number's
// prefix.
func (r reader) orders(s *Settings) {
	read, log := r.read, r.log
	var m MerchantSetting
	read(SettingMerchant, &m, func() error {
		s.Merchant = receipt.Merchant{Name: m.Name, Address: m.Address, VATNumber: m.VATNumber, SIRET: m.SIRET,
			Country: strings.ToUpper(strings.TrimSpace(m.Country)), Footer: m.Footer, QRURL: m.QRURL}
		// A bad QR address loses the QR code only, not the merchant's
		// name on every receipt; staff's check refuses it by this warning.
		if err := receipt.CheckQRURL(m.QRURL); err != nil {
			log.Warn("setting's qrUrl ignored: no QR code is printed", "key", SettingMerchant, "value", m.QRURL, "err", "qrUrl: "+err.Error())
			s.Merchant.QRURL = ""
		}
		return nil
	})
	var format device.Format
	read(SettingReceiptFormat, &format, func() error {
		if format != device.FormatText && format != device.FormatESCPOS {
			return fmt.Errorf("must be text or escpos")
		}
		s.ReceiptFormat = format
		return nil
	})
	var dining string
	read(SettingDining, &dining, func() error {
		switch dining {
		case DiningAsk, receipt.DiningEatIn, receipt.DiningTakeAway:
			s.Dining = dining
			return nil
		}
		return fmt.Errorf("must be ask, eat_in or take_away")
	})
	var cols int
	read(SettingReceiptColumns, &cols, func() error {
		if cols != receiptColumnsNarrow && cols != receiptColumnsWide {
			return fmt.Errorf("must be 32 or 48")
		}
		s.ReceiptColumns = cols
		return nil
	})
	read(SettingNumberPrefix, &s.NumberPrefix, func() error { return checkNumberPrefix(&s.NumberPrefix) })
}

// checkNumberPrefix takes one to three capital letters or digits, ending
// in a letter (so that "A" then 12 reads A12, never a longer number), or
// nothing; a bad value is the default, no prefix.
func checkNumberPrefix(p *string) error {
	v := *p
	ok := len(v) <= 3 && (v == "" || (v[len(v)-1] >= 'A' && v[len(v)-1] <= 'Z'))
	for i := 0; ok && i < len(v); i++ {
		ok = (v[i] >= 'A' && v[i] <= 'Z') || (v[i] >= '0' && v[i] <= '9')
	}
	if !ok {
		*p = ""
		return fmt.Errorf("one to three capital letters or digits, ending in a letter")
	}
	return nil
}

// IsCurrency reports whether c has the shape of an ISO 4217 code: three
// capital letters.
func IsCurrency(c string) bool {
	if len(c) != 3 {
		return false
	}
	for _, r := range c {
		if r < 'A' || r > 'Z' {
			return false
		}
	}
	return true
}
