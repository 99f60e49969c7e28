// Package reconcile sets a day of the journal beside the terminal's own
// history and the provider's record of the whole company (the
// Webservices), so that no payment is left without an order and no order
// believes in a payment the provider never made.
//
// Every transaction is matched to a journal attempt by its transaction id
// (a payment link may hold several), else by its kind, its amount, its
// cartId (the order, or the link's cart) and a time near the attempt's.
// What does not agree is a Difference, named, with the action that fixes
// it. The day is the kiosk's (Config.Location).
package reconcile

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/comptoir-pos/comptoir/backend/cloudapi"
	"github.com/comptoir-pos/comptoir/backend/device"
	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/payment"
)

// Sources read the two outside columns over [from, to). A nil source is a
// column not read (no terminal configured, no cloud key).
type Sources struct {
	Terminal func(ctx context.Context, from, to time.Time) ([]device.HistoryEntry, error)
	Provider func(ctx context.Context, from, to time.Time) ([]cloudapi.HistoryEntry, error)
}

// Config says whose and which day.
type Config struct {
	Location *time.Location // the kiosk's zone; nil: time.Local
	// Serials are this kiosk's terminals. A transaction the provider lists
	// on another terminal is another till's business and not reported,
	// unless it matches an attempt here. Empty: every terminal of the
	// company is this kiosk's.
	Serials []string
	Now     func() time.Time // nil: time.Now
	// PendingLimit is how long a transaction or an attempt may stay
	// pending before it is reported. Default 1 h.
	PendingLimit time.Duration
}

// Margin widens the day on both sides: an attempt begun just before
// midnight still finds its transaction, and a clock a little off too.
const Margin = 30 * time.Minute

// ReversalWindow is how long after a charge a reversal is possible.
const ReversalWindow = 16 * time.Hour

// Sources of a column.
const (
	SourceJournal  = "journal"
	SourceTerminal = "terminal"
	SourceProvider = "provider"
)

// Difference kinds.
const (
	// KindNoOrder: an approved transaction no journal attempt stands for:
	// the customer was charged (or given back) and no order knows it.
	KindNoOrder = "charged_no_order"
	// KindUnknownToProvider: approved in the journal, and the provider
	// lists no such transaction.
	KindUnknownToProvider = "unknown_to_provider"
	// KindUnknownToTerminal: approved in the journal, and the terminal's
	// history lists no such transaction.
	KindUnknownToTerminal = "unknown_to_terminal"
	// KindState: one side says approved, the other does not.
	KindState = "state_mismatch"
	// KindAmount: the same transaction, different amounts or tips.
	KindAmount = "amount_mismatch"
	// KindCurrency: the same transaction, in another currency than its
	// order's: its amounts cannot be compared, and the order is not paid
	// as the journal believes.
	KindCurrency = "currency_mismatch"
	// KindPending: pending (at the provider, or an open attempt) for longer
	// than PendingLimit; a listed status nobody listed (neither ok nor one
	// that plainly means failed) is read as pending.
	KindPending = "pending_too_long"
	// KindUndated: a transaction no attempt stands for, listed with a time
	// that cannot be read: it may be of the day.
	KindUndated = "unreadable_time"
)

// Entry is one transaction of the terminal's or the provider's list.
type Entry struct {
	Source        string    `json:"source"`
	TransactionID string    `json:"transactionId,omitempty"`
	Type          string    `json:"type"`
	Status        string    `json:"status"`
	Amount        int64     `json:"amount"` // cents, without the tip
	GiftAmount    int64     `json:"giftAmount"`
	Currency      string    `json:"currency,omitempty"`
	Created       time.Time `json:"created"`
	// CreatedAsListed is the list's createdAt when it cannot be read
	// (Created is then zero).
	CreatedAsListed string `json:"createdAtAsListed,omitempty"`
	CartID          string `json:"cartId,omitempty"`
	Serial          string `json:"serialNumber,omitempty"`
}

// approved: the list says the transaction was made (ok, in any case).
func (e Entry) approved() bool {
	ok, _ := payment.HistoryStatus(e.Status)
	return ok
}

// open: the list says neither that it was made nor that it failed
// (pending, or a status nobody listed): it may still be either.
func (e Entry) open() bool {
	_, open := payment.HistoryStatus(e.Status)
	return open
}

// kind is the kind the entry's type plainly names, in any case (debit,
// refund, reversal), "" when it names none.
func (e Entry) kind() string { return payment.HistoryKindOf(e.Type) }

// undated: its time could not be read.
func (e Entry) undated() bool { return e.CreatedAsListed != "" }

// Attempt is a journal attempt in the reconciliation.
type Attempt struct {
	UUID          string          `json:"idempotentUuid"`
	OrderID       string          `json:"orderId"`
	Kind          journal.Kind    `json:"kind"`
	Channel       journal.Channel `json:"channel"`
	State         journal.State   `json:"state"`
	Amount        int64           `json:"amount"` // charged (or asked), without the tip
	GiftAmount    int64           `json:"giftAmount"`
	TransactionID string          `json:"transactionId,omitempty"`
	// Currency is the order's (what the attempt was asked in).
	Currency string    `json:"currency,omitempty"`
	Created  time.Time `json:"created"`
}

// Line is one payment seen side by side: the journal's attempt and the
// transactions of each list matched to it (several for a link paid in
// parts). A transaction nothing matched has a line of its own.
type Line struct {
	Journal  *Attempt `json:"journal,omitempty"`
	Terminal []Entry  `json:"terminal"`
	Provider []Entry  `json:"provider"`
}

// Difference is one disagreement, with the action that fixes it.
type Difference struct {
	Kind          string        `json:"kind"`
	Source        string        `json:"source"` // the list that disagrees with the journal
	Message       string        `json:"message"`
	Action        string        `json:"action"`
	At            time.Time     `json:"at"`
	TransactionID string        `json:"transactionId,omitempty"`
	AttemptUUID   string        `json:"attemptUuid,omitempty"`
	OrderID       string        `json:"orderId,omitempty"`
	JournalAmount int64         `json:"journalAmount,omitempty"` // amount + tip, cents
	OtherAmount   int64         `json:"otherAmount,omitempty"`   // the list's amount + tip, cents
	JournalState  journal.State `json:"journalState,omitempty"`
	OtherStatus   string        `json:"otherStatus,omitempty"`
	// OtherType is the list's transaction type (debit, refund...).
	OtherType string `json:"otherType,omitempty"`
}

// Report is a day reconciled.
type Report struct {
	Day  string    `json:"day"`
	Zone string    `json:"zone"`
	From time.Time `json:"from"`
	To   time.Time `json:"to"`
	// TerminalError and ProviderError say why a column could not be read
	// ("" when it was, or was not asked for: see Read*).
	TerminalRead  bool         `json:"terminalRead"`
	TerminalError string       `json:"terminalError,omitempty"`
	ProviderRead  bool         `json:"providerRead"`
	ProviderError string       `json:"providerError,omitempty"`
	Lines         []Line       `json:"lines"`
	Differences   []Difference `json:"differences"`
	// NeedsStaff: a difference, or a column that could not be read.
	NeedsStaff bool `json:"needsStaff"`
}

// Day reconciles day (yyyy-MM-dd in cfg.Location; "" today).
func Day(ctx context.Context, db *journal.DB, src Sources, day string, cfg Config) (Report, error) {
	if cfg.Location == nil {
		cfg.Location = time.Local
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.PendingLimit <= 0 {
		cfg.PendingLimit = time.Hour
	}
	now := cfg.Now()
	start, err := dayStart(day, now, cfg.Location)
	if err != nil {
		return Report{}, err
	}
	end := start.AddDate(0, 0, 1)
	rep := Report{Day: start.Format(time.DateOnly), Zone: cfg.Location.String(), From: start, To: end,
		Lines: []Line{}, Differences: []Difference{}}
	from, to := start.Add(-Margin), end.Add(Margin)
	atts, err := db.ListAttempts(ctx, journal.AttemptFilter{Since: from, Until: to})
	if err != nil {
		return Report{}, fmt.Errorf("reconcile: %w", err)
	}
	// Oldest first: the report reads as the day went.
	slices.SortStableFunc(atts, func(a, b journal.Attempt) int { return a.CreatedAt.Compare(b.CreatedAt) })
	r := &run{cfg: cfg, now: now, start: start, end: end, atts: atts, rep: &rep,
		terminal: make([][]Entry, len(atts)), provider: make([][]Entry, len(atts)), currency: map[string]string{}}
	for _, a := range atts {
		if _, ok := r.currency[a.OrderID]; !ok {
			if ord, err := db.Order(ctx, a.OrderID); err == nil {
				r.currency[a.OrderID] = strings.ToUpper(ord.Currency)
			}
		}
	}
	var terminal, provider []Entry
	if src.Terminal != nil {
		list, err := src.Terminal(ctx, from, to)
		if err != nil {
			rep.TerminalError = err.Error()
		} else {
			rep.TerminalRead = true
			for _, e := range list {
				terminal = append(terminal, fromDevice(e))
			}
		}
	}
	if src.Provider != nil {
		list, err := src.Provider(ctx, from, to)
		if err != nil {
			rep.ProviderError = err.Error()
		} else {
			rep.ProviderRead = true
			for _, e := range list {
				provider = append(provider, fromProvider(e))
			}
		}
	}
	r.column(SourceTerminal, terminal, r.terminal)
	r.column(SourceProvider, provider, r.provider)
	r.attempts()
	rep.NeedsStaff = len(rep.Differences) > 0 || rep.TerminalError != "" || rep.ProviderError != ""
	return rep, nil
}

func dayStart(day string, now time.Time, loc *time.Location) (time.Time, error) {
	if day == "" {
		n := now.In(loc)
		return time.Date(n.Year(), n.Month(), n.Day(), 0, 0, 0, 0, loc), nil
	}
	t, err := time.ParseInLocation(time.DateOnly, day, loc)
	if err != nil {
		return time.Time{}, fmt.Errorf("reconcile: %q is not a day (yyyy-MM-dd)", day)
	}
	return t, nil
}

func fromDevice(e device.HistoryEntry) Entry {
	return dated(Entry{Source: SourceTerminal, TransactionID: e.TransactionID, Type: e.Type, Status: e.Status, Amount: e.Amount,
		GiftAmount: e.GiftAmount, Currency: e.CurrencyCode, CartID: e.CartID}, e.CreatedAt)
}

func fromProvider(e cloudapi.HistoryEntry) Entry {
	return dated(Entry{Source: SourceProvider, TransactionID: e.TransactionID, Type: e.Kind(), Status: e.Status, Amount: e.Amount,
		GiftAmount: e.GiftAmount, Currency: e.CurrencyCode, CartID: e.CartID, Serial: e.SerialNumber}, e.CreatedAt)
}

// dated sets the entry's time from the list's createdAt, in any common
// shape of ISO 8601; one that cannot be read is kept as listed, never
// taken for a time outside the day.
func dated(e Entry, createdAt string) Entry {
	t, err := device.ParseCreatedAt(createdAt)
	if err != nil {
		e.CreatedAsListed = createdAt
		if e.CreatedAsListed == "" {
			e.CreatedAsListed = "(none)"
		}
		return e
	}
	e.Created = t
	return e
}

type run struct {
	cfg                Config
	now, start, end    time.Time
	atts               []journal.Attempt
	rep                *Report
	terminal, provider [][]Entry // by attempt index
	// orphans are the lines of transactions no attempt stands for, by
	// transaction id: the provider's list names the terminal's
	// transactions too (a cloud terminal), on the same line.
	orphans map[string]int
	// currency is each order's currency, by order id.
	currency map[string]string
}

func (r *run) inDay(t time.Time) bool { return !t.Before(r.start) && t.Before(r.end) }

// covers says whether a list should know the attempt: the provider knows
// every channel's; the terminal, the ones it took itself.
func covers(source string, a journal.Attempt) bool {
	if source == SourceProvider {
		return true
	}
	return payment.TraitsOf(a.Channel).Terminal
}

// column matches a list's entries to the attempts; what matches nothing
// and was approved is charged_no_order, what stays pending too long is
// reported.
func (r *run) column(source string, entries []Entry, matched [][]Entry) {
	byTx := map[string]int{}
	for i, a := range r.atts {
		for id := range strings.SplitSeq(a.TransactionID, ",") {
			if id = strings.TrimSpace(id); id != "" {
				byTx[id] = i
			}
		}
	}
	taken := make([]bool, len(r.atts))
	for _, e := range entries {
		i, ok := byTx[e.TransactionID]
		if !ok || e.TransactionID == "" {
			i = r.bestGuess(source, e, taken)
			ok = i >= 0
		}
		if ok && covers(source, r.atts[i]) {
			matched[i] = append(matched[i], e)
			taken[i] = true
			continue
		}
		if !e.undated() && !r.inDay(e.Created) {
			continue
		}
		if source == SourceProvider && len(r.cfg.Serials) > 0 && e.Serial != "" && !slices.Contains(r.cfg.Serials, e.Serial) {
			continue // another till's
		}
		if i, ok := r.orphans[e.TransactionID]; ok && e.TransactionID != "" && source == SourceProvider {
			// The same transaction as the terminal's: one line, one difference.
			r.rep.Lines[i].Provider = append(r.rep.Lines[i].Provider, e)
			continue
		}
		if source == SourceTerminal && e.TransactionID != "" {
			if r.orphans == nil {
				r.orphans = map[string]int{}
			}
			r.orphans[e.TransactionID] = len(r.rep.Lines)
		}
		line := Line{Terminal: []Entry{}, Provider: []Entry{}}
		if source == SourceTerminal {
			line.Terminal = []Entry{e}
		} else {
			line.Provider = []Entry{e}
		}
		r.rep.Lines = append(r.rep.Lines, line)
		if e.undated() {
			r.undated(source, e)
			continue
		}
		r.pending(source, e, nil)
		if k := e.kind(); !e.approved() || (k != device.HistoryDebit && k != device.HistoryRefund) {
			continue
		}
		d := Difference{Kind: KindNoOrder, Source: source, At: e.Created, TransactionID: e.TransactionID, OrderID: e.CartID,
			OtherAmount: e.Amount + e.GiftAmount, OtherStatus: e.Status, OtherType: e.kind(),
			Message: fmt.Sprintf("The %s lists an approved %s of %s that no order of the journal knows.", source, e.kind(), money(e.Amount+e.GiftAmount, e.Currency))}
		switch {
		case e.kind() == device.HistoryRefund:
			d.Action = "Find the order it gave back; if none, the money went back to a card without an order: tell the manager."
		case e.Serial == "" && source == SourceProvider:
			d.Action = "An online payment: find its order (its cartId), or refund it by API from staff mode."
		case r.now.Sub(e.Created) < ReversalWindow:
			d.Action = "Find its order, or reverse it from staff mode: the day's check or the terminal's history (possible until " + e.Created.Add(ReversalWindow).In(r.cfg.Location).Format("02/01 15:04") + ")."
		default:
			d.Action = "Find its order, or refund it by API from staff mode (a reversal is no longer possible after 16 hours)."
		}
		r.rep.Differences = append(r.rep.Differences, d)
	}
}

// bestGuess is the attempt an entry without a known transaction id stands
// for: same kind (or, failing one, a type that names no kind), amount and
// cart, created near it, not yet taken; -1 when none.
func (r *run) bestGuess(source string, e Entry, taken []bool) int {
	if e.CartID == "" {
		return -1
	}
	if i := r.guess(source, e, taken, e.kind()); i >= 0 || e.kind() != "" {
		return i
	}
	for _, k := range []journal.Kind{journal.KindDebit, journal.KindRefund, journal.KindReversal} {
		if i := r.guess(source, e, taken, string(k)); i >= 0 {
			return i
		}
	}
	return -1
}

// guess is bestGuess among the attempts of one kind.
func (r *run) guess(source string, e Entry, taken []bool, kind string) int {
	for i, a := range r.atts {
		if taken[i] || !covers(source, a) || string(a.Kind) != kind || a.Paid() != e.Amount {
			continue
		}
		if e.CartID != a.OrderID && e.CartID != payment.LinkCartID(a.OrderID, a.UUID) {
			continue
		}
		if e.Created.Before(a.CreatedAt.Add(-Margin)) || e.Created.After(r.lastMoment(a).Add(Margin)) {
			continue
		}
		// An approved entry stands for an approved (or unknown) attempt
		// rather than a declined one of the same amount; an entry neither
		// approved nor failed may stand for either.
		if !e.open() && e.approved() != (a.State == journal.StateApproved || a.State == journal.StateUnknown) {
			continue
		}
		return i
	}
	return -1
}

// lastMoment is the latest a transaction of the attempt can be made: its
// outcome, or now while it runs.
func (r *run) lastMoment(a journal.Attempt) time.Time {
	if !a.FinalAt.IsZero() {
		return a.FinalAt
	}
	return r.now
}

// attempts writes the day's attempts' lines and what each list says
// against them.
func (r *run) attempts() {
	for i, a := range r.atts {
		if !r.inDay(a.CreatedAt) {
			continue
		}
		ja := &Attempt{UUID: a.UUID, OrderID: a.OrderID, Kind: a.Kind, Channel: a.Channel, State: a.State,
			Amount: a.Paid(), GiftAmount: a.Gift(), TransactionID: a.TransactionID, Currency: r.currency[a.OrderID], Created: a.CreatedAt}
		line := Line{Journal: ja, Terminal: orEmpty(r.terminal[i]), Provider: orEmpty(r.provider[i])}
		r.rep.Lines = append(r.rep.Lines, line)
		if a.State.Open() && !payment.TraitsOf(a.Channel).LongLived && r.now.Sub(a.CreatedAt) > r.cfg.PendingLimit {
			r.rep.Differences = append(r.rep.Differences, Difference{Kind: KindPending, Source: SourceJournal, At: a.CreatedAt,
				AttemptUUID: a.UUID, OrderID: a.OrderID, JournalAmount: a.Total(), JournalState: a.State,
				Message: fmt.Sprintf("The %s of %s started at %s has had no outcome for more than %s.", a.Kind, money(a.Total(), ""), a.CreatedAt.In(r.cfg.Location).Format("15:04"), r.cfg.PendingLimit),
				Action:  "Restart the kiosk so that it resumes the attempt; if it stays open, settle it from staff mode (Payments, needs attention)."})
		}
		if r.rep.TerminalRead && covers(SourceTerminal, a) {
			r.against(SourceTerminal, a, r.terminal[i])
		}
		if r.rep.ProviderRead {
			r.against(SourceProvider, a, r.provider[i])
		}
	}
}

func orEmpty(e []Entry) []Entry {
	if e == nil {
		return []Entry{}
	}
	return e
}

// against compares an attempt with what one list matched to it.
func (r *run) against(source string, a journal.Attempt, entries []Entry) {
	var ok, pending bool
	var amount, gift int64
	ordered := r.currency[a.OrderID]
	currency, other := ordered, ""
	for _, e := range entries {
		r.pending(source, e, &a)
		switch {
		case e.approved():
			ok = true
			amount += e.Amount
			gift += e.GiftAmount
			if c := strings.ToUpper(e.Currency); c != "" && ordered != "" && c != ordered {
				other = c
			}
		case e.open():
			pending = true
		}
		if currency == "" {
			currency = e.Currency
		}
	}
	base := Difference{Source: source, At: a.CreatedAt, TransactionID: a.TransactionID, AttemptUUID: a.UUID, OrderID: a.OrderID,
		JournalAmount: a.Total(), OtherAmount: amount + gift, JournalState: a.State}
	if len(entries) > 0 {
		base.OtherStatus = entries[len(entries)-1].Status
	}
	approved := a.State == journal.StateApproved
	switch {
	case approved && len(entries) == 0:
		d := base
		d.Kind = KindUnknownToTerminal
		if source == SourceProvider {
			d.Kind = KindUnknownToProvider
		}
		d.Message = fmt.Sprintf("The journal holds an approved %s of %s (order %s) that the %s does not list.", a.Kind, money(a.Total(), currency), a.OrderID, source)
		d.Action = "Look the transaction up in the provider's back office: if it was never made, the order was not paid: collect it again or cancel it."
		r.rep.Differences = append(r.rep.Differences, d)
	case approved && !ok && !pending:
		d := base
		d.Kind = KindState
		d.Message = fmt.Sprintf("The journal holds the %s of %s as approved, and the %s lists it as %s.", a.Kind, money(a.Total(), currency), source, base.OtherStatus)
		d.Action = "The customer was most likely not charged: check the provider's back office, then collect the order again or cancel it."
		r.rep.Differences = append(r.rep.Differences, d)
	case !approved && ok:
		d := base
		d.Kind = KindState
		d.Message = fmt.Sprintf("The %s approved %s, and the journal says %s: the customer was charged.", source, money(amount+gift, currency), a.State)
		d.Action = "Settle the attempt as paid from staff mode (Payments, needs attention), or give the money back: reverse within 16 hours, refund by API after."
		if a.State != journal.StateUnknown {
			d.Action = "The customer was charged for an order the journal holds unpaid: give the money back (reverse within 16 hours, refund by API after) or have the order made."
		}
		r.rep.Differences = append(r.rep.Differences, d)
	case ok && other != "":
		d := base
		d.Kind = KindCurrency
		d.Message = fmt.Sprintf("The %s lists the %s of order %s in %s (%s), and the order is in %s.", source, a.Kind, a.OrderID, other,
			money(amount+gift, other), ordered)
		d.Action = "The customer was charged in another currency than the order's: check the terminal's merchant profile and the provider's back office, then give the money back and collect the order again in its currency."
		r.rep.Differences = append(r.rep.Differences, d)
	case approved && ok && (amount != a.Paid() || (a.Charged && gift != a.Gift())):
		d := base
		d.Kind = KindAmount
		d.Message = fmt.Sprintf("The same payment is of %s in the %s's list and of %s in the journal.", money(amount+gift, currency), source, money(a.Total(), currency))
		d.Action = "Check the receipt and the provider's back office; refund by API what was charged too much, collect what is missing."
		r.rep.Differences = append(r.rep.Differences, d)
	}
}

// pending reports a transaction still pending (or under a status nobody
// listed) long after it was made.
func (r *run) pending(source string, e Entry, a *journal.Attempt) {
	if !e.open() || r.now.Sub(e.Created) <= r.cfg.PendingLimit || !r.inDay(e.Created) {
		return
	}
	status := e.Status
	if strings.TrimSpace(status) == "" {
		status = "without a status"
	}
	d := Difference{Kind: KindPending, Source: source, At: e.Created, TransactionID: e.TransactionID, OrderID: e.CartID,
		OtherAmount: e.Amount + e.GiftAmount, OtherStatus: e.Status,
		Message: fmt.Sprintf("The %s lists the %s %s of %s as %s since %s.", source, e.Type, e.TransactionID, money(e.Amount+e.GiftAmount, e.Currency), status, e.Created.In(r.cfg.Location).Format("15:04")),
		Action:  "Look it up in the provider's back office; the journal's attempt follows it by itself while the kiosk runs."}
	if a != nil {
		d.AttemptUUID, d.OrderID, d.JournalAmount, d.JournalState = a.UUID, a.OrderID, a.Total(), a.State
	}
	r.rep.Differences = append(r.rep.Differences, d)
}

// undated reports a transaction no attempt stands for whose time cannot be
// read: it may be of the day, and it is never left out for it.
func (r *run) undated(source string, e Entry) {
	r.rep.Differences = append(r.rep.Differences, Difference{Kind: KindUndated, Source: source, At: r.start,
		TransactionID: e.TransactionID, OrderID: e.CartID, OtherAmount: e.Amount + e.GiftAmount, OtherStatus: e.Status, OtherType: e.Type,
		Message: fmt.Sprintf("The %s lists the %s %s of %s (%s) that no order of the journal knows, with a time that cannot be read (%q): it may be of this day.",
			source, e.Type, e.TransactionID, money(e.Amount+e.GiftAmount, e.Currency), e.Status, e.CreatedAsListed),
		Action: "Look it up in the provider's back office: if it was made this day, find its order, or give the money back."})
}

// money writes cents as an amount ("12.50 EUR").
func money(cents int64, currency string) string {
	s := fmt.Sprintf("%d.%02d", cents/100, abs(cents%100))
	if currency != "" {
		s += " " + currency
	}
	return s
}

func abs(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

// ErrNoSource is returned by the command line when neither outside list
// can be read: a reconciliation of the journal with nothing.
var ErrNoSource = errors.New("reconcile: neither the terminal's history nor the provider's Webservices can be read")

// FromWebservices reads the provider's list over [from, to) through the
// Webservices batch, every page, by whole days (payment.CompanyList).
func FromWebservices(ws *cloudapi.Webservices, now func() time.Time) func(ctx context.Context, from, to time.Time) ([]cloudapi.HistoryEntry, error) {
	return func(ctx context.Context, from, to time.Time) ([]cloudapi.HistoryEntry, error) {
		return payment.CompanyList(ctx, ws.BatchAll, cloudapi.BatchRequest{}, from, to, now())
	}
}
