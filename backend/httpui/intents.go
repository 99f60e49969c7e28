package httpui

import (
	"encoding/json"
	"fmt"

	"github.com/comptoir-pos/comptoir/backend/kiosk"
)

// argError is a call whose arguments do not fit the intent: HTTP 400.
type argError struct{ msg string }

func (e *argError) Error() string { return e.msg }

// intentFunc calls one intent with its JSON arguments.
type intentFunc func(s *kiosk.Service, args []json.RawMessage) (any, error)

// intents is every intent of kiosk/contract.go, by name. Explicit, not
// reflected: a method added to the Service is not reachable from a browser
// until it is listed here.
var intents = map[string]intentFunc{
	"Info":     none(func(s *kiosk.Service) (any, error) { return s.Info(), nil }),
	"Catalog":  none(func(s *kiosk.Service) (any, error) { return s.Catalog(), nil }),
	"Checkout": none(func(s *kiosk.Service) (any, error) { return s.Checkout(), nil }),
	"Terminal": none(func(s *kiosk.Service) (any, error) { return s.Terminal(), nil }),
	"Start": one(func(s *kiosk.Service, lang string) (any, error) {
		return s.Start(lang)
	}),
	"ChooseDining": one(func(s *kiosk.Service, d kiosk.Dining) (any, error) {
		return s.ChooseDining(d)
	}),
	"SetLanguage": one(func(s *kiosk.Service, lang string) (any, error) {
		return s.SetLanguage(lang)
	}),
	"AddItem": two(func(s *kiosk.Service, productID string, qty int) (any, error) {
		return s.AddItem(productID, qty)
	}),
	"AddWithChoices": three(func(s *kiosk.Service, productID string, qty int, choices []string) (any, error) {
		return s.AddWithChoices(productID, qty, choices)
	}),
	"SetChoices": two(func(s *kiosk.Service, lineID string, choices []string) (any, error) {
		return s.SetChoices(lineID, choices)
	}),
	"SetQuantity": two(func(s *kiosk.Service, lineID string, qty int) (any, error) {
		return s.SetQuantity(lineID, qty)
	}),
	"Pay": one(func(s *kiosk.Service, m kiosk.PaymentMethod) (any, error) {
		return s.Pay(m)
	}),
	"Cancel":        none(func(s *kiosk.Service) (any, error) { return s.Cancel() }),
	"Retry":         none(func(s *kiosk.Service) (any, error) { return s.Retry() }),
	"PayRestByCard": none(func(s *kiosk.Service) (any, error) { return s.PayRestByCard() }),
	"PrintLink":     none(func(s *kiosk.Service) (any, error) { return s.PrintLink() }),
	"CancelOrder":   none(func(s *kiosk.Service) (any, error) { return s.CancelOrder() }),
	"ChooseReceipt": one(func(s *kiosk.Service, c kiosk.ReceiptChoice) (any, error) {
		return s.ChooseReceipt(c)
	}),
	"Finish":  none(func(s *kiosk.Service) (any, error) { return s.Finish() }),
	"Abandon": none(func(s *kiosk.Service) (any, error) { return s.Abandon() }),
}

// Intents lists the intents served, for tests and documentation.
func Intents() []string {
	out := make([]string, 0, len(intents))
	for n := range intents {
		out = append(out, n)
	}
	return out
}

func count(args []json.RawMessage, n int) error {
	if len(args) != n {
		return &argError{fmt.Sprintf("expected %d argument(s), got %d", n, len(args))}
	}
	return nil
}

func arg[T any](args []json.RawMessage, i int) (T, error) {
	var v T
	if err := json.Unmarshal(args[i], &v); err != nil {
		return v, &argError{fmt.Sprintf("argument %d: expected %T: %v", i+1, v, err)}
	}
	return v, nil
}

func none(f func(*kiosk.Service) (any, error)) intentFunc {
	return func(s *kiosk.Service, args []json.RawMessage) (any, error) {
		if err := count(args, 0); err != nil {
			return nil, err
		}
		return f(s)
	}
}

func one[A any](f func(*kiosk.Service, A) (any, error)) intentFunc {
	return func(s *kiosk.Service, args []json.RawMessage) (any, error) {
		if err := count(args, 1); err != nil {
			return nil, err
		}
		a, err := arg[A](args, 0)
		if err != nil {
			return nil, err
		}
		return f(s, a)
	}
}

func two[A, B any](f func(*kiosk.Service, A, B) (any, error)) intentFunc {
	return func(s *kiosk.Service, args []json.RawMessage) (any, error) {
		if err := count(args, 2); err != nil {
			return nil, err
		}
		a, err := arg[A](args, 0)
		if err != nil {
			return nil, err
		}
		b, err := arg[B](args, 1)
		if err != nil {
			return nil, err
		}
		return f(s, a, b)
	}
}

func three[A, B, C any](f func(*kiosk.Service, A, B, C) (any, error)) intentFunc {
	return func(s *kiosk.Service, args []json.RawMessage) (any, error) {
		if err := count(args, 3); err != nil {
			return nil, err
		}
		a, err := arg[A](args, 0)
		if err != nil {
			return nil, err
		}
		b, err := arg[B](args, 1)
		if err != nil {
			return nil, err
		}
		c, err := arg[C](args, 2)
		if err != nil {
			return nil, err
		}
		return f(s, a, b, c)
	}
}
