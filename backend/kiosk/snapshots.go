package kiosk

import (
	"reflect"
	"slices"

	"github.com/comptoir-pos/comptoir/backend/settings"
)

// Emitter publishes the snapshots; the Wails binding and httpui forward them.
type Emitter interface {
	Emit(event string, data any)
}

// Info is what the UI needs once at start.
func (s *Service) Info() InfoView {
	s.mu.Lock()
	defer s.mu.Unlock()
	return InfoView{
		Version: s.cfg.Version, Demo: s.cfg.Demo, Languages: slices.Clone(s.settings.Languages),
		DefaultLanguage: s.settings.DefaultLanguage, Currency: s.currencyLocked(),
		IdleSeconds: s.settings.IdleSeconds, Mode: s.settings.Mode, PhonePay: s.cfg.Links != nil,
	}
}

// Catalog is the menu; empty while no valid catalog is loaded.
func (s *Service) Catalog() CatalogView {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.catalog == nil {
		return CatalogView{Currency: s.currencyLocked(), Categories: []CategoryView{}}
	}
	v := s.catalog.View()
	v.Currency = s.currencyLocked()
	return v
}

// Checkout is the current checkout.
func (s *Service) Checkout() CheckoutView {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.viewLocked()
}

// Terminal is the terminal's status.
func (s *Service) Terminal() TerminalView {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.term
}

// intent runs f under the lock with the error cleared; f returns the
// refusal's message key, or "". The view is published either way.
func (s *Service) intent(f func() string) CheckoutView {
	s.mu.Lock()
	s.co.err = ""
	if key := f(); key != "" {
		s.co.err = key
	}
	c, t := s.snapshotsLocked(true)
	s.mu.Unlock()
	s.publish(c, t)
	return c.view
}

func (s *Service) currencyLocked() string {
	switch {
	case s.settings.Currency != "":
		return s.settings.Currency
	case s.catalog != nil && s.catalog.view.Currency != "":
		return s.catalog.view.Currency
	}
	return settings.DefaultCurrency
}

func (s *Service) languageLocked(lang string) string {
	if slices.Contains(s.settings.Languages, lang) {
		return lang
	}
	return s.settings.DefaultLanguage
}

func (s *Service) viewLocked() CheckoutView {
	co := &s.co
	v := CheckoutView{
		Phase: co.phase, Language: co.language, Currency: s.currencyLocked(), Dining: co.dining,
		DiningAsked: s.settings.Dining == settings.DiningAsk, Lines: []LineView{}, Taxes: []TaxView{}, Error: co.err,
	}
	lines := co.lines
	if co.order != nil {
		lines = co.order.lines
		v.OrderID, v.OrderNumber, v.Currency, v.Dining = co.order.id, co.order.number, co.order.currency, co.order.dining
	}
	for _, l := range lines {
		v.Lines = append(v.Lines, l.LineView)
	}
	v.Total, v.Taxes, v.VoucherEligible = totals(lines, s.settings.VoucherCap)
	if co.payment != nil {
		p := *co.payment
		v.Payment = &p
	}
	if co.receipt != nil {
		r := *co.receipt
		v.Receipt = &r
	}
	return v
}

type snapshot[T any] struct {
	seq  uint64
	view T
}

// snapshotsLocked numbers the views to publish: the checkout when forced
// (an intent answers with it) or changed, the terminal when changed.
func (s *Service) snapshotsLocked(force bool) (*snapshot[CheckoutView], *snapshot[TerminalView]) {
	var c *snapshot[CheckoutView]
	if v := s.viewLocked(); force || !reflect.DeepEqual(v, s.lastCheck) {
		s.checkSeq++
		s.lastCheck = v
		c = &snapshot[CheckoutView]{s.checkSeq, v}
	}
	var t *snapshot[TerminalView]
	if s.term != s.lastTerm {
		s.termSeq++
		s.lastTerm = s.term
		t = &snapshot[TerminalView]{s.termSeq, s.term}
	}
	return c, t
}

// publish emits the snapshots in order; one overtaken by a newer one while
// waiting is dropped (every snapshot is whole).
func (s *Service) publish(c *snapshot[CheckoutView], t *snapshot[TerminalView]) {
	if s.cfg.Emitter == nil {
		return
	}
	s.emitMu.Lock()
	defer s.emitMu.Unlock()
	if t != nil && t.seq > s.emittedTerm {
		s.emittedTerm = t.seq
		s.cfg.Emitter.Emit(EventTerminal, t.view)
	}
	if c != nil && c.seq > s.emittedCheck {
		s.emittedCheck = c.seq
		s.cfg.Emitter.Emit(EventCheckout, c.view)
	}
}
