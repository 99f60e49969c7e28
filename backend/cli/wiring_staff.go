package cli

import (
	"context"
	"errors"
	"fmt"
	"github.com/comptoir-pos/comptoir/backend/device"
	"github.com/comptoir-pos/comptoir/backend/fault"
	"log/slog"
	"strings"
	"time"

	"github.com/comptoir-pos/comptoir/backend/discovery"
	"github.com/comptoir-pos/comptoir/backend/fiscal"
	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/kiosk"
	"github.com/comptoir-pos/comptoir/backend/localapi"
	"github.com/comptoir-pos/comptoir/backend/payment"
	"github.com/comptoir-pos/comptoir/backend/receipt"
	"github.com/comptoir-pos/comptoir/backend/staff"
	"github.com/comptoir-pos/comptoir/backend/staffapi"
)

// startStaff builds the staff service and its calls on a running kiosk.
// A saved setting makes the kiosk read its settings again.
func startStaff(c commonFlags, p *payments, lim payment.Limits, svc *kiosk.Service, ledger *fiscal.Ledger, fiscalWarning func() string, logger *slog.Logger) (*staffapi.API, *staff.Staff, error) {
	st, err := staff.New(staff.Config{
		Journal: p.db, Payments: p.o, Terminal: p.link.device, Limits: lim,
		Logger: logger, Demo: c.isDemo(),
		Links: p.links, Refunds: p.refunds, Reconcile: p.reconciler(), Duplicate: duplicates(ledger), Ledger: ledger,
		Currency: func() string { return svc.Info().Currency },
		OnSettingsChanged: func(key string) {
			if ledger != nil {
				// The key only: a secret's value is never recorded.
				if _, err := ledger.Event(context.Background(), fiscal.EventSetting, "staff", key); err != nil {
					logger.Error("fiscal: a setting change is not recorded", "key", key, "err", err)
				}
			}
			if err := svc.Reload(); err != nil {
				logger.Warn("settings reloaded after a change, with an error", "key", key, "err", err)
			}
		},
	})
	if err != nil {
		return nil, nil, err
	}
	// Without a staff PIN, the first person to find the staff corner would
	// choose it and could then refund onto their own card: a kiosk takes
	// no order until one is set (the demo has its documented default).
	if !c.isDemo() {
		if has, err := st.HasPIN(context.Background()); err == nil && !has {
			svc.Hold(staffapi.NoPINHold)
		}
	}
	api := staffapi.New(staffapi.Config{
		Staff: st, Kiosk: svc, FiscalWarning: fiscalWarning, Terminal: &terminalControl{link: p.link, db: p.db},
		About: staffapi.About{Version: version, Commit: commit, BuildTime: buildTime, DataDir: p.dir, Demo: c.isDemo()},
		Busy: func() string {
			if p.o.Driving() > 0 {
				return "A payment or a refund is out on the terminal: wait until it has ended (its outcome must be known first)."
			}
			return ""
		},
	})
	return api, st, nil
}

// startStaffOnly is staff mode without a kiosk: no terminal was found, or
// several were and none is chosen. Staff choose one, then Restart.
func startStaffOnly(ctx context.Context, c commonFlags, logger *slog.Logger) (*Stack, error) {
	db, dir, err := c.openJournal(ctx)
	if err != nil {
		return nil, err
	}
	noTerminal := device.LocalAt(func() string { return "" })
	st, err := staff.New(staff.Config{Journal: db, Terminal: noTerminal, Logger: logger, Demo: c.isDemo()})
	if err != nil {
		db.Close()
		return nil, err
	}
	api := staffapi.New(staffapi.Config{
		Staff: st, Terminal: &terminalControl{link: &terminalLink{how: "none"}, db: db},
		About: staffapi.About{Version: version, Commit: commit, BuildTime: buildTime, DataDir: dir, Demo: c.isDemo()},
	})
	return &Stack{Staff: api, Close: func() { db.Close() }}, nil
}

// terminalControl shows how the terminal was found and saves staff's
// choice for the next start (see staffapi.TerminalControl).
type terminalControl struct {
	link *terminalLink
	db   *journal.DB
	// ping checks a manual address before it is saved; nil: a real /ping.
	ping func(ctx context.Context, address string) error
	// browse finds the terminals on the network when no Tracker runs; nil:
	// discovery.Browse on every interface.
	browse func(ctx context.Context) ([]discovery.Terminal, error)
}

func (t *terminalControl) saved(ctx context.Context) staffapi.Endpoint {
	store := settingsStore{t.db}
	inst, _, _ := store.Get(ctx, discovery.DefaultStoreKey)
	addr, _, _ := store.Get(ctx, settingTerminalAddress)
	return staffapi.Endpoint{Instance: inst, Address: addr}
}

func (t *terminalControl) Info(ctx context.Context) staffapi.TerminalInfo {
	l := t.link
	// A terminal reached both ways was found as its LAN way was.
	how, both := strings.CutSuffix(l.how, "+cloud")
	info := staffapi.TerminalInfo{Source: how, InUse: staffapi.Endpoint{Instance: l.instance, Address: l.url},
		Candidates: []staffapi.Endpoint{}, Saved: t.saved(ctx)}
	if l.tracker != nil {
		st := l.tracker.Status()
		info.State = string(st.State)
		if st.Address != "" {
			info.InUse.Address = st.Address
		}
		for _, c := range st.Candidates {
			info.Candidates = append(info.Candidates, staffapi.Endpoint{Instance: c.Instance, Address: c.BaseURL})
		}
		if p := st.Pending; p != nil {
			info.Pending = &staffapi.PendingDevice{Instance: p.Instance, Address: p.Address, Certificate: pinText(p.Fingerprint),
				Reason: staffapi.DeviceReason(p.Standing), Since: p.Since, Confirmed: p.Confirmed}
		}
		info.Known = knownAddresses(l.tracker.Identity())
	} else if id, err := readIdentity(ctx, t.db, ""); err == nil {
		info.Known = knownAddresses(id)
	}
	trust, err := loadTrust(ctx, commonFlags{}, t.db)
	if err == nil {
		info.HTTPS, info.Pin = trust.https, pinText(trust.pin)
	}
	info.Channel, info.Cloud = cloudInfo(ctx, t.db)
	if how == "none" {
		browse := t.browse
		if browse == nil {
			browse = func(ctx context.Context) ([]discovery.Terminal, error) {
				return discovery.Browse(ctx, announced(ctx, t.db, discovery.Options{HTTPS: trust.https, ClientOptions: trust.options()}))
			}
		}
		found, err := browse(ctx)
		for _, c := range found {
			if c.Confirmed {
				info.Candidates = append(info.Candidates, staffapi.Endpoint{Instance: c.Instance, Address: c.BaseURL})
			}
		}
		info.Note = "No terminal in use: choose one found on the network, or enter its address, then restart."
		if err != nil {
			info.Note += " (The network search failed: " + err.Error() + ".)"
		}
		info.RestartRequired = info.Saved.Instance != "" || info.Saved.Address != ""
		return info
	}
	switch how {
	case "demo":
		info.Note = "Demo: Comptoir uses its built-in simulated terminal. A choice saved here applies when it starts without --demo."
	case "flag":
		info.Note = "The terminal was given on the command line (--terminal): it wins over a choice saved here."
	case "address":
		info.RestartRequired = !sameAddress(info.Saved.Address, l.url) || trust != l.trust
	case "discovery":
		// The Tracker pins the certificate on first use and staff's
		// confirmations may pin another: the trust in use is its own.
		inUse := l.trust
		if l.tracker != nil {
			id := l.tracker.Identity()
			inUse = terminalTrust{pin: id.Pin, https: id.HTTPS || id.Pin != ""}
		}
		info.RestartRequired = info.Saved.Address != "" || trust != inUse ||
			(info.Saved.Instance != "" && !strings.EqualFold(info.Saved.Instance, l.instance))
	}
	// The channel saved for the next start (the flags win over it).
	inUse := map[bool]string{true: "cloud", false: "local"}[how == "cloud"]
	if both {
		inUse = channelBoth
	}
	if how != "demo" && how != "flag" && info.Channel != inUse {
		info.RestartRequired = true
	}
	if info.RestartRequired {
		info.Note = "The saved choice is not the terminal in use: it applies when Comptoir restarts (close it from this screen, with no payment in progress)."
		info.Note += t.strandedWarning(ctx, info.Saved)
	}
	return info
}

// strandedWarning says when unfinished attempts belong to another terminal
// than the saved choice: recovery resends an attempt only to the terminal
// that took it (the same name in the journal), so after a restart on
// another one they are left for staff to settle.
func (t *terminalControl) strandedWarning(ctx context.Context, saved staffapi.Endpoint) string {
	next := ""
	switch {
	case saved.Address != "":
		if c, err := localapi.NewClient(saved.Address); err == nil {
			next = c.BaseURL()
		}
	case saved.Instance != "":
		next = discovery.TerminalID(saved.Instance)
	}
	open, err := t.db.OpenAttempts(ctx)
	if err != nil || next == "" {
		return ""
	}
	n := 0
	for _, a := range open {
		if a.Terminal != next {
			n++
		}
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(" Careful: %d unfinished payment(s) were sent to another terminal name than the saved one; on it they cannot be resent, and their outcome will be unknown for staff to settle from that terminal's history.", n)
}

func sameAddress(a, b string) bool {
	ca, err1 := localapi.NewClient(a)
	cb, err2 := localapi.NewClient(b)
	return err1 == nil && err2 == nil && ca.BaseURL() == cb.BaseURL()
}

// knownAddresses lists the addresses of the adopted terminal for staff.
func knownAddresses(id discovery.Identity) []staffapi.KnownAddress {
	out := make([]staffapi.KnownAddress, 0, len(id.Addresses))
	for _, a := range id.Addresses {
		out = append(out, staffapi.KnownAddress{Address: a.Address, First: a.First, Last: a.Last, By: a.By})
	}
	return out
}

// ConfirmDevice takes the device waiting for staff for the terminal.
func (t *terminalControl) ConfirmDevice(ctx context.Context, address, certificate string) error {
	return t.device(ctx, address, certificate, true)
}

// RefuseDevice refuses the device waiting for staff.
func (t *terminalControl) RefuseDevice(ctx context.Context, address, certificate string) error {
	return t.device(ctx, address, certificate, false)
}

func (t *terminalControl) device(ctx context.Context, address, certificate string, confirm bool) error {
	tr := t.link.tracker
	if tr == nil {
		return &staff.Error{Code: staff.EINVALID, Message: "No terminal is followed by discovery in this process: there is no device to confirm."}
	}
	change := tr.Refuse
	if confirm {
		change = tr.Confirm
	}
	err := change(ctx, strings.TrimSpace(address), certificate)
	switch {
	case errors.Is(err, discovery.ErrNoSuchCandidate):
		return &staff.Error{Code: staff.ENOTFOUND, Message: "This device is no longer the one waiting for confirmation: look at the terminal screen again. Nothing was changed.", Err: err}
	case err != nil:
		return &staff.Error{Code: staff.EINTERNAL, Message: "The terminal's identity could not be saved: " + err.Error() + ". Nothing was changed.", Err: err}
	}
	return nil
}

// Choose saves a discovered terminal's instance name and goes back to
// discovery at the next start. Another name than the adopted terminal's is
// another terminal: its identity starts afresh (adopted at its first
// sighting, its certificate pinned then), the HTTPS requirement stays.
func (t *terminalControl) Choose(ctx context.Context, instance string) error {
	instance = strings.TrimSpace(instance)
	if instance == "" {
		return &staff.Error{Code: staff.EINVALID, Message: "Choose a terminal by its name."}
	}
	store := settingsStore{t.db}
	if err := forgetIdentity(ctx, t.db, instance); err != nil {
		return &staff.Error{Code: staff.EINTERNAL, Message: "The choice could not be saved: " + fault.MessageOf(err) + ".", Err: err}
	}
	if err := store.Set(ctx, discovery.DefaultStoreKey, instance); err != nil {
		return &staff.Error{Code: staff.EINTERNAL, Message: "The choice could not be saved: " + fault.MessageOf(err) + ".", Err: err}
	}
	if err := store.Set(ctx, settingTerminalAddress, ""); err != nil {
		return &staff.Error{Code: staff.EINTERNAL, Message: "The choice could not be saved: " + fault.MessageOf(err) + ".", Err: err}
	}
	return nil
}

// SetAddress saves a manual address, once a terminal answers there; ""
// goes back to discovery. An https:// address makes HTTPS required from
// then on; an http:// one is refused once it is.
func (t *terminalControl) SetAddress(ctx context.Context, address string) error {
	address = strings.TrimSpace(address)
	https := false
	if address != "" {
		trust, err := loadTrust(ctx, commonFlags{}, t.db)
		if err != nil {
			return &staff.Error{Code: staff.EINTERNAL, Message: "The terminal's HTTPS settings cannot be read: " + err.Error() + ". Nothing was saved.", Err: err}
		}
		if errors.Is(trust.check(address), ErrInsecureTerminal) {
			return &staff.Error{Code: staff.EINVALID, Message: "This terminal is set up on HTTPS: its address must start with https://. Nothing was saved."}
		}
		c, err := newTerminalClient(address, trust)
		if err != nil {
			return &staff.Error{Code: staff.EINVALID, Message: "This is not a terminal address (for example 192.168.1.20:16125): " + err.Error() + ". Nothing was saved.", Err: err}
		}
		https = strings.HasPrefix(c.BaseURL(), "https://")
		address = c.BaseURL()
		ping := t.ping
		if ping == nil {
			ping = func(ctx context.Context, _ string) error { _, err := c.Ping(ctx, false); return err }
		}
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err = ping(pctx, address)
		cancel()
		if err != nil {
			return &staff.Error{Code: staff.ETERMINAL, Message: "No payment terminal answers at " + address + ": check the address and that the terminal is on. Nothing was saved.", Err: err}
		}
	}
	store := settingsStore{t.db}
	if https {
		if err := store.Set(ctx, settingTerminalHTTPS, httpsRequired); err != nil {
			return &staff.Error{Code: staff.EINTERNAL, Message: "The address could not be saved: " + fault.MessageOf(err) + ".", Err: err}
		}
	}
	if err := store.Set(ctx, settingTerminalAddress, address); err != nil {
		return &staff.Error{Code: staff.EINTERNAL, Message: "The address could not be saved: " + fault.MessageOf(err) + ".", Err: err}
	}
	return nil
}

// Certificate reads what an https:// address presents, without sending a
// request ("": the terminal in use).
func (t *terminalControl) Certificate(ctx context.Context, address string) (staffapi.Certificate, error) {
	if address = strings.TrimSpace(address); address == "" {
		address = t.link.url
		if t.link.tracker != nil {
			address = t.link.tracker.BaseURL()
		}
	}
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	c, err := localapi.PeekCertificate(pctx, address)
	if err != nil {
		return staffapi.Certificate{}, &staff.Error{Code: staff.ETERMINAL, Message: "No certificate could be read at " + address + ": " + err.Error() + ".", Err: err}
	}
	return staffapi.Certificate{Address: address, Fingerprint: c.Fingerprint, Subject: c.Subject, Issuer: c.Issuer,
		NotAfter: c.NotAfter, Trusted: c.Trusted}, nil
}

// Pin saves the fingerprint of the certificate to trust from the next
// start ("" removes it: the system's roots again). HTTPS stays required
// either way.
func (t *terminalControl) Pin(ctx context.Context, fingerprint string) error {
	pin := ""
	if strings.TrimSpace(fingerprint) != "" {
		p, err := localapi.NormalizePin(fingerprint)
		if err != nil {
			return &staff.Error{Code: staff.EINVALID, Message: "This is not a certificate fingerprint: " + err.Error() + ". Nothing was saved.", Err: err}
		}
		pin = p
	}
	store := settingsStore{t.db}
	for _, kv := range [][2]string{{settingTerminalHTTPS, httpsRequired}, {settingTerminalPin, pin}} {
		if err := store.Set(ctx, kv[0], kv[1]); err != nil {
			return &staff.Error{Code: staff.EINTERNAL, Message: "The pin could not be saved: " + fault.MessageOf(err) + ".", Err: err}
		}
	}
	return nil
}

// duplicates records reprints in the fiscal journal, when it runs.
func duplicates(l *fiscal.Ledger) func(context.Context, string) (*receipt.Fiscal, error) {
	if l == nil {
		return nil
	}
	return l.Duplicate
}
