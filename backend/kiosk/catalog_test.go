package kiosk

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/comptoir-pos/comptoir/backend/settings"
)

func TestEmbeddedMenuIsValid(t *testing.T) {
	c, err := ParseCatalog("", DemoMenu())
	if err != nil {
		t.Fatal(err)
	}
	v := c.View()
	n := 0
	for _, cat := range v.Categories {
		for _, l := range settings.DefaultLanguages {
			if cat.Name[l] == "" {
				t.Errorf("category %s has no %s name", cat.ID, l)
			}
		}
		for _, p := range cat.Products {
			n++
			for _, l := range settings.DefaultLanguages {
				if p.Name[l] == "" {
					t.Errorf("product %s has no %s name", p.ID, l)
				}
			}
			switch p.VATRate {
			case 550, 1000, 2000:
			default:
				t.Errorf("product %s: VAT rate %d is not a French rate", p.ID, p.VATRate)
			}
			for _, a := range p.Allergens {
				if !slices.Contains(Allergens, a) {
					t.Errorf("product %s: allergen %q is none of the 14", p.ID, a)
				}
			}
			// The simulator gives x.51 to x.59 scripted behaviours.
			if c := p.Price % 100; c > 50 && c < 60 {
				t.Errorf("product %s: price %d ends in a simulator test amount", p.ID, p.Price)
			}
		}
	}
	if v.Currency != "EUR" || len(v.Categories) < 4 || n < 14 {
		t.Fatalf("demo menu: %s, %d categories, %d products", v.Currency, len(v.Categories), n)
	}
}

const validCatalog = `{
  "currency": "EUR",
  "categories": [
    {
      "id": "pains",
      "name": {"fr": "Pains", "en": "Bread"},
      "products": [
        {"id": "baguette", "name": {"fr": "Baguette"}, "price": 120, "vatRate": 550, "mealVoucher": true},
        {"id": "boule", "name": {"fr": "Boule"}, "price": 300, "vatRate": 550}
      ]
    }
  ]
}
`

func TestParseCatalogErrors(t *testing.T) {
	for _, tc := range []struct {
		name       string
		edit       func(string) string
		line       int
		field, why string
	}{
		{"negative price", func(s string) string { return strings.Replace(s, `"price": 300`, `"price": -300`, 1) },
			9, "categories[0].products[1].price", "positive"},
		{"missing price", func(s string) string { return strings.Replace(s, `"price": 300, `, ``, 1) },
			9, "categories[0].products[1].price", "required"},
		{"duplicate id", func(s string) string { return strings.Replace(s, `"id": "boule"`, `"id": "baguette"`, 1) },
			9, "categories[0].products[1].id", "duplicate"},
		{"unknown field", func(s string) string { return strings.Replace(s, `"price": 300`, `"prix": 300`, 1) },
			9, "categories[0].products[1].prix", "unknown field"},
		{"vat too high", func(s string) string { return strings.Replace(s, `"vatRate": 550}`, `"vatRate": 55000}`, 1) },
			9, "categories[0].products[1].vatRate", "basis points"},
		{"take-away vat negative", func(s string) string {
			return strings.Replace(s, `"vatRate": 550}`, `"vatRate": 1000, "vatRateTakeAway": -550}`, 1)
		},
			9, "categories[0].products[1].vatRateTakeAway", "basis points"},
		{"unknown suggestion", func(s string) string {
			return strings.Replace(s, `"vatRate": 550}`, `"vatRate": 550, "suggest": ["baguette", "caviar"]}`, 1)
		},
			9, "categories[0].products[1].suggest[1]", "not another product"},
		{"wrong type", func(s string) string { return strings.Replace(s, `"price": 120`, `"price": "1,20"`, 1) },
			8, "categories.products.price", "whole number"},
		{"syntax", func(s string) string {
			return strings.Replace(s, `"vatRate": 550, "mealVoucher"`, `"vatRate": 550 "mealVoucher"`, 1)
		},
			8, "", "invalid JSON"},
		{"allergen in words", func(s string) string {
			return strings.Replace(s, `"vatRate": 550}`, `"vatRate": 550, "allergens": ["gluten", "lait"]}`, 1)
		},
			9, "categories[0].products[1].allergens[1]", `"lait" is not one of the allergens`},
		{"allergen twice", func(s string) string {
			return strings.Replace(s, `"vatRate": 550}`, `"vatRate": 550, "allergens": ["milk", "gluten", "milk"]}`, 1)
		},
			9, "categories[0].products[1].allergens[2]", "listed twice"},
		{"empty name", func(s string) string { return strings.Replace(s, `{"fr": "Boule"}`, `{"fr": " "}`, 1) },
			9, "categories[0].products[1].name", "empty"},
		{"no categories", func(string) string { return `{"categories": []}` }, 1, "categories", "at least one"},
		{"truncated", func(s string) string { return s[:len(s)/2] }, 8, "", "invalid JSON"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseCatalog("catalog.json", []byte(tc.edit(validCatalog)))
			var ce *CatalogError
			if !errors.As(err, &ce) {
				t.Fatalf("error %v is not a *CatalogError", err)
			}
			if ce.Line != tc.line || ce.Field != tc.field || !strings.Contains(ce.Reason, tc.why) {
				t.Fatalf("got line %d field %q reason %q; want line %d field %q reason ~%q", ce.Line, ce.Field, ce.Reason, tc.line, tc.field, tc.why)
			}
			if !strings.Contains(err.Error(), "line ") {
				t.Fatalf("message does not name the line: %s", err)
			}
		})
	}
}

// nestedCatalog is a catalog whose unknown field x holds depth objects
// nested in one another, each with one key of keyLen bytes: depth+1
// levels in all.
func nestedCatalog(depth, keyLen int) []byte {
	k := `"` + strings.Repeat("k", keyLen) + `":`
	return []byte(`{"currency":"EUR","categories":[],"x":` + strings.Repeat("{"+k, depth) + "1" + strings.Repeat("}", depth) + "}")
}

// allocated is how many bytes f allocates.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// A catalog nests MaxCatalogDepth levels at most: deeper (here a megabyte
// of 9,000 nested objects with long keys, which a menu from head office
// can be) is refused before anything else reads it, naming its line; and
// what reading a catalog keeps grows with the file, not with its depth
// times its size (a dotted path for every key cost gigabytes).
func TestADeeplyNestedCatalogIsRefusedCheaply(t *testing.T) {
	var ce *CatalogError
	_, err := ParseCatalog("catalog.json", nestedCatalog(MaxCatalogDepth-1, 8))
	if !errors.As(err, &ce) || ce.Field != "x" || !strings.Contains(ce.Reason, "unknown field") {
		t.Fatalf("a catalog at the limit: %v, want it read (and refused for its unknown field)", err)
	}
	_, err = ParseCatalog("catalog.json", nestedCatalog(MaxCatalogDepth, 8))
	if !errors.As(err, &ce) || ce.Line != 1 || !strings.Contains(ce.Reason, "nested deeper than 16 levels") {
		t.Fatalf("a catalog one level too deep: %v", err)
	}
	// Brackets in a string are text.
	quoted := strings.Replace(validCatalog, `"Boule"`, `"`+strings.Repeat("{[", 40)+`"`, 1)
	if _, err := ParseCatalog("catalog.json", []byte(quoted)); err != nil {
		t.Fatalf("a name full of brackets: %v", err)
	}

	deep := nestedCatalog(9000, 100)
	if n := allocated(func() { _, err = ParseCatalog("catalog.json", deep) }); n > uint64(len(deep)) {
		t.Errorf("refusing a %d KiB catalog nested 9,000 deep allocated %d KiB", len(deep)>>10, n>>10)
	}
	if !errors.As(err, &ce) || ce.Line != 1 || !strings.Contains(ce.Reason, "nested deeper") {
		t.Fatalf("a catalog nested 9,000 deep: %v", err)
	}
	// The walk that records positions, were it given such a file.
	if n := allocated(func() { _, _ = scanPositions(deep) }); n > 8*uint64(len(deep)) {
		t.Errorf("walking a %d KiB catalog nested 9,000 deep allocated %d KiB", len(deep)>>10, n>>10)
	}
}

func TestReloadKeepsThePreviousCatalog(t *testing.T) {
	e := newEnv(t, withCatalog(validCatalog))
	if got := e.s.Catalog(); len(got.Categories) != 1 || len(got.Categories[0].Products) != 2 {
		t.Fatalf("catalog from the data directory: %+v", got)
	}
	bad := strings.Replace(validCatalog, `"price": 300`, `"price": -1`, 1)
	if err := os.WriteFile(filepath.Join(e.dir, CatalogFile), []byte(bad), 0o600); err != nil {
		t.Fatal(err)
	}
	err := e.s.Reload()
	var ce *CatalogError
	if !errors.As(err, &ce) || ce.Line != 9 || ce.Field != "categories[0].products[1].price" {
		t.Fatalf("reload error %v", err)
	}
	if got := e.s.Catalog(); len(got.Categories) != 1 || got.Categories[0].Products[1].Price != 300 {
		t.Fatalf("the previous catalog did not stay: %+v", got)
	}
	// The kiosk still sells from it.
	e.cart("boule", 1)
	if v := e.s.Checkout(); v.Total != 300 {
		t.Fatalf("total %d", v.Total)
	}
	good := strings.Replace(validCatalog, `"price": 300`, `"price": 320`, 1)
	if err := os.WriteFile(filepath.Join(e.dir, CatalogFile), []byte(good), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := e.s.Reload(); err != nil {
		t.Fatal(err)
	}
	if p := e.s.Catalog().Categories[0].Products[1]; p.Price != 320 {
		t.Fatalf("reloaded price %d", p.Price)
	}
}

func TestInvalidCatalogAtStartIsUnavailable(t *testing.T) {
	e := newEnv(t, withCatalog(`{"categories": [}`))
	v := e.waitPhase(PhaseUnavailable)
	if p := e.s.Terminal().Problem; !strings.Contains(p, "line 1") {
		t.Fatalf("problem %q", p)
	}
	if v, _ := e.s.Start("fr"); v.Error != ErrTerminalUnavailable {
		t.Fatalf("Start: %q", v.Error)
	}
	_ = v
}
