package payment

import (
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/journal"
)

// cadenceDriver is a driver as far as its cadences see it, at the
// clock's time now: an attempt of the kiosk policy (a 62 s client
// timeout) first and last sent at sent.
func cadenceDriver(rules ChannelRules, now, sent time.Time) *driver {
	lim := DefaultLimits
	lim.ResendPause = 100 * time.Millisecond
	return &driver{
		o:     &Orchestrator{cfg: Config{Limits: lim, Now: func() time.Time { return now }}},
		r:     &run{policy: Policy{Name: journal.PolicyKiosk, ClientTimeout: 62 * time.Second}},
		rules: rules,
		att:   journal.Attempt{CreatedAt: sent, FirstSentAt: sent, LastSentAt: sent},
	}
}

// The polling cadence (docs/payments.md): a channel without a cadence of
// its own is polled at its PollEvery; every channel is polled quickly for
// the policy's client timeout since the attempt last changed, then a tenth
// of the quiet time past it, up to its Max; never quicker than the resend
// pause.
func TestRuleThePollsSlowDownOnlyAfterTheClientTimeoutWithoutChange(t *testing.T) {
	poll, _ := CloudCadences(2 * time.Second)
	checkPauses(t, (*driver).pollPause, []pauseCase{
		{"no cadence of its own: its PollEvery", ChannelRules{PollEvery: 3 * time.Second}, 0, 3 * time.Second},
		{"no cadence of its own, long quiet: still its PollEvery", ChannelRules{PollEvery: 3 * time.Second}, time.Hour, 3 * time.Second},
		{"quick within the client timeout", ChannelRules{PollEvery: 2 * time.Second, Cadence: poll}, 61 * time.Second, 2 * time.Second},
		{"a tenth of the quiet time past it", ChannelRules{PollEvery: 2 * time.Second, Cadence: poll}, 62*time.Second + 100*time.Second, 10 * time.Second},
		{"up to the cadence's Max", ChannelRules{PollEvery: 2 * time.Second, Cadence: poll}, time.Hour, 30 * time.Second},
		{"never under the resend pause", ChannelRules{PollEvery: time.Millisecond}, 0, 100 * time.Millisecond},
	})
}

// pauseCase is a channel's rules, how long the attempt has been quiet,
// and the pause wanted then.
type pauseCase struct {
	name  string
	rules ChannelRules
	quiet time.Duration
	want  time.Duration
}

// checkPauses checks pause against each case, on a driver whose attempt
// last changed quiet ago.
func checkPauses(t *testing.T, pause func(*driver) time.Duration, cases []pauseCase) {
	t0 := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			d := cadenceDriver(tt.rules, t0.Add(tt.quiet), t0)
			d.changedAt = t0
			if got := pause(d); got != tt.want {
				t.Fatalf("pause %s after %s quiet, want %s", got, tt.quiet, tt.want)
			}
		})
	}
}

// What makes the polls quick again: the provider's new id, its new word,
// or money paid on a link; the same word again does not.
func TestRuleOnlyANewWordFromTheProviderMakesThePollsQuickAgain(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	now := t0.Add(time.Hour)
	for _, tt := range []struct {
		name    string
		answer  Answer
		changed bool
	}{
		{"a first provider id", Answer{Outcome: OutcomePending, ProviderID: "cl-2", ProviderStatus: "pending"}, true},
		{"a new status", Answer{Outcome: OutcomePending, ProviderID: "cl-1", ProviderStatus: "waiting"}, true},
		{"money paid on the link", Answer{Outcome: OutcomePending, ProviderID: "cl-1", ProviderStatus: "pending", Paid: 300}, true},
		{"the same word", Answer{Outcome: OutcomePending, ProviderID: "cl-1", ProviderStatus: "pending"}, false},
		{"no word", Answer{Outcome: OutcomePending}, false},
		{"an outcome other than pending says nothing of money paid", Answer{Outcome: OutcomeIndefinite, Paid: 300}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := cadenceDriver(ChannelRules{PollEvery: time.Second}, now, t0)
			d.att.ProviderID, d.att.ProviderStatus = "cl-1", "pending"
			d.changedAt = t0
			d.noteChange(tt.answer)
			if got := d.changedAt.Equal(now); got != tt.changed {
				t.Fatalf("changed %v, want %v", got, tt.changed)
			}
		})
	}
}

// The history of an attempt without its answer is searched at the
// history's cadence: quiet counted from the send when its acknowledgement
// was lost, from the end of its client timeout when it was acknowledged;
// never past the moment the history is complete, which decides.
func TestRuleTheHistoryIsSearchedAtItsCadenceAndWhenItIsComplete(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	_, hist := CloudCadences(2 * time.Second) // every 10 s, up to 60 s
	for _, tt := range []struct {
		name     string
		rules    ChannelRules
		acked    bool
		at       time.Duration // since the send
		complete time.Duration // SettleAfter
		want     time.Duration
	}{
		{"no cadence of its own: the cloud's for its PollEvery", ChannelRules{PollEvery: 4 * time.Second}, false, 0, time.Hour, 20 * time.Second},
		{"lost acknowledgement: quiet from the send", ChannelRules{PollEvery: 2 * time.Second, HistoryCadence: hist}, false, 300 * time.Second, time.Hour, 30 * time.Second},
		{"acknowledged: quiet from the end of the client timeout", ChannelRules{PollEvery: 2 * time.Second, HistoryCadence: hist}, true, 362 * time.Second, time.Hour, 30 * time.Second},
		{"never past the complete history", ChannelRules{PollEvery: 2 * time.Second, HistoryCadence: hist}, false, 0, 4 * time.Second, 4 * time.Second},
		{"a complete history changes nothing more", ChannelRules{PollEvery: 2 * time.Second, HistoryCadence: hist}, false, 0, 0, 10 * time.Second},
		{"a pause as long as what is left", ChannelRules{PollEvery: 2 * time.Second, HistoryCadence: hist}, false, 0, 10 * time.Second, 10 * time.Second},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := cadenceDriver(tt.rules, t0.Add(tt.at), t0)
			d.o.cfg.Limits.SettleAfter = tt.complete
			if tt.acked {
				d.att.ProviderID = "cl-1"
			}
			if got := d.searchPause(); got != tt.want {
				t.Fatalf("pause %s, want %s", got, tt.want)
			}
		})
	}
	// Searched once the history became complete, whatever the cadence.
	d := cadenceDriver(ChannelRules{PollEvery: 2 * time.Second, HistoryCadence: hist}, t0.Add(5*time.Second), t0)
	d.o.cfg.Limits.SettleAfter = 5 * time.Second
	d.searchedAt = t0.Add(4 * time.Second)
	if !d.searchDue() {
		t.Fatal("the history became complete since the last search: search it")
	}
	d.o.cfg.Limits.SettleAfter = time.Hour
	if d.searchDue() {
		t.Fatal("searched a second ago, history not complete: not due")
	}
}

// After an answer that said nothing, a channel that follows by sending
// again waits the resend pause; one that polls waits its poll's cadence,
// slowing down like its polls, so that a provider answering an error at
// once is not asked every second for the attempt's whole life.
func TestRuleAnErrorIsAskedAgainAtThePollsCadence(t *testing.T) {
	poll, _ := CloudCadences(2 * time.Second)
	checkPauses(t, (*driver).retryPause, []pauseCase{
		{"the LAN: the resend pause", ChannelRules{FollowSends: true}, time.Hour, 100 * time.Millisecond},
		{"a poll, quick at first", ChannelRules{PollEvery: 2 * time.Second, Cadence: poll}, 0, 2 * time.Second},
		{"a poll, slower when nothing changes", ChannelRules{PollEvery: 2 * time.Second, Cadence: poll}, time.Hour, 30 * time.Second},
	})
}
