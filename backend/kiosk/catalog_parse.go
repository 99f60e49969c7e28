package kiosk

import (
	"fmt"
	"slices"
	"strings"
)

// failAt makes the errors of a catalog file: a field's path, and the line
// and column of its key (or of its object, when the key is missing).
func failAt(name string, data []byte, pos *positions) func(path, field, reason string) error {
	return func(path, field, reason string) error {
		full := path
		if field != "" {
			if full != "" {
				full += "."
			}
			full += field
		}
		off, ok := pos.keys[full]
		if !ok {
			off = pos.objects[path]
		}
		line, col := lineCol(data, off)
		return &CatalogError{File: name, Line: line, Column: col, Field: full, Reason: reason}
	}
}

// checkKeys refuses a key the schema does not have.
func checkKeys(pos *positions, fail func(path, field, reason string) error) error {
	// Unknown keys first: they explain the errors that follow from them.
	for _, obj := range pos.order {
		var allowed []string
		switch obj.kind {
		case "root":
			allowed = rootKeys
		case "category":
			allowed = categoryKeys
		case "product":
			allowed = productKeys
		case "group":
			allowed = groupKeys
		case "choice":
			allowed = choiceKeys
		default:
			continue
		}
		for _, k := range obj.keys {
			if !slices.Contains(allowed, k) {
				return fail(obj.path, k, fmt.Sprintf("unknown field %q (expected one of %s)", k, strings.Join(allowed, ", ")))
			}
		}
	}
	return nil
}

// parseCategory checks a category and its products, adding the products
// to the catalog; categories are the ids of the categories before it.
func (c *Catalog) parseCategory(i int, cat categoryJSON, categories map[string]bool, pos *positions, fail func(path, field, reason string) error) (CategoryView, error) {
	cp := fmt.Sprintf("categories[%d]", i)
	switch {
	case strings.TrimSpace(cat.ID) == "":
		return CategoryView{}, fail(cp, "id", "is required")
	case categories[cat.ID]:
		return CategoryView{}, fail(cp, "id", fmt.Sprintf("duplicate category id %q", cat.ID))
	}
	categories[cat.ID] = true
	if reason := checkText(cat.Name, true); reason != "" {
		return CategoryView{}, fail(cp, "name", reason)
	}
	if reason := checkImage(cat.Image); reason != "" {
		return CategoryView{}, fail(cp, "image", reason)
	}
	cv := CategoryView{ID: cat.ID, Name: cat.Name, Image: imageURL(cat.Image), Products: []ProductView{}}
	for j, p := range cat.Products {
		pv, err := c.parseProduct(fmt.Sprintf("%s.products[%d]", cp, j), p, pos, fail)
		if err != nil {
			return CategoryView{}, err
		}
		cv.Products = append(cv.Products, pv)
	}
	return cv, nil
}

// parseProduct checks a product (its fields, then its options) and adds
// it to the catalog; pp is its path in the file.
func (c *Catalog) parseProduct(pp string, p productJSON, pos *positions, fail func(path, field, reason string) error) (ProductView, error) {
	if err := c.checkProduct(pp, p, pos, fail); err != nil {
		return ProductView{}, err
	}
	groups, chosen, err := parseGroups(p, pp, fail)
	if err != nil {
		return ProductView{}, err
	}
	if _, err := dearestUnit(p); err != nil {
		return ProductView{}, fail(pp, "price", err.Error())
	}
	c.choices[p.ID] = chosen
	pv := ProductView{Options: groups,
		ID: p.ID, Name: p.Name, Description: p.Description, Price: p.Price, VATRate: p.VATRate,
		MealVoucher: p.MealVoucher, Image: imageURL(p.Image), Allergens: p.Allergens, Suggest: p.Suggest,
	}
	if len(pv.Description) == 0 {
		pv.Description = nil
	}
	c.products[p.ID] = pv
	return pv, nil
}

// checkProduct checks a product's own fields (its options aside) and
// records its VAT rates eaten in and taken away.
func (c *Catalog) checkProduct(pp string, p productJSON, pos *positions, fail func(path, field, reason string) error) error {
	switch {
	case strings.TrimSpace(p.ID) == "":
		return fail(pp, "id", "is required")
	case c.products[p.ID].ID != "":
		return fail(pp, "id", fmt.Sprintf("duplicate product id %q", p.ID))
	}
	if reason := checkText(p.Name, true); reason != "" {
		return fail(pp, "name", reason)
	}
	if reason := checkText(p.Description, false); reason != "" {
		return fail(pp, "description", reason)
	}
	if _, ok := pos.keys[pp+".price"]; !ok {
		return fail(pp, "price", "is required (cents, VAT included)")
	}
	if p.Price <= 0 || p.Price > MaxPrice {
		return fail(pp, "price", fmt.Sprintf("must be a positive number of cents up to %d, not %d", MaxPrice, p.Price))
	}
	if _, ok := pos.keys[pp+".vatRate"]; !ok {
		return fail(pp, "vatRate", "is required (basis points: 550 is 5.5 %, 0 for none)")
	}
	if p.VATRate < 0 || p.VATRate > MaxVATRate {
		return fail(pp, "vatRate", fmt.Sprintf("must be in basis points between 0 and %d, not %d", MaxVATRate, p.VATRate))
	}
	rates := diningRates{p.VATRate, p.VATRate}
	for _, r := range []struct {
		field string
		from  *int
		to    *int
	}{{"vatRateEatIn", p.VATRateEatIn, &rates.eatIn}, {"vatRateTakeAway", p.VATRateTakeAway, &rates.takeAway}} {
		if r.from == nil {
			continue
		}
		if *r.from < 0 || *r.from > MaxVATRate {
			return fail(pp, r.field, fmt.Sprintf("must be in basis points between 0 and %d, not %d", MaxVATRate, *r.from))
		}
		*r.to = *r.from
	}
	c.rates[p.ID] = rates
	if reason := checkImage(p.Image); reason != "" {
		return fail(pp, "image", reason)
	}
	for k, a := range p.Allergens {
		field := fmt.Sprintf("allergens[%d]", k)
		switch {
		case strings.TrimSpace(a) == "":
			return fail(pp, field, "is empty")
		case !slices.Contains(Allergens, a):
			return fail(pp, field, fmt.Sprintf("%q is not one of the allergens the kiosk names in every language: %s", a, strings.Join(Allergens, ", ")))
		case slices.Contains(p.Allergens[:k], a):
			return fail(pp, field, fmt.Sprintf("%q is listed twice", a))
		}
	}
	return nil
}

// resolveAll checks the suggestions and a menu's parts.
func (c *Catalog) resolveAll(raw catalogJSON, fail func(path, field, reason string) error) error {
	// A suggestion names a product of the catalog, not itself, and a
	// menu's part a product that is not a menu: checked once every product
	// is known.
	for i, cat := range raw.Categories {
		for j, p := range cat.Products {
			if err := c.resolveParts(p, fmt.Sprintf("categories[%d].products[%d]", i, j), fail); err != nil {
				return err
			}
			for k, id := range p.Suggest {
				if _, ok := c.products[id]; !ok || id == p.ID {
					return fail(fmt.Sprintf("categories[%d].products[%d]", i, j), fmt.Sprintf("suggest[%d]", k),
						fmt.Sprintf("%q is not another product of the catalog", id))
				}
			}
		}
	}
	return nil
}

func checkText(t Text, required bool) string {
	if required && len(t) == 0 {
		return `is required, in every language: {"fr": "...", "en": "...", "es": "..."}`
	}
	for lang, s := range t {
		if strings.TrimSpace(s) == "" {
			return fmt.Sprintf("the %q text is empty", lang)
		}
	}
	return ""
}
