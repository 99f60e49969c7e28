package kiosk

import (
	"fmt"
	"strings"
)

// parseGroups checks a product's option groups and returns them as the UI
// shows them, and the choices by "group/choice".
func parseGroups(p productJSON, pp string, fail func(path, field, reason string) error) ([]OptionGroupView, map[string]choiceInfo, error) {
	var groups []OptionGroupView
	chosen := map[string]choiceInfo{}
	seenGroups := map[string]bool{}
	for g, grp := range p.Options {
		gp := fmt.Sprintf("%s.options[%d]", pp, g)
		switch {
		case strings.TrimSpace(grp.ID) == "" || strings.ContainsAny(grp.ID, "/~"):
			return nil, nil, fail(gp, "id", "is required, without / or ~")
		case seenGroups[grp.ID]:
			return nil, nil, fail(gp, "id", fmt.Sprintf("duplicate option group %q", grp.ID))
		case len(grp.Choices) == 0:
			return nil, nil, fail(gp, "choices", "at least one choice is required")
		case grp.Max == 0:
			grp.Max = 1
		}
		seenGroups[grp.ID] = true
		if reason := checkText(grp.Name, true); reason != "" {
			return nil, nil, fail(gp, "name", reason)
		}
		if grp.Min < 0 || grp.Max < 1 || grp.Min > grp.Max || grp.Max > len(grp.Choices) {
			return nil, nil, fail(gp, "max", fmt.Sprintf("min %d and max %d must satisfy 0 <= min <= max <= %d choices", grp.Min, grp.Max, len(grp.Choices)))
		}
		gv := OptionGroupView{ID: grp.ID, Name: grp.Name, Min: grp.Min, Max: grp.Max, Choices: []OptionView{}}
		for k, ch := range grp.Choices {
			cp := fmt.Sprintf("%s.choices[%d]", gp, k)
			key := grp.ID + "/" + ch.ID
			switch {
			case strings.TrimSpace(ch.ID) == "" || strings.ContainsAny(ch.ID, "/~"):
				return nil, nil, fail(cp, "id", "is required, without / or ~")
			case chosen[key].id != "":
				return nil, nil, fail(cp, "id", fmt.Sprintf("duplicate choice %q", ch.ID))
			case ch.Price < 0 || ch.Price > MaxPrice:
				return nil, nil, fail(cp, "price", fmt.Sprintf("must be cents between 0 and %d, not %d", MaxPrice, ch.Price))
			case ch.VATRate != nil && (*ch.VATRate < 0 || *ch.VATRate > MaxVATRate):
				return nil, nil, fail(cp, "vatRate", fmt.Sprintf("must be in basis points between 0 and %d", MaxVATRate))
			}
			if reason := checkText(ch.Name, ch.Product == ""); reason != "" {
				return nil, nil, fail(cp, "name", reason)
			}
			if ch.Product != "" && ch.VATRate != nil {
				return nil, nil, fail(cp, "vatRate", "a menu's part is taxed at its product's rate: leave vatRate out")
			}
			voucher := p.MealVoucher
			if ch.MealVoucher != nil {
				voucher = *ch.MealVoucher
			}
			chosen[key] = choiceInfo{group: grp.ID, id: ch.ID, name: ch.Name, price: ch.Price, vatRate: ch.VATRate, mealVoucher: voucher, product: ch.Product}
			gv.Choices = append(gv.Choices, OptionView{ID: ch.ID, Name: ch.Name, Price: ch.Price, Product: ch.Product})
		}
		groups = append(groups, gv)
	}
	return groups, chosen, nil
}

// resolveParts fills a menu's parts from the products they name: name
// (unless the choice has its own), picture and, unless the choice says
// otherwise, meal-voucher eligibility.
func (c *Catalog) resolveParts(p productJSON, pp string, fail func(path, field, reason string) error) error {
	pv := c.products[p.ID]
	for g, grp := range p.Options {
		for k, ch := range grp.Choices {
			if ch.Product == "" {
				continue
			}
			cp := fmt.Sprintf("%s.options[%d].choices[%d]", pp, g, k)
			part, ok := c.products[ch.Product]
			switch {
			case !ok || ch.Product == p.ID:
				return fail(cp, "product", fmt.Sprintf("%q is not another product of the catalog", ch.Product))
			case isMenu(part):
				return fail(cp, "product", fmt.Sprintf("%q is a menu itself: a menu's parts are single products", ch.Product))
			}
			key := grp.ID + "/" + ch.ID
			info := c.choices[p.ID][key]
			if len(info.name) == 0 {
				info.name = part.Name
			}
			if ch.MealVoucher == nil {
				info.mealVoucher = part.MealVoucher
			}
			c.choices[p.ID][key] = info
			// The views share their choices with the category's copy.
			ov := &pv.Options[g].Choices[k]
			ov.Name, ov.Image = info.name, part.Image
		}
	}
	return nil
}

// isMenu: some of the product's choices are other products.
func isMenu(p ProductView) bool {
	for _, g := range p.Options {
		for _, ch := range g.Choices {
			if ch.Product != "" {
				return true
			}
		}
	}
	return false
}

// Choose checks the customer's choices for a product ("group/choice", in
// any order) against its groups' min and max, and returns them in the
// catalog's order.
func (c *Catalog) Choose(id string, picks []string) ([]choiceInfo, bool) {
	p, ok := c.products[id]
	if !ok {
		return nil, false
	}
	all := c.choices[id]
	count := map[string]int{}
	seen := map[string]bool{}
	for _, k := range picks {
		if _, ok := all[k]; !ok || seen[k] {
			return nil, false
		}
		seen[k] = true
		count[all[k].group]++
	}
	var out []choiceInfo
	for _, g := range p.Options {
		if n := count[g.ID]; n < g.Min || n > g.Max {
			return nil, false
		}
		for _, ch := range g.Choices {
			if seen[g.ID+"/"+ch.ID] {
				out = append(out, all[g.ID+"/"+ch.ID])
			}
		}
	}
	return out, true
}

// Defaults are a product's default choices: the first min of each group.
func (c *Catalog) Defaults(id string) []string {
	var out []string
	for _, g := range c.products[id].Options {
		for _, ch := range g.Choices[:g.Min] {
			out = append(out, g.ID+"/"+ch.ID)
		}
	}
	return out
}
