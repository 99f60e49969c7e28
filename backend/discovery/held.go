package discovery

import (
	"context"
	"strings"
)

// TerminalID is the name payments journal for the terminal found under
// instance: what Held matches an open attempt's terminal against.
func TerminalID(instance string) string { return "mdns:" + instance }

// HeldWhileOpen is a Config.Held for a terminal whose payments are
// journaled: held while an open attempt names it. terminals lists the
// terminals of the open attempts (journal.DB.OpenTerminals); an error
// holds it, as Held's does.
func HeldWhileOpen(terminals func(ctx context.Context) ([]string, error)) func(ctx context.Context, instance string) (bool, error) {
	return func(ctx context.Context, instance string) (bool, error) {
		open, err := terminals(ctx)
		if err != nil {
			return true, err
		}
		for _, t := range open {
			if strings.EqualFold(t, TerminalID(instance)) {
				return true, nil
			}
		}
		return false, nil
	}
}
