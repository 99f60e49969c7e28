package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/comptoir-pos/comptoir/backend/discovery"
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
//     https:// address saved, a certificate pinned, or a terminal found by
//     discovery offering HTTPS). From then on an http:// address is
//     refused, never tried: a terminal that answers HTTPS is not silently
//     downgraded. Turning it off is an explicit
//     `comptoir settings set terminal.https '""'`.
//
// Discovery pins the certificate of the terminal it adopts when it offers
// HTTPS (terminal_identity.go). Every command that talks to the terminal
// reads this same trust.
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

// baseOptions are the options of every Local API client: the certificate
// check comes on top.
func baseOptions() []localapi.Option { return []localapi.Option{localapi.WithUserAgent(userAgent())} }

// options are the Local API client options that apply it.
func (t terminalTrust) options() []localapi.Option {
	opts := baseOptions()
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

// settingsReader reads the journal's settings: the journal itself, or
// peekSettings for a command that must not take the data directory's lock
// (the kiosk may be running).
type settingsReader interface {
	Setting(ctx context.Context, key string) (json.RawMessage, bool, error)
}

// peekSettings reads the settings of the journal in dir without opening
// it (journal.PeekSetting).
type peekSettings struct{ dir string }

func (p peekSettings) Setting(ctx context.Context, key string) (json.RawMessage, bool, error) {
	return journal.PeekSetting(ctx, p.dir, key)
}

// settingString reads a string setting; a value that is not a JSON string
// reads as unset.
func settingString(ctx context.Context, r settingsReader, key string) (string, error) {
	raw, ok, err := r.Setting(ctx, key)
	if err != nil || !ok {
		return "", err
	}
	var v string
	if json.Unmarshal(raw, &v) != nil {
		return "", nil
	}
	return v, nil
}

// loadTrust reads the trust from the flags and, with the journal's
// settings (r; nil: none), the stored one; the flag's pin wins.
func loadTrust(ctx context.Context, c commonFlags, r settingsReader) (terminalTrust, error) {
	pin := c.terminalPin
	var required string
	if r != nil {
		if pin == "" {
			p, err := settingString(ctx, r, settingTerminalPin)
			if err != nil {
				return terminalTrust{}, err
			}
			pin = p
		}
		v, err := settingString(ctx, r, settingTerminalHTTPS)
		if err != nil {
			return terminalTrust{}, err
		}
		required = v
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
func pinText(pin string) string { return discovery.FingerprintText(pin) }
