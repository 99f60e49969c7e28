package cli

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/comptoir-pos/comptoir/backend/fiscal"
	"github.com/comptoir-pos/comptoir/backend/journal"
)

// recordEvery is how often the kiosk records the tickets of the orders
// paid and the money given back since it last looked.
const recordEvery = 2 * time.Second

// kioskID names this till on its fiscal records: the kiosk.id setting,
// else the machine's name.
func kioskID(ctx context.Context, db *journal.DB) string {
	if id, ok, _ := (settingsStore{db}).Get(ctx, "kiosk.id"); ok && id != "" {
		return id
	}
	if h, err := os.Hostname(); err == nil && h != "" {
		return h
	}
	return "comptoir"
}

// openLedger is the fiscal ledger of the data directory (its key made the
// first time).
func openLedger(ctx context.Context, p *payments) (*fiscal.Ledger, error) {
	key, err := fiscal.LoadOrCreateKey(p.dir)
	if err != nil {
		return nil, err
	}
	return fiscal.NewLedger(p.db, key, kioskID(ctx, p.db), "Comptoir "+version), nil
}

// runLedger records the kiosk's start (with how far each chain went),
// checks the chains, then records tickets until ctx ends, and the stop.
// A broken chain does not stop the kiosk: it is recorded as an event,
// written to the audit trail for staff and logged.
func runLedger(ctx context.Context, l *fiscal.Ledger, db *journal.DB, dir string, warn *fiscalWarning, logger *slog.Logger) {
	bg := context.WithoutCancel(ctx)
	if err := l.Start(bg, "version "+version); err != nil {
		logger.Error("fiscal: the start is not recorded", "err", err)
	}
	if v, err := l.Verify(bg); err != nil {
		logger.Error("fiscal: the records could not be verified", "err", err)
	} else if !v.OK {
		logger.Error("fiscal: the records do not verify: they were changed outside Comptoir", "broken", v.Broken.Error())
		warn.set(fmt.Sprintf("The fiscal records do not verify: the %s chain breaks at record %d (%s). They were changed outside Comptoir: keep the data directory as it is and tell the manager.",
			v.Broken.Kind, v.Broken.Seq, v.Broken.Why))
		_, _ = l.Event(bg, fiscal.EventBroken, "", v.Broken.Error())
		_ = db.AppendAudit(bg, journal.AuditRecord{Who: "system:fiscal", Action: "fiscal_broken", Subject: v.Broken.Kind, Detail: v.Broken.Error()})
	}
	t := time.NewTicker(recordEvery)
	defer t.Stop()
	closedOn := ""
	for {
		if _, err := l.RecordTickets(bg, logger); err != nil {
			logger.Error("fiscal: tickets not recorded", "err", err)
		}
		// The closings due (the days over, the months, the fiscal years):
		// at start, and once each new day.
		if today := time.Now().Format(time.DateOnly); today != closedOn {
			closedOn = today
			if cs, err := closeDue(bg, l, db, dir, logWriter{logger}); err != nil {
				logger.Error("fiscal: closings not made", "err", err)
			} else if len(cs) > 0 {
				logger.Info("fiscal: closings made", "count", len(cs), "last", cs[len(cs)-1].Name)
			}
		}
		select {
		case <-ctx.Done():
			if _, err := l.RecordTickets(bg, logger); err != nil {
				logger.Error("fiscal: tickets not recorded", "err", err)
			}
			if _, err := l.Event(bg, fiscal.EventStop, "", ""); err != nil {
				logger.Error("fiscal: the stop is not recorded", "err", err)
			}
			return
		case <-t.C:
		}
	}
}

// logWriter writes lines to a logger, at info.
type logWriter struct{ log *slog.Logger }

func (w logWriter) Write(p []byte) (int, error) {
	w.log.Info("fiscal: " + strings.TrimSpace(string(p)))
	return len(p), nil
}

// fiscalWarning is what staff mode says of the fiscal records.
type fiscalWarning struct {
	mu  sync.Mutex
	msg string
}

func (w *fiscalWarning) set(msg string) {
	w.mu.Lock()
	w.msg = msg
	w.mu.Unlock()
}

func (w *fiscalWarning) get() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.msg
}
