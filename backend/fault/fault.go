// Package fault is the one error type of the domain: a code to branch on,
// a sentence for a person, and the cause for logs. The journal's failures
// and staff mode's are all *Error; each edge maps it once: the staff
// screens' envelope (backend/staffapi, for the window and browser mode
// alike), browser mode's HTTP status (backend/httpui), the command line's
// exit code (backend/cli).
//
// Callers branch on the code (CodeOf), never on the message.
package fault

import (
	"errors"
	"fmt"
	"time"
)

// The codes every layer shares. A layer adds its own beside them (staff's
// PIN pad, for one); the UI reads them as they are written here, so a
// value never changes.
const (
	// EINVALID: the request cannot be done as asked (a value out of range,
	// a transition the rules never allow). Nothing was done.
	EINVALID = "EINVALID"
	// ENOTFOUND: no such record (order, attempt, transaction).
	ENOTFOUND = "ENOTFOUND"
	// ECONFLICT: the record is in another state than the request expects,
	// or already exists (a guarded write lost a race). Nothing was done.
	ECONFLICT = "ECONFLICT"
	// ELOCKED: another process holds the data directory.
	ELOCKED = "ELOCKED"
	// EFULL: the disk is full or refused a write or a flush; nothing is
	// half-written.
	EFULL = "EFULL"
	// EREADONLY: the data directory or database cannot be written.
	EREADONLY = "EREADONLY"
	// EINTERNAL: anything else, a corrupt database included.
	EINTERNAL = "EINTERNAL"
)

// Error is a failure of the domain.
type Error struct {
	Code string
	// Message is a sentence for a person: an operator reading a log, the
	// member of staff in front of the kiosk.
	Message string
	// From names the package whose words Message still is ("journal"): a
	// layer above words such an error again for its own people. Empty
	// once it is worded for the person at the edge.
	From string
	// RetryAfter: with a lockout, how long it lasts.
	RetryAfter time.Duration
	// TerminalCode names the terminal's refusal, TerminalMessage gives its
	// words verbatim.
	TerminalCode    string
	TerminalMessage string
	// Err is the cause, for logs.
	Err error
}

// Error is the layer's name, its message and the cause; an error worded
// for the person at the edge is its sentence alone (the cause is in Err,
// for logs).
func (e *Error) Error() string {
	if e.From == "" {
		return e.Message
	}
	s := e.From + ": " + e.Message
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }

// ArgError is a call that does not fit its table (no such call, or
// arguments that do not fit it): a bug of the caller, never the doing of
// the person at the screen. The kiosk's intents and the staff calls return
// it alike; each edge maps it once (browser mode's HTTP 400, the staff
// screens' EBADCALL).
type ArgError struct{ Msg string }

func (e *ArgError) Error() string { return e.Msg }

// Errorf returns an *Error with code and a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// As is the first *Error in err's chain, or nil.
func As(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return nil
}

// CodeOf is the code of the first *Error in err's chain, "" for nil and
// EINTERNAL for any other error.
func CodeOf(err error) string {
	if err == nil {
		return ""
	}
	if e := As(err); e != nil {
		return e.Code
	}
	return EINTERNAL
}

// MessageOf is the message of the first *Error in err's chain, "" for nil,
// and a generic sentence for any other error: a raw driver's message is
// not for a customer's eyes.
func MessageOf(err error) string {
	if err == nil {
		return ""
	}
	if e := As(err); e != nil {
		return e.Message
	}
	return "Internal error."
}
