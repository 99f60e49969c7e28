package staff

import (
	"context"
	"fmt"
	"time"

	"github.com/comptoir-pos/comptoir/backend/fault"
)

// Money given back outside Comptoir (a refund in the provider's back
// office, a reversal on the terminal's keypad) is seen only through the
// provider's record, the Webservices. When they are set up, it is read
// before any give-back (a refund with the card, a reversal, a refund by
// API) and by the day's reconciliation, and adopted in the journal
// (journal.AdoptGiveBack) where it counts in what the order can still give
// back. Without them it is not seen, and staff mode says so
// (AttemptView.GivenBackElsewhereSeen).

// GivenBackAdopted is the audit trail's name of money given back outside
// Comptoir, recorded in the journal.
const GivenBackAdopted = "giveback_adopted"

// SeesGivenBackElsewhere reports whether money given back outside Comptoir
// is seen: the provider's Webservices are set up.
func (s *Staff) SeesGivenBackElsewhere() bool { return s.cfg.Refunds != nil }

// adoptGivenBack records in the journal the money the provider's record
// shows given back since from for these orders (every order of the
// journal it names, when none is given) that no attempt made. It returns
// how many it recorded.
func (s *Staff) adoptGivenBack(ctx context.Context, who string, from time.Time, orders ...string) (int, error) {
	if s.cfg.Refunds == nil {
		return 0, nil
	}
	gbs, err := s.cfg.Refunds.GivenBackElsewhere(ctx, from, orders...)
	if err != nil {
		return 0, errorf(ETERMINAL, "The provider's record could not be read to see money given back outside Comptoir (its back office, the terminal's keypad): %v. Nothing was sent.", err)
	}
	n := 0
	for _, g := range gbs {
		g.Who = who
		att, err := s.cfg.Journal.AdoptGiveBack(ctx, g)
		if fault.CodeOf(err) == fault.ECONFLICT {
			continue // recorded meanwhile
		}
		if err != nil {
			return n, journalErr(err, "Recording money given back outside Comptoir")
		}
		n++
		s.audit(ctx, who, GivenBackAdopted, g.TransactionID, fmt.Sprintf("%s of %d for order %s made outside Comptoir, seen in the provider's record: recorded as attempt %s",
			g.Kind, g.Amount, g.OrderID, att.UUID), g.Raw)
	}
	return n, nil
}

// beforeGivingBack reads what the provider gave back for the order
// outside Comptoir, before any money goes back: what can still be given
// back must be true.
func (s *Staff) beforeGivingBack(ctx context.Context, who, orderID string) error {
	if s.cfg.Refunds == nil {
		return nil
	}
	adopted, err := s.cfg.Refunds.AdoptGivenBack(ctx, who, orderID)
	for _, a := range adopted {
		s.audit(ctx, who, GivenBackAdopted, a.TransactionID, fmt.Sprintf("%s of %d for order %s made outside Comptoir, seen in the provider's record: recorded as attempt %s",
			a.Kind, a.Amount, a.OrderID, a.UUID), nil)
	}
	if err != nil {
		return errorf(ETERMINAL, "The provider's record could not be read to see money given back outside Comptoir (its back office, the terminal's keypad): %v. Nothing was sent.", err)
	}
	return nil
}
