// Package staffapi is the staff screens' calls, one table for both
// transports: the desktop binding (App.Staff) and browser mode
// (POST /api/staff/<Name>). Every call answers an envelope,
// {"ok":true,"value":...} or {"ok":false,"error":{code,message,...}}, so
// that the UI gets the staff service's error codes intact (Wails turns a Go
// error into a bare string).
//
// Every call but the PIN pad's (Gate, SetPIN, Unlock, ClearLockout) takes
// the session id as its first argument and is refused with ESESSION
// without a live session: the customer screens cannot reach any of it
// without the PIN. The PIN pad's calls take, last and optional, the
// gesture that opened the pad: with the transport, it says where the PIN
// was typed (staff.Origin), and wrong PINs lock only that origin.
package staffapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/comptoir-pos/comptoir/backend/fault"
	"github.com/comptoir-pos/comptoir/backend/kiosk"
	"github.com/comptoir-pos/comptoir/backend/staff"
)

// Codes of this layer, besides backend/staff's.
const (
	EUNAVAILABLE = "EUNAVAILABLE" // the kiosk is not running, so neither is staff mode
	EBADCALL     = "EBADCALL"     // no such call, or arguments that do not fit: a bug of the caller
)

// ErrorView is a failed call, as the UI reads it.
type ErrorView struct {
	Code            string `json:"code"`
	Message         string `json:"message"`
	RetryAfterMs    int64  `json:"retryAfterMs,omitempty"`
	TerminalCode    string `json:"terminalCode,omitempty"`
	TerminalMessage string `json:"terminalMessage,omitempty"`
}

// Result is the envelope of every call.
type Result struct {
	OK    bool       `json:"ok"`
	Value any        `json:"value,omitempty"`
	Error *ErrorView `json:"error,omitempty"`
}

// About is the build and installation, for the staff screen.
type About struct {
	Version   string `json:"version"`
	Commit    string `json:"commit"`
	BuildTime string `json:"buildTime"`
	DataDir   string `json:"dataDir"`
	Demo      bool   `json:"demo"`
	Mode      string `json:"mode"`
	// Browser: browser mode, where the app cannot close its own window.
	Browser bool `json:"browser"`
	// Links: staff can send payment links (the provider's cloud is set up).
	Links bool `json:"links"`
	// APIRefunds: staff can refund without the card (the provider's
	// Webservices are set up).
	APIRefunds bool `json:"apiRefunds"`
	// FiscalWarning says the fiscal records do not verify, or are not
	// kept ("" when all is well): staff are told, orders go on.
	FiscalWarning string `json:"fiscalWarning,omitempty"`
}

// Endpoint is a terminal's name and Local API address.
type Endpoint struct {
	Instance string `json:"instance"`
	Address  string `json:"address"`
}

// TerminalInfo is how this process found its terminal and what the journal
// remembers for the next start.
type TerminalInfo struct {
	Source     string     `json:"source"` // demo, flag (--terminal), discovery, address (saved manual address)
	State      string     `json:"state"`  // discovery's state; "" for a fixed address
	InUse      Endpoint   `json:"inUse"`
	Candidates []Endpoint `json:"candidates"`
	Saved      Endpoint   `json:"saved"`
	// RestartRequired: the saved choice is not the terminal in use.
	RestartRequired bool   `json:"restartRequired"`
	Note            string `json:"note,omitempty"`
	// HTTPS: the terminal is reached over HTTPS only, never plain HTTP.
	// Pin is the fingerprint of the certificate staff pinned ("": the
	// system's roots vouch for it), as saved for the next start.
	HTTPS bool   `json:"https"`
	Pin   string `json:"pin,omitempty"`
	// Channel is how payments reach the terminal: "local" (the LAN),
	// "cloud" (the provider's Cloud API) or "both" (the LAN first, the
	// cloud behind it), as saved for the next start; Cloud is the saved
	// cloud terminal (never its key).
	Channel string       `json:"channel"`
	Cloud   CloudSetting `json:"cloud"`
	// Pending is a device that answers under the terminal's name with
	// another identity (a new address on plain HTTP, another certificate):
	// it is not used until staff confirm it (ConfirmTerminalDevice) or
	// refuse it (RefuseTerminalDevice).
	Pending *PendingDevice `json:"pending,omitempty"`
	// Known are the addresses the adopted terminal answered at, most recent
	// last.
	Known []KnownAddress `json:"known"`
}

// PendingDevice is a device waiting for staff's confirmation.
type PendingDevice struct {
	Instance string `json:"instance"`
	Address  string `json:"address"`
	// Certificate is the fingerprint of the certificate it presents (""
	// on plain HTTP), to compare with the one the terminal shows.
	Certificate string       `json:"certificate,omitempty"`
	Reason      DeviceReason `json:"reason"`
	Since       time.Time    `json:"since"`
	// Confirmed: staff confirmed it; it is used once no payment is open on
	// the terminal.
	Confirmed bool `json:"confirmed"`
}

// DeviceReason is why a device waits for staff.
type DeviceReason string

const (
	// ReasonNewAddress: plain HTTP at an address the terminal was never
	// seen at: the terminal moved by DHCP, or another device.
	ReasonNewAddress DeviceReason = "new_address"
	// ReasonOtherCertificate: another certificate than the pinned one: a
	// renewed certificate, or another device.
	ReasonOtherCertificate DeviceReason = "other_certificate"
)

// KnownAddress is an address the adopted terminal answered at.
type KnownAddress struct {
	Address string    `json:"address"`
	First   time.Time `json:"first"`
	Last    time.Time `json:"last"`
	// By is what vouched for it: adopted, certificate, staff, cli, known.
	By string `json:"by"`
}

// CloudSetting is the cloud terminal as staff see it: the key is never
// shown, only whether one is saved. On and LANFirst are the saved channel
// as CloudChoice sets it: payments through the cloud, and then the LAN
// first, the cloud behind it.
type CloudSetting struct {
	URL      string `json:"url"`
	Serial   string `json:"serial"`
	KeySet   bool   `json:"keySet"`
	On       bool   `json:"on"`
	LANFirst bool   `json:"lanFirst"`
}

// CloudChoice is staff's choice of channel. Key "" keeps the saved key.
// LANFirst (with On): the terminal stays on the LAN, the cloud behind it
// for when it does not answer there.
type CloudChoice struct {
	On       bool   `json:"on"`
	URL      string `json:"url"`
	Serial   string `json:"serial"`
	Key      string `json:"key"`
	LANFirst bool   `json:"lanFirst"`
}

// Certificate is what a terminal presents on HTTPS, for staff to compare
// with what the terminal itself shows before pinning it.
type Certificate struct {
	Address     string    `json:"address"`
	Fingerprint string    `json:"fingerprint"` // SHA-256, colon-separated
	Subject     string    `json:"subject"`
	Issuer      string    `json:"issuer"`
	NotAfter    time.Time `json:"notAfter"`
	// Trusted: the system's roots vouch for it already.
	Trusted bool `json:"trusted"`
}

// TerminalPanel is the staff terminal screen.
type TerminalPanel struct {
	Status staff.TerminalStatus `json:"status"`
	TerminalInfo
}

// TerminalControl is the terminal choice, which lives with the process's
// wiring. A choice is saved for the next start, never applied under a
// running payment: the journal names each attempt's terminal, and recovery
// must resend to the one that took it.
type TerminalControl interface {
	Info(ctx context.Context) TerminalInfo
	Choose(ctx context.Context, instance string) error
	SetAddress(ctx context.Context, address string) error
	// Certificate reads the certificate an https:// address presents
	// ("": the terminal in use), sending no request.
	Certificate(ctx context.Context, address string) (Certificate, error)
	// Pin trusts only the certificate with this fingerprint from the next
	// start on ("": the system's roots again); HTTPS stays required.
	Pin(ctx context.Context, fingerprint string) error
	// SetCloud chooses the channel for the next start: the cloud terminal
	// (its base URL, serial number and key) or the LAN.
	SetCloud(ctx context.Context, c CloudChoice) error
	// ConfirmDevice takes the device waiting at address, presenting
	// certificate ("" on plain HTTP), for the terminal: at once, or once no
	// payment is open on the terminal. RefuseDevice refuses it for good.
	ConfirmDevice(ctx context.Context, address, certificate string) error
	RefuseDevice(ctx context.Context, address, certificate string) error
}

// Config wires the calls.
type Config struct {
	// FiscalWarning is what is wrong with the fiscal records now ("":
	// nothing); nil: not checked.
	FiscalWarning func() string
	Staff         *staff.Staff
	Kiosk         *kiosk.Service
	Terminal      TerminalControl
	About         About
	// Busy says why the process must not stop now ("" when it may): a
	// payment or a refund out on the terminal. Quit and Restart refuse
	// then. Nil: never busy.
	Busy func() string
	// Quit closes the app; nil in browser mode.
	Quit func()
	// Restart stops the kiosk and starts it again (a terminal choice then
	// applies); it refuses while a payment is out. Nil in browser mode.
	Restart func() error
}

// API serves the calls.
type API struct {
	cfg Config
	// desktop: the desktop window's binding, whose keyboard shortcut is a
	// keyboard at the kiosk PC; otherwise browser mode.
	desktop bool
}

// Gesture is what opened the PIN pad, as the UI says: the customer
// screen's hidden corner, or the staff keyboard shortcut.
type Gesture string

const (
	GestureCorner   Gesture = "corner"
	GestureShortcut Gesture = "shortcut"
)

// origin is where a PIN is typed, for the lockout (staff.Origin): the
// keyboard shortcut is the desktop's own in its window and a browser's in
// browser mode; anything else, the corner included, is the customer
// screen, the origin anyone can reach. So a customer at a screen without a
// keyboard can lock only the screen's pad, and what a browser says of
// itself never makes it the desktop.
func (a *API) origin(g Gesture) staff.Origin {
	switch {
	case g != GestureShortcut:
		return staff.OriginScreen
	case a.desktop:
		return staff.OriginDesktop
	}
	return staff.OriginBrowser
}

// New returns the API.
func New(cfg Config) *API { return &API{cfg: cfg} }

// WithDesktop returns the API of the desktop window: the desktop's Quit
// and Restart, and its keyboard shortcut counted as the desktop's own
// origin for the PIN lockout. Browser mode never gets it.
func (a *API) WithDesktop(quit func(), restart func() error) *API {
	cfg := a.cfg
	cfg.Quit, cfg.Restart = quit, restart
	return &API{cfg: cfg, desktop: true}
}

// WithBusy returns the API with a Busy check (see Config.Busy).
func (a *API) WithBusy(busy func() string) *API {
	cfg := a.cfg
	cfg.Busy = busy
	return &API{cfg: cfg, desktop: a.desktop}
}

// Call runs the named call with its JSON arguments. The error is an
// *fault.ArgError only; everything else is in the Result.
func (a *API) Call(ctx context.Context, name string, args []json.RawMessage) (Result, error) {
	c, ok := calls[name]
	if !ok {
		return Result{}, &fault.ArgError{Msg: fmt.Sprintf("unknown staff call %q", name)}
	}
	if len(args) < c.n || len(args) > c.n+c.opt {
		want := fmt.Sprint(c.n)
		if c.opt > 0 {
			want = fmt.Sprintf("%d to %d", c.n, c.n+c.opt)
		}
		return Result{}, &fault.ArgError{Msg: fmt.Sprintf("%s: expected %s argument(s), got %d", name, want, len(args))}
	}
	v, err := c.f(ctx, a, args)
	var ae *fault.ArgError
	if errors.As(err, &ae) {
		return Result{}, err
	}
	if err != nil {
		return Result{Error: View(err)}, nil
	}
	return Result{OK: true, Value: v}, nil
}

// Names lists the calls, for tests and documentation.
func Names() []string {
	out := make([]string, 0, len(calls))
	for n := range calls {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// View is the one mapping of a failure to what the staff screens show, for
// the window and browser mode alike: an error worded for staff keeps its
// code and sentence; a call that does not fit is EBADCALL; anything else
// (a layer's own words, a bare Go error) is EINTERNAL.
func View(err error) *ErrorView {
	var ae *fault.ArgError
	if errors.As(err, &ae) {
		return &ErrorView{Code: EBADCALL, Message: ae.Msg}
	}
	if e := fault.As(err); e != nil && e.From == "" {
		return &ErrorView{Code: e.Code, Message: e.Message, RetryAfterMs: e.RetryAfter.Milliseconds(),
			TerminalCode: e.TerminalCode, TerminalMessage: e.TerminalMessage}
	}
	return &ErrorView{Code: fault.EINTERNAL, Message: "Something went wrong: " + err.Error()}
}

// session checks the session of a call that staff's own methods do not.
func (a *API) session(sid string) (staff.Session, error) { return a.cfg.Staff.Touch(sid) }

// record writes a staff action of this layer to the audit trail.
func (a *API) record(ctx context.Context, sid, action, subject, detail string) {
	_ = a.cfg.Staff.Record(ctx, sid, action, subject, detail)
}

// Gate is what the PIN pad needs before any session.
type Gate struct {
	HasPIN bool `json:"hasPin"`
	Demo   bool `json:"demo"`
}

// CSVExport is the end-of-day report as a file.
type CSVExport struct {
	Filename string `json:"filename"`
	CSV      string `json:"csv"`
}

func (a *API) gate(ctx context.Context) (Gate, error) {
	has, err := a.cfg.Staff.HasPIN(ctx)
	return Gate{HasPIN: has, Demo: a.cfg.About.Demo}, err
}

// NoPINHold is why a kiosk takes no order before the staff PIN is set.
const NoPINHold = "No staff PIN is set yet: staff set one (staff corner, or `comptoir pin`) before the kiosk takes orders."

func (a *API) setPIN(ctx context.Context, o staff.Origin, pin string) (staff.Session, error) {
	if err := a.cfg.Staff.SetPIN(ctx, pin); err != nil {
		return staff.Session{}, err
	}
	if a.cfg.Kiosk != nil {
		a.cfg.Kiosk.Hold("")
	}
	return a.cfg.Staff.UnlockFrom(ctx, o, pin)
}

func (a *API) about(sid string) (About, error) {
	if _, err := a.session(sid); err != nil {
		return About{}, err
	}
	ab := a.cfg.About
	ab.Browser = a.cfg.Quit == nil
	ab.Links = a.cfg.Staff.OffersLinks()
	ab.APIRefunds = a.cfg.Staff.OffersAPIRefunds()
	if a.cfg.FiscalWarning != nil {
		ab.FiscalWarning = a.cfg.FiscalWarning()
	}
	if a.cfg.Kiosk != nil {
		ab.Mode = a.cfg.Kiosk.Settings().Mode
	}
	return ab, nil
}

func (a *API) terminal(ctx context.Context, sid string, greet bool) (TerminalPanel, error) {
	st, err := a.cfg.Staff.Terminal(ctx, sid, greet)
	if err != nil {
		return TerminalPanel{}, err
	}
	p := TerminalPanel{Status: st}
	if a.cfg.Terminal != nil {
		p.TerminalInfo = a.cfg.Terminal.Info(ctx)
	}
	if p.Candidates == nil {
		p.Candidates = []Endpoint{}
	}
	if p.Known == nil {
		p.Known = []KnownAddress{}
	}
	return p, nil
}

func (a *API) certificate(ctx context.Context, sid, address string) (Certificate, error) {
	if _, err := a.session(sid); err != nil {
		return Certificate{}, err
	}
	if a.cfg.Terminal == nil {
		return Certificate{}, &staff.Error{Code: staff.EINVALID, Message: "The terminal cannot be changed here."}
	}
	return a.cfg.Terminal.Certificate(ctx, address)
}

func (a *API) pin(ctx context.Context, sid, fingerprint string) (TerminalPanel, error) {
	if _, err := a.session(sid); err != nil {
		return TerminalPanel{}, err
	}
	if a.cfg.Terminal == nil {
		return TerminalPanel{}, &staff.Error{Code: staff.EINVALID, Message: "The terminal cannot be changed here."}
	}
	if err := a.cfg.Terminal.Pin(ctx, fingerprint); err != nil {
		return TerminalPanel{}, err
	}
	detail := "pinned for the next start"
	if fingerprint == "" {
		detail = "pin removed: the system's roots from the next start"
	}
	a.record(ctx, sid, "terminal_pin", fingerprint, detail)
	return a.terminal(ctx, sid, false)
}

func (a *API) setCloud(ctx context.Context, sid string, c CloudChoice) (TerminalPanel, error) {
	if _, err := a.session(sid); err != nil {
		return TerminalPanel{}, err
	}
	if a.cfg.Terminal == nil {
		return TerminalPanel{}, &staff.Error{Code: staff.EINVALID, Message: "The terminal cannot be changed here."}
	}
	if err := a.cfg.Terminal.SetCloud(ctx, c); err != nil {
		return TerminalPanel{}, err
	}
	detail := "the LAN from the next start"
	if c.On {
		detail = "the cloud from the next start, terminal " + c.Serial
		if c.Key != "" {
			detail += ", with a new key"
		}
	}
	a.record(ctx, sid, "terminal_channel", c.Serial, detail)
	return a.terminal(ctx, sid, false)
}

func (a *API) choose(ctx context.Context, sid, instance string, address bool) (TerminalPanel, error) {
	if _, err := a.session(sid); err != nil {
		return TerminalPanel{}, err
	}
	if a.cfg.Terminal == nil {
		return TerminalPanel{}, &staff.Error{Code: staff.EINVALID, Message: "The terminal cannot be changed here."}
	}
	action, change := "terminal_choose", a.cfg.Terminal.Choose
	if address {
		action, change = "terminal_address", a.cfg.Terminal.SetAddress
	}
	if err := change(ctx, instance); err != nil {
		return TerminalPanel{}, err
	}
	a.record(ctx, sid, action, instance, "saved for the next start")
	return a.terminal(ctx, sid, false)
}

// device confirms or refuses the device waiting for staff, and records
// it in the audit.
func (a *API) device(ctx context.Context, sid, address, certificate string, confirm bool) (TerminalPanel, error) {
	if _, err := a.session(sid); err != nil {
		return TerminalPanel{}, err
	}
	if a.cfg.Terminal == nil {
		return TerminalPanel{}, &staff.Error{Code: staff.EINVALID, Message: "The terminal cannot be changed here."}
	}
	action, change, detail := "terminal_refuse", a.cfg.Terminal.RefuseDevice, "refused: never used under the terminal's name"
	if confirm {
		action, change, detail = "terminal_confirm", a.cfg.Terminal.ConfirmDevice, "confirmed as the terminal"
	}
	if err := change(ctx, address, certificate); err != nil {
		return TerminalPanel{}, err
	}
	if certificate != "" {
		detail += ", certificate " + certificate
	}
	a.record(ctx, sid, action, address, detail)
	return a.terminal(ctx, sid, false)
}

func (a *API) saveSetting(ctx context.Context, sid, key string, value json.RawMessage) ([]staff.Setting, error) {
	if err := a.cfg.Staff.SaveSetting(ctx, sid, key, value); err != nil {
		return nil, err
	}
	return a.cfg.Staff.Settings(ctx, sid)
}

// errNoKiosk answers a call about the customer screen while the kiosk is
// not running.
var errNoKiosk = &staff.Error{Code: staff.EINVALID, Message: "The kiosk is not running."}

func (a *API) reloadCatalog(ctx context.Context, sid string) (any, error) {
	if _, err := a.session(sid); err != nil {
		return nil, err
	}
	if a.cfg.Kiosk == nil {
		return nil, errNoKiosk
	}
	if err := a.cfg.Kiosk.Reload(); err != nil {
		a.record(ctx, sid, "catalog_reload_refused", kiosk.CatalogFile, err.Error())
		return nil, &staff.Error{Code: staff.EINVALID, Message: "The catalog was not reloaded, the previous one stays: " + err.Error(), Err: err}
	}
	a.record(ctx, sid, "catalog_reload", kiosk.CatalogFile, "reloaded")
	return nil, nil
}

func (a *API) report(ctx context.Context, sid, day string) (staff.Report, error) {
	return a.cfg.Staff.Report(ctx, sid, day)
}

func (a *API) reportCSV(ctx context.Context, sid, day string) (CSVExport, error) {
	r, err := a.report(ctx, sid, day)
	if err != nil {
		return CSVExport{}, err
	}
	return CSVExport{Filename: "comptoir-report-" + r.Day + ".csv", CSV: string(r.CSV())}, nil
}

func (a *API) printReport(ctx context.Context, sid, day string) (any, error) {
	r, err := a.report(ctx, sid, day)
	if err != nil {
		return nil, err
	}
	return nil, a.cfg.Staff.PrintReport(ctx, sid, r)
}

func (a *API) closeCheckout(ctx context.Context, sid string) (kiosk.CheckoutView, error) {
	if _, err := a.session(sid); err != nil {
		return kiosk.CheckoutView{}, err
	}
	if a.cfg.Kiosk == nil {
		return kiosk.CheckoutView{}, errNoKiosk
	}
	before := a.cfg.Kiosk.Checkout()
	v, err := a.cfg.Kiosk.Release()
	if err != nil {
		return v, err
	}
	if v.Error != "" {
		return v, &staff.Error{Code: staff.EINVALID, Message: "The customer screen cannot be closed now: a payment is still in progress on the terminal."}
	}
	a.record(ctx, sid, "checkout_release", before.OrderNumber, "customer screen "+string(before.Phase)+" closed by staff")
	return v, nil
}

func (a *API) restart(ctx context.Context, sid string) (any, error) {
	if _, err := a.session(sid); err != nil {
		return nil, err
	}
	if a.cfg.Restart == nil {
		return nil, &staff.Error{Code: staff.EINVALID, Message: "In browser mode Comptoir is restarted where it was started (its service, or the command line)."}
	}
	if err := a.notBusy(); err != nil {
		return nil, err
	}
	// Recorded first: the restart closes the journal.
	a.record(ctx, sid, "restart", "", "Comptoir restarted by staff")
	return nil, a.cfg.Restart()
}

// notBusy refuses to stop the process while a payment is out.
func (a *API) notBusy() error {
	if a.cfg.Busy == nil {
		return nil
	}
	if why := a.cfg.Busy(); why != "" {
		return &staff.Error{Code: staff.EINVALID, Message: why}
	}
	return nil
}

func (a *API) quit(ctx context.Context, sid string) (any, error) {
	if _, err := a.session(sid); err != nil {
		return nil, err
	}
	if a.cfg.Quit == nil {
		return nil, &staff.Error{Code: staff.EINVALID, Message: "In browser mode Comptoir is stopped where it was started (Ctrl-C, or its service)."}
	}
	if err := a.notBusy(); err != nil {
		return nil, err
	}
	a.record(ctx, sid, "quit", "", "Comptoir closed by staff")
	a.cfg.Quit()
	return nil, nil
}
