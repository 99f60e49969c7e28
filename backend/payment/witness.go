package payment

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/comptoir-pos/comptoir/backend/cloudapi"
	"github.com/comptoir-pos/comptoir/backend/device"
	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/localapi"
)

// The provider as second witness. The terminal's Local API has no
// credential: a device on the LAN that answers "ok" in its place could
// make an order look paid for money never taken. When the provider's
// Webservices are set up, an approval over the LAN is journaled awaiting
// the provider's record (journal.WitnessAwaiting: it pays nothing, and its
// order takes no second debit), and the customer is not shown "approved"
// until that record has been read:
//
//   - the record lists the transaction for what the terminal said it
//     charged: confirmed, the order is paid;
//   - the record answers and, within Wait, lists no such transaction, or
//     lists it for something else: denied, the approval pays nothing and
//     its order needs staff; the customer is sent to staff;
//   - the record cannot be read at all within Wait (the provider or the
//     kiosk's internet is down): unconfirmed, the order counts as paid on
//     the terminal's word, and the periodic check reads the record again
//     until it confirms or denies it (Strict: the order waits for staff
//     instead).
//
// The provider's id of a transaction made over the LAN may be the
// terminal's transactionId or one of its own (the cloud's server-side id,
// the terminal's being its localId): the record is fetched by the
// terminal's id first, then searched in the company's list for the same
// terminal, order (cartId), amount, tip and currency near the approval,
// among transactions no other attempt holds.

// WitnessAPI is the part of the provider's Webservices the witness reads;
// *cloudapi.Webservices satisfies it.
type WitnessAPI interface {
	Details(ctx context.Context, id string) (*cloudapi.TransactionDetails, error)
	BatchAll(ctx context.Context, r cloudapi.BatchRequest, now time.Time) ([]cloudapi.HistoryEntry, error)
}

// WitnessOptions say how long and how the record is read.
type WitnessOptions struct {
	// Serial is the terminal's serial number, when known: only its
	// transactions are looked at.
	Serial string
	// Wait bounds how long an approval waits for the record before the
	// customer is told (the record may lag a few seconds); 0: 20 s.
	Wait time.Duration
	// PollEvery spaces two reads of the record while it waits; 0: 2 s.
	PollEvery time.Duration
	// Strict: when the record cannot be read within Wait, the order
	// waits for staff instead of counting as paid.
	Strict bool
	// Skew widens the search of the list before the attempt's first send
	// (the provider's clock may be behind ours); 0: 10 min.
	Skew time.Duration
	// Lag is how long after an approval a record the provider answers
	// without it still counts as late rather than as a denial, for the
	// periodic check of unconfirmed approvals; 0: 10 min.
	Lag time.Duration
	// Recheck is how far back the periodic check asks about approvals
	// whose record may still change; 0: 7 days.
	Recheck time.Duration
	Now     func() time.Time // nil: time.Now
}

// Witness reads the provider's record of approvals taken over the LAN.
type Witness struct {
	api  WitnessAPI
	opts WitnessOptions
}

// WitnessedBy names the system in the journal when the provider's record
// spoke.
const WitnessedBy = "system:witness"

// NewWitness returns the provider's record as second witness.
func NewWitness(api WitnessAPI, opts WitnessOptions) *Witness {
	if opts.Wait <= 0 {
		opts.Wait = 20 * time.Second
	}
	if opts.PollEvery <= 0 {
		opts.PollEvery = 2 * time.Second
	}
	if opts.Skew <= 0 {
		opts.Skew = 10 * time.Minute
	}
	if opts.Lag <= 0 {
		opts.Lag = 10 * time.Minute
	}
	if opts.Recheck <= 0 {
		opts.Recheck = 7 * 24 * time.Hour
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Witness{api: api, opts: opts}
}

// reading is one read of the provider's record for an approval.
type reading struct {
	readable   bool   // the provider answered
	found      bool   // it lists the transaction, as the terminal said
	pending    bool   // it lists it, not ended yet
	mismatch   string // it lists it under the terminal's id, for something else
	providerID string // its own id of the transaction
	raw        []byte
}

// read asks the provider once about an approval.
func (w *Witness) read(ctx context.Context, att journal.Attempt, holders func(context.Context, []string) (map[string]string, error)) reading {
	var r reading
	d, err := w.api.Details(ctx, att.TransactionID)
	switch {
	case err == nil:
		r.readable, r.raw = true, d.Raw
		if why := w.disagrees(att, d.Status, d.Type, d.SerialNumber, d.ServerDatetime, "", d.AskedAmount, d.GiftAmount); why != "" {
			r.mismatch = why
			return r
		}
		if r.pending = !wsStatus(d.Status, wsOK); !r.pending {
			r.found, r.providerID = true, d.TransactionID
		}
	case notFoundByID(err):
		r.readable = true
	}
	if held, err := holders(ctx, []string{att.TransactionID}); err == nil && held[att.TransactionID] != "" && held[att.TransactionID] != att.UUID {
		// A transaction id another attempt holds, replayed.
		return reading{readable: true, mismatch: "transaction " + att.TransactionID + " is already attempt " + held[att.TransactionID] + "'s"}
	}
	entries, err := w.list(ctx, att)
	if err != nil {
		return r // the fetch by id alone, if it spoke
	}
	r.readable = true
	var candidates []cloudapi.HistoryEntry
	for _, e := range entries {
		if e.TransactionID == att.TransactionID {
			if why := w.disagrees(att, e.Status, e.Kind(), e.SerialNumber, e.CreatedAt, e.CurrencyCode, e.Amount, e.GiftAmount); why != "" {
				return reading{readable: true, mismatch: why, raw: r.raw}
			}
			if wsStatus(e.Status, wsOK) {
				return reading{readable: true, found: true, providerID: e.TransactionID, raw: r.raw}
			}
			r.pending = true
			continue
		}
		if e.CartID == att.OrderID && wsStatus(e.Status, wsOK) &&
			w.disagrees(att, e.Status, e.Kind(), e.SerialNumber, e.CreatedAt, e.CurrencyCode, e.Amount, e.GiftAmount) == "" {
			candidates = append(candidates, e)
		}
	}
	if r.found {
		return r // listed by the fetch, not (yet) in the list
	}
	if e, ok := w.unheld(ctx, att, candidates, holders); ok {
		r.found, r.providerID = true, e.TransactionID
		r.raw = []byte(fmt.Sprintf(`{"transactionId":%q,"cartId":%q,"amount":%d,"giftAmount":%d,"currencyCode":%q,"serialNumber":%q,"createdAt":%q}`,
			e.TransactionID, e.CartID, e.Amount, e.GiftAmount, e.CurrencyCode, e.SerialNumber, e.CreatedAt))
	}
	return r
}

// unheld picks, among the list's candidates, the one no other attempt
// holds that is nearest the attempt's first send.
func (w *Witness) unheld(ctx context.Context, att journal.Attempt, candidates []cloudapi.HistoryEntry,
	holders func(context.Context, []string) (map[string]string, error)) (cloudapi.HistoryEntry, bool) {
	if len(candidates) == 0 {
		return cloudapi.HistoryEntry{}, false
	}
	ids := make([]string, len(candidates))
	for i, e := range candidates {
		ids[i] = e.TransactionID
	}
	held, err := holders(ctx, ids)
	if err != nil {
		return cloudapi.HistoryEntry{}, false
	}
	var best cloudapi.HistoryEntry
	var bestGap time.Duration = -1
	for _, e := range candidates {
		if h := held[e.TransactionID]; h != "" && h != att.UUID {
			continue
		}
		at, _ := device.ParseCreatedAt(e.CreatedAt)
		gap := at.Sub(sent(att)).Abs()
		if bestGap < 0 || gap < bestGap {
			best, bestGap = e, gap
		}
	}
	return best, bestGap >= 0
}

// list reads the company's transactions of the terminal around the
// attempt (CompanyList).
func (w *Witness) list(ctx context.Context, att journal.Attempt) ([]cloudapi.HistoryEntry, error) {
	var req cloudapi.BatchRequest
	if w.opts.Serial != "" {
		req.SerialNumbers = []string{w.opts.Serial}
	}
	return CompanyList(ctx, w.api.BatchAll, req, sent(att).Add(-w.opts.Skew), time.Time{}, w.opts.Now().Add(time.Minute))
}

func sent(att journal.Attempt) time.Time {
	if !att.FirstSentAt.IsZero() {
		return att.FirstSentAt
	}
	return att.CreatedAt
}

// disagrees says how the provider's record of a transaction differs from
// what the terminal said it charged ("" when it agrees): another amount
// or tip, currency, type or terminal, or a transaction older than the
// attempt (an id replayed). A record still pending agrees so far.
func (w *Witness) disagrees(att journal.Attempt, status, kind, serial, created, currency string, amount, gift int64) string {
	var why []string
	switch {
	case wsStatus(status, wsKO):
		why = append(why, "the provider lists it as "+status)
	case amount != att.Paid() || gift != att.Gift():
		why = append(why, fmt.Sprintf("the provider lists %d (tip %d) where the terminal said %d (tip %d)", amount, gift, att.Paid(), att.Gift()))
	}
	if k := HistoryKindOf(kind); k != "" && k != localapi.HistoryDebit {
		why = append(why, "the provider lists a "+strings.ToLower(strings.TrimSpace(kind)))
	}
	if cur := strings.TrimSpace(currency); cur != "" && att.ChargedCurrency != "" && !strings.EqualFold(cur, att.ChargedCurrency) {
		why = append(why, "in "+cur+" where the terminal said "+att.ChargedCurrency)
	}
	if w.opts.Serial != "" && serial != "" && serial != w.opts.Serial {
		why = append(why, "on terminal "+serial+", not "+w.opts.Serial)
	}
	if at, err := device.ParseCreatedAt(created); err == nil && at.Before(sent(att).Add(-w.opts.Skew)) {
		why = append(why, "made at "+at.UTC().Format(time.RFC3339)+", before this payment")
	}
	return strings.Join(why, "; ")
}

// notFoundByID: the provider answered that it has no transaction with
// this id (404, or a refusal of the id), rather than failing to answer.
func notFoundByID(err error) bool {
	var he *cloudapi.HTTPError
	var ae *cloudapi.APIError
	return (errors.As(err, &he) && (he.Status == 404 || he.Status == 403 || he.Status == 410)) || errors.As(err, &ae)
}

// needsWitness: an approval over the LAN, when the record can be read.
func (d *driver) needsWitness(to journal.State) bool {
	return to == journal.StateApproved && d.o.cfg.Witness != nil && d.ch.Name() == journal.ChannelLocal &&
		d.att.Kind == journal.KindDebit
}

// awaitWitness reads the provider's record of an approval just journaled
// awaiting it, every PollEvery until it speaks or Wait ends, and records
// its word. It returns the attempt as the journal then holds it.
func (o *Orchestrator) awaitWitness(ctx context.Context, att journal.Attempt, waiting func()) journal.Attempt {
	w := o.cfg.Witness
	deadline := w.opts.Now().Add(w.opts.Wait)
	answered := false
	for {
		waiting()
		rctx, cancel := context.WithTimeout(ctx, w.opts.Wait)
		r := w.read(rctx, att, o.cfg.Journal.Holders)
		cancel()
		answered = answered || r.readable
		switch {
		case r.mismatch != "":
			return o.recordWitness(ctx, att, journal.WitnessWord{To: journal.WitnessDenied, Note: r.mismatch, Raw: r.raw})
		case r.found:
			return o.recordWitness(ctx, att, journal.WitnessWord{To: journal.WitnessConfirmed, ProviderID: r.providerID,
				Note: "the provider lists it as the terminal said", Raw: r.raw})
		}
		if ctx.Err() != nil || !w.opts.Now().Before(deadline) {
			break
		}
		t := time.NewTimer(min(w.opts.PollEvery, deadline.Sub(w.opts.Now())))
		select {
		case <-t.C:
		case <-ctx.Done():
		}
		t.Stop()
	}
	switch {
	case ctx.Err() != nil:
		return att // stopped: the periodic check, or recovery, reads it
	case answered:
		return o.recordWitness(ctx, att, journal.WitnessWord{To: journal.WitnessDenied,
			Note: fmt.Sprintf("the provider answered, and listed no such transaction within %s", w.opts.Wait)})
	case w.opts.Strict:
		o.log.Warn("the provider's record could not be read: the order waits for staff", "uuid", att.UUID)
		return att
	}
	return o.recordWitness(ctx, att, journal.WitnessWord{To: journal.WitnessUnconfirmed,
		Note: fmt.Sprintf("the provider's record could not be read within %s: paid on the terminal's word, to be checked again", w.opts.Wait)})
}

func (o *Orchestrator) recordWitness(ctx context.Context, att journal.Attempt, word journal.WitnessWord) journal.Attempt {
	word.Who = WitnessedBy
	got, err := o.cfg.Journal.RecordWitness(ctx, att.UUID, word)
	if err != nil {
		o.log.Error("journal the provider's word on an approval", "uuid", att.UUID, "to", word.To, "err", err)
		return att
	}
	o.log.Info("the provider's record of an approval over the LAN", "uuid", att.UUID, "witness", got.Witness, "note", word.Note)
	return got
}

// recheckWitnesses reads the record once more for the approvals of this
// orchestrator whose provider's word may still change: one awaiting it
// (its process stopped while it waited), unconfirmed (the record could
// not be read then), or denied (a record later than the wait confirms
// it).
func (o *Orchestrator) recheckWitnesses(ctx context.Context) {
	w := o.cfg.Witness
	if w == nil {
		return
	}
	atts, err := o.cfg.Journal.WitnessOpen(ctx, w.opts.Now().Add(-w.opts.Recheck))
	if err != nil {
		o.log.Warn("approvals awaiting the provider's record not read", "err", err)
		return
	}
	for _, att := range atts {
		if ctx.Err() != nil {
			return
		}
		if !o.owns(att) || o.channelFor(att.Channel) == nil {
			continue
		}
		rctx, cancel := context.WithTimeout(ctx, w.opts.Wait)
		r := w.read(rctx, att, o.cfg.Journal.Holders)
		cancel()
		age := w.opts.Now().Sub(att.FinalAt)
		switch {
		case r.found:
			o.recordWitness(ctx, att, journal.WitnessWord{To: journal.WitnessConfirmed, ProviderID: r.providerID,
				Note: "the provider lists it as the terminal said (checked again)", Raw: r.raw})
		case att.Witness == journal.WitnessDenied || r.pending:
		case r.mismatch != "":
			o.recordWitness(ctx, att, journal.WitnessWord{To: journal.WitnessDenied, Note: r.mismatch + " (checked again)", Raw: r.raw})
		case r.readable && (att.Witness == journal.WitnessAwaiting && age >= w.opts.Wait || age >= w.opts.Lag):
			o.recordWitness(ctx, att, journal.WitnessWord{To: journal.WitnessDenied,
				Note: fmt.Sprintf("checked again %s after the approval: the provider lists no such transaction", age.Round(time.Second))})
		case !r.readable && att.Witness == journal.WitnessAwaiting && age >= w.opts.Wait && !w.opts.Strict:
			o.recordWitness(ctx, att, journal.WitnessWord{To: journal.WitnessUnconfirmed,
				Note: "the provider's record could not be read: paid on the terminal's word, to be checked again"})
		}
		if !r.readable {
			// The provider does not answer: the others wait for the next
			// check rather than hold recovery one wait each.
			return
		}
	}
}

// WitnessFlag says, for staff and the customer screen, why an approval
// pays nothing for want of the provider's record ("" when it pays).
func WitnessFlag(att journal.Attempt) string {
	switch att.Witness {
	case journal.WitnessDenied:
		return "the provider's record does not show this approval"
	case journal.WitnessAwaiting:
		return "the provider's record of this approval could not be read"
	}
	return ""
}

// UseWitness makes the provider's record the second witness of this
// orchestrator's approvals over the LAN. It is set before Recover: every
// attempt, recovered ones included, is then witnessed the same way.
func (o *Orchestrator) UseWitness(w *Witness) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.ready || len(o.runs) > 0 {
		return errors.New("payment: the witness is set before recovery")
	}
	o.cfg.Witness = w
	return nil
}
