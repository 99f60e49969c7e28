package staff

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/comptoir-pos/comptoir/backend/device"
	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/payment"
)

// Filter selects journal attempts for Attempts. Zero fields do not filter.
type Filter struct {
	Today          bool   `json:"today"`
	NeedsAttention bool   `json:"needsAttention"` // unknown, or its order needs attention
	OrderNumber    string `json:"orderNumber"`    // the number the customer was given ("42"), or the order id
	Amount         int64  `json:"amount"`         // cents, the attempt's amount (tip excluded)
	Limit          int    `json:"limit"`          // default 50, at most 500
	Offset         int    `json:"offset"`
}

// AttemptView is a journal attempt as staff see it.
type AttemptView struct {
	UUID        string              `json:"idempotentUuid"`
	OrderID     string              `json:"orderId"`
	OrderNumber string              `json:"orderNumber,omitempty"`
	OrderStatus journal.OrderStatus `json:"orderStatus,omitempty"`
	Currency    string              `json:"currency,omitempty"`
	Kind        journal.Kind        `json:"kind"`
	// Channel is how the attempt reached the provider (its name, for
	// words only); Traits what staff may do with it and how it is shown.
	Channel       journal.Channel `json:"channel"`
	Traits        payment.Traits  `json:"traits"`
	Policy        journal.Policy  `json:"policy"`
	State         journal.State   `json:"state"`
	Amount        int64           `json:"amount"`
	GiftAmount    int64           `json:"giftAmount"` // the terminal's, when it answered
	TransactionID string          `json:"transactionId,omitempty"`
	Scheme        string          `json:"scheme,omitempty"`
	Error         string          `json:"error,omitempty"`
	SendCount     int             `json:"sendCount"`
	CreatedAt     time.Time       `json:"createdAt"`
	FirstSentAt   time.Time       `json:"firstSentAt,omitzero"`
	FinalAt       time.Time       `json:"finalAt,omitzero"`
	// NeedsAttention: the outcome is unknown, or the order is flagged.
	NeedsAttention bool `json:"needsAttention"`
	// Flag says how the terminal's approval disagreed with what was asked
	// (another amount, currency or type): its money is taken but pays
	// nothing until staff accept it. OrderAttention is why the order was
	// set aside for staff. CanAccept: the order needs attention for a flag
	// only (no outcome unknown, nothing still running), so staff can
	// accept it (AcceptOrder) once they have checked.
	Flag           string `json:"flag,omitempty"`
	OrderAttention string `json:"orderAttention,omitempty"`
	CanAccept      bool   `json:"canAccept"`
	// Witness is the provider's record's word on an approval taken over
	// the LAN (awaiting, confirmed, unconfirmed: paid on the terminal's
	// word, denied: the provider does not show it, accepted by staff);
	// "" when none was asked for.
	Witness journal.Witness `json:"witness,omitempty"`
	// ChargedAmount is what the terminal says it charged (or gave back),
	// beside Amount, what was asked; 0 until it said so.
	ChargedAmount int64 `json:"chargedAmount,omitempty"`
	// InitialTransactionID: of a reversal, the transaction it reverses.
	InitialTransactionID string `json:"initialTransactionId,omitempty"`
	// Reversal is a debit's reversal, when one was made or is under way.
	Reversal *ReversalView `json:"reversal,omitempty"`
	// ReversalTransactionID is set once the debit is reversed.
	ReversalTransactionID string `json:"reversalTransactionId,omitempty"`
	// CanReverse and RefundableLeft are the money actions still possible:
	// a reversal of this debit (approved, with a transaction, not reversed
	// or being reversed, and its whole amount still givable back), and what
	// the order can still be refunded (0: no refund). The journal checks
	// the same rules again when an action is asked.
	CanReverse     bool  `json:"canReverse"`
	RefundableLeft int64 `json:"refundableLeft"`
	// A payment link: its address, the provider's word on its cart
	// (authorised: paid, to capture), what is paid into it so far while it
	// runs, and whether it can be cancelled (it runs) or captured.
	Link           string `json:"link,omitempty"`
	ProviderStatus string `json:"providerStatus,omitempty"`
	LinkPaid       int64  `json:"linkPaid,omitempty"`
	CanCancelLink  bool   `json:"canCancelLink"`
	CanCapture     bool   `json:"canCapture"`
	// A refund by API (channel webservices): ProviderStatus is the
	// provider's word while it runs (pending: more checks; waiting: a
	// manager approves it), and ApprovalURL where the manager does.
	ApprovalURL string `json:"approvalUrl,omitempty"`
	// APIRefund is a debit's refund by API, when one was asked; and
	// APIRefundable what can still be refunded by API (0: not possible:
	// the Webservices are not set up, the debit has no provider
	// transaction, or it already has a refund by API or a reversal).
	APIRefund     *ReversalView `json:"apiRefund,omitempty"`
	APIRefundable int64         `json:"apiRefundable"`
	// GivenBackElsewhereSeen: money given back outside Comptoir (the
	// provider's back office, the terminal's keypad) is read from the
	// provider before any give-back and counts in RefundableLeft; false
	// when the Webservices are not set up, and such money is not seen.
	GivenBackElsewhereSeen bool `json:"givenBackElsewhereSeen"`
}

// ReversalView is a debit's reversal as staff see it.
type ReversalView struct {
	UUID          string        `json:"uuid"`
	State         journal.State `json:"state"`
	TransactionID string        `json:"transactionId,omitempty"`
	Message       string        `json:"message,omitempty"`
}

// AttemptPage is one page of Attempts.
type AttemptPage struct {
	Attempts []AttemptView `json:"attempts"`
	Total    int           `json:"total"` // matching attempts, all pages
	Limit    int           `json:"limit"`
	Offset   int           `json:"offset"`
}

// orderNumber reads the number the kiosk gave the customer from the order's
// Data. (kiosk keeps that shape unexported: see the report.)
func orderNumber(o journal.Order) string {
	var d struct {
		Number string `json:"number"`
	}
	if len(o.Data) > 0 && json.Unmarshal(o.Data, &d) == nil {
		return d.Number
	}
	return ""
}

type orderCache map[string]*journal.Order

func (s *Staff) order(ctx context.Context, cache orderCache, id string) *journal.Order {
	if cache != nil {
		if o, ok := cache[id]; ok {
			return o
		}
	}
	o, err := s.cfg.Journal.Order(ctx, id)
	var p *journal.Order
	if err == nil {
		p = &o
	}
	if cache != nil {
		cache[id] = p
	}
	return p
}

func (s *Staff) view(ctx context.Context, a journal.Attempt, cache orderCache) AttemptView {
	v := AttemptView{
		UUID: a.UUID, OrderID: a.OrderID, Kind: a.Kind, Channel: a.Channel, Traits: payment.TraitsOf(a.Channel), Policy: a.Policy, State: a.State,
		Amount: a.Amount, GiftAmount: a.Gift(), TransactionID: a.TransactionID, Error: a.Error,
		SendCount: a.SendCount, CreatedAt: a.CreatedAt, FirstSentAt: a.FirstSentAt, FinalAt: a.FinalAt,
		InitialTransactionID: a.InitialTransactionID,
	}
	if a.Charged {
		v.ChargedAmount = a.ChargedAmount
	}
	if tx, ok := payment.ChargeOf(a); ok {
		v.Scheme = tx.Scheme
		if !a.Charged {
			v.GiftAmount = tx.GiftAmount
		}
	}
	v.Flag, v.Witness = a.Flag, a.Witness
	if w := payment.WitnessFlag(a); w != "" {
		v.Flag = strings.TrimPrefix(v.Flag+"; "+w, "; ")
	}
	if o := s.order(ctx, cache, a.OrderID); o != nil {
		v.OrderNumber, v.OrderStatus, v.Currency = orderNumber(*o), o.Status, o.Currency
		v.OrderAttention = o.Attention
	}
	v.NeedsAttention = a.State == journal.StateUnknown || v.OrderStatus == journal.OrderNeedsAttention
	v.CanAccept = v.OrderStatus == journal.OrderNeedsAttention && (a.Flag != "" || a.Witness == journal.WitnessDenied || v.OrderAttention != "") &&
		a.State.Final() && a.State != journal.StateUnknown
	if v.Traits.Phone {
		v.Link, v.ProviderStatus = a.ProviderID, a.ProviderStatus
		if s.cfg.Links != nil {
			if h, ok := s.cfg.Links.Active(a.UUID); ok {
				run := h.View()
				// The journal speaks first: an attempt it holds final is over,
				// though its run may not have said so yet.
				v.LinkPaid, v.CanCancelLink = run.Paid, !run.Final() && a.State.Open()
			}
		}
		v.CanCapture = s.cfg.Links != nil && a.State == journal.StateApproved && a.ProviderStatus == journal.ProviderAuthorised
	}
	if v.Traits.WithoutCard {
		v.ProviderStatus = a.ProviderStatus
		if a.State.Open() || a.State == journal.StateUnknown {
			v.ApprovalURL = s.approvalURL(ctx, a)
		}
	}
	return v
}

// approvalURL is the manager's approval link of a refund by API that waits
// for one, from the provider's answer in the attempt's audit trail.
func (s *Staff) approvalURL(ctx context.Context, a journal.Attempt) string {
	raws := [][]byte{a.Response}
	if evs, err := s.cfg.Journal.Events(ctx, a.UUID); err == nil {
		for _, e := range evs {
			raws = append(raws, e.RawResponse)
		}
	}
	for _, raw := range raws {
		var ans struct {
			ApprovalURL string `json:"approval_url"`
		}
		if json.Unmarshal(raw, &ans) == nil && ans.ApprovalURL != "" {
			return ans.ApprovalURL
		}
	}
	return ""
}

// dayBounds is [start of day, start of next day) in the configured zone.
// day is yyyy-MM-dd; "" is today.
func (s *Staff) dayBounds(day string) (time.Time, time.Time, error) {
	var start time.Time
	if day == "" {
		n := s.now().In(s.cfg.Location)
		start = time.Date(n.Year(), n.Month(), n.Day(), 0, 0, 0, 0, s.cfg.Location)
	} else {
		d, err := time.ParseInLocation(time.DateOnly, day, s.cfg.Location)
		if err != nil {
			return time.Time{}, time.Time{}, errorf(EINVALID, "The day %q is not a date like 2026-05-01.", day)
		}
		start = d
	}
	return start, start.AddDate(0, 0, 1), nil
}

// Attempts lists the journal's attempts, newest first.
func (s *Staff) Attempts(ctx context.Context, sessionID string, f Filter) (AttemptPage, error) {
	if _, err := s.session(sessionID); err != nil {
		return AttemptPage{}, err
	}
	if f.Limit <= 0 {
		f.Limit = 50
	}
	if f.Limit > 500 || f.Offset < 0 || f.Amount < 0 {
		return AttemptPage{}, errorf(EINVALID, "A page shows 1 to 500 payments, from a position of zero or more; an amount is zero or more.")
	}
	jf := journal.AttemptFilter{}
	if f.Today {
		start, end, _ := s.dayBounds("")
		jf.Since, jf.Until = start, end
	}
	num := strings.TrimSpace(f.OrderNumber)
	if strings.Contains(num, "-") {
		jf.OrderID, num = num, ""
	}
	// The journal filters by order and time; amount, order number and
	// attention are filtered here (see the report: journal filters wanted).
	all, err := s.cfg.Journal.ListAttempts(ctx, jf)
	if err != nil {
		return AttemptPage{}, journalErr(err, "Reading the payments")
	}
	cache := orderCache{}
	var match []AttemptView
	for _, a := range all {
		if f.Amount > 0 && a.Amount != f.Amount {
			continue
		}
		v := s.view(ctx, a, cache)
		if num != "" && v.OrderNumber != num {
			continue
		}
		if f.NeedsAttention && !v.NeedsAttention {
			continue
		}
		match = append(match, v)
	}
	page := AttemptPage{Attempts: []AttemptView{}, Total: len(match), Limit: f.Limit, Offset: f.Offset}
	if f.Offset < len(match) {
		page.Attempts = match[f.Offset:min(f.Offset+f.Limit, len(match))]
	}
	for i := range page.Attempts {
		if err := s.withActions(ctx, &page.Attempts[i]); err != nil {
			return AttemptPage{}, err
		}
	}
	return page, nil
}

// withActions fills in an approved debit's reversal and the money actions
// still possible on it.
func (s *Staff) withActions(ctx context.Context, v *AttemptView) error {
	if v.Kind != journal.KindDebit || v.State != journal.StateApproved {
		return nil
	}
	atts, err := s.cfg.Journal.AttemptsForOrder(ctx, v.OrderID)
	if err != nil {
		return journalErr(err, "Reading the order's payments")
	}
	var debit journal.Attempt
	for _, a := range atts {
		switch {
		case a.UUID == v.UUID:
			debit = a
		case a.Kind == journal.KindReversal && v.TransactionID != "" && a.InitialTransactionID == v.TransactionID:
			// The latest counts: a failed reversal may be followed by another.
			v.Reversal = &ReversalView{UUID: a.UUID, State: a.State, TransactionID: a.TransactionID, Message: a.Error}
		case payment.TraitsOf(a.Channel).WithoutCard && v.TransactionID != "" && a.InitialTransactionID == v.TransactionID:
			v.APIRefund = &ReversalView{UUID: a.UUID, State: a.State, TransactionID: a.TransactionID, Message: a.Error}
		}
	}
	if r := v.Reversal; r != nil && r.State == journal.StateApproved {
		v.ReversalTransactionID = r.TransactionID
	}
	m, err := s.cfg.Journal.OrderMoney(ctx, v.OrderID)
	if err != nil {
		return journalErr(err, "Reading the order's money")
	}
	v.RefundableLeft = m.Givable()
	v.GivenBackElsewhereSeen = s.SeesGivenBackElsewhere()
	live := v.Reversal != nil && v.Reversal.State != journal.StateFailed && v.Reversal.State != journal.StateDeclined
	// A reversal goes to the terminal that took the debit, through the
	// channel this process runs: the terminal must be the one in use.
	v.CanReverse = debit.TransactionID != "" && payment.TraitsOf(debit.Channel).Reversible && !live &&
		m.Givable() >= debit.Total() && s.cfg.Payments != nil && s.cfg.Payments.TerminalID() == debit.Terminal
	// The provider refunds a transaction once; after a reversal, nothing.
	refunded := v.APIRefund != nil && v.APIRefund.State != journal.StateFailed && v.APIRefund.State != journal.StateDeclined
	if s.cfg.Refunds != nil && debit.TransactionID != "" && !live && !refunded {
		v.APIRefundable = min(m.Givable(), debit.Total())
	}
	return nil
}

type timedReversal struct {
	rec reversalRecord
	at  time.Time
}

// parseReversal reads back the record of a reversal note.
func parseReversal(text string) (reversalRecord, bool) {
	rest, ok := strings.CutPrefix(text, reversalNotePrefix)
	if !ok {
		return reversalRecord{}, false
	}
	var rec reversalRecord
	if err := json.NewDecoder(strings.NewReader(rest)).Decode(&rec); err != nil || rec.ReversalTransactionID == "" {
		return reversalRecord{}, false
	}
	return rec, true
}

// HistoryFilter selects the terminal's history for History.
type HistoryFilter struct {
	Date      string `json:"date"`      // yyyy-MM-dd, UTC as the terminal counts; "" with no times: the last 30 days
	StartTime string `json:"startTime"` // hh:mm:ss
	EndTime   string `json:"endTime"`   // hh:mm:ss, exclusive
	Limit     int    `json:"limit"`     // default 50, at most 200
	Offset    int    `json:"offset"`
}

// HistoryEntry is a transaction of the terminal's history, with what the
// journal knows of it.
type HistoryEntry struct {
	device.HistoryEntry
	Created time.Time `json:"created,omitzero"`
	// InJournal: an attempt of the journal is this transaction.
	InJournal    bool          `json:"inJournal"`
	AttemptUUID  string        `json:"attemptUuid,omitempty"`
	AttemptState journal.State `json:"attemptState,omitempty"`
	OrderID      string        `json:"orderId,omitempty"`
}

// HistoryPage is one page of the terminal's history.
type HistoryPage struct {
	Entries []HistoryEntry `json:"entries"`
	Total   int            `json:"total"`
	Limit   int            `json:"limit"`
	Offset  int            `json:"offset"`
}

func (s *Staff) historyEntry(e device.HistoryEntry) HistoryEntry {
	h := HistoryEntry{HistoryEntry: e}
	h.Created, _ = e.Created()
	return h
}

// History is one page of the terminal's own history (POST /transactions),
// each entry marked with the journal attempt it is, if any.
func (s *Staff) History(ctx context.Context, sessionID string, f HistoryFilter) (HistoryPage, error) {
	if _, err := s.session(sessionID); err != nil {
		return HistoryPage{}, err
	}
	if f.Limit == 0 {
		f.Limit = 50
	}
	if f.Limit < 0 || f.Limit > device.MaxHistoryPage || f.Offset < 0 {
		return HistoryPage{}, errorf(EINVALID, "The terminal shows 1 to 200 transactions a page, from a position of zero or more.")
	}
	q := device.HistoryQuery{StartTime: f.StartTime, EndTime: f.EndTime, Limit: f.Limit, Offset: f.Offset}
	if f.Date != "" {
		d, err := time.Parse(time.DateOnly, f.Date)
		if err != nil {
			return HistoryPage{}, errorf(EINVALID, "The day %q is not a date like 2026-05-01.", f.Date)
		}
		q.StartDate, q.EndDate = f.Date, f.Date
		if f.EndTime == "" {
			q.EndDate = d.AddDate(0, 0, 1).Format(time.DateOnly)
		}
	}
	for _, t := range []string{f.StartTime, f.EndTime} {
		if _, err := time.Parse(time.TimeOnly, t); t != "" && err != nil {
			return HistoryPage{}, errorf(EINVALID, "Times are written hh:mm:ss, like 14:05:00.")
		}
	}
	tctx, cancel := s.terminalCtx(ctx)
	defer cancel()
	list, err := s.cfg.Terminal.History(tctx, q)
	if err != nil {
		return HistoryPage{}, historyErr(err)
	}
	page := HistoryPage{Entries: make([]HistoryEntry, 0, len(list.Entries)), Total: list.Total, Limit: list.Limit, Offset: list.Offset}
	for _, e := range list.Entries {
		page.Entries = append(page.Entries, s.historyEntry(e))
	}
	s.markJournal(ctx, page.Entries)
	return page, nil
}

// historyErr says why the history could not be read.
func historyErr(err error) error {
	if errors.Is(err, device.ErrHistoryTooLong) {
		return errorf(ETERMINAL, "The terminal's history is too long to read in one go: choose a shorter period.")
	}
	if errors.Is(err, device.ErrHistoryPage) {
		return errorf(ETERMINAL, "The terminal's history answer was not believed (more transactions than asked, or a page too large): check the terminal.")
	}
	return terminalErr(err, func(device.Code) string {
		return "The terminal refused to show its history: " + device.MessageOf(err) + "."
	}, "The terminal's history could not be read")
}

// markJournal finds the journal attempt of each entry: by transactionId,
// else by cartId, kind and amount.
func (s *Staff) markJournal(ctx context.Context, entries []HistoryEntry) {
	var from, to time.Time
	for _, e := range entries {
		if e.Created.IsZero() {
			continue
		}
		if from.IsZero() || e.Created.Before(from) {
			from = e.Created
		}
		if e.Created.After(to) {
			to = e.Created
		}
	}
	if from.IsZero() {
		return
	}
	atts, err := s.cfg.Journal.ListAttempts(ctx, journal.AttemptFilter{Since: from.Add(-time.Hour), Until: to.Add(time.Hour)})
	if err != nil {
		s.log.Warn("staff: journal attempts for the history", "err", err)
		return
	}
	m := newMatcher(atts)
	for i := range entries {
		if a := m.match(entries[i].HistoryEntry); a != nil {
			entries[i].InJournal, entries[i].AttemptUUID, entries[i].AttemptState, entries[i].OrderID = true, a.UUID, a.State, a.OrderID
		}
	}
}

// historyRange reads every page of the terminal's history in [from, to)
// (to zero: open), de-duplicated by transactionId.
func (s *Staff) historyRange(ctx context.Context, from, to time.Time) ([]device.HistoryEntry, error) {
	entries, err := device.ReadHistory(ctx, s.cfg.Terminal, from, to, s.pageSize, s.cfg.TerminalTimeout)
	if err != nil {
		return nil, historyErr(err)
	}
	return entries, nil
}

// matcher pairs history entries with journal attempts.
type matcher struct {
	atts    []journal.Attempt
	byTx    map[string]int
	matched map[int]bool
}

// onTerminal: the attempt went to a terminal, whose history lists it (a
// payment link's is the provider's cart, never on a terminal).
func onTerminal(a journal.Attempt) bool {
	return payment.TraitsOf(a.Channel).Terminal
}

func newMatcher(atts []journal.Attempt) *matcher {
	m := &matcher{atts: atts, byTx: map[string]int{}, matched: map[int]bool{}}
	for i, a := range atts {
		if a.TransactionID != "" && onTerminal(a) {
			m.byTx[a.TransactionID] = i
		}
	}
	return m
}

// match returns the attempt that is this entry: by transactionId, else (for
// attempts the terminal never answered: unknown, resolved by hand) by
// cartId, kind and amount. Each attempt matches once.
func (m *matcher) match(e device.HistoryEntry) *journal.Attempt {
	kind := journal.Kind(e.Type)
	if kind != journal.KindDebit && kind != journal.KindRefund && kind != journal.KindReversal {
		return nil
	}
	if i, ok := m.byTx[e.TransactionID]; ok && e.TransactionID != "" {
		m.matched[i] = true
		return &m.atts[i]
	}
	if kind == journal.KindReversal {
		return nil // a reversal is matched by its transaction only
	}
	if e.CartID == "" {
		return nil
	}
	for i, a := range m.atts {
		if m.matched[i] || !onTerminal(a) || a.TransactionID != "" || a.OrderID != e.CartID || a.Kind != kind || a.Amount != e.Amount {
			continue
		}
		// A declined entry never stands for an attempt the journal holds
		// as approved, nor the other way round, when another fits better.
		if (e.Status == device.StatusOK) != (a.State == journal.StateApproved || a.State == journal.StateUnknown) {
			continue
		}
		m.matched[i] = true
		return &m.atts[i]
	}
	return nil
}

// Difference kinds.
const (
	DiffTerminalOnly    = "terminal_only"    // a charge the journal does not know
	DiffJournalOnly     = "journal_only"     // an approved attempt the terminal does not list
	DiffAmount          = "amount_mismatch"  // same transaction, different amounts
	DiffState           = "state_mismatch"   // the terminal and the journal disagree on the outcome
	DiffReversalUnknown = "reversal_unknown" // a reversal staff did not make here
)

// Difference is one disagreement between the journal and the terminal.
type Difference struct {
	Kind           string        `json:"kind"`
	Message        string        `json:"message"`
	At             time.Time     `json:"at"`
	TransactionID  string        `json:"transactionId,omitempty"`
	AttemptUUID    string        `json:"attemptUuid,omitempty"`
	OrderID        string        `json:"orderId,omitempty"`
	JournalAmount  int64         `json:"journalAmount,omitempty"`  // amount + gift, cents
	TerminalAmount int64         `json:"terminalAmount,omitempty"` // amount + gift, cents
	JournalState   journal.State `json:"journalState,omitempty"`
	TerminalStatus string        `json:"terminalStatus,omitempty"`
}

// Comparison is a day of the journal against a day of the terminal.
type Comparison struct {
	Day         string         `json:"day"`
	From        time.Time      `json:"from"`
	To          time.Time      `json:"to"`
	Matched     int            `json:"matched"` // history entries paired with an attempt
	Terminal    []HistoryEntry `json:"terminal"`
	Journal     []AttemptView  `json:"journal"`
	Differences []Difference   `json:"differences"`
}

// margin widens both sides of a comparison, so that an attempt begun just
// before midnight still finds its transaction (and a clock a little off).
const margin = 30 * time.Minute

// dayData is what a comparison and a report read.
type dayData struct {
	start, end time.Time
	atts       []journal.Attempt // created in [start-margin, end+margin)
	entries    []device.HistoryEntry
	reversals  []timedReversal
}

func (s *Staff) readDay(ctx context.Context, day string) (dayData, error) {
	start, end, err := s.dayBounds(day)
	if err != nil {
		return dayData{}, err
	}
	d := dayData{start: start, end: end}
	d.atts, err = s.cfg.Journal.ListAttempts(ctx, journal.AttemptFilter{Since: start.Add(-margin), Until: end.Add(margin)})
	if err != nil {
		return dayData{}, journalErr(err, "Reading the payments")
	}
	d.entries, err = s.historyRange(ctx, start.Add(-margin), end.Add(margin))
	if err != nil {
		return dayData{}, err
	}
	// Reversals are attempts. Earlier versions recorded a reversal of a
	// transaction the journal did not know, or one whose note its attempt
	// refused, as an audit line: those are read too, only the day's,
	// through the audit table's (action, at) index, so the cost does not
	// grow with the history.
	journaled := map[string]bool{}
	for _, a := range d.atts {
		if a.Kind == journal.KindReversal && a.TransactionID != "" {
			journaled[a.TransactionID] = true
		}
	}
	for _, action := range reversalActions {
		list, err := s.entries(ctx, journal.AuditQuery{Action: action, Since: start.Add(-margin), Until: end.Add(margin)})
		if err != nil {
			return dayData{}, journalErr(err, "Reading the reversals")
		}
		for _, e := range list {
			if rec, ok := parseReversal(e.Detail); ok && !journaled[rec.ReversalTransactionID] {
				d.reversals = append(d.reversals, timedReversal{rec, e.At})
			}
		}
	}
	d.reversals = uniqueReversals(d.reversals)
	return d, nil
}

// reversalActions are the audit actions whose lines may record a reversal
// made here by an earlier version: its ReverseTransaction's own, and the
// note of a reversal that its attempt could not take (see note).
var reversalActions = []string{actionReversal, actionAttemptNote}

// uniqueReversals keeps one record per reversal transaction, the first.
func uniqueReversals(rs []timedReversal) []timedReversal {
	seen := make(map[string]bool, len(rs))
	out := rs[:0]
	for _, r := range rs {
		if seen[r.rec.ReversalTransactionID] {
			continue
		}
		seen[r.rec.ReversalTransactionID] = true
		out = append(out, r)
	}
	return out
}

func inDay(t, start, end time.Time) bool { return !t.Before(start) && t.Before(end) }

func (s *Staff) compare(ctx context.Context, d dayData) Comparison {
	c := Comparison{Day: d.start.Format(time.DateOnly), From: d.start, To: d.end, Terminal: []HistoryEntry{}, Journal: []AttemptView{}, Differences: []Difference{}}
	cache := orderCache{}
	m := newMatcher(d.atts)
	known := map[string]reversalRecord{}
	for _, r := range d.reversals {
		known[r.rec.ReversalTransactionID] = r.rec
	}
	for _, e := range d.entries {
		h := s.historyEntry(e)
		day := inDay(h.Created, d.start, d.end)
		if e.Type == device.HistoryReversal {
			compareReversal(&c, e, h, day, m, known)
			continue
		}
		s.compareCharge(ctx, &c, d, e, h, day, m, cache)
	}
	for i, a := range d.atts {
		if !inDay(a.CreatedAt, d.start, d.end) {
			continue
		}
		v := s.view(ctx, a, cache)
		c.Journal = append(c.Journal, v)
		if m.matched[i] || a.State != journal.StateApproved || !onTerminal(a) {
			continue
		}
		c.Differences = append(c.Differences, Difference{Kind: DiffJournalOnly, At: a.CreatedAt, TransactionID: a.TransactionID,
			AttemptUUID: a.UUID, OrderID: a.OrderID, JournalAmount: v.Amount + v.GiftAmount, JournalState: a.State,
			Message: fmt.Sprintf("The journal holds an approved %s of %s (order %s) that the terminal does not list.", a.Kind, formatMoney(v.Amount+v.GiftAmount, v.Currency), orDash(v.OrderNumber, a.OrderID))})
	}
	return c
}

// compareReversal holds a reversal the terminal lists against the journal's
// attempts and the reversals made from the staff screen (known). day: the
// entry is of the day compared.
func compareReversal(c *Comparison, e device.HistoryEntry, h HistoryEntry, day bool, m *matcher, known map[string]reversalRecord) {
	money := func(v int64) string { return formatMoney(v, e.CurrencyCode) }
	if a := m.match(e); a != nil {
		c.Matched++
		h.InJournal, h.AttemptUUID, h.AttemptState, h.OrderID = true, a.UUID, a.State, a.OrderID
		if day && a.State != journal.StateApproved && e.Status == device.StatusOK {
			c.Differences = append(c.Differences, Difference{Kind: DiffState, At: h.Created, TransactionID: e.TransactionID,
				AttemptUUID: a.UUID, OrderID: a.OrderID, JournalAmount: a.Total(), TerminalAmount: e.Amount + e.GiftAmount,
				JournalState: a.State, TerminalStatus: e.Status,
				Message: fmt.Sprintf("The terminal made the reversal of %s, and the journal says %s.", money(e.Amount+e.GiftAmount), a.State)})
		}
	} else if rec, ok := known[e.TransactionID]; ok {
		h.InJournal = true
		if rec.Amount != e.Amount+e.GiftAmount && day {
			c.Differences = append(c.Differences, Difference{Kind: DiffAmount, At: h.Created, TransactionID: e.TransactionID,
				JournalAmount: rec.Amount, TerminalAmount: e.Amount + e.GiftAmount, TerminalStatus: e.Status,
				Message: fmt.Sprintf("The reversal %s is of %s on the terminal and of %s in the journal.", e.TransactionID, money(e.Amount+e.GiftAmount), money(rec.Amount))})
		}
	} else if day && e.Status == device.StatusOK {
		c.Differences = append(c.Differences, Difference{Kind: DiffReversalUnknown, At: h.Created, TransactionID: e.TransactionID,
			OrderID: e.CartID, TerminalAmount: e.Amount + e.GiftAmount, TerminalStatus: e.Status,
			Message: fmt.Sprintf("The terminal lists a reversal of %s that was not made from this kiosk's staff screen.", money(e.Amount+e.GiftAmount))})
	}
	if day {
		c.Terminal = append(c.Terminal, h)
	}
}

// compareCharge holds any other entry the terminal lists against the
// journal's attempts; debits and refunds are compared by state and amount.
func (s *Staff) compareCharge(ctx context.Context, c *Comparison, d dayData, e device.HistoryEntry, h HistoryEntry, day bool, m *matcher, cache orderCache) {
	money := func(v int64) string { return formatMoney(v, e.CurrencyCode) }
	a := m.match(e)
	if a != nil {
		c.Matched++
		h.InJournal, h.AttemptUUID, h.AttemptState, h.OrderID = true, a.UUID, a.State, a.OrderID
	}
	if day {
		c.Terminal = append(c.Terminal, h)
	}
	if e.Type != device.HistoryDebit && e.Type != device.HistoryRefund {
		return
	}
	total := e.Amount + e.GiftAmount
	if a == nil {
		if day && e.Status == device.StatusOK {
			c.Differences = append(c.Differences, Difference{Kind: DiffTerminalOnly, At: h.Created, TransactionID: e.TransactionID,
				OrderID: e.CartID, TerminalAmount: total, TerminalStatus: e.Status,
				Message: fmt.Sprintf("The terminal lists an approved %s of %s that the journal does not know (made on the terminal itself, or lost by the kiosk).", e.Type, money(total))})
		}
		return
	}
	v := s.view(ctx, *a, cache)
	jt := v.Amount + v.GiftAmount
	if !day && !inDay(a.CreatedAt, d.start, d.end) {
		return
	}
	ok := e.Status == device.StatusOK
	switch {
	case ok && a.State != journal.StateApproved:
		msg := fmt.Sprintf("The terminal approved %s, and the journal says %s: the customer was charged.", money(total), a.State)
		if a.State == journal.StateUnknown {
			msg = fmt.Sprintf("The terminal approved %s for an attempt whose outcome is unknown: settle it as paid.", money(total))
		}
		c.Differences = append(c.Differences, Difference{Kind: DiffState, At: h.Created, TransactionID: e.TransactionID,
			AttemptUUID: a.UUID, OrderID: a.OrderID, JournalAmount: jt, TerminalAmount: total, JournalState: a.State, TerminalStatus: e.Status, Message: msg})
	case !ok && a.State == journal.StateApproved:
		c.Differences = append(c.Differences, Difference{Kind: DiffState, At: h.Created, TransactionID: e.TransactionID,
			AttemptUUID: a.UUID, OrderID: a.OrderID, JournalAmount: jt, TerminalAmount: total, JournalState: a.State, TerminalStatus: e.Status,
			Message: fmt.Sprintf("The journal holds %s as approved, and the terminal lists it as %s.", money(jt), e.Status)})
	case ok && amountDiffers(e, *a):
		c.Differences = append(c.Differences, Difference{Kind: DiffAmount, At: h.Created, TransactionID: e.TransactionID,
			AttemptUUID: a.UUID, OrderID: a.OrderID, JournalAmount: jt, TerminalAmount: total, JournalState: a.State, TerminalStatus: e.Status,
			Message: fmt.Sprintf("The same transaction is of %s on the terminal and of %s in the journal.", money(total), money(jt))})
	}
}

// amountDiffers: the entry's amount is not the attempt's, or its tip is not
// the one the terminal answered (when it answered).
func amountDiffers(e device.HistoryEntry, a journal.Attempt) bool {
	if e.Amount != a.Paid() {
		return true
	}
	if a.Charged {
		return e.GiftAmount != a.ChargedGift
	}
	if tx, ok := payment.ChargeOf(a); ok {
		return e.GiftAmount != tx.GiftAmount
	}
	return false
}

func orDash(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// Compare sets a day of the journal (yyyy-MM-dd in the kiosk's zone; ""
// today) against the terminal's history of the same day, every page of it:
// charges the journal does not know, approved attempts the terminal does
// not list, and amounts or outcomes they disagree on.
func (s *Staff) Compare(ctx context.Context, sessionID, day string) (Comparison, error) {
	if _, err := s.session(sessionID); err != nil {
		return Comparison{}, err
	}
	d, err := s.readDay(ctx, day)
	if err != nil {
		return Comparison{}, err
	}
	return s.compare(ctx, d), nil
}
