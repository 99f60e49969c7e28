package staff

import (
	"context"
	"fmt"
	"time"

	"github.com/comptoir-pos/comptoir/backend/device"
	"github.com/comptoir-pos/comptoir/backend/reconcile"
)

// Reconciliation is a day of the journal beside the terminal's history and
// the provider's record (reconcile.Report), with what staff mode can do
// about each difference.
type Reconciliation struct {
	reconcile.Report
	// Fixes has one entry per difference, in the same order.
	Fixes []Fix `json:"fixes"`
}

// Fix actions staff mode offers for a difference.
const (
	// FixReverse: a charge no order knows, on this kiosk's terminal, under
	// 16 hours old: reversed in full (ReverseTransaction).
	FixReverse = "reverse"
	// FixRefundByAPI: a charge no order knows that can no longer be
	// reversed here (older than 16 hours, another terminal's of the
	// company, or online): refunded in full without the card
	// (RefundTransactionByAPI).
	FixRefundByAPI = "refund_by_api"
	// FixOpen: the difference concerns an attempt of the journal: its
	// detail (Attempts) has the money actions still possible.
	FixOpen = "open"
)

// Fix is what staff mode can do about one difference ("" when only the
// difference's Action sentence helps).
type Fix struct {
	Do            string `json:"do,omitempty"`
	TransactionID string `json:"transactionId,omitempty"`
	AttemptUUID   string `json:"attemptUuid,omitempty"`
	Amount        int64  `json:"amount,omitempty"` // cents, what a reversal gives back
}

// ReconcileAction is the audit trail's name of a reconciliation that found
// something for staff.
const ReconcileAction = "reconciliation"

// reconcileWho names the kiosk's own reconciliations in the audit trail.
const reconcileWho = "system:reconcile"

// Reconcile reconciles a day (yyyy-MM-dd, the kiosk's; "" today).
func (s *Staff) Reconcile(ctx context.Context, sessionID, day string) (Reconciliation, error) {
	if _, err := s.session(sessionID); err != nil {
		return Reconciliation{}, err
	}
	if _, _, err := s.dayBounds(day); err != nil {
		return Reconciliation{}, err
	}
	return s.reconcile(ctx, day)
}

func (s *Staff) reconcile(ctx context.Context, day string) (Reconciliation, error) {
	if s.cfg.Reconcile == nil {
		return Reconciliation{}, errorf(ETERMINAL, "Reconciliation is not available on this kiosk.")
	}
	rep, err := s.cfg.Reconcile(ctx, day)
	if err != nil {
		return Reconciliation{}, errorf(ETERMINAL, "The day could not be reconciled: %v.", err)
	}
	out := Reconciliation{Report: rep, Fixes: make([]Fix, len(rep.Differences))}
	for i, d := range rep.Differences {
		switch {
		case d.Kind == reconcile.KindNoOrder && d.Source == reconcile.SourceTerminal && d.OtherType == device.HistoryDebit &&
			d.TransactionID != "" && s.now().Sub(d.At) < reconcile.ReversalWindow && s.cfg.Payments != nil:
			out.Fixes[i] = Fix{Do: FixReverse, TransactionID: d.TransactionID, Amount: d.OtherAmount}
		case d.Kind == reconcile.KindNoOrder && d.OtherType == device.HistoryDebit && d.TransactionID != "" && s.cfg.Refunds != nil:
			out.Fixes[i] = Fix{Do: FixRefundByAPI, TransactionID: d.TransactionID, Amount: d.OtherAmount}
		case d.AttemptUUID != "":
			out.Fixes[i] = Fix{Do: FixOpen, AttemptUUID: d.AttemptUUID}
		}
	}
	return out, nil
}

// ReconcileDay is the kiosk's own reconciliation of a day: what it finds
// for staff is written to the audit trail (the staff report shows the day
// in full). It returns the report.
func (s *Staff) ReconcileDay(ctx context.Context, day string) (Reconciliation, error) {
	r, err := s.reconcile(ctx, day)
	if err != nil {
		s.audit(ctx, reconcileWho, ReconcileAction, day, "not reconciled: "+err.Error(), nil)
		return r, err
	}
	// Money the provider gave back outside Comptoir that day is recorded
	// against its orders, then the day is read again with it.
	if n, err := s.adoptGivenBack(ctx, reconcileWho, r.From.Add(-reconcile.Margin)); err != nil {
		s.log.Warn("reconciliation: money given back outside Comptoir not read", "day", r.Day, "err", err)
	} else if n > 0 {
		if again, err := s.reconcile(ctx, day); err == nil {
			r = again
		}
	}
	if r.NeedsStaff {
		detail := fmt.Sprintf("%d difference(s) between the journal, the terminal and the provider: see the staff report", len(r.Differences))
		for _, why := range []string{r.TerminalError, r.ProviderError} {
			if why != "" {
				detail += "; not read: " + why
			}
		}
		s.audit(ctx, reconcileWho, ReconcileAction, r.Day, detail, nil)
		s.log.Warn("reconciliation: staff needed", "day", r.Day, "differences", len(r.Differences))
	}
	return r, nil
}

// RunReconciliation reconciles the previous day now, then each day once it
// has ended (ReconcileAfter past the kiosk's midnight, when late answers
// are in), until ctx ends.
func (s *Staff) RunReconciliation(ctx context.Context) {
	if s.cfg.Reconcile == nil {
		return
	}
	for {
		now := s.now().In(s.cfg.Location)
		_, _ = s.ReconcileDay(ctx, now.AddDate(0, 0, -1).Format(time.DateOnly))
		y, m, d := now.Date()
		next := time.Date(y, m, d+1, 0, 0, 0, 0, s.cfg.Location).Add(ReconcileAfter)
		t := time.NewTimer(next.Sub(now))
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// ReconcileAfter is how long after midnight the day that ended is
// reconciled.
const ReconcileAfter = reconcile.Margin
