package payment

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/comptoir-pos/comptoir/backend/cloudapi"
	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/localapi"
)

// A failed exchange is read alike on the LAN and through the cloud: only
// a request that certainly never left is "not sent" (the one reading that
// lets a first send be failed as harmless), a sent one without an answer
// in time is a timeout, and an answer that was not understood keeps its
// body for the journal and leaves the outcome open.
func TestRuleAFailedExchangeIsReadAlikeOnEveryChannel(t *testing.T) {
	refused := errors.New("connect: connection refused")
	reset := errors.New("read: connection reset by peer")
	body := []byte(`{"odd":true}`)
	type reading struct {
		outcome Outcome
		raw     string
	}
	cases := []struct {
		name         string
		local, cloud error
		want         reading
	}{
		{"forbidden by the specification",
			&localapi.ValidationError{Field: "amount", Reason: "must be positive"},
			&localapi.ValidationError{Field: "amount", Reason: "must be positive"},
			reading{outcome: OutcomeInvalid}},
		{"never left",
			&localapi.TransportError{Endpoint: "/payment", Err: refused},
			&cloudapi.TransportError{Op: "POST /transactions/", Err: refused},
			reading{outcome: OutcomeNotSent}},
		{"never left, wrapped",
			fmt.Errorf("sending: %w", &localapi.TransportError{Endpoint: "/payment", Err: refused}),
			fmt.Errorf("sending: %w", &cloudapi.TransportError{Op: "POST /transactions/", Err: refused}),
			reading{outcome: OutcomeNotSent}},
		{"sent, no answer in time",
			&localapi.TransportError{Endpoint: "/payment", Sent: true, Timeout: true, Err: reset},
			&cloudapi.TransportError{Op: "POST /transactions/", Sent: true, Timeout: true, Err: reset},
			reading{outcome: OutcomeTimeout}},
		{"sent, cut off",
			&localapi.TransportError{Endpoint: "/payment", Sent: true, Err: reset},
			&cloudapi.TransportError{Op: "POST /transactions/", Sent: true, Err: reset},
			reading{outcome: OutcomeIndefinite}},
		{"an HTTP status the specification does not give",
			&localapi.HTTPError{Endpoint: "/payment", StatusCode: 502, Body: body},
			&cloudapi.HTTPError{Status: 502, Body: body},
			reading{outcome: OutcomeIndefinite, raw: string(body)}},
		{"an answer that cannot be read",
			&localapi.DecodeError{Endpoint: "/payment", Body: body, Err: errors.New("bad json")},
			&cloudapi.DecodeError{Op: "POST /transactions/", Body: body, Err: errors.New("bad json")},
			reading{outcome: OutcomeIndefinite, raw: string(body)}},
		{"something nobody classified",
			errors.New("boom"), errors.New("boom"),
			reading{outcome: OutcomeIndefinite}},
	}
	for _, c := range cases {
		for ch, a := range map[string]Answer{"local": localError("u-1", c.local), "cloud": cloudError(c.cloud)} {
			got := reading{outcome: a.Outcome, raw: string(a.Raw)}
			if got != c.want {
				t.Errorf("%s, %s: %+v, want %+v", c.name, ch, got, c.want)
			}
			if a.Known {
				t.Errorf("%s, %s: a failed exchange says nothing the terminal knows", c.name, ch)
			}
			if a.Message == "" || !strings.Contains(a.Message, map[string]string{"local": c.local.Error(), "cloud": c.cloud.Error()}[ch]) {
				t.Errorf("%s, %s: message %q does not say what failed", c.name, ch, a.Message)
			}
		}
	}
}

type reversingTerminal struct {
	Terminal
	resp *localapi.ReversalResponse
	err  error
}

func (r reversingTerminal) ReversalBody(context.Context, []byte) (*localapi.ReversalResponse, error) {
	return r.resp, r.err
}

type reversingCloud struct {
	CloudAPI
	resp *cloudapi.ReversalResponse
	err  error
}

func (r reversingCloud) Reversal(context.Context, []byte) (*cloudapi.ReversalResponse, error) {
	return r.resp, r.err
}

// A reversal the provider says is done gives the debit back once, for the
// reversal attempt's amount, on either channel: with the reversal's
// transaction when this request did it, without one when an earlier
// request (or the terminal itself) already had, its message kept.
func TestRuleADoneReversalGivesTheAmountBackOnEveryChannel(t *testing.T) {
	a := journal.Attempt{UUID: "u-rev", Amount: 700}
	done, already := []byte(`{"status":"ok"}`), []byte(`{"status":"ko"}`)
	const msg = "The transaction has already been reversed"
	cases := []struct {
		name string
		ch   Channel
		txID string
		raw  []byte
		msg  string
	}{
		{"local, done now", Local(reversingTerminal{resp: &localapi.ReversalResponse{ReversalTransactionID: "rv-1", Raw: done}}, nil, 0), "rv-1", done, ""},
		{"local, done before", Local(reversingTerminal{err: &localapi.APIError{Code: localapi.CodeReversalAlready, Message: msg, Raw: already}}, nil, 0), "", already, msg},
		{"cloud, done now", Cloud(reversingCloud{resp: &cloudapi.ReversalResponse{ReversalTransactionID: "rv-2", Raw: done}}, "SN-1", nil, 0), "rv-2", done, ""},
		{"cloud, done before", Cloud(reversingCloud{err: &cloudapi.APIError{Status: 400, Message: msg, Body: already}}, "SN-1", nil, 0), "", already, msg},
	}
	for _, c := range cases {
		got := c.ch.Reverse(t.Context(), a)
		if got.Outcome != OutcomeCharged || !got.Known || got.Message != c.msg || string(got.Raw) != string(c.raw) {
			t.Errorf("%s: %+v", c.name, got)
			continue
		}
		if ch := got.Charge; ch == nil || ch.Amount != 700 || !ch.Approved || ch.TransactionID != c.txID {
			t.Errorf("%s: charge %+v, want 700 given back with transaction %q", c.name, got.Charge, c.txID)
		}
	}
}

type abortingCloud struct {
	CloudAPI
	err error
}

func (c abortingCloud) Abort(context.Context, string, string) (*cloudapi.Status, error) {
	return nil, c.err
}

// A cancel that failed is read alike on both terminal channels: "not sent"
// only when it certainly never left, otherwise open, with what came back
// kept for the journal.
func TestRuleAFailedCancelIsReadAlikeOnEveryChannel(t *testing.T) {
	body := []byte(`<html>bad gateway</html>`)
	cases := []struct {
		name         string
		local, cloud error
		want         CancelOutcome
		raw          string
	}{
		{"never left", &localapi.TransportError{Endpoint: "/abort", Err: errors.New("connect: connection refused")},
			&cloudapi.TransportError{Op: "POST /cancel", Err: errors.New("connect: connection refused")}, CancelNotSent, ""},
		{"sent, cut off", &localapi.TransportError{Endpoint: "/abort", Sent: true, Err: errors.New("EOF")},
			&cloudapi.TransportError{Op: "POST /cancel", Sent: true, Err: errors.New("EOF")}, CancelIndefinite, ""},
		{"an HTTP status the specification does not give", &localapi.HTTPError{Endpoint: "/abort", StatusCode: 502, Body: body},
			&cloudapi.HTTPError{Status: 502, Body: body}, CancelIndefinite, string(body)},
		{"something nobody classified", errors.New("boom"), errors.New("boom"), CancelIndefinite, ""},
	}
	for _, c := range cases {
		a := journal.Attempt{UUID: "u-1"}
		for ch, got := range map[string]CancelAnswer{
			"local": localCancel(nil, c.local),
			"cloud": Cloud(abortingCloud{err: c.cloud}, "SN-1", nil, 0).Cancel(t.Context(), a),
		} {
			if got.Outcome != c.want || string(got.Raw) != c.raw || got.Message == "" {
				t.Errorf("%s, %s: %+v, want %v with %q", c.name, ch, got, c.want, c.raw)
			}
		}
	}
}
