package localapi

import (
	"context"
	"errors"
	"time"
)

// Transactor reads a terminal's history; *Client satisfies it, and so do
// the wrappers that follow a terminal across addresses.
type Transactor interface {
	Transactions(ctx context.Context, req *TransactionsRequest) (*TransactionList, error)
}

// ZoneSlack widens a history request on both sides. The specification does
// not say in which time zone /transactions reads its date filters
// (createdAt is UTC); a terminal set to any zone (UTC-12 to UTC+14) still
// returns every entry of the window asked, which History then keeps by
// createdAt.
const ZoneSlack = 14 * time.Hour

// ErrHistoryTooLong is returned when a window holds more pages than History
// reads in one call.
var ErrHistoryTooLong = errors.New("localapi: the history of this period is too long to read in one go")

// History reads every page of the terminal's history whose createdAt is in
// [from, to) (to zero: up to now and beyond), pageSize entries a page
// (MaxTransactionsLimit when zero). It asks by whole days only: whether a
// terminal reads startTime and endTime as the ends of one period or as a
// time of day on every day is not shown, and a wrong guess would hide
// entries; days mean the same everywhere. Entries are de-duplicated by
// transactionId, since a transaction made while paging shifts the pages.
// An entry whose createdAt cannot be read is kept: where it belongs is
// unknown, and the caller decides what an entry of unknown time means.
// Each page gets its own call, bounded by pageTimeout when positive.
func History(ctx context.Context, r Transactor, from, to time.Time, pageSize int, pageTimeout time.Duration) ([]HistoryEntry, error) {
	if pageSize <= 0 || pageSize > MaxTransactionsLimit {
		pageSize = MaxTransactionsLimit
	}
	req := TransactionsRequest{Limit: pageSize}
	from = from.UTC()
	req.StartDate = from.Add(-ZoneSlack).Format(time.DateOnly)
	if !to.IsZero() {
		to = to.UTC()
		// endDate is exclusive: the day after the last one wanted.
		req.EndDate = to.Add(ZoneSlack).AddDate(0, 0, 1).Format(time.DateOnly)
	}
	var out []HistoryEntry
	seen := map[string]bool{}
	for page := 0; page < maxHistoryPages; page++ {
		pctx, cancel := ctx, context.CancelFunc(func() {})
		if pageTimeout > 0 {
			pctx, cancel = context.WithTimeout(ctx, pageTimeout)
		}
		list, err := r.Transactions(pctx, &req)
		cancel()
		if err != nil {
			return nil, err
		}
		for _, e := range list.Transactions {
			if e.TransactionID != "" {
				if seen[e.TransactionID] {
					continue
				}
				seen[e.TransactionID] = true
			}
			if c, err := e.Created(); err == nil && (c.Before(from) || (!to.IsZero() && !c.Before(to))) {
				continue
			}
			out = append(out, e)
		}
		req.Offset += len(list.Transactions)
		if len(list.Transactions) == 0 || req.Offset >= list.Total {
			return out, nil
		}
	}
	return nil, ErrHistoryTooLong
}

// maxHistoryPages bounds one History call: 100,000 entries at 200 a page.
const maxHistoryPages = 500
