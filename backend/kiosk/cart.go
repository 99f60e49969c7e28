package kiosk

import (
	"maps"
	"slices"
	"strings"

	"github.com/comptoir-pos/comptoir/backend/orders"
	"github.com/comptoir-pos/comptoir/backend/receipt"
	"github.com/comptoir-pos/comptoir/backend/settings"
)

type cartLine struct {
	LineView
	// voucherUnit is the part of one unit meal vouchers may pay: the
	// product's price if eligible, and each eligible option's.
	voucherUnit int64
}

// Start begins a new order: welcome → ordering. An unknown language is the
// default one.
func (s *Service) Start(language string) (CheckoutView, error) {
	return s.intent(func() string {
		switch s.co.phase {
		case PhaseWelcome:
		case PhaseUnavailable:
			return ErrTerminalUnavailable
		default:
			return ErrWrongPhase
		}
		if s.settings.Dining == settings.DiningAsk {
			s.resetLocked(PhaseDining)
		} else {
			s.resetLocked(PhaseOrdering)
			s.co.dining = Dining(s.settings.Dining)
		}
		s.co.language = s.languageLocked(language)
		return ""
	}), nil
}

// ChooseDining says where the order is eaten: asked before the menu, and
// changeable while ordering, when the lines take the rates of the new
// choice. Once Pay has frozen the order it is the order's.
func (s *Service) ChooseDining(d Dining) (CheckoutView, error) {
	return s.intent(func() string {
		if d != DiningEatIn && d != DiningTakeAway {
			return ErrDining
		}
		switch {
		case s.co.phase == PhaseDining:
			s.enterLocked(PhaseOrdering)
		case s.co.phase != PhaseOrdering || s.settings.Dining != settings.DiningAsk:
			return ErrWrongPhase
		}
		s.co.dining = d
		for i := range s.co.lines {
			l := &s.co.lines[i]
			if s.catalog == nil {
				continue
			}
			p, ok := s.catalog.Product(l.ProductID)
			picked, fits := s.catalog.Choose(l.ProductID, lineChoiceKeys(l.LineView))
			if ok && fits {
				nl := s.lineLocked(p, picked)
				l.VATRate, l.Choices, l.VATParts = nl.VATRate, nl.Choices, nl.VATParts
			}
		}
		return ""
	}), nil
}

// SetLanguage changes the language, in any phase.
func (s *Service) SetLanguage(language string) (CheckoutView, error) {
	return s.intent(func() string {
		s.co.language = s.languageLocked(language)
		return ""
	}), nil
}

// AddItem adds qty of a product with its default choices: none, or the
// first choices of each required group, as the product screen proposes.
func (s *Service) AddItem(productID string, qty int) (CheckoutView, error) {
	return s.intent(func() string {
		if s.catalog == nil {
			return ErrUnknownProduct
		}
		return s.addLocked(productID, qty, s.catalog.Defaults(productID))
	}), nil
}

// AddWithChoices adds qty of a product with the options chosen
// ("group/choice"): one line a product and set of choices.
func (s *Service) AddWithChoices(productID string, qty int, choices []string) (CheckoutView, error) {
	return s.intent(func() string { return s.addLocked(productID, qty, choices) }), nil
}

func (s *Service) addLocked(productID string, qty int, choices []string) string {
	if s.co.phase != PhaseOrdering {
		return ErrWrongPhase
	}
	if s.catalog == nil {
		return ErrUnknownProduct
	}
	p, ok := s.catalog.Product(productID)
	if !ok {
		return ErrUnknownProduct
	}
	picked, ok := s.catalog.Choose(productID, choices)
	if !ok {
		return ErrChoices
	}
	// qty is checked alone first: have+qty must not be computed with a
	// qty that could wrap it.
	if qty < 1 || qty > MaxQty {
		return ErrQuantity
	}
	nl := s.lineLocked(p, picked)
	i := slices.IndexFunc(s.co.lines, func(l cartLine) bool { return l.ID == nl.ID })
	have := 0
	if i >= 0 {
		have = s.co.lines[i].Qty
	}
	if have+qty > MaxQty {
		return ErrQuantity
	}
	lines := slices.Clone(s.co.lines)
	if i < 0 {
		lines = append(lines, nl)
		i = len(lines) - 1
	}
	return s.setLinesLocked(lines, i, have+qty)
}

// setLinesLocked makes lines the cart, with line i at qty, unless the cart
// would then break its limits (a line's unit price, MaxLines,
// MaxOrderTotal): the cart is left as it was and the refusal returned.
func (s *Service) setLinesLocked(lines []cartLine, i, qty int) string {
	l := &lines[i]
	total, ok := mulCents(int64(qty), l.UnitPrice)
	if !ok || l.UnitPrice > MaxUnitPrice {
		return ErrOrderLimit
	}
	l.Qty, l.Total = qty, total
	if _, ok := cartTotal(lines); !ok {
		return ErrOrderLimit
	}
	s.co.lines = lines
	return ""
}

// SetChoices changes the options of a line (its quantity kept); a line
// with the same product and choices already in the cart takes it in.
func (s *Service) SetChoices(lineID string, choices []string) (CheckoutView, error) {
	return s.intent(func() string {
		if s.co.phase != PhaseOrdering {
			return ErrWrongPhase
		}
		i := slices.IndexFunc(s.co.lines, func(l cartLine) bool { return l.ID == lineID })
		if i < 0 || s.catalog == nil {
			return ErrUnknownProduct
		}
		old := s.co.lines[i]
		if _, ok := s.catalog.Choose(old.ProductID, choices); !ok {
			return ErrChoices
		}
		s.co.lines = slices.Delete(s.co.lines, i, i+1)
		if e := s.addLocked(old.ProductID, old.Qty, choices); e != "" {
			s.co.lines = slices.Insert(s.co.lines, i, old)
			return e
		}
		return ""
	}), nil
}

// SetQuantity sets a line's quantity; 0 removes it.
func (s *Service) SetQuantity(lineID string, qty int) (CheckoutView, error) {
	return s.intent(func() string {
		if s.co.phase != PhaseOrdering {
			return ErrWrongPhase
		}
		i := slices.IndexFunc(s.co.lines, func(l cartLine) bool { return l.ID == lineID })
		switch {
		case i < 0:
			return ErrUnknownProduct
		case qty < 0 || qty > MaxQty:
			return ErrQuantity
		case qty == 0:
			s.co.lines = slices.Delete(s.co.lines, i, i+1)
			return ""
		}
		return s.setLinesLocked(slices.Clone(s.co.lines), i, qty)
	}), nil
}

// lineLocked is a new cart line for a product and its options, at the
// VAT rates of the customer's dining.
func (s *Service) lineLocked(p ProductView, picked []choiceInfo) cartLine {
	base := s.catalog.VATRate(p.ID, s.co.dining)
	l := cartLine{LineView: LineView{ID: lineIDPart(p.ID), ProductID: p.ID, Name: p.Name, UnitPrice: p.Price, VATRate: base}}
	if p.MealVoucher {
		l.voucherUnit = p.Price
	}
	var keys []string
	var parts []menuPart
	for _, ch := range picked {
		rate := base
		if ch.vatRate != nil {
			rate = *ch.vatRate
		}
		if ch.product != "" {
			rate = s.catalog.VATRate(ch.product, s.co.dining)
			alone, _ := s.catalog.Product(ch.product)
			parts = append(parts, menuPart{rate: rate, alone: alone.Price, voucher: ch.mealVoucher})
		}
		l.Choices = append(l.Choices, LineChoice{Group: ch.group, ID: ch.id, Name: ch.name, Price: ch.price, VATRate: rate, Product: ch.product})
		l.UnitPrice += ch.price
		if ch.mealVoucher {
			l.voucherUnit += ch.price
		}
		keys = append(keys, lineIDPart(ch.group)+"/"+lineIDPart(ch.id))
	}
	if len(parts) > 0 {
		var voucher int64
		l.VATParts, voucher = apportion(p.Price, parts)
		// A menu's price is eligible part by part, not as the menu's.
		if p.MealVoucher {
			l.voucherUnit -= p.Price
		}
		l.voucherUnit += voucher
	}
	if len(keys) > 0 {
		l.ID += "~" + strings.Join(keys, "+")
	}
	return l
}

// lineIDEscaper escapes, in each id a line's id is made of, the characters
// that join them ('~' after the product, '+' between choices, '/' in a
// choice) and '%' itself: a line is found by its id, and a product whose
// id holds "~x/truffle", or choices whose ids hold '+', would otherwise
// make the id of another product's line, or of other choices, and add to
// it at its price. Ids without these characters are left as they are.
var lineIDEscaper = strings.NewReplacer("%", "%25", "~", "%7E", "+", "%2B", "/", "%2F")

func lineIDPart(id string) string { return lineIDEscaper.Replace(id) }

// menuPart is a part of a menu as its price is shared: its rate, its
// price alone, and whether meal vouchers may pay it.
type menuPart struct {
	rate    int
	alone   int64
	voucher bool
}

// apportion shares a menu's price between its parts in proportion to
// their prices alone (the usual rule for a menu's VAT in France), merged
// by rate in ascending order; the cent left by rounding goes to the part
// that costs most alone. It also returns the share meal vouchers may pay.
func apportion(price int64, parts []menuPart) ([]VATPart, int64) {
	var sum int64
	dearest := 0
	for i, p := range parts {
		sum += p.alone
		if p.alone > parts[dearest].alone {
			dearest = i
		}
	}
	shares := make([]int64, len(parts))
	var given int64
	for i, p := range parts {
		if sum > 0 {
			shares[i] = price * p.alone / sum
		}
		given += shares[i]
	}
	shares[dearest] += price - given
	byRate := map[int]int64{}
	var voucher int64
	for i, p := range parts {
		byRate[p.rate] += shares[i]
		if p.voucher {
			voucher += shares[i]
		}
	}
	out := make([]VATPart, 0, len(byRate))
	for _, r := range slices.Sorted(maps.Keys(byRate)) {
		out = append(out, VATPart{Rate: r, Amount: byRate[r]})
	}
	return out, voucher
}

// choiceKeys are a line's choices as the catalog names them.
func lineChoiceKeys(l LineView) []string {
	var keys []string
	for _, ch := range l.Choices {
		keys = append(keys, ch.Group+"/"+ch.ID)
	}
	return keys
}

// totals are the lines' total, VAT (receipt.VATSummary, the receipt's own
// rule) and the part meal vouchers may pay.
func totals(lines []cartLine, voucherCap int64) (total int64, taxes []TaxView, eligible int64) {
	taxes = []TaxView{}
	o := receipt.Order{}
	for _, l := range lines {
		total += l.Total
		eligible += int64(l.Qty) * l.voucherUnit
		o.Lines = append(o.Lines, orders.ReceiptLines(l.LineView, nil)...)
	}
	for _, r := range receipt.VATSummary(o) {
		taxes = append(taxes, TaxView{Rate: r.Rate, Amount: r.Tax})
	}
	return total, taxes, min(eligible, voucherCap)
}
