package staff

import (
	"context"
	"encoding/json"
	"time"
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

// maxAudit bounds the interim list.
const maxAudit = 1000

// INTERIM: the audit entries that concern no attempt are kept as a bounded
// JSON list (the last maxAudit) in the settings key SettingAudit, because the
// journal has no table for them yet and this package may not change its
// schema. It is not append-only and old entries fall off: the journal should
// gain an `audit` table (see the report: migration 0002_audit.sql) and this
// file then becomes a call to it.
func (s *Staff) audit(ctx context.Context, who, action, subject, detail string, raw []byte) {
	e := AuditEntry{At: s.now().UTC(), Who: who, Action: action, Subject: subject, Detail: detail}
	if len(raw) > 0 {
		if json.Valid(raw) {
			e.Raw = json.RawMessage(raw)
		} else {
			e.Detail += "; raw answer: " + string(raw)
		}
	}
	s.auditMu.Lock()
	defer s.auditMu.Unlock()
	list, err := s.readAudit(ctx)
	if err == nil {
		list = append(list, e)
		if len(list) > maxAudit {
			list = list[len(list)-maxAudit:]
		}
		var b []byte
		if b, err = json.Marshal(list); err == nil {
			err = s.cfg.Journal.SetSetting(ctx, SettingAudit, b)
		}
	}
	if err != nil {
		// The action happened: losing its audit line must not undo it, but
		// it must be seen.
		s.log.Error("staff: audit entry not stored", "who", who, "action", action, "subject", subject, "detail", detail, "err", err)
	}
}

func (s *Staff) readAudit(ctx context.Context) ([]AuditEntry, error) {
	raw, ok, err := s.cfg.Journal.Setting(ctx, SettingAudit)
	if err != nil || !ok {
		return nil, err
	}
	var list []AuditEntry
	if err := json.Unmarshal(raw, &list); err != nil {
		// Keep nothing rather than fail every future action; the damaged
		// value is logged before it is replaced.
		s.log.Error("staff: interim audit list unreadable, starting a new one", "value", string(raw), "err", err)
		return nil, nil
	}
	return list, nil
}

// Audit returns the interim audit entries, newest first, at most limit (0: all).
func (s *Staff) Audit(ctx context.Context, sessionID string, limit int) ([]AuditEntry, error) {
	if _, err := s.session(sessionID); err != nil {
		return nil, err
	}
	s.auditMu.Lock()
	list, err := s.readAudit(ctx)
	s.auditMu.Unlock()
	if err != nil {
		return nil, journalErr(err, "Reading the audit trail")
	}
	out := make([]AuditEntry, 0, len(list))
	for i := len(list) - 1; i >= 0 && (limit <= 0 || len(out) < limit); i-- {
		out = append(out, list[i])
	}
	return out, nil
}

// note writes an action on an attempt to its own events. If the journal
// refuses, the line goes to the interim list rather than nowhere.
func (s *Staff) note(ctx context.Context, uuid, who, text string) {
	if err := s.cfg.Journal.AddNote(ctx, uuid, who, text); err != nil {
		s.log.Error("staff: note not written on the attempt", "uuid", uuid, "err", err)
		s.audit(ctx, who, "attempt_note", uuid, text, nil)
	}
}

// rawText is a terminal answer for a note: as received, or a placeholder.
func rawText(raw []byte) string {
	if len(raw) == 0 {
		return "(no answer body)"
	}
	return string(raw)
}
