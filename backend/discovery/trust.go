package discovery

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/comptoir-pos/comptoir/backend/localapi"
)

// The Local API has no credential: whatever answers /ping under the
// terminal's name would be taken for it. So the terminal is adopted once
// and bound to what identifies it. A device found later under that name is
// judged against the binding (Judge) before a request goes to it.

// Identity binds the adopted terminal: its instance name, the certificate
// it presented when it offers HTTPS, and every address it was found at.
type Identity struct {
	Instance string `json:"instance"`
	// Pin is the SHA-256 fingerprint (64 lowercase hex digits) of the
	// certificate the terminal is bound to; "" while it speaks plain HTTP.
	Pin string `json:"pin,omitempty"`
	// HTTPS: plain HTTP is refused, never tried (a pin implies it).
	HTTPS bool `json:"https,omitempty"`
	// Addresses are the Local API base URLs the terminal answered at,
	// most recent last.
	Addresses []Seen `json:"addresses,omitempty"`
	// Refused are the devices staff refused under this name.
	Refused []Refusal `json:"refused,omitempty"`
}

// Seen is an address the adopted terminal answered at.
type Seen struct {
	Address string    `json:"address"`
	First   time.Time `json:"first"`
	Last    time.Time `json:"last"`
	// By is what vouched for it: "adopted" (the first use), "certificate"
	// (the pinned certificate, at a new address), "staff" (confirmed in
	// staff mode), "known" (found again there).
	By string `json:"by"`
}

// Refusal is a device staff refused to take for the terminal.
type Refusal struct {
	Address     string    `json:"address"`
	Fingerprint string    `json:"fingerprint,omitempty"`
	At          time.Time `json:"at"`
}

// Bounds of an Identity: a record read from disk is checked against them,
// and the oldest entries make room for new ones.
const (
	MaxAddresses = 32
	MaxRefused   = 16
)

// Standing is what a device found under the terminal's name is to the
// adopted identity.
type Standing string

const (
	// StandingAdopted: the adopted terminal, by its pinned certificate or
	// at an address it was seen at.
	StandingAdopted Standing = "adopted"
	// StandingFirstUse: nothing is adopted yet; this device would be.
	StandingFirstUse Standing = "first_use"
	// StandingNewAddress: plain HTTP at an address never seen. A terminal
	// whose address DHCP changed looks exactly like this, and so does
	// another device: staff confirm it.
	StandingNewAddress Standing = "new_address"
	// StandingOtherCertificate: HTTPS with a certificate other than the
	// pinned one (a renewed certificate, or another device): staff
	// confirm it.
	StandingOtherCertificate Standing = "other_certificate"
	// StandingPlainHTTP: the terminal is bound to HTTPS and this device
	// answers plain HTTP: refused.
	StandingPlainHTTP Standing = "plain_http"
	// StandingRefused: staff refused this device.
	StandingRefused Standing = "refused"
	// StandingOtherName: another instance name.
	StandingOtherName Standing = "other_name"
)

// Usable reports whether a device of this standing may be used without
// staff (the Tracker adds the rule of open payments).
func (s Standing) Usable() bool { return s == StandingAdopted || s == StandingFirstUse }

// Judge says what a device found by discovery is to the identity.
func (id Identity) Judge(t Terminal) Standing {
	switch {
	case id.Instance != "" && !strings.EqualFold(t.Instance, id.Instance):
		return StandingOtherName
	case id.refused(t):
		return StandingRefused
	case t.Fingerprint == "" && (id.HTTPS || id.Pin != ""):
		return StandingPlainHTTP
	case id.Pin != "":
		if t.Fingerprint == id.Pin {
			return StandingAdopted
		}
		return StandingOtherCertificate
	case len(id.Addresses) == 0:
		return StandingFirstUse
	case id.Knows(t.BaseURL):
		return StandingAdopted
	}
	return StandingNewAddress
}

// Knows reports whether the terminal was seen at address (same host and
// port, whatever the scheme: a terminal that starts offering HTTPS where
// it spoke HTTP stays at its address).
func (id Identity) Knows(address string) bool {
	k := endpointKey(address)
	return k != "" && slices.ContainsFunc(id.Addresses, func(s Seen) bool { return endpointKey(s.Address) == k })
}

func (id Identity) refused(t Terminal) bool {
	k := endpointKey(t.BaseURL)
	return slices.ContainsFunc(id.Refused, func(r Refusal) bool {
		return endpointKey(r.Address) == k && r.Fingerprint == t.Fingerprint
	})
}

// Record notes that the terminal answered at address, vouched for by by;
// a known address has its last sighting moved. It returns the new identity
// (the receiver is not changed).
func (id Identity) Record(address, by string, now time.Time) Identity {
	out := id.clone()
	k := endpointKey(address)
	for i, s := range out.Addresses {
		if endpointKey(s.Address) == k {
			out.Addresses[i].Address, out.Addresses[i].Last = address, now
			// Most recent last.
			s = out.Addresses[i]
			out.Addresses = append(slices.Delete(out.Addresses, i, i+1), s)
			return out
		}
	}
	out.Addresses = append(out.Addresses, Seen{Address: address, First: now, Last: now, By: by})
	if n := len(out.Addresses) - MaxAddresses; n > 0 {
		out.Addresses = slices.Delete(out.Addresses, 0, n)
	}
	return out
}

// Confirm binds the identity to t on a person's word (by: "staff"...):
// its address is recorded and its certificate, if it presents one,
// becomes the pinned one. It returns the new identity.
func (id Identity) Confirm(t Terminal, by string, now time.Time) Identity {
	out := id.Record(t.BaseURL, by, now)
	if out.Instance == "" {
		out.Instance = t.Instance
	}
	if t.Fingerprint != "" {
		out.Pin, out.HTTPS = t.Fingerprint, true
	}
	k := endpointKey(t.BaseURL)
	out.Refused = slices.DeleteFunc(out.Refused, func(r Refusal) bool {
		return endpointKey(r.Address) == k && r.Fingerprint == t.Fingerprint
	})
	return out
}

// Refuse notes that staff refused the device at address presenting
// fingerprint ("" for plain HTTP).
func (id Identity) Refuse(address, fingerprint string, now time.Time) Identity {
	out := id.clone()
	out.Refused = append(out.Refused, Refusal{Address: address, Fingerprint: fingerprint, At: now})
	if n := len(out.Refused) - MaxRefused; n > 0 {
		out.Refused = slices.Delete(out.Refused, 0, n)
	}
	return out
}

// LastAddress is the address the terminal was last seen at, "" when none.
func (id Identity) LastAddress() string {
	if len(id.Addresses) == 0 {
		return ""
	}
	return id.Addresses[len(id.Addresses)-1].Address
}

func (id Identity) clone() Identity {
	id.Addresses = slices.Clone(id.Addresses)
	id.Refused = slices.Clone(id.Refused)
	return id
}

// Validate checks an identity read from storage: a damaged record must
// not become a terminal nobody adopted.
func (id Identity) Validate() error {
	if len(id.Addresses) > MaxAddresses || len(id.Refused) > MaxRefused {
		return fmt.Errorf("discovery: the terminal's identity lists %d addresses and %d refusals (at most %d and %d)",
			len(id.Addresses), len(id.Refused), MaxAddresses, MaxRefused)
	}
	if id.Instance == "" && len(id.Addresses) > 0 {
		return errors.New("discovery: the terminal's identity has addresses but no name")
	}
	if id.Pin != "" {
		if p, err := localapi.NormalizePin(id.Pin); err != nil || p != id.Pin {
			return fmt.Errorf("discovery: the terminal's pinned certificate %q is not a normalised SHA-256 fingerprint", id.Pin)
		}
	}
	for _, s := range id.Addresses {
		if endpointKey(s.Address) == "" {
			return fmt.Errorf("discovery: the terminal's identity holds an address that is not one: %q", s.Address)
		}
	}
	for _, r := range id.Refused {
		if endpointKey(r.Address) == "" {
			return fmt.Errorf("discovery: the terminal's identity refuses an address that is not one: %q", r.Address)
		}
	}
	return nil
}

// endpointKey is the host and port of a base URL, lower case; "" when it
// is not one.
func endpointKey(address string) string {
	u, err := url.Parse(address)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return ""
	}
	host, port := u.Hostname(), u.Port()
	if port == "" {
		port = fmt.Sprint(localapi.DefaultPort)
	}
	return strings.ToLower(host) + ":" + port
}

// FingerprintText writes a normalised fingerprint as terminals show them:
// uppercase pairs separated by colons.
func FingerprintText(pin string) string {
	var b strings.Builder
	for i := 0; i+1 < len(pin); i += 2 {
		if i > 0 {
			b.WriteByte(':')
		}
		b.WriteString(strings.ToUpper(pin[i : i+2]))
	}
	return b.String()
}

// TrustStore keeps the adopted terminal's identity between starts. The
// application keeps it in the journal's settings; MemoryTrust serves tests.
type TrustStore interface {
	// LoadIdentity returns the stored identity (the zero Identity when
	// none); an error for a record that cannot be believed.
	LoadIdentity(ctx context.Context) (Identity, error)
	SaveIdentity(ctx context.Context, id Identity) error
}

// MemoryTrust is a TrustStore in memory. The zero value is ready.
type MemoryTrust struct {
	mu   sync.Mutex
	id   Identity
	fail error
}

// FailSaves makes SaveIdentity fail with err (nil: succeed again), as a
// journal that cannot be written does.
func (m *MemoryTrust) FailSaves(err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.fail = err
}

func (m *MemoryTrust) LoadIdentity(context.Context) (Identity, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.id.clone(), nil
}

func (m *MemoryTrust) SaveIdentity(_ context.Context, id Identity) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail != nil {
		return m.fail
	}
	m.id = id.clone()
	return nil
}

// Candidate is a device that announces itself under the terminal's name
// with another identity: it is not used until staff confirm it.
type Candidate struct {
	Instance string `json:"instance"`
	Address  string `json:"address"`
	// Fingerprint of the certificate it presents (normalised hex); "" on
	// plain HTTP.
	Fingerprint string   `json:"fingerprint,omitempty"`
	Standing    Standing `json:"standing"`
	// Since is when it was first heard this way.
	Since time.Time `json:"since"`
	// Confirmed: staff confirmed it; it is used once no payment is open on
	// the terminal.
	Confirmed bool `json:"confirmed,omitempty"`
}

// ErrNoSuchCandidate: staff confirmed or refused a device that is not (or
// no longer) the one waiting for them.
var ErrNoSuchCandidate = errors.New("discovery: no such device is waiting for confirmation")
