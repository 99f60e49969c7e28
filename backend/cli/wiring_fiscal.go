package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
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

// keyringEnv asks for the Linux Secret Service to keep the signing key
// (set by the installer, like COMPTOIR_FISCAL_KEYS: where the key lives is
// not for the data folder to say).
const keyringEnv = "COMPTOIR_FISCAL_KEYRING"

// keyStore is the data directory's key store: a folder of its own under
// COMPTOIR_FISCAL_KEYS when the installer chose one; the Secret Service
// when asked for (COMPTOIR_FISCAL_KEYRING=secret-service, Linux); for a
// process running as root on Linux, a root-only folder under /var/lib;
// the system's keyring on Windows and macOS; else beside the data (the
// fallback). docs/fiscal.md says what each protects against.
func keyStore(dir string) (fiscal.KeyStore, error) {
	asked := os.Getenv(keyringEnv)
	if asked != "" && (asked != "secret-service" || runtime.GOOS != "linux") {
		return fiscal.KeyStore{}, fmt.Errorf("%s=%q: the only keyring to ask for is secret-service, on Linux (Windows and macOS use theirs)", keyringEnv, asked)
	}
	switch root := os.Getenv("COMPTOIR_FISCAL_KEYS"); {
	case root != "":
		return fiscal.NewKeyStore(dir, root)
	case asked != "":
		return fiscal.NewKeyringStore(dir, fiscal.SystemKeyring{}, fiscal.SecretService)
	case runtime.GOOS == "linux" && os.Geteuid() == 0:
		return fiscal.NewKeyStore(dir, fiscal.ProtectedKeyRoot)
	case fiscal.SystemKeyringName() != "":
		return fiscal.NewKeyringStore(dir, fiscal.SystemKeyring{}, fiscal.SystemKeyringName())
	}
	return fiscal.NewKeyStore(dir, "")
}

// loadLedger is the fiscal ledger of the data directory, its key made the
// first time, keeping its witness in the store's folder; and the store,
// which says where the key is.
func loadLedger(ctx context.Context, dir string, db *journal.DB) (*fiscal.Ledger, fiscal.KeyStore, error) {
	ks, err := keyStore(dir)
	if err != nil {
		return nil, ks, err
	}
	key, err := ks.Load()
	if err != nil {
		return nil, ks, err
	}
	l := fiscal.NewLedger(db, key, kioskID(ctx, db), "Comptoir "+version)
	if err := l.KeepWitness(ks.WitnessPath()); err != nil {
		return nil, ks, err
	}
	return l, ks, nil
}

// openLedger is the kiosk's fiscal ledger; it notes the payment attempts
// left unfinished, before the kiosk resumes them, for the start's
// recovery event. The store's warning says why the key is beside the data although the
// system offers a keyring ("" when it is not).
func openLedger(ctx context.Context, p *payments) (*fiscal.Ledger, string, error) {
	l, ks, err := loadLedger(ctx, p.dir, p.db)
	if err != nil {
		return nil, "", err
	}
	if open, err := p.db.OpenAttempts(ctx); err == nil {
		l.PendingAtStart = len(open)
	}
	return l, ks.Warning, nil
}

// pinLedger is the ledger that records a PIN reset from the command line
// (nil, said on w, when the key cannot be read: the PIN is set all the
// same).
func pinLedger(ctx context.Context, dir string, db *journal.DB, w io.Writer) *fiscal.Ledger {
	l, ks, err := loadLedger(ctx, dir, db)
	if err != nil {
		fmt.Fprintln(w, "comptoir pin: the reset is not recorded in the fiscal journal:", err)
		return nil
	}
	if ks.Warning != "" {
		fmt.Fprintln(w, "comptoir pin: fiscal:", ks.Warning)
	}
	return l
}

// runLedger records the kiosk's start (with how far each chain went),
// checks the chains, then records tickets until ctx ends, and the stop.
// A broken chain does not stop the kiosk: it is recorded as an event,
// written to the audit trail for staff and logged. A wall clock moved
// apart from the time elapsed is recorded as it is seen.
func runLedger(ctx context.Context, l *fiscal.Ledger, db *journal.DB, dir string, warn *fiscalWarning, logger *slog.Logger) {
	bg := context.WithoutCancel(ctx)
	l.OnRefused(func(orderID, why string) {
		logger.Error("fiscal: a sale out of bounds is not signed", "order", orderID, "why", why)
		warn.add(fmt.Sprintf("Order %s is paid but its fiscal ticket was refused (%s). Look at the order and the audit trail (fiscal_refused).", orderID, strings.TrimPrefix(why, "fiscal: ")))
	})
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
	origin := time.Now()
	var clock fiscal.ClockWatch
	for {
		now := time.Now()
		if jump := clock.Observe(now.Round(0), now.Sub(origin)); jump != 0 {
			if err := l.ClockMoved(bg, jump, now); err != nil {
				logger.Error("fiscal: a clock change is not recorded", "err", err)
			}
		}
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

// add says one more thing, after what is said already.
func (w *fiscalWarning) add(msg string) {
	w.mu.Lock()
	if w.msg != "" {
		msg = w.msg + " " + msg
	}
	w.msg = msg
	w.mu.Unlock()
}

func (w *fiscalWarning) get() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.msg
}
