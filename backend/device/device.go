// Package device is the payment terminal's services other than taking a
// payment: printing on its printer, sharing a receipt, reading its history
// and checking that it answers. It speaks its own words, whatever carries
// the request: the Local API on the shop's network (Local, LocalAt) or the
// provider's Cloud API to the terminal with a serial number (Cloud).
//
// The kiosk and staff mode use only this package's types: they never see
// the wire shapes of either API, and every failure reaches them as an
// *Error that says whether the terminal refused (nothing was done), whether
// nothing was sent, or whether the request may have arrived. Payments,
// reversals and refunds go through backend/payment, whose channels own
// those rules.
//
// The vocabulary a payment shares with a receipt (ReceiptTicket, Tax,
// Customer) lives here too, so that backend/receipt and the callers of
// backend/payment need neither API.
package device

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// Printer prints on the terminal's printer and shares receipts from it.
type Printer interface {
	Print(ctx context.Context, p Print) (Answer, error)
	ShareReceipt(ctx context.Context, s Share) (Answer, error)
}

// Historian reads the terminal's history, one page at a time.
type Historian interface {
	History(ctx context.Context, q HistoryQuery) (HistoryPage, error)
}

// Terminal is everything but payments.
type Terminal interface {
	Printer
	Historian
	// Ping checks that the terminal (or, through the cloud, the provider)
	// answers; with greet the terminal shows its greeting where it can.
	Ping(ctx context.Context, greet bool) (Answer, error)
}

// Format is how a receipt or a print job is written.
type Format string

const (
	FormatText   Format = "text"   // plain text
	FormatESCPOS Format = "escpos" // ESC/POS commands, as a hex string
)

// Medium is how the terminal shares a receipt: it asks the customer for
// the address or the number itself.
type Medium string

const (
	ShareEmail   Medium = "email"
	ShareSMS     Medium = "sms"
	SharePrint   Medium = "print"
	ShareService Medium = "service" // the customer's preference
)

// Media are the ways a receipt can be shared.
var Media = []Medium{ShareEmail, ShareSMS, SharePrint, ShareService}

// Print is a print job.
type Print struct {
	Data   string // text, or ESC/POS as hex
	Format Format
}

// Share asks the terminal to share the receipt of one of its transactions.
type Share struct {
	Ticket        *ReceiptTicket
	TransactionID string
	Medium        Medium
}

// ReceiptTicket is the merchant's part of a receipt, as the terminal
// prints or sends it with its own.
type ReceiptTicket struct {
	Data         string
	Format       Format
	TaxBreakdown []Tax
}

// Tax is one VAT rate of a receipt.
type Tax struct {
	Amount int64 // cents
	// Percent is the rate when it is a whole percentage (20 for 20 %); nil
	// for a rate like 5.5 %, whose Amount says it exactly.
	Percent *int
}

// Customer is who pays, when the shop knows them.
type Customer struct {
	FirstName, LastName string
	Email               string
	Phone               string // international format, starting with +
	BirthDate           string // yyyy-MM-dd
}

// Answer is a terminal's (or the provider's) acceptance of a request that
// changes nothing of value: accepted, not necessarily done (a print job is
// accepted before it is printed).
type Answer struct {
	Message string
	Raw     json.RawMessage // verbatim, for the journal
}

// History entry types.
const (
	HistoryDebit     = "debit"
	HistoryRefund    = "refund"
	HistoryReversal  = "reversal"
	StatusOK         = "ok"
	MaxHistoryPage   = 200 // the largest page either API returns
	historyZoneSlack = 14 * time.Hour
)

// The ceiling of one ReadHistory: a terminal (or a provider) that keeps
// saying "more" cannot keep a reader going, nor fill its memory. A busy
// kiosk's terminal makes a few hundred transactions a day, and a period is
// read as whole days widened by a day: 20,000 entries is tens of such
// days. What a read holds stays under MaxHistoryBytes of entries plus one
// page (each page is bounded by the API clients, 1 MiB at most).
const (
	MaxHistoryEntries = 20_000   // entries fetched, kept or not
	MaxHistoryPages   = 200      // pages asked: short pages end a read too
	MaxHistoryBytes   = 16 << 20 // bytes of the entries' fields fetched
)

// HistoryQuery selects a page of the history. Dates are yyyy-MM-dd (the
// end exclusive), times hh:mm:ss; the Local API does not say in which zone
// it reads them, the Cloud adapter asks in UTC.
type HistoryQuery struct {
	StartDate, EndDate string
	StartTime, EndTime string
	Limit, Offset      int
}

// HistoryPage is one page of the history.
type HistoryPage struct {
	Entries              []HistoryEntry
	Total, Limit, Offset int
	Raw                  json.RawMessage
}

// HistoryEntry is one transaction of the terminal's history, in the words
// the staff screens show.
type HistoryEntry struct {
	Status        string `json:"status,omitempty"` // ok or ko
	TransactionID string `json:"transactionId,omitempty"`
	Amount        int64  `json:"amount,omitempty"` // cents, without the tip
	GiftAmount    int64  `json:"giftAmount,omitempty"`
	CurrencyCode  string `json:"currencyCode,omitempty"`
	Issuer        string `json:"issuer,omitempty"`
	Scheme        string `json:"scheme,omitempty"`
	Type          string `json:"type,omitempty"` // debit, refund, reversal, ...
	CartID        string `json:"cartId,omitempty"`
	Reference     string `json:"reference,omitempty"`
	CreatedAt     string `json:"createdAt,omitempty"` // ISO 8601, UTC when it has no zone
}

// Created parses CreatedAt, in UTC (ParseCreatedAt).
func (h HistoryEntry) Created() (time.Time, error) { return ParseCreatedAt(h.CreatedAt) }

// ReadHistory reads every page of the history whose createdAt is in
// [from, to) (to zero: up to now and beyond), pageSize entries a page
// (MaxHistoryPage when zero). It asks by whole days (HistoryDays) and keeps
// the entries of the period (InHistoryPeriod: one whose createdAt cannot be
// read is kept, the caller decides what it means). Entries are
// de-duplicated by transactionId, since a transaction made while paging
// shifts the pages. Each page gets its own call, bounded by pageTimeout
// when positive.
//
// A page with more entries than asked is refused (ErrHistoryPage), and a
// period past MaxHistoryEntries, MaxHistoryPages or MaxHistoryBytes stops
// the read with ErrHistoryTooLong: nothing is returned then, since a
// partial history would read as "no such transaction".
func ReadHistory(ctx context.Context, h Historian, from, to time.Time, pageSize int, pageTimeout time.Duration) ([]HistoryEntry, error) {
	if pageSize <= 0 || pageSize > MaxHistoryPage {
		pageSize = MaxHistoryPage
	}
	q := HistoryQuery{Limit: pageSize}
	q.StartDate, q.EndDate = HistoryDays(from, to)
	var (
		out     []HistoryEntry
		seen    = map[string]bool{}
		fetched int
		bytes   int
	)
	for range MaxHistoryPages {
		page, err := historyPage(ctx, h, q, pageTimeout)
		if err != nil {
			return nil, err
		}
		fetched += len(page.Entries)
		for _, e := range page.Entries {
			bytes += e.size()
		}
		if fetched > MaxHistoryEntries || bytes > MaxHistoryBytes {
			break
		}
		for _, e := range page.Entries {
			if e.TransactionID != "" {
				if seen[e.TransactionID] {
					continue
				}
				seen[e.TransactionID] = true
			}
			if !InHistoryPeriod(e.CreatedAt, from, to) {
				continue
			}
			out = append(out, e)
		}
		q.Offset += len(page.Entries)
		if lastPage(page, q) {
			return out, nil
		}
	}
	return nil, fmt.Errorf("%w (more than %d entries, %d pages or %d MiB)", ErrHistoryTooLong, MaxHistoryEntries, MaxHistoryPages, MaxHistoryBytes>>20)
}

// lastPage reports whether page, read up to q.Offset, ends the history.
// What total counts is not shown, so it is not trusted alone: an empty page
// ends it; a full one never does; a short one does when total says nothing
// follows (without a total, the next page is asked, and it is empty).
func lastPage(page HistoryPage, q HistoryQuery) bool {
	switch {
	case len(page.Entries) == 0:
		return true
	case len(page.Entries) >= q.Limit:
		return false
	}
	return page.Total > 0 && q.Offset >= page.Total
}

// historyPage asks for one page, within pageTimeout, and checks that it
// keeps to the limit asked.
func historyPage(ctx context.Context, h Historian, q HistoryQuery, pageTimeout time.Duration) (HistoryPage, error) {
	if pageTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, pageTimeout)
		defer cancel()
	}
	page, err := h.History(ctx, q)
	if err != nil {
		return HistoryPage{}, err
	}
	return page, checkPage(q, page)
}

// checkPage refuses a page that lists more entries than the limit asked
// (the APIs' default, 20, when none was), or counts that cannot be.
func checkPage(q HistoryQuery, p HistoryPage) error {
	asked := q.Limit
	if asked <= 0 {
		asked = 20
	}
	if len(p.Entries) > asked || p.Total < 0 {
		return &Error{Kind: Unsure, Raw: p.Raw, Err: fmt.Errorf("%w: %d entries (total %d) for a limit of %d", ErrHistoryPage, len(p.Entries), p.Total, asked)}
	}
	return nil
}

// size is what an entry holds in memory, near enough: its text and its
// numbers.
func (h HistoryEntry) size() int {
	return 16 + len(h.Status) + len(h.TransactionID) + len(h.CurrencyCode) + len(h.Issuer) + len(h.Scheme) +
		len(h.Type) + len(h.CartID) + len(h.Reference) + len(h.CreatedAt)
}
