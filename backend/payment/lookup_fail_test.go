package payment

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/cloudapi"
	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/localapi"
)

// failingHistoryCloud lists nothing: every read of its history fails.
type failingHistoryCloud struct {
	historyCloud
	err error
}

func (f *failingHistoryCloud) Transactions(context.Context, cloudapi.TransactionsRequest) (*cloudapi.TransactionsPage, error) {
	return nil, f.err
}

// A lookup that could not read the history, or could not ask which of its
// transactions other attempts hold, concludes nothing: it fails, and says
// "never sent" only when the provider was certainly not asked (the caller
// may then retry at once instead of counting it as an answer).
func TestRuleALookupThatCouldNotAskConcludesNothing(t *testing.T) {
	refused := errors.New("connect: connection refused")
	reset := errors.New("read: connection reset by peer")
	local := func(err error) Channel {
		return Local(&fakeTerminal{transactions: func(context.Context, *localapi.TransactionsRequest) (*localapi.TransactionList, error) {
			return nil, err
		}}, nil, time.Second)
	}
	cloud := func(err error) Channel { return Cloud(&failingHistoryCloud{err: err}, "SN-1", nil, 0) }
	cases := []struct {
		name     string
		ch       Channel
		notSent  bool
		attempts journal.Channel
	}{
		{"local, never left", local(&localapi.TransportError{Endpoint: "/transactions", Err: refused}), true, journal.ChannelLocal},
		{"local, cut off", local(&localapi.TransportError{Endpoint: "/transactions", Sent: true, Err: reset}), false, journal.ChannelLocal},
		{"cloud, never left", cloud(&cloudapi.TransportError{Op: "POST /transactions", Err: refused}), true, journal.ChannelCloud},
		{"cloud, cut off", cloud(&cloudapi.TransportError{Op: "POST /transactions", Sent: true, Err: reset}), false, journal.ChannelCloud},
	}
	for _, c := range cases {
		a := lookupAttempt(journal.KindDebit, 500)
		a.Channel = c.attempts
		m, err := c.ch.Lookup(t.Context(), a, time.Now().Add(-time.Hour), heldBy())
		var ns *NotSentError
		if err == nil || m.Verdict != NotInHistory || m.Candidates != 0 || errors.As(err, &ns) != c.notSent {
			t.Errorf("%s: %s, %v (never sent: %v, want %v)", c.name, m, err, errors.As(err, &ns), c.notSent)
		}
	}

	// The history is read, but which of its transactions are held cannot
	// be known: the sole candidate may be another attempt's.
	sole := cloudapi.HistoryEntry{TransactionID: "tx-1", Status: "ok", Type: "debit", CartID: "O1", Amount: 500}
	unknown := errors.New("journal: database is locked")
	cantTell := func(context.Context, []string) (map[string]bool, error) { return nil, unknown }
	m, err := Cloud(&historyCloud{entries: []cloudapi.HistoryEntry{sole}}, "SN-1", nil, 0).
		Lookup(t.Context(), lookupAttempt(journal.KindDebit, 500), time.Now(), cantTell)
	if !errors.Is(err, unknown) || m.Verdict == InHistory {
		t.Errorf("cloud, holders unknown: %s, %v", m, err)
	}
	list := []localapi.HistoryEntry{{TransactionID: "tx-1", Status: "ok", Type: "debit", CartID: "O1", Amount: 500, CreatedAt: time.Now().UTC().Format(time.RFC3339)}}
	f := &fakeTerminal{transactions: func(_ context.Context, r *localapi.TransactionsRequest) (*localapi.TransactionList, error) {
		return &localapi.TransactionList{Count: 1, Total: 1, Limit: r.Limit, Transactions: list}, nil
	}}
	a := lookupAttempt(journal.KindDebit, 500)
	a.Channel = journal.ChannelLocal
	m, err = Local(f, nil, time.Second).Lookup(t.Context(), a, time.Now().Add(-time.Hour), cantTell)
	if !errors.Is(err, unknown) || m.Verdict == InHistory {
		t.Errorf("local, holders unknown: %s, %v", m, err)
	}
}
