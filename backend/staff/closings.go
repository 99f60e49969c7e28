package staff

import (
	"context"
	"fmt"
	"time"

	"github.com/comptoir-pos/comptoir/backend/device"
	"github.com/comptoir-pos/comptoir/backend/fiscal"
	"github.com/comptoir-pos/comptoir/backend/settings"
)

// ClosingSummary is a recorded closing in staff mode's list.
type ClosingSummary struct {
	Number int64     `json:"number"`
	Period string    `json:"period"` // day, month, year
	Name   string    `json:"name"`   // 2026-11-24, 2026-11, 2026-01 (the fiscal year's first month)
	At     time.Time `json:"at"`
	// Tickets the closing covers; Total its period's grand total and
	// Perpetual the grand total since the first ticket (cents).
	Tickets   int64  `json:"tickets"`
	Total     int64  `json:"total"`
	Perpetual int64  `json:"perpetual"`
	Currency  string `json:"currency"`
	// Fingerprint is the closing's chain fingerprint, as printed.
	Fingerprint string `json:"fingerprint"`
}

// Closings lists every closing recorded, days, months and fiscal years,
// newest first.
func (s *Staff) Closings(ctx context.Context, sessionID string) ([]ClosingSummary, error) {
	if _, err := s.session(sessionID); err != nil {
		return nil, err
	}
	if s.cfg.Ledger == nil {
		return []ClosingSummary{}, nil
	}
	cs, err := s.cfg.Ledger.Closings(ctx)
	if err != nil {
		return nil, journalErr(err, "Reading the closings")
	}
	currency := s.currency(ctx)
	out := make([]ClosingSummary, 0, len(cs))
	for _, c := range cs {
		out = append(out, ClosingSummary{Number: c.Number, Period: c.Period, Name: c.Name, At: c.At, Tickets: c.Tickets,
			Total: c.Total, Perpetual: c.Perpetual, Currency: currency, Fingerprint: c.Fingerprint})
	}
	return out, nil
}

// PrintClosing prints a recorded closing (a day's, a month's, a fiscal
// year's) again on the terminal's printer.
func (s *Staff) PrintClosing(ctx context.Context, sessionID string, number int64) (fiscal.Closing, error) {
	sess, err := s.session(sessionID)
	if err != nil {
		return fiscal.Closing{}, err
	}
	if s.cfg.Ledger == nil {
		return fiscal.Closing{}, errorf(EINVALID, "The fiscal journal is not kept on this kiosk.")
	}
	c, ok, err := s.cfg.Ledger.ClosingNumbered(ctx, number)
	if err != nil {
		return fiscal.Closing{}, journalErr(err, "Reading the closing")
	}
	if !ok {
		return fiscal.Closing{}, errorf(ENOTFOUND, "There is no closing number %d.", number)
	}
	return c, s.printClosing(ctx, sess.Who, c)
}

// printClosing prints a closing on the terminal's printer, and says so in
// the audit trail.
func (s *Staff) printClosing(ctx context.Context, who string, c fiscal.Closing) error {
	st, err := settings.LoadSettings(ctx, s.cfg.Journal, s.log)
	if err != nil {
		return journalErr(err, "Reading the settings")
	}
	currency := s.currency(ctx)
	text := c.Text(st.ReceiptColumns, func(cents int64) string { return formatMoney(cents, currency) })
	tctx, cancel := s.terminalCtx(ctx)
	defer cancel()
	resp, err := s.cfg.Terminal.Print(tctx, device.Print{Data: text, Format: device.FormatText})
	if err != nil {
		s.audit(ctx, who, "z_print_failed", c.Name, err.Error(), device.RawOf(err))
		return terminalErr(err, receiptMessage, "The closing is recorded, but it was not printed")
	}
	s.audit(ctx, who, "z_printed", c.Name, fmt.Sprintf("%s closing %d of %s printed", c.Period, c.Number, c.Name), resp.Raw)
	return nil
}
