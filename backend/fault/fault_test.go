package fault

import (
	"errors"
	"fmt"
	"testing"
)

func TestCodeAndMessageOf(t *testing.T) {
	e := Errorf(ECONFLICT, "attempt %s is %s", "x", "approved")
	worded := &Error{Code: EINVALID, Message: "Reading the payments: no such payment.", Err: &Error{Code: ENOTFOUND, Message: "attempt y", From: "journal"}}
	tests := []struct {
		err  error
		code string
		msg  string
	}{
		{nil, "", ""},
		{errors.New("boom"), EINTERNAL, "Internal error."},
		{e, ECONFLICT, "attempt x is approved"},
		{fmt.Errorf("pay: %w", e), ECONFLICT, "attempt x is approved"},
		// the outer error is the one worded for the person at the edge
		{worded, EINVALID, "Reading the payments: no such payment."},
	}
	for _, tt := range tests {
		if got := CodeOf(tt.err); got != tt.code {
			t.Errorf("CodeOf(%v) = %q, want %q", tt.err, got, tt.code)
		}
		if got := MessageOf(tt.err); got != tt.msg {
			t.Errorf("MessageOf(%v) = %q, want %q", tt.err, got, tt.msg)
		}
	}
}

// An error still in a layer's words says which layer and why; one worded
// for a person is that sentence alone, its cause kept for logs.
func TestErrorText(t *testing.T) {
	cause := errors.New("SQLITE_FULL")
	layer := &Error{Code: EFULL, Message: "disk", From: "journal", Err: cause}
	if layer.Error() != "journal: disk: SQLITE_FULL" || !errors.Is(layer, cause) {
		t.Errorf("layer: %q", layer.Error())
	}
	if e := (&Error{Code: ELOCKED, Message: "held by pid 7", From: "journal"}); e.Error() != "journal: held by pid 7" {
		t.Errorf("no cause: %q", e.Error())
	}
	said := &Error{Code: EINTERNAL, Message: "The choice could not be saved.", Err: layer}
	if said.Error() != "The choice could not be saved." || !errors.Is(said, cause) {
		t.Errorf("worded: %q", said.Error())
	}
}
