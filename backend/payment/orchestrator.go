// Package payment turns "pay this order" into exactly one correct outcome,
// whatever happens to the process, the network or the customer.
//
// Each attempt (one idempotentUuid, one exact request body) is committed to
// the journal before its request leaves, and driven by one goroutine through
// prepared → sent → (abort_requested) → approved | declined | failed |
// cancelled | unknown. The rules are those of DESIGN.md ("The payment
// attempt") and of the Local API specification:
//
//   - a client timeout resends the same body with the same uuid, which
//     attaches to the payment in progress, until the request-open limit
//     since the first send; only then is the attempt unknown;
//   - ok is approval, ko without message a decline, ko with a message an
//     application error; a transport-level error is never a failure once the
//     request may have left: the same uuid is asked again;
//   - a response naming another uuid is never applied;
//   - Cancel sends /abort and the /payment answer decides: ok there means the
//     customer was charged, whatever /abort said;
//   - at start-up, Recover resumes every unfinished attempt before a new one
//     may start.
package payment

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/comptoir-pos/comptoir/backend/device"
	"github.com/comptoir-pos/comptoir/backend/fault"
	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/localapi"
	"github.com/google/uuid"
)

// Config wires an Orchestrator.
type Config struct {
	Journal *journal.DB
	// Channel is how attempts reach the provider. Terminal is a shorthand
	// for the Local API channel of a terminal on the LAN (Local).
	Channel  Channel
	Terminal Terminal
	// Fallback is a second way to the same terminal (route.go): its
	// serial number through the provider's cloud, behind the LAN. A new
	// attempt takes it when Reachable says the first way does not reach
	// the terminal (within ProbeTimeout); nil: one way only.
	Fallback     Channel
	Reachable    func(ctx context.Context) error
	ProbeTimeout time.Duration
	// Witness reads the provider's record of every approval taken over
	// the LAN before its order counts as paid (witness.go); nil when the
	// provider's Webservices are not set up.
	Witness *Witness
	// GivenBackCheck records what the provider gave back for an order
	// outside Comptoir before any give-back of it starts (elsewhere.go);
	// nil when that cannot be seen.
	GivenBackCheck func(ctx context.Context, orderID string) error
	// TerminalID identifies the terminal in the journal (its mDNS instance
	// name, or its address when configured by hand): one unresolved attempt
	// per terminal.
	TerminalID string
	Limits     Limits
	// OtherChannels are driven by other orchestrators over the same
	// journal (the terminal's channel and the payment links'): recovery
	// leaves their attempts to them.
	OtherChannels []journal.Channel
	Emitter       Emitter          // nil: no events
	Vendor        *localapi.Vendor // sent with every payment, for the provider's support
	Logger        *slog.Logger     // nil: discard
	Now           func() time.Time // nil: time.Now
}

// ErrNotReady is returned by Start until Recover has resolved every
// unfinished attempt: no new order before the old ones are known.
var ErrNotReady = errors.New("payment: unfinished attempts must be recovered before a new payment")

// ErrTerminalUnreachable is returned by Recover when the terminal could not
// be reached: the attempts it could not ask about stay open.
var ErrTerminalUnreachable = errors.New("payment: the terminal is unreachable")

// Orchestrator drives payment attempts. It is safe for concurrent use.
type Orchestrator struct {
	cfg    Config
	ch     Channel
	log    *slog.Logger
	ctx    context.Context // ends with Close: drivers stop, attempts stay open
	cancel context.CancelFunc
	wg     sync.WaitGroup

	// fallback is a second way to the same terminal (route.go), or nil.
	fallback Channel

	mu       sync.Mutex
	runs     map[string]*run
	ready    bool
	closed   bool
	watching bool // the periodic check of unknown outcomes runs

	// recovering serialises Recover and SettleUnknown: two would drive or
	// settle the same attempt twice.
	recovering sync.Mutex
	captureMu  sync.Mutex // one capture of a link at a time (CaptureLink)
}

// ErrClosed is returned by Start after Close.
var ErrClosed = errors.New("payment: the orchestrator is closed")

// New returns an orchestrator. Call Recover before Start.
func New(cfg Config) (*Orchestrator, error) {
	if cfg.Limits == (Limits{}) {
		cfg.Limits = DefaultLimits
	}
	ch := cfg.Channel
	if ch == nil && cfg.Terminal != nil {
		ch = Local(cfg.Terminal, cfg.Vendor, cfg.Limits.RefundTimeout)
	}
	if cfg.Journal == nil || ch == nil || cfg.TerminalID == "" {
		return nil, errors.New("payment: a journal, a channel (or a terminal) and the terminal's id are required")
	}
	if err := cfg.Limits.Validate(); err != nil {
		return nil, err
	}
	if err := checkFallback(ch, cfg.Fallback); err != nil {
		return nil, err
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Orchestrator{cfg: cfg, ch: ch, fallback: cfg.Fallback, log: log, ctx: ctx, cancel: cancel, runs: map[string]*run{}}, nil
}

// Close stops every driver without deciding anything: attempts in flight stay
// open in the journal and the next Recover resumes them.
func (o *Orchestrator) Close() {
	o.mu.Lock()
	o.closed = true
	o.mu.Unlock()
	o.cancel()
	o.wg.Wait()
}

// Request is one card presentation for an order.
type Request struct {
	OrderID string
	// Amount is what this attempt charges (or refunds), in cents, excluding
	// GiftAmount. For a split tender it is the part of the order this card
	// pays; the order is paid once its approved debits cover its total.
	Amount     int64
	GiftAmount int64
	Policy     journal.Policy // kiosk, counter or refund
	// AcceptedMedium restricts a debit: MediumMealVouchers for the
	// meal-voucher part of a split tender, MediumBankCards for the rest.
	AcceptedMedium string
	Customer       *device.Customer
	Reference      string
	ReceiptTicket  *device.ReceiptTicket
	// External ids: CheckoutExternalID must be distinct for every attempt
	// (the terminal refuses one an ok transaction already used); when
	// UseExternalIDs is set and it is empty, the attempt's uuid is used.
	UseExternalIDs      bool
	CheckoutExternalID  string
	ExternalTableNumber string
	ExternalOrderNumber string
	ExternalOrderID     string
	// Link: what a payment link shows besides the amount (the link
	// channel only).
	Link *LinkDetails
	// NewOrder, when set, is the order OrderID names, not yet recorded: it
	// is recorded with the attempt, in the same transaction (one durable
	// write fewer before the request leaves). Nil: the order is recorded.
	NewOrder *journal.NewOrder
}

// Handle follows one attempt.
type Handle struct {
	o *Orchestrator
	r *run
}

// UUID is the attempt's idempotentUuid.
func (h *Handle) UUID() string { return h.r.uuid }

// Done is closed when the driver stops: the attempt is final, or the
// orchestrator closed.
func (h *Handle) Done() <-chan struct{} { return h.r.done }

// Said is closed once the provider's first word on a refund by API is
// journaled (pending or waiting: it goes on by itself); never for other
// attempts, whose Done says when they end.
func (h *Handle) Said() <-chan struct{} { return h.r.said }

// View is the attempt's latest snapshot.
func (h *Handle) View() View { return h.r.snapshot() }

// Cancel asks for the customer's cancel: /abort, then the /payment answer
// decides. It returns at once; follow the outcome with Done and View.
func (h *Handle) Cancel() { h.r.requestCancel() }

// run is the in-memory side of one attempt being driven.
type run struct {
	uuid     string
	body     []byte
	policy   Policy
	recovery bool

	cancelOnce sync.Once
	cancelCh   chan struct{}
	done       chan struct{}
	// said is closed once the provider's first word on the attempt is
	// journaled (a refund by API pending or waiting).
	saidOnce sync.Once
	said     chan struct{}

	mu          sync.Mutex
	view        View
	unreachable bool // recovery could not reach the terminal: left open
}

func (r *run) requestCancel() { r.cancelOnce.Do(func() { close(r.cancelCh) }) }

func (r *run) snapshot() View {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.view
}

// Start journals a new attempt and starts driving it. The attempt row, with
// its uuid and exact body, is committed before Start returns, and before any
// request leaves.
func (o *Orchestrator) Start(ctx context.Context, req Request) (*Handle, error) {
	if err := o.accepting(); err != nil {
		return nil, err
	}
	policy, err := o.cfg.Limits.Policy(req.Policy)
	if err != nil {
		return nil, err
	}
	if policy.Kind == journal.KindReversal {
		return nil, errors.New("payment: a reversal is started with Reverse")
	}
	if req.Amount <= 0 || req.GiftAmount < 0 {
		return nil, fmt.Errorf("payment: amount must be positive and giftAmount not negative")
	}
	if policy.Kind == journal.KindRefund {
		if err := o.givenBackFirst(ctx, req.OrderID); err != nil {
			return nil, err
		}
	}
	id, err := uuid.NewV7()
	if err != nil {
		return nil, fmt.Errorf("payment: new uuid: %w", err)
	}
	ch := o.route(ctx)
	body, err := ch.Body(NewAttempt{UUID: id.String(), Request: req, Policy: policy, Terminal: o.cfg.TerminalID})
	if err != nil {
		return nil, fmt.Errorf("payment: %w", err)
	}
	terminal := o.cfg.TerminalID
	if ch.Rules().Concurrent {
		terminal += "/" + req.OrderID
	}
	return o.prepareAndLaunch(ctx, policy, journal.Attempt{
		UUID: id.String(), OrderID: req.OrderID, Kind: policy.Kind, Channel: ch.Name(), Amount: req.Amount,
		GiftAmount: req.GiftAmount, Policy: policy.Name, Terminal: terminal, RequestBody: body,
	}, req.NewOrder)
}

// accepting says why no new attempt may start now: closed, or recovery
// not done (nil: one may).
func (o *Orchestrator) accepting() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	switch {
	case o.closed:
		return ErrClosed
	case !o.ready:
		return ErrNotReady
	}
	return nil
}

// prepareAndLaunch journals a new attempt (committed before anything
// leaves), with its order when it is new, and starts driving it.
func (o *Orchestrator) prepareAndLaunch(ctx context.Context, policy Policy, a journal.Attempt, newOrder *journal.NewOrder) (*Handle, error) {
	var (
		att journal.Attempt
		err error
	)
	if newOrder != nil {
		att, err = o.cfg.Journal.PrepareFirstAttempt(ctx, *newOrder, a)
	} else {
		att, err = o.cfg.Journal.PrepareAttempt(ctx, a)
	}
	if err != nil {
		return nil, fmt.Errorf("payment: %w", err)
	}
	r := o.newRun(att, policy, false)
	if err := o.launch(r, att); err != nil {
		return nil, err
	}
	return &Handle{o: o, r: r}, nil
}

// givingBackFrom reads the approved debit money is given back from, with
// the provider's transaction; verb and what say what is done ("reversed",
// "of the terminal to reverse").
func (o *Orchestrator) givingBackFrom(ctx context.Context, debitUUID, verb, what string) (journal.Attempt, error) {
	debit, err := o.cfg.Journal.Attempt(ctx, debitUUID)
	if err != nil {
		return journal.Attempt{}, fmt.Errorf("payment: %w", err)
	}
	switch {
	case debit.Kind != journal.KindDebit || debit.State != journal.StateApproved:
		return journal.Attempt{}, fmt.Errorf("payment: only an approved debit is %s; attempt %s is a %s %s", verb, debitUUID, debit.State, debit.Kind)
	case debit.TransactionID == "":
		return journal.Attempt{}, fmt.Errorf("payment: attempt %s has no transaction %s", debitUUID, what)
	}
	return debit, nil
}

// Pay runs one attempt to its outcome. If ctx ends first, it is the
// customer's cancel: abort, then wait for the outcome, which is returned.
func (o *Orchestrator) Pay(ctx context.Context, req Request) (View, error) {
	h, err := o.Start(context.WithoutCancel(ctx), req)
	if err != nil {
		return View{}, err
	}
	select {
	case <-h.Done():
	case <-ctx.Done():
		h.Cancel()
		<-h.Done()
	}
	return h.View(), nil
}

// Cancel requests the cancel of the attempt being driven with this uuid.
func (o *Orchestrator) Cancel(id string) error {
	o.mu.Lock()
	r := o.runs[id]
	o.mu.Unlock()
	if r == nil {
		return fmt.Errorf("payment: no attempt %s in progress", id)
	}
	r.requestCancel()
	return nil
}

// Active returns the handle of the attempt being driven with this uuid.
func (o *Orchestrator) Active(id string) (*Handle, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	r, ok := o.runs[id]
	if !ok {
		return nil, false
	}
	return &Handle{o: o, r: r}, true
}

// TerminalID is the journal's name of the terminal this orchestrator drives.
func (o *Orchestrator) TerminalID() string { return o.cfg.TerminalID }

// Channel is the journal's name of the channel this orchestrator drives
// first (Channels lists its fallback too).
func (o *Orchestrator) Channel() journal.Channel { return o.ch.Name() }

// owns reports whether the attempt was sent to this orchestrator's
// terminal (on a concurrent channel, under a name of its own below it).
func (o *Orchestrator) owns(att journal.Attempt) bool {
	return att.Terminal == o.cfg.TerminalID ||
		(o.ch.Rules().Concurrent && strings.HasPrefix(att.Terminal, o.cfg.TerminalID+"/"))
}

// Driving is how many attempts this orchestrator is driving now (payments,
// refunds, recoveries): a process must not stop on purpose while one is out.
func (o *Orchestrator) Driving() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.runs)
}

// OrderSummary is what an order's attempts add up to (journal.Money): what
// it still owes, what was taken, and what can still be given back. The
// journal checks the same account when it records a new attempt.
type OrderSummary = journal.Money

// Summary is the order's account.
func (o *Orchestrator) Summary(ctx context.Context, orderID string) (OrderSummary, error) {
	m, err := o.cfg.Journal.OrderMoney(ctx, orderID)
	if err != nil {
		return OrderSummary{}, fmt.Errorf("payment: %w", err)
	}
	return m, nil
}

// journalOutcome journals an attempt's move to its outcome; a refusal is
// logged, and the caller's message says it (notRecorded).
func (o *Orchestrator) journalOutcome(uuid string, from, to journal.State, info journal.TransitionInfo) (journal.Attempt, error) {
	att, err := o.cfg.Journal.Transition(o.ctx, uuid, from, to, info)
	if err != nil {
		o.log.Error("journal the outcome", "uuid", uuid, "to", to, "err", err)
	}
	return att, err
}

// record journals an answer about an attempt that changes nothing (what:
// "attempt" or "reversal", for the log). A journal that refuses is logged:
// the answer changed nothing, and the outcome is journaled when it comes.
func (o *Orchestrator) record(what, uuid string, raw []byte, note string) {
	o.log.Info(what, "uuid", uuid, "note", note)
	if err := o.cfg.Journal.RecordResponse(o.ctx, uuid, raw, note); err != nil {
		o.log.Error("journal a response", "uuid", uuid, "err", err)
	}
}

// notRecorded is the message of an outcome the journal refused to record.
func notRecorded(note string, err error) string {
	return fmt.Sprintf("%s (not recorded: %s)", note, fault.MessageOf(err))
}

// orderPaid reports whether the journal says the order is paid.
func (o *Orchestrator) orderPaid(orderID string) bool {
	ord, err := o.cfg.Journal.Order(o.ctx, orderID)
	if err != nil {
		o.log.Error("read the order's status", "order", orderID, "err", err)
		return false
	}
	return ord.Status == journal.OrderPaid
}

// lookup searches the provider's history for an attempt, from its first
// send less HistorySkew (the provider's clock may be behind ours).
func (o *Orchestrator) lookup(ctx context.Context, ch Channel, att journal.Attempt) (Match, error) {
	since := att.FirstSentAt
	if since.IsZero() {
		since = att.CreatedAt
	}
	m, err := ch.Lookup(ctx, att, since.Add(-o.cfg.Limits.HistorySkew), o.cfg.Journal.HeldTransactions)
	if err != nil {
		return m, err
	}
	return o.crossChannel(ctx, att, m), nil
}

func (o *Orchestrator) newRun(att journal.Attempt, policy Policy, recovery bool) *run {
	r := &run{
		uuid: att.UUID, body: att.RequestBody, policy: policy, recovery: recovery,
		cancelCh: make(chan struct{}), done: make(chan struct{}), said: make(chan struct{}),
	}
	r.view = View{
		UUID: att.UUID, OrderID: att.OrderID, Kind: att.Kind, Policy: att.Policy, State: att.State, Channel: att.Channel,
		Amount: att.Amount, GiftAmount: att.Gift(), TransactionID: att.TransactionID, SendCount: att.SendCount,
	}
	r.view.setProvider(att)
	if att.Charged {
		r.view.ChargedAmount = att.ChargedAmount
	}
	r.view.Flag = att.Flag
	return r
}

// launch starts the attempt's driver. After Close it starts nothing: the
// attempt stays open in the journal for the next recovery.
func (o *Orchestrator) launch(r *run, att journal.Attempt) error {
	o.mu.Lock()
	if o.closed {
		o.mu.Unlock()
		return ErrClosed
	}
	o.runs[r.uuid] = r
	o.wg.Add(1)
	o.mu.Unlock()
	o.emit(r.snapshot())
	ch := o.channelFor(att.Channel)
	if ch == nil {
		ch = o.ch // (recovery closes such an attempt without sending)
	}
	go func() {
		defer o.wg.Done()
		defer func() {
			o.mu.Lock()
			delete(o.runs, r.uuid)
			o.mu.Unlock()
			close(r.done)
		}()
		switch {
		case att.Channel == journal.ChannelWebservices:
			(&apiRefund{reversal: reversal{o: o, r: r, ch: ch, att: att}}).run()
			return
		case att.Kind == journal.KindReversal:
			(&reversal{o: o, r: r, ch: ch, att: att}).run()
			return
		}
		d := &driver{o: o, r: r, ch: ch, rules: ch.Rules(), att: att}
		d.run()
	}()
	return nil
}

// update changes r's view and publishes it.
func (o *Orchestrator) update(r *run, f func(*View)) {
	r.mu.Lock()
	f(&r.view)
	v := r.view
	r.mu.Unlock()
	o.emit(v)
}

func (o *Orchestrator) emit(v View) {
	if o.cfg.Emitter != nil {
		o.cfg.Emitter.Emit(EventAttempt, v)
	}
}

// Recover resolves every unfinished attempt of the journal, oldest first,
// and only then lets Start accept new ones. A prepared attempt was never sent
// (its send is journaled first) and fails; one past the idempotency window
// cannot be asked about without starting a new payment and becomes unknown,
// for staff; every other one is resumed by resending its exact request with
// its uuid, which returns the known transaction or attaches to the one in
// progress. If the terminal cannot be reached, the rest stays open and
// ErrTerminalUnreachable is returned: call Recover again later.
func (o *Orchestrator) Recover(ctx context.Context) ([]View, error) {
	o.recovering.Lock()
	defer o.recovering.Unlock()
	open, err := o.cfg.Journal.OpenAttempts(ctx)
	if err != nil {
		return nil, fmt.Errorf("payment: recovery: %w", err)
	}
	var views []View
	for _, att := range open {
		if _, live := o.Active(att.UUID); live || slices.Contains(o.cfg.OtherChannels, att.Channel) {
			continue
		}
		v, err := o.recoverOne(ctx, att)
		views = append(views, v)
		if err != nil {
			return views, err
		}
	}
	// What the history can now tell of outcomes that were unknown.
	settled, err := o.settleUnknown(ctx)
	if err != nil {
		o.log.Warn("recovery: unknown outcomes not looked up", "err", err)
	}
	views = append(views, settled...)
	o.recheckWitnesses(ctx)
	o.mu.Lock()
	o.ready = true
	watch := !o.watching && !o.closed && o.cfg.Limits.UnknownCheck > 0
	if watch {
		o.watching = true
		o.wg.Add(1)
	}
	o.mu.Unlock()
	if watch {
		o.log.Info("recovery done: unknown outcomes and the provider's records checked again periodically", "every", o.cfg.Limits.UnknownCheck)
		go o.watchUnknown()
	}
	return views, nil
}

func (o *Orchestrator) recoverOne(ctx context.Context, att journal.Attempt) (View, error) {
	policy, err := o.cfg.Limits.Policy(att.Policy)
	if err != nil {
		return View{}, err
	}
	r := o.newRun(att, policy, true)
	switch {
	case att.State == journal.StatePrepared:
		return o.closeUnsent(ctx, r, att, journal.StateFailed, "never sent: the process stopped before sending")
	case o.channelFor(att.Channel) == nil:
		// An attempt never changes channel, and only its own can ask about it.
		return o.closeUnsent(ctx, r, att, journal.StateUnknown, fmt.Sprintf(
			"sent through the %s channel, and this kiosk now uses %s: call staff", att.Channel, o.ch.Name()))
	case att.Kind == journal.KindReversal && !o.owns(att):
		return o.closeUnsent(ctx, r, att, journal.StateUnknown, fmt.Sprintf(
			"a reversal sent to terminal %s, and this kiosk now uses %s, whose history cannot tell: call staff",
			att.Terminal, o.cfg.TerminalID))
	case !o.owns(att):
		// Only the terminal that received the uuid knows it: any other
		// would start a new payment for the same order.
		return o.closeUnsent(ctx, r, att, journal.StateUnknown, fmt.Sprintf(
			"sent to terminal %s, and this kiosk now uses %s: asking another terminal would start a new payment; call staff",
			att.Terminal, o.cfg.TerminalID))
	case att.Kind != journal.KindReversal && att.Channel != journal.ChannelWebservices && o.ch.Rules().Lifetime == 0 &&
		!o.cfg.Now().Before(o.cfg.Limits.lastSend(att.FirstSentAt)):
		// (A refund by API is known by its transaction, for good.)
		return o.closeUnsent(ctx, r, att, journal.StateUnknown,
			"first sent too long ago: the terminal may have forgotten the uuid, and asking again would start a new payment; call staff")
	}
	o.log.Info("recovery: resuming", "uuid", att.UUID, "state", att.State, "sends", att.SendCount)
	if err := o.launch(r, att); err != nil {
		return r.snapshot(), err
	}
	if o.ch.Rules().Concurrent {
		// It holds nothing: it goes on beside new attempts, for as long
		// as its customer may pay.
		return r.snapshot(), nil
	}
	select {
	case <-r.done:
	case <-ctx.Done():
		r.requestCancel()
		<-r.done
	}
	v := r.snapshot()
	r.mu.Lock()
	unreachable := r.unreachable
	r.mu.Unlock()
	switch {
	case unreachable:
		return v, ErrTerminalUnreachable
	case !v.Final():
		return v, fmt.Errorf("payment: recovery of %s stopped: %s", att.UUID, v.Message)
	}
	return v, nil
}

// closeUnsent finishes an attempt recovery must not send.
func (o *Orchestrator) closeUnsent(ctx context.Context, r *run, att journal.Attempt, to journal.State, why string) (View, error) {
	d := &driver{o: o, r: r, ch: o.ch, rules: o.ch.Rules(), att: att}
	d.finish(to, nil, why, nil)
	if d.att.State != to {
		return r.snapshot(), fmt.Errorf("payment: recovery of %s: %s", att.UUID, r.snapshot().Message)
	}
	return r.snapshot(), nil
}
