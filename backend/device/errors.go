package device

import (
	"errors"
	"fmt"

	"github.com/comptoir-pos/comptoir/backend/localapi"
)

// Kind is what a failure means for what the terminal did.
type Kind int

const (
	// Refused: the terminal (or the provider) answered and refused the
	// request. Nothing was done; Code says why when it is one of the
	// refusals the specifications list.
	Refused Kind = iota + 1
	// Invalid: the request breaks the API's rules and was not sent.
	Invalid
	// NotSent: the request never reached the terminal: no terminal is
	// known, the connection was refused, the address does not resolve.
	NotSent
	// Unsure: the request may have arrived, and no clear answer came back
	// (a timeout once it was sent, an HTTP error, an unreadable answer).
	Unsure
)

func (k Kind) String() string {
	switch k {
	case Refused:
		return "refused"
	case Invalid:
		return "invalid"
	case NotSent:
		return "not sent"
	case Unsure:
		return "unsure"
	}
	return "unknown kind"
}

// Code names a refusal the specifications list: the Local API's codes
// (backend/localapi writes each once), which the Cloud API carries in the
// terminal's own words, and two of this package's (CodeOther,
// CodeUnauthorized). The names below are the refusals the packages above
// branch on, without importing the Local API.
type Code = localapi.Code

const (
	CodeOther               Code = "other" // a refusal no specification lists
	CodeUnauthorized        Code = "unauthorized"
	CodePrintDataMissing         = localapi.CodePrintDataMissing
	CodePrintWrongFormat         = localapi.CodePrintWrongFormat
	CodeShareTransactionID       = localapi.CodeShareTransactionID
	CodeShareReceiptTicket       = localapi.CodeShareReceiptTicket
	CodeShareMedium              = localapi.CodeShareMedium
	CodeShareBadRequest          = localapi.CodeShareBadRequest
	CodeReversalIDMandatory      = localapi.CodeReversalIDMandatory
	CodeReversalNotFound         = localapi.CodeReversalNotFound
	CodeReversalAmount           = localapi.CodeReversalAmount
	CodeReversalAlready          = localapi.CodeReversalAlready
	CodeReversalNotEligible      = localapi.CodeReversalNotEligible
	CodeReversalNoGateway        = localapi.CodeReversalNoGateway
	CodeReversalUnexpected       = localapi.CodeReversalUnexpected
)

// Error is a request to the terminal that failed.
type Error struct {
	Kind    Kind
	Code    Code   // with Refused
	Message string // the terminal's or the provider's words, verbatim
	Raw     []byte // the answer, if any, for the journal
	Err     error  // the API client's error
}

func (e *Error) Error() string {
	if e.Err != nil {
		return e.Err.Error()
	}
	return fmt.Sprintf("terminal: %s: %s", e.Kind, e.Message)
}

func (e *Error) Unwrap() error { return e.Err }

// wireErr classifies what both APIs' clients report short of an answer
// they could read: a request that certainly never left was not sent;
// anything else leaves the outcome open, with whatever came back kept for
// the journal.
func wireErr(err error) *Error {
	var (
		ns interface{ NeverSent() bool }
		ab interface{ AnswerBody() []byte }
	)
	switch {
	case errors.As(err, &ns) && ns.NeverSent():
		return &Error{Kind: NotSent, Err: err}
	case errors.As(err, &ab):
		return &Error{Kind: Unsure, Raw: ab.AnswerBody(), Err: err}
	}
	return &Error{Kind: Unsure, Err: err}
}

// KindOf is the Kind of err's *Error, Unsure for any other error (a
// failure this package did not classify leaves the outcome open) and 0
// for nil.
func KindOf(err error) Kind {
	if err == nil {
		return 0
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return Unsure
}

// CodeOf is the Code of a refusal, "" for anything else.
func CodeOf(err error) Code {
	var e *Error
	if errors.As(err, &e) && e.Kind == Refused {
		return e.Code
	}
	return ""
}

// RawOf is the terminal's answer carried by err, if any.
func RawOf(err error) []byte {
	var e *Error
	if errors.As(err, &e) {
		return e.Raw
	}
	return nil
}

// MessageOf is the terminal's own words in err, else err's text.
func MessageOf(err error) string {
	var e *Error
	if errors.As(err, &e) && e.Message != "" {
		return e.Message
	}
	return err.Error()
}

// ErrHistoryTooLong is returned when a period holds more than ReadHistory
// reads in one call (MaxHistoryEntries, MaxHistoryPages, MaxHistoryBytes).
var ErrHistoryTooLong = errors.New("the history of this period is too long to read in one go")

// ErrHistoryPage is a history page that does not keep to the limit asked:
// more entries than asked, or counts that cannot be. It is not believed.
var ErrHistoryPage = errors.New("the history page does not keep to the limit asked")
