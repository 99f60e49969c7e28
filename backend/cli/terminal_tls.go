package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/localapi"
)

// The Local API speaks HTTPS once the terminal has its certificate. Two
// settings say how this kiosk talks to its terminal:
//
//   - terminal.tls_pin: the SHA-256 fingerprint of the terminal's
//     certificate, as staff read it on the terminal and pinned it. Set, that
//     certificate alone is trusted; unset, the system's roots are.
//   - terminal.https: "required" once the terminal was set up on HTTPS (an
//     https:// address saved, or a certificate pinned). From then on an
//     http:// address is refused, never tried: a terminal that answers
//     HTTPS is not silently downgraded. Turning it off is an explicit
//     `comptoir settings set terminal.https '""'`.
const (
	settingTerminalPin   = "terminal.tls_pin"
	settingTerminalHTTPS = "terminal.https"
	httpsRequired        = "required"
)

// terminalTrust is how this process checks the terminal's HTTPS.
type terminalTrust struct {
	pin   string // normalised fingerprint, "" for the system's roots
	https bool   // HTTPS required: no http:// address
}

// options are the Local API client options that apply it.
func (t terminalTrust) options() []localapi.Option {
	opts := []localapi.Option{localapi.WithUserAgent(userAgent())}
	if t.pin != "" {
		opts = append(opts, localapi.WithTLS(localapi.TLS{Pin: t.pin}))
	}
	return opts
}

// check refuses an address the trust does not allow: plain HTTP when HTTPS
// is required.
func (t terminalTrust) check(address string) error {
	u, err := localapi.ParseBaseURL(address)
	if err != nil {
		return err
	}
	if t.https && u.Scheme != "https" {
		why := "it was set up on HTTPS"
		if t.pin != "" {
			why = "its certificate is pinned"
		}
		return fmt.Errorf("%w: the terminal's address must start with https:// (%s); Comptoir never falls back to HTTP: to allow HTTP again, `comptoir settings set %s '\"\"'`",
			ErrInsecureTerminal, why, settingTerminalHTTPS)
	}
	return nil
}

// ErrInsecureTerminal: an http:// address for a terminal that must be
// reached over HTTPS.
var ErrInsecureTerminal = errors.New("refusing plain HTTP to the terminal")

// loadTrust reads the trust from the flags and, with a journal, its
// settings; the flag's pin wins.
func loadTrust(ctx context.Context, c commonFlags, db *journal.DB) (terminalTrust, error) {
	pin := c.terminalPin
	var required string
	if db != nil {
		store := settingsStore{db}
		if pin == "" {
			p, _, err := store.Get(ctx, settingTerminalPin)
			if err != nil {
				return terminalTrust{}, err
			}
			pin = p
		}
		r, _, err := store.Get(ctx, settingTerminalHTTPS)
		if err != nil {
			return terminalTrust{}, err
		}
		required = r
	}
	t := terminalTrust{https: required == httpsRequired}
	if pin = strings.TrimSpace(pin); pin != "" {
		norm, err := localapi.NormalizePin(pin)
		if err != nil {
			return terminalTrust{}, fmt.Errorf("the terminal's certificate pin (--terminal-pin or %s): %w", settingTerminalPin, err)
		}
		t.pin, t.https = norm, true
	}
	return t, nil
}

// newTerminalClient is a Local API client for address, checked by trust.
func newTerminalClient(address string, trust terminalTrust) (*localapi.Client, error) {
	if err := trust.check(address); err != nil {
		return nil, err
	}
	return localapi.NewClient(address, trust.options()...)
}

// pinText writes a normalised pin as terminals show fingerprints:
// uppercase pairs separated by colons.
func pinText(pin string) string {
	if pin == "" {
		return ""
	}
	var b strings.Builder
	for i := 0; i+1 < len(pin); i += 2 {
		if i > 0 {
			b.WriteByte(':')
		}
		b.WriteString(strings.ToUpper(pin[i : i+2]))
	}
	return b.String()
}
