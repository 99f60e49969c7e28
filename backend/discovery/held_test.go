package discovery

import (
	"context"
	"errors"
	"testing"
)

// A terminal is held while an open attempt names it, whatever the case of
// its instance name, and when the open attempts cannot be read.
func TestHeldWhileOpen(t *testing.T) {
	ctx := context.Background()
	errRead := errors.New("the journal cannot be read")
	cases := []struct {
		name     string
		open     []string
		err      error
		instance string
		held     bool
	}{
		{"an open attempt names it", []string{"mdns:other", "mdns:Yavin-42"}, nil, "Yavin-42", true},
		{"the case of the name does not matter", []string{"MDNS:YAVIN-42"}, nil, "yavin-42", true},
		{"no open attempt names it", []string{"mdns:other", "cloud:SN42"}, nil, "Yavin-42", false},
		{"no open attempt", nil, nil, "Yavin-42", false},
		{"the bare instance is not its name", []string{"Yavin-42"}, nil, "Yavin-42", false},
		{"the open attempts cannot be read", nil, errRead, "Yavin-42", true},
	}
	for _, c := range cases {
		held := HeldWhileOpen(func(context.Context) ([]string, error) { return c.open, c.err })
		got, err := held(ctx, c.instance)
		if got != c.held || !errors.Is(err, c.err) {
			t.Errorf("%s: held %v, err %v; want %v, %v", c.name, got, err, c.held, c.err)
		}
	}
}
