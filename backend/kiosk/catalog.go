package kiosk

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/comptoir-pos/comptoir/backend/settings"
)

// CatalogFile is the catalog's file name in the data directory. Without
// one, the embedded demo menu (a café-bakery) is served.
const CatalogFile = "catalog.json"

//go:embed menu/demo.json
var demoMenu []byte

// demoImages are the demo menu's pictures, drawn for it (menu/images).
//
//go:embed menu/images
var demoImages embed.FS

// DemoMenu returns the embedded demo menu's JSON.
func DemoMenu() []byte { return bytes.Clone(demoMenu) }

func (e *CatalogError) Error() string {
	var sb strings.Builder
	sb.WriteString("catalog")
	if e.File != "" {
		sb.WriteString(" " + e.File)
	}
	if e.Line > 0 {
		fmt.Fprintf(&sb, " line %d", e.Line)
		if e.Column > 0 {
			fmt.Fprintf(&sb, " column %d", e.Column)
		}
	}
	if e.Field != "" {
		sb.WriteString(", field " + e.Field)
	}
	return sb.String() + ": " + e.Reason
}

// catalogJSON is the file's schema.
type catalogJSON struct {
	Currency   string         `json:"currency"`
	Categories []categoryJSON `json:"categories"`
}

type categoryJSON struct {
	ID       string        `json:"id"`
	Name     Text          `json:"name"`
	Image    string        `json:"image"`
	Products []productJSON `json:"products"`
}

type productJSON struct {
	ID          string `json:"id"`
	Name        Text   `json:"name"`
	Description Text   `json:"description"`
	Price       int64  `json:"price"`
	VATRate     int    `json:"vatRate"`
	// The rate eaten in and taken away, when they differ from VATRate
	// (in France, 10 % eaten in and 5.5 % taken away for many foods).
	VATRateEatIn    *int        `json:"vatRateEatIn"`
	VATRateTakeAway *int        `json:"vatRateTakeAway"`
	MealVoucher     bool        `json:"mealVoucher"`
	Image           string      `json:"image"`
	Allergens       []string    `json:"allergens"`
	Suggest         []string    `json:"suggest"`
	Options         []groupJSON `json:"options"`
}

// groupJSON is a choice the customer makes: a size (one of, required), a
// cooking, sauces (several, optional).
type groupJSON struct {
	ID      string       `json:"id"`
	Name    Text         `json:"name"`
	Min     int          `json:"min"`
	Max     int          `json:"max"`
	Choices []choiceJSON `json:"choices"`
}

// choiceJSON is one option: its extra price (VAT included), and its own VAT
// rate and meal-voucher eligibility when they differ from the product's.
// A choice that names a product of the catalog is a part of a menu: it
// takes that product's name, picture, VAT rates and meal-voucher
// eligibility, and its price is the supplement for choosing it.
type choiceJSON struct {
	ID          string `json:"id"`
	Product     string `json:"product"`
	Name        Text   `json:"name"`
	Price       int64  `json:"price"`
	VATRate     *int   `json:"vatRate"`
	MealVoucher *bool  `json:"mealVoucher"`
}

// Allergens are the 14 allergens EU law makes a menu name (Regulation (EU)
// No 1169/2011, Annex II), as a catalog spells them. A catalog names a
// product's allergens by these keys and the customer screens say them in
// the customer's language: words of the catalog's own would stay in one.
var Allergens = []string{
	"gluten", "crustaceans", "eggs", "fish", "peanuts", "soybeans", "milk",
	"nuts", "celery", "mustard", "sesame", "sulphites", "lupin", "molluscs",
}

// The keys each object may have: a misspelt key ("prcie") would otherwise
// be silently ignored and the product sold at 0.
var (
	rootKeys     = []string{"currency", "categories"}
	categoryKeys = []string{"id", "name", "image", "products"}
	productKeys  = []string{"id", "name", "description", "price", "vatRate", "vatRateEatIn", "vatRateTakeAway", "mealVoucher", "image", "allergens", "suggest", "options"}
	groupKeys    = []string{"id", "name", "min", "max", "choices"}
	choiceKeys   = []string{"id", "product", "name", "price", "vatRate", "mealVoucher"}
)

// Catalog is a validated menu, indexed by product id.
type Catalog struct {
	view     CatalogView
	products map[string]ProductView
	rates    map[string]diningRates
	// choices are each product's options with their VAT and voucher
	// eligibility, by "group/choice".
	choices map[string]map[string]choiceInfo
	// media holds the pictures the catalog names, by their path in it:
	// the catalog's folder, or the demo's embedded images.
	media fs.FS
}

// choiceInfo is what the kiosk needs of a chosen option.
type choiceInfo struct {
	group, id   string
	name        Text
	price       int64
	vatRate     *int // nil: the product's rate (a menu's part: its product's)
	mealVoucher bool
	product     string // a menu's part: the product chosen
}

// diningRates are a product's VAT rates eaten in and taken away.
type diningRates struct{ eatIn, takeAway int }

// VATRate is the product's VAT rate where the order is eaten: its own
// rate for that, else its vatRate.
func (c *Catalog) VATRate(id string, d Dining) int {
	r, ok := c.rates[id]
	switch {
	case !ok:
		return c.products[id].VATRate
	case d == DiningTakeAway:
		return r.takeAway
	default:
		return r.eatIn
	}
}

// View is the menu as the UI shows it.
func (c *Catalog) View() CatalogView { return c.view }

// Product returns the product with this id.
func (c *Catalog) Product(id string) (ProductView, bool) {
	p, ok := c.products[id]
	return p, ok
}

// ParseCatalog validates a catalog file's content. name is used in errors.
func ParseCatalog(name string, data []byte) (*Catalog, error) {
	if off := checkDepth(data); off >= 0 {
		line, col := lineCol(data, off)
		return nil, &CatalogError{File: name, Line: line, Column: col,
			Reason: fmt.Sprintf("nested deeper than %d levels (a catalog's deepest field, an option's name, is 10 levels down)", MaxCatalogDepth)}
	}
	pos, err := scanPositions(data)
	if err != nil {
		return nil, syntaxError(name, data, err)
	}
	var raw catalogJSON
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, syntaxError(name, data, err)
	}
	fail := failAt(name, data, pos)
	if err := checkKeys(pos, fail); err != nil {
		return nil, err
	}
	if raw.Currency != "" && !settings.IsCurrency(raw.Currency) {
		return nil, fail("", "currency", "must be an ISO 4217 code such as EUR")
	}
	if len(raw.Categories) == 0 {
		return nil, fail("", "categories", "at least one category is required")
	}
	c := &Catalog{view: CatalogView{Currency: raw.Currency, Categories: []CategoryView{}}, products: map[string]ProductView{},
		rates: map[string]diningRates{}, choices: map[string]map[string]choiceInfo{}}
	categories := map[string]bool{}
	for i, cat := range raw.Categories {
		cv, err := c.parseCategory(i, cat, categories, pos, fail)
		if err != nil {
			return nil, err
		}
		c.view.Categories = append(c.view.Categories, cv)
	}
	if err := c.resolveAll(raw, fail); err != nil {
		return nil, err
	}
	return c, nil
}

// LoadCatalog reads dir/catalog.json, or returns the embedded demo menu when
// the file does not exist (or dir is "").
func LoadCatalog(dir string) (*Catalog, error) {
	if dir != "" {
		p := filepath.Join(dir, CatalogFile)
		data, err := os.ReadFile(p)
		switch {
		case err == nil:
			c, err := ParseCatalog(p, data)
			if c != nil {
				c.media = os.DirFS(dir)
			}
			return c, err
		case !errors.Is(err, os.ErrNotExist):
			return nil, fmt.Errorf("catalog: %w", err)
		}
	}
	c, err := ParseCatalog("", demoMenu)
	if c != nil {
		c.media, _ = fs.Sub(demoImages, "menu")
	}
	return c, err
}
