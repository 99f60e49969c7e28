package payment

import (
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/comptoir-pos/comptoir/backend/journal"
)

// A history search on one way of a terminal reached two ways takes a
// transaction for its attempt unless another way's attempt could be it:
// an attempt of the same order, on the other way this orchestrator
// drives, of the same kind and amount, that was sent, and whose own
// transaction is another one. The history entry naming the attempt by
// its own ids (its idempotentUuid, the checkoutExternalId it was sent
// with) settles it whatever else exists. Each case changes one of these.
func TestRuleAHistoryMatchIsLeftToStaffOnlyWhenAnotherWaysAttemptCouldBeIt(t *testing.T) {
	e := newEnv(t, testLimits)
	o, err := New(Config{Journal: e.db, Terminal: e.client, Fallback: &polling{}, TerminalID: "sim", Limits: testLimits})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(o.Close)
	alone, err := New(Config{Journal: e.db, Terminal: e.client, TerminalID: "sim", Limits: testLimits})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(alone.Close)

	type other struct {
		channel journal.Channel
		amount  int64
		sent    bool
		tx      string
	}
	lanDebit := other{journal.ChannelLocal, 900, true, "trs_lan"}
	for i, tc := range []struct {
		name  string
		o     *Orchestrator
		other *other // the order's earlier attempt, if any
		kind  journal.Kind
		raw   string
		found string // the history's transaction
		notIn bool   // the history does not list it
		staff bool   // want: left to staff
	}{
		{"another way's debit could be it", o, &lanDebit, journal.KindDebit, `{"transactionId":"trs_x"}`, "trs_x", false, true},
		{"an unreadable entry names nothing", o, &lanDebit, journal.KindDebit, `not json`, "trs_x", false, true},
		{"the entry names the attempt's uuid", o, &lanDebit, journal.KindDebit, `{"idempotentUuid":"ID"}`, "trs_x", false, false},
		{"the entry names its checkout id", o, &lanDebit, journal.KindDebit, `{"checkoutExternalId":"ext-ID"}`, "trs_x", false, false},
		{"an entry naming another uuid", o, &lanDebit, journal.KindDebit, `{"idempotentUuid":"someone-else"}`, "trs_x", false, true},
		{"no other attempt", o, nil, journal.KindDebit, `{}`, "trs_x", false, false},
		{"no fallback: one way only", alone, &lanDebit, journal.KindDebit, `{}`, "trs_x", false, false},
		{"the history does not list it", o, &lanDebit, journal.KindDebit, `{}`, "", true, false},
		{"another kind", o, &lanDebit, journal.KindRefund, `{}`, "trs_x", false, false},
		{"another amount", o, &other{journal.ChannelLocal, 800, true, "trs_lan"}, journal.KindDebit, `{}`, "trs_x", false, false},
		{"the same way", o, &other{journal.ChannelCloud, 900, true, "trs_lan"}, journal.KindDebit, `{}`, "trs_x", false, false},
		{"a way this orchestrator does not drive", o, &other{journal.ChannelLink, 900, true, "trs_lan"}, journal.KindDebit, `{}`, "trs_x", false, false},
		{"never sent", o, &other{journal.ChannelLocal, 900, false, ""}, journal.KindDebit, `{}`, "trs_x", false, false},
		{"its own transaction is the one found", o, &other{journal.ChannelLocal, 900, true, "trs_x"}, journal.KindDebit, `{}`, "trs_x", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			order := "R" + string(rune('A'+i))
			e.order(order, 900)
			id := uuid.Must(uuid.NewV7()).String()
			att := journal.Attempt{UUID: id, OrderID: order, Kind: tc.kind, Channel: journal.ChannelCloud, Amount: 900,
				RequestBody: []byte(`{"checkoutExternalId":"ext-` + id + `"}`)}
			if x := tc.other; x != nil {
				prior, err := e.db.PrepareAttempt(e.ctx, journal.Attempt{UUID: uuid.Must(uuid.NewV7()).String(), OrderID: order,
					Kind: journal.KindDebit, Channel: x.channel, Amount: x.amount, Policy: journal.PolicyKiosk, Terminal: "sim-" + order, RequestBody: []byte(`{}`)})
				if err != nil {
					t.Fatal(err)
				}
				if x.sent {
					if _, err := e.db.MarkSent(e.ctx, prior.UUID); err != nil {
						t.Fatal(err)
					}
					if _, err := e.db.Transition(e.ctx, prior.UUID, journal.StateSent, journal.StateDeclined,
						journal.TransitionInfo{TransactionID: x.tx, Note: "declined"}); err != nil {
						t.Fatal(err)
					}
				}
			}
			raw := strings.ReplaceAll(tc.raw, "ID", id)
			m := Match{Verdict: InHistory, Candidates: 1, Raw: []byte(raw), Charge: Charge{TransactionID: tc.found}}
			if tc.notIn {
				m = Match{Verdict: NotInHistory}
			}
			got := tc.o.crossChannel(e.ctx, att, m)
			switch {
			case tc.staff && (got.Verdict != AmbiguousHistory || got.Candidates < 2):
				t.Fatalf("%+v: want it left to staff, with the other way's attempt among its candidates", got)
			case !tc.staff && (got.Verdict != m.Verdict || got.Charge.TransactionID != m.Charge.TransactionID):
				t.Fatalf("%+v: want the match kept as it was (%+v)", got, m)
			}
		})
	}
}

// Without a probe of the first way, a new attempt takes the first way: the
// fallback is for a terminal the first way was seen not to reach.
func TestRuleWithoutAProbeTheFirstWayIsTaken(t *testing.T) {
	e := newEnv(t, testLimits)
	o, err := New(Config{Journal: e.db, Terminal: e.client, Fallback: &polling{}, TerminalID: "sim", Limits: testLimits})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(o.Close)
	if ch := o.route(e.ctx); ch.Name() != journal.ChannelLocal {
		t.Fatalf("route %s, want the first way", ch.Name())
	}
}
