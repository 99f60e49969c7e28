package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/comptoir-pos/comptoir/backend/discovery"
	"github.com/comptoir-pos/comptoir/backend/journal"
)

// settingTerminalIdentity is the terminal discovery adopted: its name, the
// addresses it answered at, the devices staff refused under its name. Its
// certificate pin is terminal.tls_pin, read by every command.
const settingTerminalIdentity = "terminal.identity"

// storedIdentity is terminal.identity as stored.
type storedIdentity struct {
	Instance  string              `json:"instance"`
	Addresses []discovery.Seen    `json:"addresses,omitempty"`
	Refused   []discovery.Refusal `json:"refused,omitempty"`
}

// identityStore keeps discovery's Identity in the journal's settings: the
// pin and the HTTPS requirement in their own settings (shared with the
// fixed-address commands), the rest in terminal.identity. New addresses and
// pins are recorded in the audit.
type identityStore struct {
	db *journal.DB
	// flagPin is --terminal-pin: it wins over the stored pin, and is never
	// stored.
	flagPin string
}

// readIdentity reads the identity from r.
func readIdentity(ctx context.Context, r settingsReader, flagPin string) (discovery.Identity, error) {
	var id discovery.Identity
	raw, ok, err := r.Setting(ctx, settingTerminalIdentity)
	if err != nil {
		return id, err
	}
	if ok && !bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		var st storedIdentity
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&st); err != nil {
			return id, fmt.Errorf("%w: %s: %v", errDamagedIdentity, settingTerminalIdentity, err)
		}
		id.Instance, id.Addresses, id.Refused = st.Instance, st.Addresses, st.Refused
	}
	trust, err := loadTrust(ctx, commonFlags{terminalPin: flagPin}, r)
	if err != nil {
		return id, err
	}
	id.Pin, id.HTTPS = trust.pin, trust.https
	if err := id.Validate(); err != nil {
		return id, fmt.Errorf("%w: %v", errDamagedIdentity, err)
	}
	return id, nil
}

// errDamagedIdentity: the stored identity cannot be believed. It is never
// taken for "none": that would adopt whatever answers first.
var errDamagedIdentity = errors.New("the adopted terminal's stored identity is damaged: choose the terminal again (staff mode's Terminal screen, or `comptoir discover --choose NAME`)")

func (s identityStore) LoadIdentity(ctx context.Context) (discovery.Identity, error) {
	return readIdentity(ctx, s.db, s.flagPin)
}

func (s identityStore) SaveIdentity(ctx context.Context, id discovery.Identity) error {
	store := settingsStore{s.db}
	if chosen, _, err := store.Get(ctx, discovery.DefaultStoreKey); err != nil {
		return err
	} else if chosen != "" && id.Instance != "" && !strings.EqualFold(chosen, id.Instance) {
		// Staff chose another terminal for the next start: the one in use
		// keeps its binding for this run only, and the choice stands.
		return nil
	}
	before, _ := s.LoadIdentity(ctx) // for the audit only
	if id.HTTPS && !before.HTTPS {
		if err := store.Set(ctx, settingTerminalHTTPS, httpsRequired); err != nil {
			return err
		}
	}
	if id.Pin != before.Pin && id.Pin != s.flagPin {
		// The requirement first: a pin is never stored without it.
		if id.Pin != "" {
			if err := store.Set(ctx, settingTerminalHTTPS, httpsRequired); err != nil {
				return err
			}
		}
		if err := store.Set(ctx, settingTerminalPin, id.Pin); err != nil {
			return err
		}
	}
	raw, err := json.Marshal(storedIdentity{Instance: id.Instance, Addresses: id.Addresses, Refused: id.Refused})
	if err != nil {
		return err
	}
	if err := s.db.SetSetting(ctx, settingTerminalIdentity, raw); err != nil {
		return err
	}
	s.audit(ctx, before, id)
	return nil
}

// audit records what the change bound the terminal to.
func (s identityStore) audit(ctx context.Context, before, after discovery.Identity) {
	add := func(action, subject, detail string) {
		_ = s.db.AppendAudit(ctx, journal.AuditRecord{Who: "system:discovery", Action: action, Subject: subject, Detail: detail})
	}
	if !strings.EqualFold(before.Instance, after.Instance) {
		add("terminal_adopted", after.Instance, "the terminal is adopted under this name")
	}
	if after.Pin != "" && after.Pin != before.Pin {
		add("terminal_pinned", pinText(after.Pin), "the terminal is bound to this certificate: plain HTTP is refused from now on")
	}
	for _, a := range after.Addresses {
		if !before.Knows(a.Address) {
			add("terminal_address", a.Address, "the terminal answers at this address (vouched for by: "+a.By+")")
		}
	}
}

// forgetIdentity starts the identity afresh for instance, another
// terminal than the one adopted: its addresses and its pin are not the new
// one's (the HTTPS requirement stays).
func forgetIdentity(ctx context.Context, db *journal.DB, instance string) error {
	id, err := readIdentity(ctx, db, "")
	if err == nil && strings.EqualFold(id.Instance, instance) {
		return nil
	}
	raw, _ := json.Marshal(storedIdentity{Instance: instance})
	if err := db.SetSetting(ctx, settingTerminalIdentity, raw); err != nil {
		return err
	}
	return settingsStore{db}.Set(ctx, settingTerminalPin, "")
}

// heldByOpenAttempts says whether attempts are open on the terminal named
// instance in the journal: discovery never moves them to another device.
func heldByOpenAttempts(db *journal.DB) func(ctx context.Context, instance string) (bool, error) {
	return discovery.HeldWhileOpen(db.OpenTerminals)
}

// storedTerminal is the terminal a command talks to when no --terminal is
// given: the manual address staff saved, else the address the adopted
// terminal was last seen at. "" when there is neither.
func storedTerminal(ctx context.Context, r settingsReader) (string, error) {
	addr, err := settingString(ctx, r, settingTerminalAddress)
	if err != nil || addr != "" {
		return addr, err
	}
	id, err := readIdentity(ctx, r, "")
	if err != nil {
		return "", err
	}
	return id.LastAddress(), nil
}
