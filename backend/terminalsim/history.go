package terminalsim

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
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
	list := localapi.TransactionList{
		Status: localapi.StatusOK, Count: len(page), Limit: limit, Offset: offset,
		Total: len(match), Transactions: page,
	}
	t.historyFaultLocked(&list, now)
	body, err := json.Marshal(list)
	if err != nil {
		http500(w)
		return
	}
	t.histServed.Pages++
	t.histServed.Bytes += int64(len(body))
	writeRaw(w, body)
}

// HistoryFault makes /transactions misbehave as a faulty or hostile
// terminal would. The zero value follows the specification.
type HistoryFault struct {
	// Extra lists this many made-up transactions more than the limit
	// asked, on every page.
	Extra int `json:"extra"`
	// Endless fills every page up to the limit with made-up transactions
	// and claims a total always beyond the page: the history never ends.
	Endless bool `json:"endless"`
	// Pad lengthens every listed transaction's issuer by this many bytes:
	// huge pages.
	Pad int `json:"pad"`
}

// Valid reports whether the fault can be: no count below 0, a pad of at
// most 64 MiB.
func (f HistoryFault) Valid() bool { return f.Extra >= 0 && f.Pad >= 0 && f.Pad <= 64<<20 }

// HistoryServed is what /transactions has answered since the last Reset.
type HistoryServed struct {
	Pages int   `json:"pages"`
	Bytes int64 `json:"bytes"` // bodies, as sent
}

// SetHistoryFault sets how /transactions misbehaves (the zero value: not).
func (t *Terminal) SetHistoryFault(f HistoryFault) error {
	if !f.Valid() {
		return fmt.Errorf("terminalsim: history fault %+v: extra and pad are 0 or more, pad at most 64 MiB", f)
	}
	t.locked(func() { t.histFault = f })
	return nil
}

// HistoryServed returns what /transactions has answered since the last
// Reset: how many pages, how many bytes.
func (t *Terminal) HistoryServed() HistoryServed {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.histServed
}

// historyFaultLocked applies the history fault to a page about to be sent.
func (t *Terminal) historyFaultLocked(l *localapi.TransactionList, now time.Time) {
	f := t.histFault
	made := func(n int) localapi.HistoryEntry {
		return localapi.HistoryEntry{Status: localapi.StatusOK, TransactionID: fmt.Sprintf("FAKE-%08d", n), Amount: 100,
			CurrencyCode: t.cfg.CurrencyCode, Type: localapi.HistoryDebit, AppVersion: t.cfg.AppVersion,
			CreatedAt: now.UTC().Format(createdAtLayout)}
	}
	if f.Endless {
		for n := l.Offset + len(l.Transactions); len(l.Transactions) < l.Limit; n++ {
			l.Transactions = append(l.Transactions, made(n))
		}
		l.Total = l.Offset + len(l.Transactions) + l.Limit
	}
	for i := range f.Extra {
		l.Transactions = append(l.Transactions, made(1_000_000_000+l.Offset+i))
	}
	if f.Pad > 0 {
		pad := strings.Repeat("X", f.Pad)
		for i := range l.Transactions {
			l.Transactions[i].Issuer += pad
		}
	}
	l.Count = len(l.Transactions)
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
