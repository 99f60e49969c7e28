package staff

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/comptoir-pos/comptoir/backend/device"
	"github.com/comptoir-pos/comptoir/backend/journal"
)

// AuditEntry is one staff action that concerns no journal attempt (PIN
// checks, settings changes, reversals of transactions the journal does not
// know). Actions on an attempt are events of that attempt instead.
type AuditEntry struct {
	At      time.Time       `json:"at"`
	Who     string          `json:"who"`               // "staff:<session prefix>", "kiosk", "system"
	Action  string          `json:"action"`            // unlock, unlock_failed, setting, reversal...
	Subject string          `json:"subject,omitempty"` // a setting key, a transaction id
	Detail  string          `json:"detail,omitempty"`
	Raw     json.RawMessage `json:"raw,omitempty"` // the terminal's raw answer, when JSON
}

// ownActions are the actions this package writes. Record refuses them: a
// line must keep meaning what this package means by it (the day's
// comparison reads "reversal" lines back as reversals made at this kiosk).
// TestOwnActionsAreReserved keeps the list complete.
var ownActions = map[string]bool{
	actionAttemptNote: true, "audit_import": true, "audit_import_unreadable": true,
	"lock": true, "pin_change_refused": true, "pin_changed": true, "pin_reset": true, "pin_set": true,
	"ping": true, "refund_refused": true, "report": true, "report_print_failed": true,
	"report_printed": true, actionReversal: true, "setting": true, "setting_refused": true,
	"unlock": true, "unlock_failed": true, "charge_adopted": true, "link_refused": true,
	"z_printed": true, "z_print_failed": true, ReconcileAction: true, "accept_order": true, "order_ticket_not_printed": true,
	ActionLockout: true, ActionLockoutCleared: true, ActionRecoveryMade: true, ActionRecoveryFailed: true,
}

// Actions read back by the day's comparison (readDay).
const (
	actionReversal    = "reversal"     // a reversal of a transaction the journal does not know
	actionAttemptNote = "attempt_note" // a note its attempt could not take
)

const maxActionLength = 64

// Record writes an action taken outside this package (choosing the
// terminal, closing the app...) to the audit trail, in the name of the
// session's member of staff. action is a short name of lowercase letters,
// digits, '_', '.' and '-'; the names this package writes itself are
// refused (EINVALID). Unlike this package's own actions, whose lost audit
// line is only logged, Record returns the journal's refusal: the caller
// decides whether the action may go ahead unrecorded.
func (s *Staff) Record(ctx context.Context, sessionID, action, subject, detail string) error {
	sess, err := s.session(sessionID)
	if err != nil {
		return err
	}
	if !validAction(action) {
		return errorf(EINVALID, "%q cannot be recorded: an action is 1 to %d lowercase letters, digits, '_', '.' or '-'.", action, maxActionLength)
	}
	if ownActions[action] {
		return errorf(EINVALID, "%q is an action of the staff screen itself and cannot be recorded from outside it.", action)
	}
	e := AuditEntry{At: s.now().UTC(), Who: sess.Who, Action: action, Subject: subject, Detail: detail}
	if err := s.appendAudit(ctx, e); err != nil {
		return journalErr(err, "Recording the action")
	}
	return nil
}

func validAction(a string) bool {
	if a == "" || len(a) > maxActionLength {
		return false
	}
	for _, c := range a {
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '_', c == '.', c == '-':
		default:
			return false
		}
	}
	return true
}

// audit writes an action that concerns no attempt to the journal's audit
// table. A raw answer that is not JSON goes into the detail, so that every
// entry reads back as JSON.
func (s *Staff) audit(ctx context.Context, who, action, subject, detail string, raw []byte) {
	e := AuditEntry{At: s.now().UTC(), Who: who, Action: action, Subject: subject, Detail: detail}
	if len(raw) > 0 {
		if json.Valid(raw) {
			e.Raw = json.RawMessage(raw)
		} else {
			e.Detail += "; raw answer: " + string(raw)
		}
	}
	if err := s.appendAudit(ctx, e); err != nil {
		// The action happened: losing its audit line must not undo it, but
		// it must be seen.
		s.log.Error("staff: audit entry not stored", "who", who, "action", action, "subject", subject, "detail", detail, "err", err)
	}
}

func (s *Staff) appendAudit(ctx context.Context, e AuditEntry) error {
	s.importLegacyAudit(ctx)
	return s.cfg.Journal.AppendAudit(ctx, journal.AuditRecord{
		At: e.At, Who: e.Who, Action: e.Action, Subject: e.Subject, Detail: e.Detail, Raw: e.Raw,
	})
}

// importLegacyAudit moves the list that builds before the journal's audit
// table kept under SettingAudit into the table, once. The journal appends
// the entries and deletes the setting in one transaction, so an
// interruption leaves the list whole for the next call, and two callers
// cannot both move it. When there is nothing to move it costs one read of
// the settings table. A failure is logged and tried again at the next
// audit read or write; the entries wait in the setting meanwhile.
func (s *Staff) importLegacyAudit(ctx context.Context) {
	if _, ok, err := s.cfg.Journal.Setting(ctx, SettingAudit); err == nil && !ok {
		return
	}
	n, err := s.cfg.Journal.ImportAudit(ctx, SettingAudit, s.legacyAudit)
	if err != nil {
		s.log.Error("staff: the old audit list could not be moved to the journal's audit table", "err", err)
		return
	}
	if n > 0 {
		s.log.Info("staff: old audit list moved to the journal's audit table", "lines", n)
	}
}

// legacyAudit turns the old list, oldest first, into audit lines, and adds
// a line saying so. A value that is not a list is kept whole, in the raw
// of a single line, rather than lost.
func (s *Staff) legacyAudit(value json.RawMessage) ([]journal.AuditRecord, error) {
	now := s.now().UTC()
	var list []AuditEntry
	if err := json.Unmarshal(value, &list); err != nil {
		return []journal.AuditRecord{{At: now, Who: "system", Action: "audit_import_unreadable", Subject: SettingAudit,
			Detail: "the old audit list could not be read (" + err.Error() + "); its stored value is kept in raw", Raw: value}}, nil
	}
	out := make([]journal.AuditRecord, 0, len(list)+1)
	for _, e := range list {
		r := journal.AuditRecord{At: e.At, Who: e.Who, Action: e.Action, Subject: e.Subject, Detail: e.Detail, Raw: e.Raw}
		if r.At.IsZero() {
			r.At = now
		}
		if r.Who == "" {
			r.Who = "unknown"
		}
		if r.Action == "" {
			r.Action = "unknown"
		}
		out = append(out, r)
	}
	return append(out, journal.AuditRecord{At: now, Who: "system", Action: "audit_import", Subject: SettingAudit,
		Detail: fmt.Sprintf("%d entries moved from the old audit list to the journal's audit table", len(list))}), nil
}

// entries reads the journal's audit lines matching q, newest first.
func (s *Staff) entries(ctx context.Context, q journal.AuditQuery) ([]AuditEntry, error) {
	s.importLegacyAudit(ctx)
	recs, err := s.cfg.Journal.Audit(ctx, q)
	if err != nil {
		return nil, err
	}
	out := make([]AuditEntry, 0, len(recs))
	for _, r := range recs {
		e := AuditEntry{At: r.At, Who: r.Who, Action: r.Action, Subject: r.Subject, Detail: r.Detail}
		if len(r.Raw) > 0 {
			if json.Valid(r.Raw) {
				e.Raw = json.RawMessage(r.Raw)
			} else {
				e.Detail += "; raw answer: " + string(r.Raw)
			}
		}
		out = append(out, e)
	}
	return out, nil
}

// Audit returns the audit trail of actions that concern no attempt, newest
// first, at most limit entries (0: all).
func (s *Staff) Audit(ctx context.Context, sessionID string, limit int) ([]AuditEntry, error) {
	if _, err := s.session(sessionID); err != nil {
		return nil, err
	}
	list, err := s.entries(ctx, journal.AuditQuery{Limit: max(limit, 0)})
	if err != nil {
		return nil, journalErr(err, "Reading the audit trail")
	}
	return list, nil
}

// note writes an action on an attempt to its own events. If the journal
// refuses, the line goes to the audit table rather than nowhere.
func (s *Staff) note(ctx context.Context, uuid, who, text string) {
	if err := s.cfg.Journal.AddNote(ctx, uuid, who, text); err != nil {
		s.log.Error("staff: note not written on the attempt", "uuid", uuid, "err", err)
		s.audit(ctx, who, actionAttemptNote, uuid, text, nil)
	}
}

// A note is an event of its attempt, kept for good: it says in words what
// the terminal or the provider answered, never the answer itself. Answers
// carry the card's token and tickets, which the journal keeps apart from
// the events and purges after the retention period (journal.splitCard);
// an answer copied into a note would escape that.

// answerWords is a print or share answer for a note: accepted, with the
// terminal's words if it had any.
func answerWords(a device.Answer) string {
	if a.Message == "" {
		return "accepted by the terminal"
	}
	return "accepted by the terminal (" + a.Message + ")"
}

// outcomeWords is a payment's transaction id and message for a note.
func outcomeWords(transactionID, message string) string {
	out := message
	if transactionID != "" {
		out = strings.TrimSpace(out + " (transaction " + transactionID + ")")
	}
	return out
}
