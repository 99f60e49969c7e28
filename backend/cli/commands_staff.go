package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"github.com/comptoir-pos/comptoir/backend/device"
	"io"
	"os"
	"strings"
	"time"

	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/staff"
)

// stdin is where `comptoir pin` reads the PIN (tests replace it).
var stdin io.Reader = os.Stdin

// cmdPin looks after the staff PIN from the machine itself, with
// Comptoir closed (the journal is one process's at a time).
//
// Without a flag it sets the PIN: before a kiosk is opened to the public
// (otherwise the first person to find the PIN pad sets it), when the PIN
// is forgotten, or when the stored PIN cannot be checked (a damaged
// record). It replaces any PIN, lifts every lockout and ends open
// sessions. The PIN is read from standard input, never from the command
// line, which other users of the machine can see.
//
// --clear-lockout lifts every PIN pad lockout and leaves the PIN as it is.
// --recovery-code prints a new one-time recovery code, which lifts every
// lockout from the locked PIN pad itself (for a kiosk without a keyboard
// whose screen a customer keeps locking); it replaces the previous one.
// The audit trail says each was done here.
func cmdPin(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var common commonFlags
	fs := newFlagSet("pin", stderr, &common)
	clearLockout := fs.Bool("clear-lockout", false, "lift every PIN pad lockout; the PIN is not changed")
	recovery := fs.Bool("recovery-code", false, "print a new one-time recovery code (it replaces the previous one)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() != 0 || (*clearLockout && *recovery) {
		fmt.Fprintln(stderr, "usage: echo NEWPIN | comptoir pin [--data-dir DIR]")
		fmt.Fprintln(stderr, "       comptoir pin --clear-lockout | --recovery-code [--data-dir DIR]")
		return 2
	}
	var pin string
	if !*clearLockout && !*recovery {
		line, err := bufio.NewReader(stdin).ReadString('\n')
		if err != nil && line == "" {
			fmt.Fprintln(stderr, "comptoir pin: no PIN on standard input (echo NEWPIN | comptoir pin)")
			return 2
		}
		pin = strings.TrimSpace(line)
	}
	db, dir, err := common.openJournal(ctx)
	if err != nil {
		return failed(stderr, "pin", err)
	}
	defer db.Close()
	st, err := staff.New(staff.Config{Journal: db, Terminal: device.LocalAt(func() string { return "" }), Ledger: pinLedger(ctx, dir, db, stderr)})
	if err != nil {
		return failed(stderr, "pin", err)
	}
	switch {
	case *clearLockout:
		err = st.ClearLockouts(ctx, "command line")
		if err == nil {
			fmt.Fprintln(stdout, "Every PIN pad lockout is lifted; the PIN is unchanged.")
		}
	case *recovery:
		var code string
		if code, err = st.NewRecoveryCode(ctx, "command line"); err == nil {
			fmt.Fprintln(stdout, "One-time recovery code (shown only now: write it down and keep it away from the kiosk):")
			fmt.Fprintln(stdout, code)
			fmt.Fprintln(stdout, "On a locked PIN pad, \"Recovery code\" takes it and lifts every lockout, once. It replaces any previous code.")
		}
	default:
		err = st.ResetPIN(ctx, pin, "command line")
		if err == nil {
			fmt.Fprintln(stdout, "The staff PIN is set.")
		}
	}
	if err != nil {
		return failed(stderr, "pin", err)
	}
	return 0
}

// cmdAudit prints the audit trail of staff actions that concern no
// payment (a payment's own events are in `comptoir attempts`), newest
// first, as JSON.
func cmdAudit(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var common commonFlags
	fs := newFlagSet("audit", stderr, &common)
	limit := fs.Int("limit", 50, "at most this many lines (0: all)")
	action := fs.String("action", "", "only this action (unlock, setting, reversal...)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	db, _, err := common.openJournal(ctx)
	if err != nil {
		return failed(stderr, "audit", err)
	}
	defer db.Close()
	recs, err := db.Audit(ctx, journal.AuditQuery{Limit: *limit, Action: *action})
	if err != nil {
		return failed(stderr, "audit", err)
	}
	type line struct {
		At      time.Time `json:"at"`
		Who     string    `json:"who"`
		Action  string    `json:"action"`
		Subject string    `json:"subject,omitempty"`
		Detail  string    `json:"detail,omitempty"`
		Raw     any       `json:"raw,omitempty"` // JSON as it came, else text
	}
	out := make([]line, 0, len(recs))
	for _, r := range recs {
		l := line{At: r.At, Who: r.Who, Action: r.Action, Subject: r.Subject, Detail: r.Detail}
		switch {
		case json.Valid(r.Raw):
			l.Raw = json.RawMessage(r.Raw)
		case len(r.Raw) > 0:
			l.Raw = string(r.Raw)
		}
		out = append(out, l)
	}
	printJSON(stdout, out)
	return 0
}
