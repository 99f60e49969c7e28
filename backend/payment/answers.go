package payment

import (
	"errors"

	"github.com/comptoir-pos/comptoir/backend/localapi"
)

// payKind is what one /payment exchange said about the attempt, in the
// orchestrator's terms: the driver decides on these, never on the Local
// API's own errors.
type payKind int

const (
	payCharged    payKind = iota // ok: the customer was charged
	payNotCharged                // ko without message: declined, or stopped before a card was read
	payOurs                      // busy with this very attempt: the terminal knows it and runs it
	payBusyOther                 // busy with another payment: this one is not running
	payRefused                   // ko with a message: the request was refused, nothing started by it
	payInvalid                   // the client refused to send it: nothing left
	payNotSent                   // the request never left this machine
	payTimeout                   // no answer within the client timeout: it may be in progress
	payIndefinite                // HTTP 500, a reset, an unreadable answer: it may or may not have been processed
	payForeign                   // an answer about another idempotentUuid: never applied
)

// payAnswer is one classified /payment exchange.
type payAnswer struct {
	kind payKind
	tx   *localapi.Transaction // payCharged, payNotCharged, payForeign
	raw  []byte                // the terminal's raw answer, when there was one
	msg  string                // the terminal's message, or the error, in words
	err  error
}

// classifyPayment reads the outcome of one /payment exchange for the
// attempt with this uuid.
func classifyPayment(id string, tx *localapi.Transaction, err error) payAnswer {
	if tx != nil {
		switch {
		case tx.IdempotentUUID != id:
			return payAnswer{kind: payForeign, tx: tx, raw: tx.Raw, msg: tx.IdempotentUUID}
		case tx.Approved():
			return payAnswer{kind: payCharged, tx: tx, raw: tx.Raw}
		default:
			return payAnswer{kind: payNotCharged, tx: tx, raw: tx.Raw}
		}
	}
	var (
		ae *localapi.APIError
		ve *localapi.ValidationError
		te *localapi.TransportError
		he *localapi.HTTPError
		de *localapi.DecodeError
	)
	switch {
	case errors.As(err, &ae) && ae.Code == localapi.CodeBusy && ae.Arg == id:
		return payAnswer{kind: payOurs, raw: ae.Raw, msg: ae.Message, err: err}
	case errors.As(err, &ae) && ae.Code == localapi.CodeBusy:
		return payAnswer{kind: payBusyOther, raw: ae.Raw, msg: ae.Message, err: err}
	case errors.As(err, &ae):
		return payAnswer{kind: payRefused, raw: ae.Raw, msg: ae.Message, err: err}
	case errors.As(err, &ve):
		return payAnswer{kind: payInvalid, msg: ve.Error(), err: err}
	case errors.As(err, &te) && !te.Sent:
		return payAnswer{kind: payNotSent, msg: te.Err.Error(), err: err}
	case errors.As(err, &te) && te.Timeout:
		return payAnswer{kind: payTimeout, msg: err.Error(), err: err}
	case errors.As(err, &he):
		return payAnswer{kind: payIndefinite, raw: he.Body, msg: err.Error(), err: err}
	case errors.As(err, &de):
		return payAnswer{kind: payIndefinite, raw: de.Body, msg: err.Error(), err: err}
	}
	return payAnswer{kind: payIndefinite, msg: errMsg(err), err: err}
}

func errMsg(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// abortKind is what one /abort exchange said.
type abortKind int

const (
	abortStopped     abortKind = iota // ok: the payment was stopped before the handover
	abortNotPossible                  // "Abort not possible": it ran to its end; its /payment answer decides
	abortNothing                      // "Nothing to abort": nothing runs on the terminal
	abortBusyOther                    // another payment runs (or one started on the keypad): not this one
	abortBusyOurs                     // refused, naming this very attempt as in progress
	abortNotSent                      // the request never left this machine
	abortIndefinite                   // an error, HTTP 500, an unreadable or internal answer: no answer
)

// abortAnswer is one classified /abort exchange.
type abortAnswer struct {
	kind abortKind
	raw  []byte
	msg  string
}

// classifyAbort reads the outcome of one /abort exchange for the attempt
// with this uuid.
func classifyAbort(id string, resp *localapi.AbortResponse, err error) abortAnswer {
	if err == nil {
		return abortAnswer{kind: abortStopped, raw: resp.Raw}
	}
	var (
		ae *localapi.APIError
		te *localapi.TransportError
	)
	if errors.As(err, &ae) {
		a := abortAnswer{raw: ae.Raw, msg: ae.Message}
		switch {
		case ae.Code == localapi.CodeAbortNotPossible:
			a.kind = abortNotPossible
		case ae.Code == localapi.CodeNothingToAbort:
			a.kind = abortNothing
		case ae.Code == localapi.CodeBusy && ae.Arg == id:
			a.kind = abortBusyOurs
		case ae.Code == localapi.CodeBusy, ae.Code == localapi.CodeAbortNotAllowed:
			a.kind = abortBusyOther
		default:
			// "Error while responding to local API", a ko without message,
			// a message the specification does not list: no answer.
			a.kind = abortIndefinite
		}
		return a
	}
	if errors.As(err, &te) && !te.Sent {
		return abortAnswer{kind: abortNotSent, msg: te.Err.Error()}
	}
	var he *localapi.HTTPError
	var de *localapi.DecodeError
	switch {
	case errors.As(err, &he):
		return abortAnswer{kind: abortIndefinite, raw: he.Body, msg: err.Error()}
	case errors.As(err, &de):
		return abortAnswer{kind: abortIndefinite, raw: de.Body, msg: err.Error()}
	}
	return abortAnswer{kind: abortIndefinite, msg: errMsg(err)}
}

// view is what the UI is told of an abort answer.
func (k abortKind) view() AbortAnswer {
	switch k {
	case abortStopped:
		return AbortOK
	case abortNotPossible:
		return AbortNotPossible
	case abortNothing:
		return AbortNothing
	case abortBusyOther:
		return AbortBusy
	}
	return AbortFailed
}

func (k abortKind) String() string {
	return [...]string{"stopped", "not possible", "nothing to abort", "another payment runs", "this attempt runs",
		"not sent", "no usable answer"}[k]
}
