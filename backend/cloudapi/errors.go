package cloudapi

import (
	"errors"
	"fmt"
	"strings"
)

// Answers that break the client's bounds, as the Err of a *DecodeError.
var (
	// ErrTooLarge: the answer is longer than the client reads.
	ErrTooLarge = errors.New("answer too large")
	// ErrPageOverfull: a page of a list holds more entries than the limit
	// asked, or counts that cannot be.
	ErrPageOverfull = errors.New("the page does not keep to the limit asked")
	// ErrPeriodTooLong: a period's list passes MaxPeriodEntries,
	// MaxPeriodPages or MaxPeriodBytes.
	ErrPeriodTooLong = errors.New("the period holds too many transactions to read in one go: read a shorter one")
)

// APIError is a request the cloud refused: HTTP 400 {status: ko, message},
// or a v4 form's ko (the request did not reach the terminal, or the
// terminal refused it).
type APIError struct {
	Status  int
	Message string
	Body    []byte
}

func (e *APIError) Error() string {
	msg := e.Message
	if msg == "" {
		msg = "refused without a message"
	}
	return fmt.Sprintf("cloudapi: HTTP %d ko: %s", e.Status, msg)
}

// AuthError is HTTP 401: the key is not valid, or the terminal is not
// reachable with it.
type AuthError struct{ Body []byte }

func (e *AuthError) Error() string {
	return "cloudapi: HTTP 401: the API key is not valid, or this terminal is not accessible with it"
}

// HTTPError is any other status than 2xx, 400 and 401: the request may or
// may not have been processed.
type HTTPError struct {
	Status int
	Body   []byte
}

func (e *HTTPError) Error() string { return fmt.Sprintf("cloudapi: HTTP %d", e.Status) }

// AnswerBody is what came back, for the journal.
func (e *HTTPError) AnswerBody() []byte { return e.Body }

// TransportError is an exchange that failed below HTTP. Sent: the request
// may have reached the provider (false only when it never left this
// machine). Timeout: no answer in time.
type TransportError struct {
	Op      string
	Err     error
	Sent    bool
	Timeout bool
}

func (e *TransportError) Error() string {
	return "cloudapi: " + e.Op + ": " + strings.TrimPrefix(e.Err.Error(), "cloudapi: ")
}

func (e *TransportError) Unwrap() error { return e.Err }

// NeverSent: the request certainly did not reach the provider.
func (e *TransportError) NeverSent() bool { return !e.Sent }

// TimedOut: no answer came in time.
func (e *TransportError) TimedOut() bool { return e.Timeout }

// DecodeError is a 2xx answer that cannot be read.
type DecodeError struct {
	Op   string
	Body []byte
	Err  error
}

func (e *DecodeError) Unwrap() error { return e.Err }

// AnswerBody is what came back, for the journal.
func (e *DecodeError) AnswerBody() []byte { return e.Body }

func (e *DecodeError) Error() string {
	if e.Err == nil {
		return "cloudapi: " + e.Op + ": an answer without a status"
	}
	return "cloudapi: " + e.Op + ": unreadable answer: " + e.Err.Error()
}
