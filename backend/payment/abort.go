package payment

// The customer's Cancel stays in force until the attempt is final, and
// after it Comptoir never causes a payment to start: /payment is sent again
// only once the terminal has shown that it knows this attempt (then a
// resend attaches to the payment in progress or replays its outcome, and
// starts nothing). Until then /abort, naming the attempt, is asked again
// until it answers something definite; when the answers cannot tell "it
// ran and ended" from "it never started" (nothing runs, or another payment
// holds the terminal), the terminal's history decides: the attempt's
// transaction if it is there, else cancelled, since nothing runs for it.
//
// cancelProtocol is that rule as a table: for each answer to /abort, with
// a /payment request of the attempt still out or not, what the driver
// learns and does next. Each row has its test (abort_test.go).

// afterAbort is what the driver does with the attempt after an /abort
// answer.
type afterAbort int

const (
	awaitPayment   afterAbort = iota // the /payment answer still out decides
	awaitGrace                       // the /payment answer decides, if it comes within AbortGrace; else cancelled
	finishCanceled                   // final: cancelled, nothing was charged
	resendPayment                    // ask /payment again: it attaches to the attempt or replays its outcome
	lookUpHistory                    // look the attempt up in the terminal's history
	awaitAbort                       // nothing until the next /abort answer
)

func (a afterAbort) String() string {
	return [...]string{"await the /payment answer", "await the /payment answer for the grace period",
		"cancelled", "ask /payment again", "look the attempt up in the history", "await the next /abort answer"}[a]
}

// abortRule is one row of the protocol.
type abortRule struct {
	known      bool       // the answer shows that the terminal knows this attempt
	abortAgain bool       // ask /abort again after the backoff
	then       afterAbort // and meanwhile
}

// cancelProtocol maps an /abort answer to its rule, [0] while a /payment
// request of the attempt is out, [1] when none is.
var cancelProtocol = map[abortKind][2]abortRule{
	// Aborted before the handover: the /payment answer (a ko) confirms it.
	abortStopped: {{then: awaitGrace}, {then: finishCanceled}},
	// It ran to its end: its /payment answer is authoritative.
	abortNotPossible: {{known: true, then: awaitPayment}, {known: true, then: resendPayment}},
	// Nothing runs. With a /payment still out, the /abort may have overtaken
	// it on the way: ask again. With none out, it ended or never started.
	abortNothing: {{abortAgain: true, then: awaitPayment}, {then: lookUpHistory}},
	// Another payment holds the terminal: this one is not running.
	abortBusyOther: {{abortAgain: true, then: awaitPayment}, {then: lookUpHistory}},
	// The terminal names this attempt as in progress, yet did not stop it.
	abortBusyOurs: {{known: true, abortAgain: true, then: awaitPayment}, {known: true, abortAgain: true, then: resendPayment}},
	// No answer: ask again.
	abortNotSent:    {{abortAgain: true, then: awaitPayment}, {abortAgain: true, then: awaitAbort}},
	abortIndefinite: {{abortAgain: true, then: awaitPayment}, {abortAgain: true, then: awaitAbort}},
}

func ruleFor(k abortKind, paymentOut bool) abortRule {
	row := cancelProtocol[k]
	if paymentOut {
		return row[0]
	}
	return row[1]
}
