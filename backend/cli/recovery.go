package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/comptoir-pos/comptoir/backend/fault"
	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/payment"
)

// Every process that opens the journal to take or give back money settles
// the attempts left open of every channel it has: the terminal's (LAN or
// cloud) before anything new starts, the payment links' and the refunds by
// API resumed beside (their outcome may be days away). `comptoir recover`
// does the same, then follows the links and refunds by API for a bounded
// while, and says what became of each attempt.

// exitStillOpen is recover's exit code when attempts are still open after
// its wait (a link its customer has not paid, a refund a manager has not
// approved, a terminal that could not be reached).
const exitStillOpen = 3

// defaultRecoverWait is how long `comptoir recover` follows the links and
// refunds by API it resumed.
const defaultRecoverWait = 30 * time.Second

// recoveryRow is one attempt as `comptoir recover` prints it: how it stood
// before, how it stands after, and, when it is still open, why.
type recoveryRow struct {
	IdempotentUUID string          `json:"idempotentUuid"`
	Order          string          `json:"order"`
	Channel        journal.Channel `json:"channel"`
	Kind           journal.Kind    `json:"kind"`
	Terminal       string          `json:"terminal"`
	Amount         int64           `json:"amount"`
	Before         journal.State   `json:"before"`
	After          journal.State   `json:"after"`
	TransactionID  string          `json:"transactionId,omitempty"`
	ProviderStatus string          `json:"providerStatus,omitempty"`
	Link           string          `json:"link,omitempty"`
	Message        string          `json:"message,omitempty"`
	// Open says why the attempt is still open ("" once it has an outcome).
	Open string `json:"open,omitempty"`
}

// orchestrators are the process's orchestrators, the terminal's first.
func (p *payments) orchestrators() []*payment.Orchestrator {
	var all []*payment.Orchestrator
	for _, o := range []*payment.Orchestrator{p.o, p.links, p.refunds} {
		if o != nil {
			all = append(all, o)
		}
	}
	return all
}

// recoverAll settles the open attempts of every channel this process has:
// the terminal's are waited for; links and refunds by API are resumed and
// go on beside. A failure of one channel does not keep the others from
// recovering.
func (p *payments) recoverAll(ctx context.Context) ([]payment.View, error) {
	var views []payment.View
	var errs []error
	for _, o := range p.orchestrators() {
		v, err := o.Recover(ctx)
		views = append(views, v...)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", o.Channel(), err))
		}
	}
	return views, errors.Join(errs...)
}

// active is the handle of the attempt some orchestrator of the process
// drives.
func (p *payments) active(uuid string) (*payment.Handle, bool) {
	for _, o := range p.orchestrators() {
		if h, ok := o.Active(uuid); ok {
			return h, true
		}
	}
	return nil, false
}

// openAttemptOf is the order's attempt still open, if any (one at most:
// the journal holds one open attempt per order).
func openAttemptOf(ctx context.Context, db *journal.DB, orderID string) (journal.Attempt, bool, error) {
	if orderID == "" {
		return journal.Attempt{}, false, nil
	}
	atts, err := db.AttemptsForOrder(ctx, orderID)
	if err != nil && fault.CodeOf(err) != fault.ENOTFOUND {
		return journal.Attempt{}, false, err
	}
	for _, a := range atts {
		if a.State.Open() {
			return a, true, nil
		}
	}
	return journal.Attempt{}, false, nil
}

// followOpen takes up the order's attempt that was open when the command
// started (its process stopped): it is followed to its end, as the
// command that started it would have, and nothing new is started for it.
// A link is cancelled by ctx's end (the customer's cancel, as in `comptoir
// link`), a payment too (as in `comptoir pay`); a refund by API is left to
// go on (as in `comptoir refund --by-api`).
func (p *payments) followOpen(ctx context.Context, open journal.Attempt, stderr io.Writer) payment.View {
	fmt.Fprintf(stderr, "order %s has %s %s open (%s, %s), left by a process that stopped: following it to its end; nothing new is started\n",
		open.OrderID, open.Kind, open.UUID, open.Channel, open.State)
	h, ok := p.active(open.UUID)
	if !ok {
		// Recovery settled it already, or could not (its channel is not
		// set up here, or unreachable): the journal says how it stands.
		return attemptView(ctx, p.db, open.UUID)
	}
	switch {
	case open.Channel == journal.ChannelLink:
		return followLink(ctx, h, stderr)
	case open.Channel == journal.ChannelWebservices:
		select {
		case <-h.Done():
		case <-ctx.Done():
			fmt.Fprintf(stderr, "refund %s goes on at the provider: `comptoir recover` follows it\n", open.UUID)
		}
	default:
		select {
		case <-h.Done():
		case <-ctx.Done():
			if open.Kind != journal.KindReversal {
				h.Cancel()
			}
			<-h.Done()
		}
	}
	return h.View()
}

// attemptView is an attempt as the journal has it, in a View's words.
func attemptView(ctx context.Context, db *journal.DB, uuid string) payment.View {
	a, err := db.Attempt(ctx, uuid)
	if err != nil {
		return payment.View{UUID: uuid, Message: fault.MessageOf(err)}
	}
	v := payment.View{UUID: a.UUID, OrderID: a.OrderID, Kind: a.Kind, Policy: a.Policy, State: a.State, Channel: a.Channel,
		Amount: a.Amount, GiftAmount: a.GiftAmount, TransactionID: a.TransactionID, Message: a.Error, SendCount: a.SendCount,
		ProviderStatus: a.ProviderStatus, Flag: a.Flag}
	if a.Charged {
		v.ChargedAmount, v.GiftAmount = a.ChargedAmount, a.ChargedGift
	}
	if a.Channel == journal.ChannelLink {
		v.Link = a.ProviderID
	}
	if ord, err := db.Order(ctx, a.OrderID); err == nil {
		v.OrderPaid = ord.Status == journal.OrderPaid
	}
	return v
}

// needsTerminal reports whether the journal has attempts only the
// terminal can settle: open, or of unknown outcome, on the LAN or the
// cloud channel.
func needsTerminal(ctx context.Context, db *journal.DB) (bool, error) {
	open, err := db.OpenAttempts(ctx)
	if err != nil {
		return false, err
	}
	unknown, err := db.UnknownAttempts(ctx)
	if err != nil {
		return false, err
	}
	for _, a := range append(open, unknown...) {
		if a.Channel == journal.ChannelLocal || a.Channel == journal.ChannelCloud {
			return true, nil
		}
	}
	return false, nil
}

// terminalNamed reports whether the flags name a terminal (or a demo).
func (c commonFlags) terminalNamed() bool {
	return c.isDemo() || c.terminal != "" || c.serial != ""
}

// openRecovery opens what settles the journal: the terminal when the flags
// name one or the journal has attempts only it can settle, and the links
// and refunds by API when they are set up. When the terminal cannot be
// opened the others still are: termErr says why the terminal's attempts
// stay open.
func openRecovery(ctx context.Context, c commonFlags, lim payment.Limits, logger *slog.Logger) (p *payments, termErr, err error) {
	dir, err := c.resolveDataDir()
	if err != nil {
		return nil, nil, err
	}
	need := c.terminalNamed()
	if !need {
		db, err := journal.Open(ctx, dir)
		if err != nil {
			return nil, nil, err
		}
		need, err = needsTerminal(ctx, db)
		db.Close()
		if err != nil {
			return nil, nil, err
		}
	}
	if need {
		p, termErr = openPayments(ctx, c, lim, nil, logger, false)
		if termErr == nil {
			return p, nil, nil
		}
	}
	p, err = openWithoutTerminal(ctx, c, dir, lim, logger)
	return p, termErr, err
}

// openWithoutTerminal opens the journal with the payment links and the
// refunds by API, when they are set up, and no terminal: the terminal's
// attempts are left to a process that has it.
func openWithoutTerminal(ctx context.Context, c commonFlags, dir string, lim payment.Limits, logger *slog.Logger) (*payments, error) {
	db, err := journal.Open(ctx, dir)
	if err != nil {
		return nil, err
	}
	p := &payments{dir: dir, db: db, close: func() { db.Close() }}
	others := []journal.Channel{journal.ChannelLocal, journal.ChannelCloud, journal.ChannelWebservices}
	if err := openLinksBeside(ctx, c, p, others, lim, nil, logger); err != nil {
		p.close()
		return nil, err
	}
	if err := openAPIRefunds(ctx, c, p, lim, nil, logger); err != nil {
		p.close()
		return nil, err
	}
	return p, nil
}

func cmdRecover(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs, common, lf := newPaymentFlagSet("recover", stderr)
	wait := fs.Duration("wait", defaultRecoverWait, "how long to follow the payment links and refunds by API not final yet, before saying which stay open and why")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *wait <= 0 {
		fmt.Fprintln(stderr, "comptoir recover: --wait must be positive")
		return 2
	}
	p, termErr, err := openRecovery(context.WithoutCancel(ctx), *common, lf.limits(), warnLogger(stderr))
	if err != nil {
		return failed(stderr, "recover", err)
	}
	defer p.close()
	before, err := p.db.OpenAttempts(ctx)
	if err != nil {
		return failed(stderr, "recover", err)
	}
	views, recErr := p.recoverAll(ctx)
	p.await(ctx, before, *wait)
	rows := p.recoveryRows(context.WithoutCancel(ctx), before, views, termErr, recErr)
	printJSON(stdout, rows)
	code := 0
	for _, r := range rows {
		if r.Open != "" {
			code = exitStillOpen
		}
	}
	if recErr != nil {
		fmt.Fprintln(stderr, "comptoir recover:", recErr)
		code = 1
	}
	if termErr != nil && code != 0 {
		fmt.Fprintln(stderr, "comptoir recover: the terminal:", termErr)
	}
	return code
}

// await follows the attempts recovery resumed beside (links, refunds by
// API) until each ends, wait has passed, or ctx ends.
func (p *payments) await(ctx context.Context, atts []journal.Attempt, wait time.Duration) {
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for _, a := range atts {
		h, ok := p.active(a.UUID)
		if !ok {
			continue
		}
		select {
		case <-h.Done():
		case <-timer.C:
			return
		case <-ctx.Done():
			return
		}
	}
}

// recoveryRows says, for each attempt open before recovery and each
// unknown outcome it settled, how it stood and how it stands.
func (p *payments) recoveryRows(ctx context.Context, before []journal.Attempt, views []payment.View, termErr, recErr error) []recoveryRow {
	rows := []recoveryRow{}
	seen := map[string]bool{}
	add := func(uuid string, was journal.State) {
		if seen[uuid] {
			return
		}
		seen[uuid] = true
		a, err := p.db.Attempt(ctx, uuid)
		if err != nil {
			rows = append(rows, recoveryRow{IdempotentUUID: uuid, Before: was, Open: "the journal could not be read: " + fault.MessageOf(err)})
			return
		}
		r := recoveryRow{IdempotentUUID: a.UUID, Order: a.OrderID, Channel: a.Channel, Kind: a.Kind, Terminal: a.Terminal,
			Amount: a.Amount, Before: was, After: a.State, TransactionID: a.TransactionID, ProviderStatus: a.ProviderStatus, Message: a.Error}
		if a.Channel == journal.ChannelLink {
			r.Link = a.ProviderID
		}
		if h, ok := p.active(a.UUID); ok && h.View().Message != "" {
			r.Message = h.View().Message
		}
		if a.State.Open() {
			r.Open = p.whyOpen(a, termErr, recErr)
		}
		rows = append(rows, r)
	}
	for _, a := range before {
		add(a.UUID, a.State)
	}
	for _, v := range views {
		add(v.UUID, journal.StateUnknown) // an unknown outcome the history settled
	}
	return rows
}

// whyOpen says why an attempt is still open after recovery, and who will
// settle it.
func (p *payments) whyOpen(a journal.Attempt, termErr, recErr error) string {
	switch a.Channel {
	case journal.ChannelLink:
		if p.links == nil {
			return "payment links are not set up in this process (--cloud URL, or the " + settingCloudURL + " setting, and the key): nothing read its cart"
		}
		if a.State == journal.StateAbortRequested {
			return "cancelled by Comptoir: its cart has not said so yet"
		}
		return fmt.Sprintf("its customer has not paid it yet (cart %s); the provider drops it unpaid at %s; the kiosk, `comptoir link --order %s` and the next `comptoir recover` follow it",
			orNone(a.ProviderStatus), a.FirstSentAt.Add(payment.LinkLifetime).UTC().Format(time.RFC3339), a.OrderID)
	case journal.ChannelWebservices:
		switch {
		case p.refunds == nil:
			return "the Webservices are not set up in this process (the cloud's URL, or " + settingWSURL + ", and the key): nothing fetched the refund"
		case a.ProviderStatus == "waiting":
			return "waiting for a manager's approval in the provider's back office; the kiosk and the next `comptoir recover` follow it"
		case a.ProviderStatus == "pending":
			return "the provider is still checking it (pending); the kiosk and the next `comptoir recover` follow it"
		}
		return "no outcome from the Webservices yet; the kiosk and the next `comptoir recover` follow it"
	}
	if p.o == nil || a.Channel != p.o.Channel() {
		why := "the terminal that took it is not set up in this process (--terminal URL, or --cloud URL --serial SN)"
		if termErr != nil {
			why = "the terminal could not be opened: " + termErr.Error()
		}
		return why
	}
	if recErr != nil {
		return "the terminal could not settle it: " + recErr.Error() + "; run `comptoir recover` again"
	}
	return "no outcome yet; run `comptoir recover` again"
}

func orNone(s string) string {
	if s == "" {
		return "no word yet"
	}
	return s
}
