package payment

import (
	"errors"

	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/localapi"
)

// exchangeError reads a failed exchange the way every channel's client
// fails alike, once the channel has read its provider's own refusals: a
// request refused before it left (the specification forbids it), one that
// certainly never left, one with no answer in time, and one whose answer
// could not be read (kept for the journal). Anything else leaves the
// outcome open.
func exchangeError(err error) Answer {
	var (
		ve *localapi.ValidationError
		to interface{ TimedOut() bool }
		ab interface{ AnswerBody() []byte }
	)
	switch {
	case errors.As(err, &ve):
		return Answer{Outcome: OutcomeInvalid, Message: ve.Error()}
	case neverSent(err):
		return Answer{Outcome: OutcomeNotSent, Message: err.Error()}
	case errors.As(err, &to) && to.TimedOut():
		return Answer{Outcome: OutcomeTimeout, Message: err.Error()}
	case errors.As(err, &ab):
		return Answer{Outcome: OutcomeIndefinite, Raw: ab.AnswerBody(), Message: err.Error()}
	}
	return Answer{Outcome: OutcomeIndefinite, Message: errMsg(err)}
}

// cancelError reads a failed cancel the way every channel's client fails
// alike, once the channel has read its provider's own answers: only one
// that certainly never left is "not sent"; any other leaves open whether
// the cancel arrived, keeping an answer's body for the journal.
func cancelError(err error) CancelAnswer {
	var ab interface{ AnswerBody() []byte }
	switch {
	case neverSent(err):
		return CancelAnswer{Outcome: CancelNotSent, Message: err.Error()}
	case errors.As(err, &ab):
		return CancelAnswer{Outcome: CancelIndefinite, Raw: ab.AnswerBody(), Message: err.Error()}
	}
	return CancelAnswer{Outcome: CancelIndefinite, Message: errMsg(err)}
}

// lookupError is a failed read of a provider's history: a NotSentError
// when the request certainly never left, so that the caller knows the
// provider was not even asked.
func lookupError(err error) error {
	if neverSent(err) {
		return &NotSentError{err}
	}
	return err
}

// neverSent: err says the request certainly did not leave this machine (a
// refused connection, a failed dial), whichever API client made it.
func neverSent(err error) bool {
	var ns interface{ NeverSent() bool }
	return errors.As(err, &ns) && ns.NeverSent()
}

func errMsg(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// reversed is the answer to a reversal the provider says is done: by this
// request (its reversal's transaction id given), or already, by an earlier
// request of this attempt or on the terminal itself (no id: the message
// says so). Either way the debit is given back, once, for its amount. An
// ok that names no reversal and says nothing is not that: through the
// cloud, a v4 form's ok may only mean that the request reached the
// terminal. It is no usable answer, and the history decides.
func reversed(a journal.Attempt, txID string, raw []byte, msg string) Answer {
	if txID == "" && msg == "" {
		return Answer{Outcome: OutcomeIndefinite, Raw: raw, Message: "ok, naming no reversal transaction: the history decides"}
	}
	return Answer{Outcome: OutcomeCharged, Raw: raw, Known: true, Message: msg,
		Charge: &Charge{TransactionID: txID, Amount: a.Amount, Approved: true}}
}
