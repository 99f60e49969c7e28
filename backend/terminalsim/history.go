package terminalsim

import (
	"cmp"
	"net/http"
	"slices"
	"time"

	"github.com/comptoir-pos/comptoir/backend/localapi"
)

// createdAtLayout is UTC ISO 8601 with milliseconds.
const createdAtLayout = "2006-01-02T15:04:05.000Z"

// bound reads one end of a /transactions window: a date (yyyy-MM-dd) and a
// time (hh:mm:ss), either of which may be missing. A time without a date is
// on the terminal's current day; a date without a time is at 00:00:00. Both
// are read in UTC, the zone of createdAt.
func bound(date, clock, dateName, clockName string, now time.Time) (at time.Time, set bool, msg string) {
	if date == "" && clock == "" {
		return time.Time{}, false, ""
	}
	if date == "" {
		date = now.Format(time.DateOnly)
	} else if _, err := time.Parse(time.DateOnly, date); err != nil || len(date) != 10 {
		return time.Time{}, false, MsgTransactionsParam(dateName)
	}
	if clock == "" {
		clock = "00:00:00"
	} else if _, err := time.Parse(time.TimeOnly, clock); err != nil || len(clock) != 8 {
		return time.Time{}, false, MsgTransactionsParam(clockName)
	}
	at, err := time.ParseInLocation(time.DateTime, date+" "+clock, time.UTC)
	if err != nil {
		return time.Time{}, false, MsgTransactionsParam(dateName)
	}
	return at, true, ""
}

func (t *Terminal) handleTransactions(w http.ResponseWriter, r *http.Request) {
	var req localapi.TransactionsRequest
	if readBody(r, &req, true) != bodyOK {
		badRequest(w)
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.nowLocked()
	from, hasFrom, msg := bound(req.StartDate, req.StartTime, "startDate", "startTime", now)
	if msg != "" {
		writeStatus(w, localapi.StatusKO, msg)
		return
	}
	to, hasTo, msg := bound(req.EndDate, req.EndTime, "endDate", "endTime", now)
	if msg != "" {
		writeStatus(w, localapi.StatusKO, msg)
		return
	}
	if !hasFrom && !hasTo {
		from, hasFrom = now.Add(-HistoryWindow), true
	}
	limit := req.Limit
	if limit <= 0 {
		limit = DefaultTransactionsLimit
	}
	limit = min(limit, MaxTransactionsLimit)
	offset := max(req.Offset, 0)

	var match []*txRecord
	for _, tx := range t.txs {
		if (hasFrom && tx.at.Before(from)) || (hasTo && !tx.at.Before(to)) {
			continue
		}
		match = append(match, tx)
	}
	// Newest first; among equal times, the last recorded first.
	slices.Reverse(match)
	slices.SortStableFunc(match, func(a, b *txRecord) int { return cmp.Compare(b.at.UnixNano(), a.at.UnixNano()) })

	page := []localapi.HistoryEntry{}
	if offset < len(match) {
		for _, tx := range match[offset:min(offset+limit, len(match))] {
			page = append(page, localapi.HistoryEntry{
				Status: tx.status, TransactionID: tx.id, Amount: tx.amount, GiftAmount: tx.gift,
				CurrencyCode: t.cfg.CurrencyCode, Issuer: tx.issuer, Scheme: tx.scheme, Type: tx.kind,
				Customer: tx.customer, Reference: tx.reference, CartID: tx.cartID,
				AppVersion: t.cfg.AppVersion, CreatedAt: tx.at.UTC().Format(createdAtLayout),
			})
		}
	}
	writeJSON(w, localapi.TransactionList{
		Status: localapi.StatusOK, Count: len(page), Limit: limit, Offset: offset,
		Total: len(match), Transactions: page,
	})
}

// Record is a transaction of the terminal's history as its provider
// learns of it: every card read (approved or declined) and every reversal,
// whichever way it was asked (the Local API, the provider's cloud, the
// keypad).
type Record struct {
	TransactionID  string    `json:"transactionId"`
	Kind           string    `json:"type"`   // debit, refund or reversal
	Status         string    `json:"status"` // ok or ko
	Amount         int64     `json:"amount"`
	GiftAmount     int64     `json:"giftAmount"`
	Currency       string    `json:"currencyCode"`
	IdempotentUUID string    `json:"idempotentUuid,omitempty"`
	CartID         string    `json:"cartId,omitempty"`
	Reference      string    `json:"reference,omitempty"`
	Scheme         string    `json:"scheme,omitempty"`
	Issuer         string    `json:"issuer,omitempty"`
	Initial        string    `json:"initialTransactionId,omitempty"` // a reversal's original
	Time           time.Time `json:"time"`                           // terminal clock
}

// History is every transaction of the terminal, oldest first.
func (t *Terminal) History() []Record {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]Record, 0, len(t.txs))
	for _, tx := range t.txs {
		out = append(out, Record{
			TransactionID: tx.id, Kind: tx.kind, Status: tx.status, Amount: tx.amount, GiftAmount: tx.gift,
			Currency: t.cfg.CurrencyCode, IdempotentUUID: tx.uuid, CartID: tx.cartID, Reference: tx.reference,
			Scheme: tx.scheme, Issuer: tx.issuer, Initial: tx.initial, Time: tx.at,
		})
	}
	return out
}
