package journal

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/comptoir-pos/comptoir/backend/fault"
	"github.com/google/uuid"
)

// Attempt is one card presentation (one idempotentUuid, one exact request
// body), or one reversal.
type Attempt struct {
	ID      int64
	UUID    string // the idempotentUuid, UUID v7, canonical lowercase form
	OrderID string
	Kind    Kind
	Channel Channel // local when not given
	// Amount and GiftAmount are what was asked, in cents. A reversal asks
	// for the whole debit it reverses in Amount.
	Amount     int64
	GiftAmount int64
	Policy     Policy
	Terminal   string // the terminal's identity: instance name or base URL
	// InitialTransactionID is the transaction a reversal reverses.
	InitialTransactionID string
	RequestBody          json.RawMessage // the exact body sent, byte for byte
	State                State
	Response             []byte // the last raw answer; not necessarily JSON
	TransactionID        string
	Error                string
	// ProviderID is the provider's id for the attempt before it has an
	// outcome (a cloud acknowledgement, a payment link); ProviderStatus its
	// last word while open.
	ProviderID     string
	ProviderStatus string
	// Charged is set once an outcome says what was charged (or given back):
	// ChargedAmount and ChargedGift, which may differ from what was asked
	// (a tip chosen on the terminal).
	Charged       bool
	ChargedAmount int64
	ChargedGift   int64
	// ChargedCurrency is the currency the provider named with its outcome,
	// "" when it named none.
	ChargedCurrency string
	// Flag says how an approval disagrees with what was asked (another
	// amount, currency or transaction type): its money was taken but pays
	// nothing until staff accept it. "" when it agrees, or was accepted.
	Flag string
	// Witness is the provider's word on an approval taken over the LAN,
	// when its Webservices are set up (WitnessAwaiting...); "" when none
	// was asked for.
	Witness     Witness
	SendCount   int
	CreatedAt   time.Time
	FirstSentAt time.Time // zero until sent
	LastSentAt  time.Time
	FinalAt     time.Time // zero until final
	UpdatedAt   time.Time
}

// Total is what the attempt moved, in cents: what the provider said was
// charged when it said so, else what was asked.
func (a Attempt) Total() int64 {
	if a.Charged {
		return a.ChargedAmount + a.ChargedGift
	}
	return a.Amount + a.GiftAmount
}

// Paid is the amount part of Total (gifts excluded).
func (a Attempt) Paid() int64 {
	if a.Charged {
		return a.ChargedAmount
	}
	return a.Amount
}

// Gift is the gift part of Total.
func (a Attempt) Gift() int64 {
	if a.Charged {
		return a.ChargedGift
	}
	return a.GiftAmount
}

// Charge is what an outcome says was charged or given back.
type Charge struct {
	Amount     int64
	GiftAmount int64
	// Currency and Type are the provider's words for the transaction, when
	// it gave them (ISO 4217; "debit", "refund" or another word): the
	// journal compares them with what was asked.
	Currency string
	Type     string
	// NoTipScreen: the customer saw no tip screen for this attempt (the
	// caller, which knows where it went, says so): a gift other than the
	// one asked is then a disagreement, like another amount.
	NoTipScreen bool
}

// TransitionInfo is what came with a state change.
type TransitionInfo struct {
	Response      []byte // the raw response that caused it, journaled as is
	TransactionID string
	Error         string // the terminal's message or the transport error
	Note          string // why, for the audit trail
	// Charged is what the outcome says was charged: recorded once, beside
	// what was asked.
	Charged *Charge
	// ProviderID and ProviderStatus, when the provider named or described
	// the attempt.
	ProviderID     string
	ProviderStatus string
	// AwaitWitness: an approval that the provider's own record must
	// confirm (taken over the LAN, where any device can answer): it is
	// journaled awaiting that record (WitnessAwaiting) in the same
	// transaction, and pays nothing until Witness says confirmed or
	// unconfirmed.
	AwaitWitness bool
}

// Event is one row of an attempt's audit trail.
type Event struct {
	ID          int64
	AttemptID   int64
	At          time.Time
	From        State // "" for the prepared event
	To          State
	Kind        EventKind
	Actor       string // who, for staff actions; "" for the system
	Detail      string
	RawResponse []byte
}

// AttemptFilter selects attempts for ListAttempts. Zero fields do not filter.
type AttemptFilter struct {
	State    State
	OrderID  string
	Since    time.Time // created at or after
	Until    time.Time // created before
	Limit    int       // 0: no limit
	Offset   int
	OnlyOpen bool // unresolved attempts only
}

const attemptColumns = `id, uuid, order_id, kind, channel, amount, gift_amount, policy, terminal,
	initial_transaction_id, request_body, state, response, transaction_id, error,
	provider_id, provider_status, charged_amount, charged_gift, charged_currency, flag, witness, send_count,
	created_at, first_sent_at, last_sent_at, final_at, updated_at,
	(SELECT c.data FROM card_details c WHERE c.attempt_id = attempts.id ORDER BY c.id DESC LIMIT 1)`

// openAttemptsQuery is served by the partial index attempts_open: only the
// unresolved rows, already in created_at order (TestOpenAttemptsUsesIndex).
const openAttemptsQuery = `SELECT ` + attemptColumns + ` FROM attempts WHERE ` + openStatesSQL +
	` ORDER BY created_at, id`

type rowScanner interface{ Scan(...any) error }

type queryer interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func scanAttempt(row rowScanner) (Attempt, error) {
	var (
		a                                     Attempt
		kind, channel, policy, state, body    string
		response                              []byte
		initial, txID, errText                sql.NullString
		providerID, providerStatus            sql.NullString
		chargedCurrency, flag, witness, card  sql.NullString
		chargedAmount, chargedGift            sql.NullInt64
		created, first, last, final, updatedT sql.NullInt64
	)
	err := row.Scan(&a.ID, &a.UUID, &a.OrderID, &kind, &channel, &a.Amount, &a.GiftAmount, &policy, &a.Terminal,
		&initial, &body, &state, &response, &txID, &errText,
		&providerID, &providerStatus, &chargedAmount, &chargedGift, &chargedCurrency, &flag, &witness, &a.SendCount,
		&created, &first, &last, &final, &updatedT, &card)
	if err != nil {
		return Attempt{}, err
	}
	a.Kind, a.Channel, a.Policy, a.State = Kind(kind), Channel(channel), Policy(policy), State(state)
	a.InitialTransactionID = initial.String
	a.RequestBody = json.RawMessage(body)
	a.Response = withCard(response, card)
	a.TransactionID, a.Error = txID.String, errText.String
	a.ProviderID, a.ProviderStatus = providerID.String, providerStatus.String
	a.ChargedCurrency, a.Flag, a.Witness = chargedCurrency.String, flag.String, Witness(witness.String)
	if chargedAmount.Valid && chargedGift.Valid {
		a.Charged, a.ChargedAmount, a.ChargedGift = true, chargedAmount.Int64, chargedGift.Int64
	}
	a.CreatedAt, a.FirstSentAt, a.LastSentAt = fromUnixMS(created), fromUnixMS(first), fromUnixMS(last)
	a.FinalAt, a.UpdatedAt = fromUnixMS(final), fromUnixMS(updatedT)
	return a, nil
}

func getAttempt(ctx context.Context, q queryer, id string) (Attempt, error) {
	a, err := scanAttempt(q.QueryRowContext(ctx, `SELECT `+attemptColumns+` FROM attempts WHERE uuid = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Attempt{}, Errorf(ENOTFOUND, "attempt %s not found", id)
	}
	return a, err
}

// validateAttempt checks what PrepareAttempt is given. The body is checked
// against the attempt where it carries the Local API's fields: a body that
// names another uuid, cart or amount than the journal records would make a
// resend after a crash charge something nobody journaled.
func validateAttempt(a Attempt) error {
	u, err := uuid.Parse(a.UUID)
	switch {
	case err != nil || u.String() != a.UUID:
		return Errorf(EINVALID, "attempt uuid %q is not a canonical lowercase UUID", a.UUID)
	case u.Version() != 7:
		return Errorf(EINVALID, "attempt uuid %s is UUID v%d, not v7", a.UUID, u.Version())
	case a.OrderID == "":
		return Errorf(EINVALID, "attempt %s: no order id", a.UUID)
	case a.Kind != KindDebit && a.Kind != KindRefund && a.Kind != KindReversal:
		return Errorf(EINVALID, "attempt %s: unknown kind %q", a.UUID, a.Kind)
	case a.Channel != "" && !a.Channel.Valid():
		return Errorf(EINVALID, "attempt %s: unknown channel %q", a.UUID, a.Channel)
	case a.Kind == KindDebit && a.Policy != PolicyKiosk && a.Policy != PolicyCounter:
		return Errorf(EINVALID, "attempt %s: a debit needs policy kiosk or counter, not %q", a.UUID, a.Policy)
	case a.Kind == KindRefund && a.Policy != PolicyRefund:
		return Errorf(EINVALID, "attempt %s: a refund needs policy refund, not %q", a.UUID, a.Policy)
	case a.Kind == KindReversal && a.Policy != PolicyReversal:
		return Errorf(EINVALID, "attempt %s: a reversal needs policy reversal, not %q", a.UUID, a.Policy)
	case a.Kind == KindReversal && (a.InitialTransactionID == "" || a.GiftAmount != 0):
		return Errorf(EINVALID, "attempt %s: a reversal names the transaction it reverses and asks for its whole amount, gift included, in amount", a.UUID)
	case a.Channel == ChannelWebservices && (a.Kind != KindRefund || a.InitialTransactionID == "" || a.GiftAmount != 0):
		return Errorf(EINVALID, "attempt %s: the Webservices only refund, a transaction they name, its whole amount asked in amount", a.UUID)
	case a.Amount <= 0:
		return Errorf(EINVALID, "attempt %s: amount %d is not positive", a.UUID, a.Amount)
	case a.GiftAmount < 0:
		return Errorf(EINVALID, "attempt %s: negative gift amount %d", a.UUID, a.GiftAmount)
	case a.Terminal == "":
		return Errorf(EINVALID, "attempt %s: no terminal", a.UUID)
	case a.State != "" && a.State != StatePrepared:
		return Errorf(EINVALID, "attempt %s: a new attempt is prepared, not %s", a.UUID, a.State)
	case len(a.RequestBody) == 0 || !json.Valid(a.RequestBody):
		return Errorf(EINVALID, "attempt %s: request body is not valid JSON", a.UUID)
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(a.RequestBody, &fields) != nil {
		return nil // not an object: another transport's business
	}
	var s string
	if raw, ok := fields["idempotentUuid"]; ok {
		if json.Unmarshal(raw, &s) != nil || s != a.UUID {
			return Errorf(EINVALID, "attempt %s: request body carries idempotentUuid %s", a.UUID, raw)
		}
	}
	if raw, ok := fields["cartId"]; ok {
		if json.Unmarshal(raw, &s) != nil || s != a.OrderID {
			return Errorf(EINVALID, "attempt %s: request body carries cartId %s, not order %s", a.UUID, raw, a.OrderID)
		}
	}
	if raw, ok := fields["amount"]; ok {
		var n int64
		if json.Unmarshal(raw, &n) != nil || n != a.Amount {
			return Errorf(EINVALID, "attempt %s: request body carries amount %s, not %d", a.UUID, raw, a.Amount)
		}
	}
	if raw, ok := fields["initialTransactionId"]; ok {
		if json.Unmarshal(raw, &s) != nil || s != a.InitialTransactionID {
			return Errorf(EINVALID, "attempt %s: request body reverses %s, not %s", a.UUID, raw, a.InitialTransactionID)
		}
	}
	return nil
}

// PrepareAttempt records a new attempt in state prepared, with its exact
// request body, and its first event, in one committed transaction: when it
// returns nil the row is on disk. Call it before the request leaves the process.
//
// ECONFLICT if the uuid exists, if the order or the terminal has an
// unresolved attempt, or for a debit on an order that is paid or cancelled or
// has an unknown debit not yet resolved by staff (it may have charged the
// customer). Several approved debits on one order are allowed (split tender):
// keeping their sum within the total is the orchestrator's job. ENOTFOUND if
// the order does not exist.
func (db *DB) PrepareAttempt(ctx context.Context, a Attempt) (Attempt, error) {
	if err := validateAttempt(a); err != nil {
		return Attempt{}, err
	}
	return updateTo(ctx, db, "prepare attempt "+a.UUID, func(tx *sql.Tx) (Attempt, error) {
		return prepare(ctx, tx, a, db.now())
	})
}

// PrepareFirstAttempt records a new order (as CreateOrder) and its first
// attempt (as PrepareAttempt) in one committed transaction: one durable
// write before the request leaves instead of two. Either both are recorded
// or neither; the errors are theirs (ECONFLICT with ErrOrderExists: the
// order's id is taken).
func (db *DB) PrepareFirstAttempt(ctx context.Context, o NewOrder, a Attempt) (Attempt, error) {
	n, err := checkNewOrder(o)
	if err != nil {
		return Attempt{}, err
	}
	if a.OrderID != n.Order.ID {
		return Attempt{}, Errorf(EINVALID, "attempt %s: for order %s, not the new order %s", a.UUID, a.OrderID, n.Order.ID)
	}
	if err := validateAttempt(a); err != nil {
		return Attempt{}, err
	}
	return updateTo(ctx, db, "prepare attempt "+a.UUID+" of new order "+n.Order.ID, func(tx *sql.Tx) (Attempt, error) {
		now := db.now()
		if err := insertOrder(ctx, tx, n, now); err != nil {
			return Attempt{}, err
		}
		return prepare(ctx, tx, a, now)
	})
}

// prepare inserts a checked attempt in state prepared, and its first
// event, in tx.
func prepare(ctx context.Context, tx *sql.Tx, a Attempt, at time.Time) (Attempt, error) {
	if err := mayPrepare(ctx, tx, a); err != nil {
		return Attempt{}, err
	}
	now := unixMS(at)
	channel := a.Channel
	if channel == "" {
		channel = ChannelLocal
	}
	res, err := tx.ExecContext(ctx, `INSERT INTO attempts
			(uuid, order_id, kind, channel, amount, gift_amount, policy, terminal, initial_transaction_id,
			 request_body, state, send_count, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'prepared', 0, ?, ?)`,
		a.UUID, a.OrderID, string(a.Kind), string(channel), a.Amount, a.GiftAmount, string(a.Policy), a.Terminal,
		nullString(a.InitialTransactionID), string(a.RequestBody), now, now)
	if err != nil {
		return Attempt{}, err
	}
	id, err := res.LastInsertId()
	if err != nil {
		return Attempt{}, err
	}
	detail := fmt.Sprintf("%s of %d (gift %d) on %s through %s, policy %s", a.Kind, a.Amount, a.GiftAmount, a.Terminal, channel, a.Policy)
	if a.InitialTransactionID != "" {
		detail += ", of transaction " + a.InitialTransactionID
	}
	if err := insertEvent(ctx, tx, id, now, "", StatePrepared, EventPrepared, "", detail, nil); err != nil {
		return Attempt{}, err
	}
	return getAttempt(ctx, tx, a.UUID)
}

// mayPrepare refuses what PrepareAttempt must not record (see there).
func mayPrepare(ctx context.Context, tx *sql.Tx, a Attempt) error {
	var status string
	err := tx.QueryRowContext(ctx, `SELECT status FROM orders WHERE id = ?`, a.OrderID).Scan(&status)
	if errors.Is(err, sql.ErrNoRows) {
		return Errorf(ENOTFOUND, "attempt %s: order %s not found", a.UUID, a.OrderID)
	}
	if err != nil {
		return err
	}
	if _, err := getAttempt(ctx, tx, a.UUID); err == nil {
		return Errorf(ECONFLICT, "attempt %s already exists", a.UUID)
	} else if fault.CodeOf(err) != ENOTFOUND {
		return err
	}
	// The partial unique indexes would refuse these too; asking first
	// gives a message that names the attempt in the way.
	if other, err := scanAttempt(tx.QueryRowContext(ctx, `SELECT `+attemptColumns+
		` FROM attempts WHERE order_id = ? AND `+openStatesSQL, a.OrderID)); err == nil {
		return Errorf(ECONFLICT, "order %s already has an unresolved attempt %s (%s)", a.OrderID, other.UUID, other.State)
	} else if !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	if other, err := scanAttempt(tx.QueryRowContext(ctx, `SELECT `+attemptColumns+
		` FROM attempts WHERE terminal = ? AND `+openStatesSQL, a.Terminal)); err == nil {
		return Errorf(ECONFLICT, "terminal %s already has an unresolved attempt %s (%s) for order %s",
			a.Terminal, other.UUID, other.State, other.OrderID)
	} else if !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	if err := checkMoney(ctx, tx, a); err != nil {
		return err
	}
	if a.Kind == KindDebit {
		// An unknown debit may have charged the customer: only a staff
		// Resolve lets the order be charged again. (Approved debits do
		// not block: split tender pays one order with several cards,
		// and what the order still owes is the orchestrator's sum.)
		var prev string
		err := tx.QueryRowContext(ctx, `SELECT uuid FROM attempts
			WHERE order_id = ? AND kind = 'debit' AND state = 'unknown' ORDER BY id LIMIT 1`,
			a.OrderID).Scan(&prev)
		if err == nil {
			return Errorf(ECONFLICT, "order %s has attempt %s in state unknown: staff must resolve it before a new debit", a.OrderID, prev)
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		// Only an open order is charged: paid or cancelled it is done, and
		// one that needs attention (a flagged approval, a part kept
		// after it was closed) waits for staff first.
		if OrderStatus(status) != OrderOpen {
			return Errorf(ECONFLICT, "order %s is %s: no new debit", a.OrderID, status)
		}
	}
	return nil
}

// MarkSent records that the request is about to leave, committed before it
// does: prepared→sent on the first send, sent→sent on a deliberate resend. It
// counts sends, sets first_sent_at once and last_sent_at every time, and
// writes a sent or resent event.
//
// An attempt in abort_requested may be resent too (a client timeout while the
// abort is pending, or recovery after a crash): it stays abort_requested,
// because the customer's cancel is still pending and the next answer decides.
// ECONFLICT on a final attempt.
func (db *DB) MarkSent(ctx context.Context, id string) (Attempt, error) {
	return db.markSent(ctx, id, "", "")
}

func (db *DB) markSent(ctx context.Context, id string, expected State, note string) (Attempt, error) {
	return updateTo(ctx, db, "mark attempt "+id+" sent", func(tx *sql.Tx) (Attempt, error) {
		a, err := getAttempt(ctx, tx, id)
		if err != nil {
			return Attempt{}, err
		}
		if expected != "" && a.State != expected {
			return Attempt{}, Errorf(ECONFLICT, "attempt %s is %s, not %s: %s → sent refused", id, a.State, expected, expected)
		}
		if !a.State.Open() {
			return Attempt{}, Errorf(ECONFLICT, "attempt %s is %s: a final attempt is never sent again", id, a.State)
		}
		to, kind := StateSent, EventSent
		if a.State == StateAbortRequested {
			to = StateAbortRequested
		}
		if a.SendCount > 0 {
			kind = EventResent
		}
		now := unixMS(db.now())
		res, err := tx.ExecContext(ctx, `UPDATE attempts
			SET state = ?, send_count = send_count + 1,
			    first_sent_at = COALESCE(first_sent_at, ?), last_sent_at = ?, updated_at = ?
			WHERE uuid = ? AND state = ?`,
			string(to), now, now, now, id, string(a.State))
		if err != nil {
			return Attempt{}, err
		}
		if n, err := res.RowsAffected(); err != nil {
			return Attempt{}, err
		} else if n != 1 {
			return Attempt{}, Errorf(ECONFLICT, "attempt %s changed state during send", id)
		}
		detail := fmt.Sprintf("send #%d", a.SendCount+1)
		if note != "" {
			detail += ": " + note
		}
		if err := insertEvent(ctx, tx, a.ID, now, a.State, to, kind, "", detail, nil); err != nil {
			return Attempt{}, err
		}
		return getAttempt(ctx, tx, id)
	})
}

func insertEvent(ctx context.Context, tx *sql.Tx, attemptID, at int64, from, to State, kind EventKind, actor, detail string, raw []byte) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO attempt_events
		(attempt_id, at, from_state, to_state, kind, actor, detail, raw_response)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		attemptID, at, nullString(string(from)), nullString(string(to)), string(kind),
		nullString(actor), nullString(detail), nullBytes(raw))
	return err
}

// nullBytes binds raw bytes as TEXT (the columns are STRICT TEXT: a []byte
// would bind as a BLOB and be refused), nil as NULL.
func nullBytes(b []byte) any {
	if b == nil {
		return nil
	}
	return string(b)
}
