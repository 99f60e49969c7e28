package payment

import "time"

// Cadence is how often an attempt that has no outcome yet is asked about,
// the one rule of every channel that polls (docs/payments.md, "Polling
// cadence"): every Every while the attempt is young (Fast since it last
// changed: its first send, the provider's new word, money paid), then
// slower while nothing changes: a pause of a tenth of the time past Fast,
// never less than Every nor more than Max. A terminal that is offline, a
// link nobody pays and a refund a manager has not approved are asked
// about a few dozen times an hour, not every few seconds for ever.
type Cadence struct {
	Every time.Duration
	Fast  time.Duration
	Max   time.Duration
}

// slowdown is the ratio of the time without change to the pause.
const slowdown = 10

// Pause is the wait before the next question, quiet since the last change.
func (c Cadence) Pause(quiet time.Duration) time.Duration {
	if quiet < c.Fast {
		return c.Every
	}
	return min(max((quiet-c.Fast)/slowdown, c.Every), max(c.Max, c.Every))
}

// The cadences of the channels, as ratios of their poll setting (PollEvery)
// so that a faster poll speeds all of them up alike. The figures in the
// comments are those of the default settings; docs/payments.md lists them
// and a test checks the two agree.
const (
	// A cloud payment is polled every PollEvery (2 s) for its client
	// timeout, then slower, up to 15 polls' worth (30 s).
	cloudPollMax = 15
	// An overdue cloud payment, or one whose acknowledgement was lost, is
	// looked up in the history every 5 polls' worth (10 s), then slower,
	// up to 30 polls' worth (60 s).
	cloudHistoryEvery = 5
	cloudHistoryMax   = 30
	// A link's cart is read every PollEvery (3 s) for 100 reads' worth
	// (5 min: the kiosk shows the code that long), then slower, up to 10
	// reads' worth (30 s).
	linkFast = 100
	linkMax  = 10
	// A refund by API is fetched every PollEvery (30 s) for 10 fetches'
	// worth (5 min), then slower, up to 20 fetches' worth (10 min).
	refundFast = 10
	refundMax  = 20
)

// CloudCadences are the cloud channel's cadences for a poll of pollEvery:
// its polls (Fast is the attempt's client timeout, set by the driver), and
// its searches of the history.
func CloudCadences(pollEvery time.Duration) (poll, history Cadence) {
	return Cadence{Every: pollEvery, Max: cloudPollMax * pollEvery},
		Cadence{Every: cloudHistoryEvery * pollEvery, Max: cloudHistoryMax * pollEvery}
}

// LinkCadence is a payment link's cadence of cart reads.
func LinkCadence(pollEvery time.Duration) Cadence {
	return Cadence{Every: pollEvery, Fast: linkFast * pollEvery, Max: linkMax * pollEvery}
}

// RefundCadence is a refund by API's cadence of fetches.
func RefundCadence(pollEvery time.Duration) Cadence {
	return Cadence{Every: pollEvery, Fast: refundFast * pollEvery, Max: refundMax * pollEvery}
}
