package payment

import (
	"time"

	"github.com/comptoir-pos/comptoir/backend/journal"
)

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

// pollPause is the pause before the next poll of an attempt the provider
// says is in progress: the channel's cadence (its PollEvery when it has
// none), quick for the policy's client timeout at least, slower while
// nothing changes.
func (d *driver) pollPause() time.Duration {
	c := d.rules.Cadence
	if c.Every <= 0 {
		c = Cadence{Every: d.rules.PollEvery}
	}
	c.Fast = max(c.Fast, d.r.policy.ClientTimeout)
	return max(d.o.cfg.Limits.ResendPause, c.Pause(d.now().Sub(d.changedAt)))
}

// noteChange notes when an answer shows the attempt changed (the
// provider's id or word, money paid): the polls are quick again.
func (d *driver) noteChange(a Answer) {
	if newWord(d.att, a) || (a.Outcome == OutcomePending && a.Paid != d.r.snapshot().Paid) {
		d.changedAt = d.now()
	}
}

// newWord reports whether the provider's answer a says something new of
// att: another id or another status (saying nothing is nothing new).
func newWord(att journal.Attempt, a Answer) bool {
	return (a.ProviderID != "" && a.ProviderID != att.ProviderID) || (a.ProviderStatus != "" && a.ProviderStatus != att.ProviderStatus)
}

// searchPause is the pause between two searches of the history for a
// polled attempt without its answer (its acknowledgement lost, or overdue):
// the channel's history cadence, quiet since the last send or since the
// attempt became overdue, never past the moment the history is complete
// (then the search decides).
func (d *driver) searchPause() time.Duration {
	c := d.rules.HistoryCadence
	if c.Every <= 0 {
		_, c = CloudCadences(d.rules.PollEvery)
	}
	since := d.att.LastSentAt
	if d.att.ProviderID != "" && !d.att.FirstSentAt.IsZero() {
		since = d.att.FirstSentAt.Add(d.r.policy.ClientTimeout)
	}
	pause := c.Pause(d.now().Sub(since))
	if until := d.completeAt().Sub(d.now()); until > 0 && until < pause {
		pause = until
	}
	return pause
}

// retryPause is the pause before asking again after an answer that said
// nothing (an error, an unreachable provider, an answer about another
// attempt): the resend pause when asking means sending the request again;
// on a channel that polls, its poll's cadence, so that a provider answering
// an error at once (HTTP 500, 429, a cart it does not find) is not asked
// every second for the attempt's whole life.
func (d *driver) retryPause() time.Duration {
	if d.resends() {
		return d.o.cfg.Limits.ResendPause
	}
	return d.pollPause()
}

// searchDue reports whether an overdue attempt's history is to be searched
// now: its cadence's pause has passed since the last search, or the
// history has become complete since (that search decides).
func (d *driver) searchDue() bool {
	complete := d.completeAt()
	if d.searchedAt.Before(complete) && !d.now().Before(complete) {
		return true
	}
	return !d.now().Before(d.searchedAt.Add(d.searchPause()))
}

// completeAt is when the history is complete for the attempt.
func (d *driver) completeAt() time.Time {
	last := d.att.LastSentAt
	if last.IsZero() {
		last = d.att.CreatedAt
	}
	return last.Add(d.o.cfg.Limits.SettleAfter)
}
