package staffapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/comptoir-pos/comptoir/backend/device"
	"slices"
	"strings"
	"testing"

	"github.com/comptoir-pos/comptoir/backend/fault"
	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/staff"
)

// deadTerminal answers nothing: these tests are about the calls' gate and
// envelope, the staff package tests the actions against the simulator.
type deadTerminal struct{}

var errDead = errors.New("no terminal in this test")

func (deadTerminal) History(context.Context, device.HistoryQuery) (device.HistoryPage, error) {
	return device.HistoryPage{}, errDead
}
func (deadTerminal) Ping(context.Context, bool) (device.Answer, error) {
	return device.Answer{}, errDead
}
func (deadTerminal) Print(context.Context, device.Print) (device.Answer, error) {
	return device.Answer{}, errDead
}
func (deadTerminal) ShareReceipt(context.Context, device.Share) (device.Answer, error) {
	return device.Answer{}, errDead
}

type fakeControl struct {
	chosen, address, pin string
	cloud                CloudChoice
	refuse               error
	// confirmed and refused are the devices staff confirmed or refused.
	confirmed, refused []string
}

func (f *fakeControl) ConfirmDevice(_ context.Context, address, certificate string) error {
	if f.refuse != nil {
		return f.refuse
	}
	f.confirmed = append(f.confirmed, address+" "+certificate)
	return nil
}

func (f *fakeControl) RefuseDevice(_ context.Context, address, certificate string) error {
	if f.refuse != nil {
		return f.refuse
	}
	f.refused = append(f.refused, address+" "+certificate)
	return nil
}

func (f *fakeControl) Info(context.Context) TerminalInfo {
	return TerminalInfo{Source: "discovery", Saved: Endpoint{Instance: f.chosen, Address: f.address}, Pin: f.pin, HTTPS: f.pin != ""}
}
func (f *fakeControl) Certificate(_ context.Context, address string) (Certificate, error) {
	if f.refuse != nil {
		return Certificate{}, f.refuse
	}
	return Certificate{Address: address, Fingerprint: "AB:CD"}, nil
}
func (f *fakeControl) SetCloud(_ context.Context, c CloudChoice) error {
	if f.refuse != nil {
		return f.refuse
	}
	f.cloud = c
	return nil
}
func (f *fakeControl) Pin(_ context.Context, fingerprint string) error {
	if f.refuse != nil {
		return f.refuse
	}
	f.pin = fingerprint
	return nil
}
func (f *fakeControl) Choose(_ context.Context, instance string) error {
	if f.refuse != nil {
		return f.refuse
	}
	f.chosen = instance
	return nil
}
func (f *fakeControl) SetAddress(_ context.Context, address string) error {
	if f.refuse != nil {
		return f.refuse
	}
	f.address = address
	return nil
}

func newAPI(t *testing.T, demo bool) (*API, *staff.Staff, *fakeControl) {
	t.Helper()
	ctx := context.Background()
	db, err := journal.OpenMemory(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	st, err := staff.New(staff.Config{Journal: db, Terminal: deadTerminal{}, Demo: demo,
		Argon2: &staff.Argon2Params{Time: 1, Memory: 64, Threads: 1}})
	if err != nil {
		t.Fatal(err)
	}
	ctl := &fakeControl{}
	return New(Config{Staff: st, Terminal: ctl, About: About{Version: "1.2.3", Demo: demo}}), st, ctl
}

func raw(vs ...any) []json.RawMessage {
	out := make([]json.RawMessage, len(vs))
	for i, v := range vs {
		b, err := json.Marshal(v)
		if err != nil {
			panic(err)
		}
		out[i] = b
	}
	return out
}

func mustCall(t *testing.T, a *API, name string, args ...any) Result {
	t.Helper()
	r, err := a.Call(context.Background(), name, raw(args...))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return r
}

func unlock(t *testing.T, a *API) string {
	t.Helper()
	r := mustCall(t, a, "Unlock", staff.DemoPIN)
	s, ok := r.Value.(staff.Session)
	if !r.OK || !ok || s.ID == "" {
		t.Fatalf("unlock: %+v", r)
	}
	return s.ID
}

// open are the calls that take no session: the PIN pad's.
var open = []string{"Gate", "SetPIN", "Unlock", "ClearLockout"}

// TestEveryCallNeedsASession: without the PIN, nothing but the PIN pad's
// own calls answers, whatever the arguments.
func TestEveryCallNeedsASession(t *testing.T) {
	a, _, ctl := newAPI(t, true)
	for _, name := range Names() {
		if slices.Contains(open, name) || name == "Lock" {
			continue
		}
		for _, sid := range []string{"", "not-a-session"} {
			args := make([]any, calls[name].n)
			args[0] = sid
			r := mustCall(t, a, name, args...)
			if r.OK || r.Error == nil || r.Error.Code != staff.ESESSION {
				t.Errorf("%s with session %q: %+v %+v, want ESESSION", name, sid, r, r.Error)
			}
		}
	}
	if ctl.chosen != "" || ctl.address != "" {
		t.Fatalf("a call without a session changed the terminal: %+v", ctl)
	}
	// Lock of a session that does not exist does nothing and says nothing.
	if r := mustCall(t, a, "Lock", "not-a-session"); !r.OK {
		t.Fatalf("Lock: %+v", r.Error)
	}
}

func TestUnlockErrorsKeepTheirCodes(t *testing.T) {
	a, _, _ := newAPI(t, false)
	r := mustCall(t, a, "Gate")
	if g := r.Value.(Gate); g.HasPIN || g.Demo {
		t.Fatalf("gate on a fresh install: %+v", g)
	}
	if r := mustCall(t, a, "Unlock", "1234"); r.OK || r.Error.Code != staff.ENOPIN {
		t.Fatalf("unlock with no PIN set and no demo: %+v", r.Error)
	}
	r = mustCall(t, a, "SetPIN", "482916")
	if s, ok := r.Value.(staff.Session); !r.OK || !ok || s.ID == "" {
		t.Fatalf("SetPIN must open a session: %+v", r)
	}
	if r := mustCall(t, a, "SetPIN", "111111"); r.OK || r.Error.Code != staff.EPINSET {
		t.Fatalf("a second SetPIN: %+v", r.Error)
	}
	var last Result
	for range 10 {
		last = mustCall(t, a, "Unlock", "000000")
		if last.Error != nil && last.Error.Code == staff.ELOCKEDOUT {
			break
		}
		if last.OK || last.Error.Code != staff.EWRONGPIN {
			t.Fatalf("wrong PIN: %+v", last.Error)
		}
	}
	if last.Error == nil || last.Error.Code != staff.ELOCKEDOUT || last.Error.RetryAfterMs <= 0 {
		t.Fatalf("repeated wrong PINs must lock the pad with a delay in ms: %+v", last.Error)
	}
	// Locked out, even the right PIN waits.
	if r := mustCall(t, a, "Unlock", "482916"); r.OK || r.Error.Code != staff.ELOCKEDOUT {
		t.Fatalf("right PIN while locked out: %+v", r.Error)
	}
}

func TestBadCallsAreArgErrors(t *testing.T) {
	a, _, _ := newAPI(t, true)
	var ae *fault.ArgError
	if _, err := a.Call(context.Background(), "Nope", nil); !errors.As(err, &ae) {
		t.Fatalf("unknown call: %v", err)
	}
	if _, err := a.Call(context.Background(), "Unlock", nil); !errors.As(err, &ae) {
		t.Fatalf("missing argument: %v", err)
	}
	_, err := a.Call(context.Background(), "Refund", raw("sid", "order", "12.50"))
	if !errors.As(err, &ae) || !strings.Contains(err.Error(), "argument 3") {
		t.Fatalf("a string for the refund's cents must be refused, naming the argument: %v", err)
	}
}

func TestTerminalChoiceIsAuditedAndRefusalsPassThrough(t *testing.T) {
	a, st, ctl := newAPI(t, true)
	sid := unlock(t, a)
	r := mustCall(t, a, "ChooseTerminal", sid, "Yavin 42")
	if !r.OK {
		t.Fatalf("choose: %+v", r.Error)
	}
	p := r.Value.(TerminalPanel)
	if ctl.chosen != "Yavin 42" || p.Saved.Instance != "Yavin 42" || p.Status.Reachable {
		t.Fatalf("panel %+v (the dead terminal must not be reachable)", p)
	}
	ctl.refuse = &staff.Error{Code: staff.ETERMINAL, Message: "No payment terminal answers there."}
	if r := mustCall(t, a, "SetTerminalAddress", sid, "10.0.0.9"); r.OK || r.Error.Code != staff.ETERMINAL || ctl.address != "" {
		t.Fatalf("refused address: %+v, saved %q", r.Error, ctl.address)
	}
	entries, err := st.Audit(context.Background(), sid, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(entries, func(e staff.AuditEntry) bool {
		return e.Action == "terminal_choose" && e.Subject == "Yavin 42"
	}) {
		t.Fatalf("the choice is not in the audit trail: %+v", entries)
	}
}

func TestPinningTheTerminalCertificateNeedsASessionAndIsAudited(t *testing.T) {
	a, st, ctl := newAPI(t, true)
	if r := mustCall(t, a, "PinTerminalCertificate", "no-session", "AB:CD"); r.OK || r.Error.Code != staff.ESESSION || ctl.pin != "" {
		t.Fatalf("pin without a session: %+v, pinned %q", r.Error, ctl.pin)
	}
	sid := unlock(t, a)
	if r := mustCall(t, a, "TerminalCertificate", sid, "https://10.0.0.9"); !r.OK || r.Value.(Certificate).Address != "https://10.0.0.9" {
		t.Fatalf("certificate: %+v", r)
	}
	r := mustCall(t, a, "PinTerminalCertificate", sid, "AB:CD")
	if !r.OK || ctl.pin != "AB:CD" || !r.Value.(TerminalPanel).HTTPS || r.Value.(TerminalPanel).Pin != "AB:CD" {
		t.Fatalf("pin: %+v, pinned %q", r, ctl.pin)
	}
	entries, err := st.Audit(context.Background(), sid, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(entries, func(e staff.AuditEntry) bool { return e.Action == "terminal_pin" && e.Subject == "AB:CD" }) {
		t.Fatalf("the pin is not in the audit trail: %+v", entries)
	}
}

func TestConfirmingTheTerminalDeviceNeedsASessionAndIsAudited(t *testing.T) {
	a, st, ctl := newAPI(t, true)
	if r := mustCall(t, a, "ConfirmTerminalDevice", "no-session", "http://10.0.0.9:16125/localapi/v4", ""); r.OK || r.Error.Code != staff.ESESSION || len(ctl.confirmed) != 0 {
		t.Fatalf("confirm without a session: %+v, confirmed %q", r.Error, ctl.confirmed)
	}
	sid := unlock(t, a)
	if r := mustCall(t, a, "ConfirmTerminalDevice", sid, "https://10.0.0.9:16125/localapi/v4", "AB:CD"); !r.OK || len(ctl.confirmed) != 1 {
		t.Fatalf("confirm: %+v, confirmed %q", r, ctl.confirmed)
	}
	if r := mustCall(t, a, "RefuseTerminalDevice", sid, "http://10.0.0.66:16125/localapi/v4", ""); !r.OK || len(ctl.refused) != 1 {
		t.Fatalf("refuse: %+v, refused %q", r, ctl.refused)
	}
	ctl.refuse = &staff.Error{Code: staff.ENOTFOUND, Message: "gone"}
	if r := mustCall(t, a, "ConfirmTerminalDevice", sid, "http://10.0.0.7:16125/localapi/v4", ""); r.OK || r.Error.Code != staff.ENOTFOUND {
		t.Fatalf("confirm refused by the terminal control: %+v", r)
	}
	entries, err := st.Audit(context.Background(), sid, 0)
	if err != nil {
		t.Fatal(err)
	}
	has := func(action, subject string) bool {
		return slices.ContainsFunc(entries, func(e staff.AuditEntry) bool { return e.Action == action && e.Subject == subject })
	}
	if !has("terminal_confirm", "https://10.0.0.9:16125/localapi/v4") || !has("terminal_refuse", "http://10.0.0.66:16125/localapi/v4") ||
		has("terminal_confirm", "http://10.0.0.7:16125/localapi/v4") {
		t.Fatalf("audit trail: %+v", entries)
	}
}

func TestQuitAndRestartOnlyOnTheDesktop(t *testing.T) {
	a, _, _ := newAPI(t, true)
	sid := unlock(t, a)
	if r := mustCall(t, a, "About", sid); !r.OK || !r.Value.(About).Browser || r.Value.(About).Version != "1.2.3" {
		t.Fatalf("about in browser mode: %+v", r)
	}
	if r := mustCall(t, a, "Quit", sid); r.OK || r.Error.Code != staff.EINVALID {
		t.Fatalf("quit in browser mode: %+v", r.Error)
	}
	if r := mustCall(t, a, "Restart", sid); r.OK || r.Error.Code != staff.EINVALID {
		t.Fatalf("restart in browser mode: %+v", r.Error)
	}
	quits, restarts := 0, 0
	refuse := &staff.Error{Code: staff.EINVALID, Message: "A payment is in progress."}
	var restartErr error = refuse
	d := a.WithDesktop(func() { quits++ }, func() error { restarts++; return restartErr })
	if r := mustCall(t, d, "Restart", sid); r.OK || r.Error.Message != refuse.Message || restarts != 1 {
		t.Fatalf("a refused restart: %+v", r.Error)
	}
	restartErr = nil
	if r := mustCall(t, d, "Restart", sid); !r.OK || restarts != 2 {
		t.Fatalf("restart: %+v", r.Error)
	}
	if r := mustCall(t, d, "About", sid); r.Value.(About).Browser {
		t.Fatal("the desktop API says browser")
	}
	if r := mustCall(t, d, "Quit", sid); !r.OK || quits != 1 {
		t.Fatalf("quit: %+v, %d calls", r.Error, quits)
	}
	if r := mustCall(t, d, "Quit", "not-a-session"); r.OK || quits != 1 {
		t.Fatalf("quit without a session closed the app")
	}
	// Never while a payment is out on the terminal.
	busy := d.WithBusy(func() string { return "A payment is in progress." })
	for _, name := range []string{"Quit", "Restart"} {
		if r := mustCall(t, busy, name, sid); r.OK || r.Error.Message != "A payment is in progress." {
			t.Fatalf("%s while busy: %+v", name, r.Error)
		}
	}
	if quits != 1 || restarts != 2 {
		t.Fatalf("stopped while busy: %d quits, %d restarts", quits, restarts)
	}
}

func TestCloseCheckoutWithoutKiosk(t *testing.T) {
	a, _, _ := newAPI(t, true)
	sid := unlock(t, a)
	if r := mustCall(t, a, "CloseCheckout", sid); r.OK || r.Error.Code != staff.EINVALID {
		t.Fatalf("close checkout with no kiosk: %+v", r.Error)
	}
}

// View is the envelope's one mapping: staff's words keep their code, a
// lower layer's words and a bare error are internal, a call that does not
// fit is the caller's bug.
func TestViewOfOtherErrors(t *testing.T) {
	v := View(errors.New("disk on fire"))
	if v.Code != staff.EINTERNAL || !strings.Contains(v.Message, "disk on fire") {
		t.Fatalf("%+v", v)
	}
	raw := journal.Errorf(journal.ENOTFOUND, "attempt %s", "x")
	if v := View(fmt.Errorf("read: %w", raw)); v.Code != staff.EINTERNAL || !strings.Contains(v.Message, "journal: attempt x") {
		t.Fatalf("a journal error not worded for staff: %+v", v)
	}
	worded := &staff.Error{Code: staff.ETERMINAL, Message: "Refused.", TerminalCode: "reversal_amount_mismatch", TerminalMessage: "Error : Amount mismatch", Err: raw}
	if v := View(worded); v.Code != staff.ETERMINAL || v.Message != "Refused." || v.TerminalCode != "reversal_amount_mismatch" || v.TerminalMessage == "" {
		t.Fatalf("staff's words: %+v", v)
	}
	if v := View(&fault.ArgError{Msg: "Touch: expected 1 argument(s), got 0"}); v.Code != EBADCALL || !strings.Contains(v.Message, "expected 1") {
		t.Fatalf("a call that does not fit: %+v", v)
	}
}

// Where a PIN was typed is the transport's and the gesture's: wrong PINs
// at the customer screen's corner lock the corner only; the desktop's
// shortcut and a browser's stay open; what a browser says of itself never
// makes it the desktop.
func TestTheLockoutIsPerOrigin(t *testing.T) {
	browser, st, _ := newAPI(t, false)
	desktop := browser.WithDesktop(func() {}, func() error { return nil }).WithBusy(func() string { return "" })
	if r := mustCall(t, browser, "SetPIN", "482916"); !r.OK {
		t.Fatalf("SetPIN: %+v", r.Error)
	}
	code := func(r Result) string {
		if r.OK {
			return ""
		}
		return r.Error.Code
	}
	for range staff.MaxPINFailures {
		mustCall(t, desktop, "Unlock", "000000", GestureCorner)
	}
	if c := code(mustCall(t, desktop, "Unlock", "482916", GestureCorner)); c != staff.ELOCKEDOUT {
		t.Fatalf("the corner after 3 wrong PINs: %q", c)
	}
	if c := code(mustCall(t, browser, "Unlock", "482916")); c != staff.ELOCKEDOUT {
		t.Fatalf("no gesture is the corner: %q", c)
	}
	if c := code(mustCall(t, desktop, "Unlock", "482916", GestureShortcut)); c != "" {
		t.Fatalf("the desktop's shortcut kept out by the corner: %q", c)
	}
	// A browser that says "shortcut" is a browser: its own wrong PINs lock
	// it, never the desktop.
	for range staff.MaxPINFailures {
		mustCall(t, browser, "Unlock", "000000", GestureShortcut)
	}
	if c := code(mustCall(t, browser, "Unlock", "482916", GestureShortcut)); c != staff.ELOCKEDOUT {
		t.Fatalf("the browser after 3 wrong PINs: %q", c)
	}
	if c := code(mustCall(t, desktop, "Unlock", "482916", GestureShortcut)); c != "" {
		t.Fatalf("the desktop's shortcut kept out by a browser: %q", c)
	}
	// The recovery code, typed at the locked corner, lifts every lockout.
	rc, err := st.NewRecoveryCode(context.Background(), "test")
	if err != nil {
		t.Fatal(err)
	}
	if c := code(mustCall(t, browser, "ClearLockout", rc, GestureCorner)); c != "" {
		t.Fatalf("ClearLockout: %q", c)
	}
	if c := code(mustCall(t, browser, "Unlock", "482916", GestureShortcut)); c != "" {
		t.Fatalf("the browser after the recovery code: %q", c)
	}
	var ae *fault.ArgError
	if _, err := browser.Call(context.Background(), "Unlock", raw("482916", "corner", "more")); !errors.As(err, &ae) {
		t.Fatalf("three arguments: %v", err)
	}
	if _, err := browser.Call(context.Background(), "Unlock", raw("482916", 7)); !errors.As(err, &ae) {
		t.Fatalf("a number for the gesture: %v", err)
	}
}
