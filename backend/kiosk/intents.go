package kiosk

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"

	"github.com/comptoir-pos/comptoir/backend/fault"
)

// The intents are the calls the customer screens make, one table for every
// transport: the desktop window (App.Call(name, args)) and browser mode
// (POST /api/<Name> with a JSON array of the arguments). Explicit, not
// reflected: a method of the Service is not reachable from the UI until
// it is listed here. scripts/contractgen writes the TypeScript signatures
// (contract.gen.ts's Intents) from this table and the methods it names;
// intents_test.go fails when the table and the Service's methods part.
//
// An intent refused in the current phase returns the unchanged view with
// Error set; errors returned as Go errors are for failures (journal, I/O).
//
// The staff screens do not use these intents: they have their own calls,
// each behind the staff PIN's session (backend/staffapi; App.Staff on the
// desktop, POST /api/staff/<Name> in browser mode).
var intents = map[string]intent{
	"Info":           query((*Service).Info),
	"Catalog":        query((*Service).Catalog),
	"Checkout":       query((*Service).Checkout),
	"Terminal":       query((*Service).Terminal),
	"Start":          with1((*Service).Start), // welcome → ordering (or dining), a new cart
	"ChooseDining":   with1((*Service).ChooseDining),
	"SetLanguage":    with1((*Service).SetLanguage),
	"AddItem":        with2((*Service).AddItem),
	"AddWithChoices": with3((*Service).AddWithChoices),
	"SetChoices":     with2((*Service).SetChoices),
	"SetQuantity":    with2((*Service).SetQuantity),   // 0 removes the line
	"Pay":            with1((*Service).Pay),           // ordering → paying
	"Cancel":         with0((*Service).Cancel),        // paying → canceling
	"PrintLink":      with0((*Service).PrintLink),     // paying by phone: the QR code on the terminal's printer
	"Retry":          with0((*Service).Retry),         // declined/failed → paying, a new attempt
	"PayRestByCard":  with0((*Service).PayRestByCard), // a part declined → a card for all that is due
	"CancelOrder":    with0((*Service).CancelOrder),   // declined/failed → welcome
	"ChooseReceipt":  with1((*Service).ChooseReceipt), // approved: print, email, sms or none
	"Finish":         with0((*Service).Finish),        // approved → welcome (unknown: staff Release it)
	"Abandon":        with0((*Service).Abandon),       // idle timeout: → welcome, unless a payment is out
}

// intent calls one intent with its JSON arguments.
type intent func(s *Service, args []json.RawMessage) (any, error)

// IsIntent reports whether name is an intent.
func IsIntent(name string) bool {
	_, ok := intents[name]
	return ok
}

// IntentNames are the intents, sorted.
func IntentNames() []string { return slices.Sorted(maps.Keys(intents)) }

// Call runs the intent name with its arguments, each a JSON value.
func (s *Service) Call(name string, args []json.RawMessage) (any, error) {
	f, ok := intents[name]
	if !ok {
		return nil, &fault.ArgError{Msg: fmt.Sprintf("unknown intent %q", name)}
	}
	return f(s, args)
}

// decode checks the count of the arguments and reads them into ptrs, in
// order.
func decode(args []json.RawMessage, ptrs ...any) error {
	if len(args) != len(ptrs) {
		return &fault.ArgError{Msg: fmt.Sprintf("expected %d argument(s), got %d", len(ptrs), len(args))}
	}
	for i, p := range ptrs {
		if err := json.Unmarshal(args[i], p); err != nil {
			return &fault.ArgError{Msg: fmt.Sprintf("argument %d: expected %s: %v", i+1, reflect.TypeOf(p).Elem(), err)}
		}
	}
	return nil
}

// query is an intent that reads and changes nothing.
func query[R any](f func(*Service) R) intent {
	return func(s *Service, args []json.RawMessage) (any, error) {
		if err := decode(args); err != nil {
			return nil, err
		}
		return f(s), nil
	}
}

func with0(f func(*Service) (CheckoutView, error)) intent {
	return func(s *Service, args []json.RawMessage) (any, error) {
		if err := decode(args); err != nil {
			return nil, err
		}
		return f(s)
	}
}

func with1[A any](f func(*Service, A) (CheckoutView, error)) intent {
	return func(s *Service, args []json.RawMessage) (any, error) {
		var a A
		if err := decode(args, &a); err != nil {
			return nil, err
		}
		return f(s, a)
	}
}

func with2[A, B any](f func(*Service, A, B) (CheckoutView, error)) intent {
	return func(s *Service, args []json.RawMessage) (any, error) {
		var (
			a A
			b B
		)
		if err := decode(args, &a, &b); err != nil {
			return nil, err
		}
		return f(s, a, b)
	}
}

func with3[A, B, C any](f func(*Service, A, B, C) (CheckoutView, error)) intent {
	return func(s *Service, args []json.RawMessage) (any, error) {
		var (
			a A
			b B
			c C
		)
		if err := decode(args, &a, &b, &c); err != nil {
			return nil, err
		}
		return f(s, a, b, c)
	}
}
