package payment

// The customer's Cancel stays in force until the attempt is final, and
// after it Comptoir never causes a payment to start. On a channel that
// follows an attempt by sending it again (the Local API), /payment goes
// out again only once the terminal has shown that it knows this attempt
// (then a resend attaches to the payment in progress or replays its
// outcome, and starts nothing). Until then /abort, naming the attempt, is
// asked again until it answers something definite; when the answers cannot
// tell "it ran and ended" from "it never started" (nothing runs, or another
// payment holds the terminal), the terminal's history decides: the
// attempt's transaction if it is there, else cancelled, since nothing runs
// for it. A channel that follows by polling (the cloud) sends its cancel
// until it is delivered, and its polls, which start nothing, go on: the
// attempt's own outcome decides.
//
// cancelProtocol is that rule as a table: for each cancel answer, with a
// request about the attempt still out or not, what the driver learns and
// does next. Each row has its test (abort_test.go).

// afterAbort is what the driver does with the attempt after an /abort
// answer.
type afterAbort int

const (
	awaitPayment   afterAbort = iota // the /payment answer still out decides
	awaitGrace                       // the /payment answer decides, if it comes within AbortGrace; else cancelled
	finishCanceled                   // final: cancelled, nothing was charged
	followAttempt                    // ask about the attempt again (a resend attaches to it or replays its outcome)
	lookUpHistory                    // look the attempt up in the terminal's history
	awaitAbort                       // nothing until the next /abort answer
)

func (a afterAbort) String() string {
	return [...]string{"await the /payment answer", "await the /payment answer for the grace period",
		"cancelled", "ask about the attempt again", "look the attempt up in the history", "await the next /abort answer"}[a]
}

// abortRule is one row of the protocol.
type abortRule struct {
	known      bool       // the answer shows that the terminal knows this attempt
	abortAgain bool       // ask /abort again after the backoff
	then       afterAbort // and meanwhile
}

// cancelProtocol maps a cancel answer to its rule, [0] while a request
// about the attempt is out, [1] when none is.
var cancelProtocol = map[CancelOutcome][2]abortRule{
	// Aborted before the handover: the /payment answer (a ko) confirms it.
	CancelStopped: {{then: awaitGrace}, {then: finishCanceled}},
	// It ran to its end: its /payment answer is authoritative.
	CancelTooLate: {{known: true, then: awaitPayment}, {known: true, then: followAttempt}},
	// Nothing runs. With a /payment still out, the /abort may have overtaken
	// it on the way: ask again. With none out, it ended or never started.
	CancelNothingRuns: {{abortAgain: true, then: awaitPayment}, {then: lookUpHistory}},
	// Another payment holds the terminal: this one is not running.
	CancelOtherRuns: {{abortAgain: true, then: awaitPayment}, {then: lookUpHistory}},
	// The cancel reached the provider (the cloud): the attempt's own
	// outcome decides, followed by polls that start nothing.
	CancelDelivered: {{then: awaitPayment}, {then: followAttempt}},
	// No answer: ask again.
	CancelNotSent:    {{abortAgain: true, then: awaitPayment}, {abortAgain: true, then: awaitAbort}},
	CancelIndefinite: {{abortAgain: true, then: awaitPayment}, {abortAgain: true, then: awaitAbort}},
}

func ruleFor(k CancelOutcome, out bool) abortRule {
	row := cancelProtocol[k]
	if out {
		return row[0]
	}
	return row[1]
}
