package payment

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/cloudapi"
	"github.com/comptoir-pos/comptoir/backend/cloudsim"
	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/localapi"
)

func TestCadencePause(t *testing.T) {
	c := Cadence{Every: 2 * time.Second, Fast: time.Minute, Max: 30 * time.Second}
	for quiet, want := range map[time.Duration]time.Duration{
		0: 2 * time.Second, 59 * time.Second: 2 * time.Second, // quick while young
		time.Minute: 2 * time.Second, 90 * time.Second: 3 * time.Second, // then a tenth of the time past Fast
		5 * time.Minute: 24 * time.Second, time.Hour: 30 * time.Second, // capped
	} {
		if got := c.Pause(quiet); got != want {
			t.Errorf("Pause(%s) = %s, want %s", quiet, got, want)
		}
	}
}

// most is the largest number of questions a cadence allows over [from,
// to], quiet counted from from: each pause at least the cadence's at the
// previous question, and none past done (where one last question ends it).
func most(c Cadence, from, to, done time.Time) int {
	n := 0
	for at := from; !at.After(to); {
		n++
		if !at.Before(done) {
			break
		}
		gap := c.Pause(at.Sub(from))
		if left := done.Sub(at); left < gap {
			gap = left
		}
		at = at.Add(gap)
	}
	return n
}

// An offline cloud terminal whose poll says pending for ever: polled at the
// channel's cadence, quick for the client timeout and then slower, and
// looked up in the history at the history's cadence from then on (not at
// every poll), until the history is complete and settles it as not
// charged. Counted in the simulated cloud's request log, every figure a
// hundredth of the default's (a 20 ms poll for 2 s).
func TestCloudsimOfflineTerminalIsAskedAtTheCadence(t *testing.T) {
	t.Parallel() // waits on real cadences: beside the others
	const poll = 20 * time.Millisecond
	lim := testLimits
	lim.KioskTimeout, lim.SettleAfter, lim.RequestOpen = 620*time.Millisecond, 3*time.Second, 20*time.Second
	e := newEnvOn(t, "cloud", lim)
	client, err := cloudapi.New(e.cloud.URL(), e.cloud.Key())
	if err != nil {
		t.Fatal(err)
	}
	e.close()
	e.channel = Cloud(client, cloudSerial, &localapi.Vendor{SoftwareName: "Comptoir", SoftwareVersion: "test"}, poll)
	e.open(nil, lim)
	e.recover()
	if err := e.cloud.SetExpiredPoll(cloudsim.PollPending); err != nil {
		t.Fatal(err)
	}
	if err := e.cloud.SetOnline(cloudSerial, false); err != nil {
		t.Fatal(err)
	}
	e.cloud.ResetRequests()
	v := e.wait(e.kiosk("C1", 500))
	if v.State != journal.StateFailed {
		t.Fatalf("view %+v", v)
	}
	att := e.attempt(v.UUID)
	polls := e.cloud.Requests("GET " + cloudsim.PathTransaction)
	searches := e.cloud.Requests("POST " + cloudsim.PathTransactions)
	pollC, histC := CloudCadences(poll)
	overdue := att.FirstSentAt.Add(lim.KioskTimeout)
	complete := att.LastSentAt.Add(lim.SettleAfter)
	// The history: from the moment the attempt is overdue, at its cadence.
	if max := most(histC, overdue, att.FinalAt, complete); len(searches) < 1 || len(searches) > max {
		t.Fatalf("%d searches of the history between %s and %s: at most %d at its cadence", len(searches), overdue, att.FinalAt, max)
	}
	for _, r := range searches {
		if r.At.Before(overdue) {
			t.Fatalf("the history was searched at %s, before the client timeout ended (%s)", r.At, overdue)
		}
	}
	// The polls: quick from the provider's last new word (its "pending",
	// answered before the second poll left), then slower.
	if len(polls) < 2 {
		t.Fatalf("%d polls", len(polls))
	}
	pollC.Fast = lim.KioskTimeout
	if max := 1 + most(pollC, polls[1].At, att.FinalAt, att.FinalAt.Add(time.Hour)); len(polls) > max {
		t.Fatalf("%d polls: at most %d at the cadence", len(polls), max)
	}
}

// docDuration writes a duration as docs/payments.md does: "2 s", "5 min".
func docDuration(d time.Duration) string {
	if d >= time.Minute && d%time.Minute == 0 {
		return fmt.Sprintf("%d min", d/time.Minute)
	}
	return fmt.Sprintf("%d s", d/time.Second)
}

// The cadence table of docs/payments.md says the figures the code uses
// with the default settings.
func TestTheDocsSayTheCadenceTheCodeUses(t *testing.T) {
	raw, err := os.ReadFile("../../docs/payments.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string][]string{}
	for _, line := range strings.Split(string(raw), "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 6 || !strings.HasPrefix(strings.TrimSpace(cells[1]), "cadence: ") {
			continue
		}
		rows[strings.TrimPrefix(strings.TrimSpace(cells[1]), "cadence: ")] = cells[2:5]
	}
	cloud := Cloud(nil, "SN", nil, 0).Rules()
	link := Link(nil, LinkOptions{}).Rules()
	refund := RefundCadence(Webservices(nil, WebservicesOptions{}).Rules().PollEvery)
	for name, want := range map[string][3]string{
		"cloud poll":    {docDuration(cloud.Cadence.Every), "the client timeout", docDuration(cloud.Cadence.Max)},
		"cloud history": {docDuration(cloud.HistoryCadence.Every), "from the client timeout", docDuration(cloud.HistoryCadence.Max)},
		"link":          {docDuration(link.Cadence.Every), docDuration(link.Cadence.Fast), docDuration(link.Cadence.Max)},
		"refund by API": {docDuration(refund.Every), docDuration(refund.Fast), docDuration(refund.Max)},
	} {
		got, ok := rows[name]
		if !ok {
			t.Errorf("docs/payments.md has no row \"cadence: %s\"", name)
			continue
		}
		for i, w := range want {
			// The whole figure: "30 s" does not say "0 s".
			if cell := " " + strings.TrimSpace(got[i]); !strings.Contains(cell, " "+w) {
				t.Errorf("docs/payments.md, cadence: %s, column %d says %q; the code uses %s", name, i+1, strings.TrimSpace(got[i]), w)
			}
		}
	}
}

// A link nobody pays is read quickly for its Fast span, then slower: its
// cart reads, counted in the simulated cloud's request log until it has
// waited 2 Fast spans, are at most what the cadence allows (a constant
// poll would read half as many again); then it is paid, and the next read
// says so.
func TestCloudsimUnpaidLinkIsReadAtTheCadence(t *testing.T) {
	t.Parallel() // waits on real cadences: beside the others
	const poll = 10 * time.Millisecond
	e := newLinkEnv(t, LinkOptions{PollEvery: poll})
	c := LinkCadence(poll)
	// Quick for the policy's client timeout at least (pollPause).
	c.Fast = max(c.Fast, testLimits.KioskTimeout)
	h, cartID := e.startLink("K1", 900)
	reads := func() []cloudsim.RequestRecord { return e.cloud.Requests(cloudsim.PathCart) }
	for {
		if r := reads(); len(r) > 0 && r[len(r)-1].At.Sub(r[0].At) >= 2*c.Fast {
			break
		}
		select {
		case <-h.Done():
			t.Fatalf("ended unpaid: %+v", h.View())
		case <-e.ctx.Done():
			t.Fatal("never read long enough")
		case <-time.After(20 * time.Millisecond):
		}
	}
	got := reads()
	paidAt := time.Now()
	e.pay(cartID, 0, cloudsim.PayCard)
	if v := e.wait(h); v.State != journal.StateApproved {
		t.Fatalf("view %+v", v)
	}
	if max := 1 + most(c, got[0].At, paidAt, paidAt.Add(time.Hour)); len(got) > max {
		t.Fatalf("%d cart reads in %s: at most %d at the cadence", len(got), paidAt.Sub(got[0].At), max)
	}
}
