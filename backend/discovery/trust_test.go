package discovery

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/internal/testenv"
	"github.com/comptoir-pos/comptoir/backend/localapi"
)

const (
	pinA = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	pinB = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
)

func TestJudge(t *testing.T) {
	at := func(url, fp string) Terminal { return Terminal{Instance: "Yavin A", BaseURL: url, Fingerprint: fp} }
	plain := Identity{Instance: "Yavin A", Addresses: []Seen{{Address: "http://10.0.0.5:16125/localapi/v4"}}}
	https := Identity{Instance: "Yavin A", Pin: pinA, HTTPS: true, Addresses: []Seen{{Address: "https://10.0.0.5:16125/localapi/v4"}}}
	refused := plain.Refuse("http://10.0.0.66:16125/localapi/v4", "", time.Now())
	cases := []struct {
		name string
		id   Identity
		t    Terminal
		want Standing
	}{
		{"nothing adopted", Identity{}, at("http://10.0.0.9:16125/localapi/v4", ""), StandingFirstUse},
		{"a name chosen, never seen", Identity{Instance: "yavin a"}, at("http://10.0.0.9:16125/localapi/v4", ""), StandingFirstUse},
		{"another name", plain, Terminal{Instance: "Yavin B", BaseURL: "http://10.0.0.5:16125/localapi/v4"}, StandingOtherName},
		{"plain, known address", plain, at("http://10.0.0.5:16125/localapi/v4", ""), StandingAdopted},
		{"plain, same host on another port", plain, at("http://10.0.0.5:16126/localapi/v4", ""), StandingNewAddress},
		{"plain, new address", plain, at("http://10.0.0.9:16125/localapi/v4", ""), StandingNewAddress},
		{"plain, now offering HTTPS at its address", plain, at("https://10.0.0.5:16125/localapi/v4", pinB), StandingAdopted},
		{"plain, HTTPS at a new address", plain, at("https://10.0.0.9:16125/localapi/v4", pinB), StandingNewAddress},
		{"refused by staff", refused, at("http://10.0.0.66:16125/localapi/v4", ""), StandingRefused},
		{"refused address, now with a certificate", refused, at("https://10.0.0.66:16125/localapi/v4", pinB), StandingNewAddress},
		{"pinned, same certificate, new address", https, at("https://10.0.0.9:16125/localapi/v4", pinA), StandingAdopted},
		{"pinned, another certificate at its address", https, at("https://10.0.0.5:16125/localapi/v4", pinB), StandingOtherCertificate},
		{"pinned, plain HTTP at its address", https, at("http://10.0.0.5:16125/localapi/v4", ""), StandingPlainHTTP},
		{"HTTPS required, nothing pinned, plain", Identity{Instance: "Yavin A", HTTPS: true}, at("http://10.0.0.5:16125/localapi/v4", ""), StandingPlainHTTP},
		{"HTTPS required, nothing pinned, first HTTPS", Identity{Instance: "Yavin A", HTTPS: true}, at("https://10.0.0.5:16125/localapi/v4", pinB), StandingFirstUse},
	}
	for _, tc := range cases {
		if got := tc.id.Judge(tc.t); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}

func TestIdentityValidate(t *testing.T) {
	now := time.Now()
	good := Identity{Instance: "Yavin A", Pin: pinA}.Record("https://10.0.0.5:16125/localapi/v4", "adopted", now)
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	many := good
	for i := range MaxAddresses + 5 {
		many = many.Record("http://10.0.1."+string(rune('0'+i%10))+string(rune('0'+i/10))+":16125/localapi/v4", "staff", now)
	}
	if len(many.Addresses) != MaxAddresses || many.Validate() != nil {
		t.Errorf("recording keeps at most %d addresses: %d", MaxAddresses, len(many.Addresses))
	}
	bad := []Identity{
		{Instance: "Yavin A", Pin: "AA:BB"},
		{Instance: "Yavin A", Pin: strings.ToUpper(pinA)},
		{Addresses: good.Addresses},
		{Instance: "Yavin A", Addresses: []Seen{{Address: "ftp://10.0.0.5"}}},
		{Instance: "Yavin A", Refused: []Refusal{{Address: "not an address"}}},
		{Instance: "Yavin A", Addresses: make([]Seen, MaxAddresses+1)},
	}
	for _, id := range bad {
		if err := id.Validate(); err == nil {
			t.Errorf("accepted %+v", id)
		}
	}
	// A damaged record stops the Tracker: it would otherwise adopt
	// whatever answers first.
	trust := &MemoryTrust{}
	_ = trust.SaveIdentity(t.Context(), bad[0])
	tr, err := NewTracker(Config{Trust: trust})
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Start(t.Context()); err == nil {
		tr.Close()
		t.Fatal("started on a damaged identity")
	}
}

// A terminal on plain HTTP found under its name at an address never seen
// is not used: it waits for staff, the kiosk's terminal is unreachable,
// and staff's confirmation makes it the terminal.
func TestTrackerHoldsANewAddressForStaff(t *testing.T) {
	var paidA, paidB atomic.Int32
	srvA, urlA := terminalServer(t, approve(&paidA))
	_, urlB := terminalServer(t, approve(&paidB))
	f := &fakeFinder{}
	f.set(confirmed("Yavin A", urlA))
	trust := &MemoryTrust{}
	tr := newTracker(t, Config{Trust: trust, ResolveInterval: time.Millisecond}, f)
	testenv.Eventually(t, "adopted", func() bool { return tr.Status().Address == urlA })
	if id := tr.Identity(); !id.Knows(urlA) || id.Pin != "" || id.Addresses[0].By != "adopted" {
		t.Fatalf("identity %+v", id)
	}

	srvA.Close()
	f.set(confirmed("Yavin A", urlB)) // a rogue, or the terminal moved by DHCP: nothing tells them apart
	_, err := tr.PaymentBody(t.Context(), body("0190f5a4-7c1e-7000-8000-00000000a001"))
	var te *localapi.TransportError
	if !errors.As(err, &te) || te.Sent || paidB.Load() != 0 {
		t.Fatalf("payment: %v (B took %d)", err, paidB.Load())
	}
	s := tr.Status()
	if s.State != StateUnreachable || s.Address != urlA || s.Pending == nil || s.Pending.Address != urlB ||
		s.Pending.Standing != StandingNewAddress || !strings.Contains(s.LastError, "staff") {
		t.Fatalf("status %+v", s)
	}
	if err := tr.Confirm(t.Context(), "http://10.9.9.9:1/localapi/v4", ""); !errors.Is(err, ErrNoSuchCandidate) {
		t.Errorf("confirmed a device that is not waiting: %v", err)
	}
	if err := tr.Confirm(t.Context(), urlB, pinA); !errors.Is(err, ErrNoSuchCandidate) {
		t.Errorf("confirmed with a certificate it does not present: %v", err)
	}

	if err := tr.Confirm(t.Context(), urlB, ""); err != nil {
		t.Fatal(err)
	}
	if s := tr.Status(); s.State != StateConnected || s.Address != urlB || s.Pending != nil {
		t.Fatalf("after Confirm: %+v", s)
	}
	if tx, err := tr.PaymentBody(t.Context(), body("0190f5a4-7c1e-7000-8000-00000000a002")); err != nil || !tx.Approved() || paidB.Load() != 1 {
		t.Fatalf("payment after Confirm: %+v, %v", tx, err)
	}
	id, _ := trust.LoadIdentity(t.Context())
	if !id.Knows(urlA) || !id.Knows(urlB) || id.Addresses[len(id.Addresses)-1].By != "staff" {
		t.Errorf("stored identity %+v", id)
	}
}

// A device under the terminal's name presenting another certificate than
// the pinned one is not used; staff may refuse it, and it is not offered
// again.
func TestTrackerRefusesAnotherCertificate(t *testing.T) {
	var paid atomic.Int32
	srvA, urlA, pin := tlsTerminalServer(t, approve(&paid))
	other := newTLSSim(t, "Yavin A", nil)
	otherPin := pinOf(t, other)
	f := &fakeFinder{}
	f.set(pinned("Yavin A", urlA, pin))
	trust := &MemoryTrust{}
	tr := newTracker(t, Config{Trust: trust, ResolveInterval: time.Millisecond}, f)
	testenv.Eventually(t, "adopted", func() bool { return tr.Status().Address == urlA })
	if id := tr.Identity(); id.Pin != pin || !id.HTTPS {
		t.Fatalf("the certificate was not pinned on first use: %+v", id)
	}

	srvA.Close()
	f.set(pinned("Yavin A", other.URL(), otherPin))
	if _, err := tr.PaymentBody(t.Context(), body("0190f5a4-7c1e-7000-8000-00000000b001")); err == nil {
		t.Fatal("paid on a device with another certificate")
	}
	if n := len(other.Ledger()); n != 0 {
		t.Fatalf("the other device took %d payments", n)
	}
	s := tr.Status()
	if s.Pending == nil || s.Pending.Standing != StandingOtherCertificate || s.Pending.Fingerprint != otherPin || s.Address != urlA {
		t.Fatalf("status %+v", s)
	}

	if err := tr.Refuse(t.Context(), other.URL(), FingerprintText(otherPin)); err != nil {
		t.Fatal(err)
	}
	if s := tr.Status(); s.Pending != nil || s.State != StateUnreachable {
		t.Fatalf("after Refuse: %+v", s)
	}
	calls := f.count()
	testenv.Eventually(t, "another browse", func() bool {
		_, _ = tr.Ping(t.Context(), false)
		return f.count() > calls
	})
	if s := tr.Status(); s.Pending != nil || !strings.Contains(s.LastError, "refused") {
		t.Errorf("a refused device was offered again: %+v", s)
	}
	id, _ := trust.LoadIdentity(t.Context())
	if len(id.Refused) != 1 || id.Refused[0].Fingerprint != otherPin || id.Pin != pin {
		t.Errorf("stored identity %+v", id)
	}
}

// While a payment is open on the terminal, the Tracker never moves to
// another device, not even one at a known address or one staff confirmed:
// the calls keep going to the address in use. Once the payments are
// settled, it moves.
func TestTrackerNeverMovesWhileAPaymentIsOpen(t *testing.T) {
	var paidA, paidB, paidC atomic.Int32
	srvA, urlA := terminalServer(t, approve(&paidA))
	_, urlB := terminalServer(t, approve(&paidB))
	_, urlC := terminalServer(t, approve(&paidC))
	trust := &MemoryTrust{}
	now := time.Now()
	_ = trust.SaveIdentity(t.Context(), Identity{Instance: "Yavin A"}.Record(urlB, "staff", now).Record(urlA, "adopted", now))
	var held atomic.Bool
	f := &fakeFinder{}
	f.set(confirmed("Yavin A", urlA))
	store := &MemoryStore{}
	_ = store.Set(t.Context(), DefaultStoreKey, "Yavin A")
	tr := newTracker(t, Config{Trust: trust, Store: store, ResolveInterval: time.Millisecond,
		Held: func(_ context.Context, instance string) (bool, error) {
			if instance != "Yavin A" {
				return true, errors.New("asked about " + instance)
			}
			return held.Load(), nil
		}}, f)
	testenv.Eventually(t, "connected", func() bool { return tr.Status().Address == urlA })

	held.Store(true)
	srvA.Close()
	f.set(confirmed("Yavin A", urlB)) // a known address
	testenv.Eventually(t, "B heard", func() bool {
		_, _ = tr.PaymentBody(t.Context(), body("0190f5a4-7c1e-7000-8000-00000000c001")) // the orchestrator's resends
		return strings.Contains(tr.Status().LastError, "payment is open")
	})
	if s := tr.Status(); s.Address != urlA || paidB.Load() != 0 {
		t.Fatalf("moved to a known address under an open payment: %+v (B took %d)", s, paidB.Load())
	}

	f.set(confirmed("Yavin A", urlC)) // a new one, confirmed by staff meanwhile
	testenv.Eventually(t, "C waiting", func() bool {
		_, _ = tr.PaymentBody(t.Context(), body("0190f5a4-7c1e-7000-8000-00000000c001")) // the orchestrator's resends
		p := tr.Status().Pending
		return p != nil && p.Address == urlC
	})
	if err := tr.Confirm(t.Context(), urlC, ""); err != nil {
		t.Fatal(err)
	}
	if s := tr.Status(); s.Address != urlA || s.Pending == nil || !s.Pending.Confirmed {
		t.Fatalf("after Confirm under an open payment: %+v", s)
	}
	calls := f.count()
	testenv.Eventually(t, "C heard again", func() bool {
		_, _ = tr.PaymentBody(t.Context(), body("0190f5a4-7c1e-7000-8000-00000000c001"))
		return f.count() > calls+1
	})
	if s := tr.Status(); s.Address != urlA || paidC.Load() != 0 {
		t.Fatalf("moved to a confirmed device under an open payment: %+v (C took %d)", s, paidC.Load())
	}

	held.Store(false) // the payment is settled
	testenv.Eventually(t, "a payment on C", func() bool {
		_, err := tr.PaymentBody(t.Context(), body("0190f5a4-7c1e-7000-8000-00000000c002"))
		return err == nil
	})
	if paidC.Load() != 1 || paidB.Load() != 0 || tr.Status().Address != urlC {
		t.Errorf("A %d, B %d, C %d, status %+v", paidA.Load(), paidB.Load(), paidC.Load(), tr.Status())
	}
}

// A terminal whose identity cannot be recorded is not adopted.
func TestTrackerDoesNotAdoptWhatItCannotRecord(t *testing.T) {
	var paid atomic.Int32
	_, url := terminalServer(t, approve(&paid))
	f := &fakeFinder{}
	f.set(confirmed("Yavin A", url))
	trust := &MemoryTrust{}
	trust.FailSaves(errors.New("disk full"))
	tr := newTracker(t, Config{Trust: trust}, f)
	testenv.Eventually(t, "the failure said", func() bool { return strings.Contains(tr.Status().LastError, "disk full") })
	if s := tr.Status(); s.State == StateConnected || tr.BaseURL() != "" {
		t.Fatalf("adopted without a record: %+v", s)
	}
	trust.FailSaves(nil)
	testenv.Eventually(t, "adopted", func() bool { return tr.Status().State == StateConnected })
}

// At a start with payments left open on the terminal (nothing in use yet),
// the adopted terminal is taken up again at a known address, but a device
// staff confirm meanwhile waits until the payments are settled.
func TestTrackerAtStartUnderOpenPayments(t *testing.T) {
	var paidA, paidC atomic.Int32
	_, urlA := terminalServer(t, approve(&paidA))
	_, urlC := terminalServer(t, approve(&paidC))
	trust := &MemoryTrust{}
	_ = trust.SaveIdentity(t.Context(), Identity{Instance: "Yavin A"}.Record(urlA, "adopted", time.Now()))
	store := &MemoryStore{}
	_ = store.Set(t.Context(), DefaultStoreKey, "Yavin A")
	held := func(context.Context, string) (bool, error) { return true, nil }

	f := &fakeFinder{}
	f.set(confirmed("Yavin A", urlA))
	tr := newTracker(t, Config{Trust: trust, Store: store, Held: held, ResolveInterval: time.Millisecond}, f)
	testenv.Eventually(t, "the adopted terminal taken up again", func() bool { return tr.Status().Address == urlA })
	tr.Close()

	var released atomic.Bool
	held2 := func(context.Context, string) (bool, error) { return !released.Load(), nil }
	f2 := &fakeFinder{}
	f2.set(confirmed("Yavin A", urlC))
	tr2 := newTracker(t, Config{Trust: trust, Store: store, Held: held2, ResolveInterval: time.Millisecond, SearchInterval: 10 * time.Millisecond}, f2)
	testenv.Eventually(t, "C waiting", func() bool { p := tr2.Status().Pending; return p != nil && p.Address == urlC })
	if err := tr2.Confirm(t.Context(), urlC, ""); err != nil {
		t.Fatal(err)
	}
	calls := f2.count()
	testenv.Eventually(t, "C heard again", func() bool { return f2.count() > calls+1 })
	if s := tr2.Status(); s.State == StateConnected || tr2.BaseURL() != "" || s.Pending == nil || !s.Pending.Confirmed {
		t.Fatalf("a device confirmed under open payments was taken up: %+v", s)
	}
	released.Store(true)
	testenv.Eventually(t, "C used once the payments are settled", func() bool { return tr2.Status().Address == urlC })
	if _, err := tr2.PaymentBody(t.Context(), body("0190f5a4-7c1e-7000-8000-00000000d001")); err != nil || paidC.Load() != 1 {
		t.Fatalf("payment on C: %v", err)
	}
}
