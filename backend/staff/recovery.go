package staff

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/big"
	"strings"
	"time"

	"golang.org/x/crypto/argon2"
)

// RecoveryCodeDigits is the length of a recovery code: twice the longest
// PIN and then some, so that it is never guessed (10^16 codes), even when
// it is checked while a pad is locked.
const RecoveryCodeDigits = 16

// recoveryRecord is the stored recovery code: its salted hash, like the
// PIN's, and when it was used (it serves once).
type recoveryRecord struct {
	pinRecord
	UsedAt time.Time `json:"usedAt,omitzero"`
}

// Audit trail actions of the recovery code.
const (
	ActionRecoveryMade   = "recovery_code_made"
	ActionRecoveryFailed = "recovery_code_refused"
)

// NewRecoveryCode draws a one-time recovery code, stores its hash in
// place of any previous code's and returns it, grouped by four digits for
// whoever writes it down. It is for whoever has the machine itself
// (`comptoir pin --recovery-code`): the code is shown once, never stored
// in clear. who names the caller in the audit trail.
func (s *Staff) NewRecoveryCode(ctx context.Context, who string) (string, error) {
	n, err := rand.Int(rand.Reader, new(big.Int).Exp(big.NewInt(10), big.NewInt(RecoveryCodeDigits), nil))
	if err != nil {
		return "", &Error{Code: EINTERNAL, Message: "No recovery code could be drawn.", Err: err}
	}
	code := fmt.Sprintf("%0*d", RecoveryCodeDigits, n)
	salt := make([]byte, saltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", &Error{Code: EINTERNAL, Message: "No random salt could be drawn: no recovery code was made.", Err: err}
	}
	p := s.params()
	rec := recoveryRecord{pinRecord: pinRecord{Alg: "argon2id", Version: argon2.Version, Params: p,
		Salt: base64.StdEncoding.EncodeToString(salt), Hash: base64.StdEncoding.EncodeToString(hashPIN(code, salt, p)),
		SetAt: s.now().UTC()}}
	raw, _ := json.Marshal(rec)
	s.pinMu.Lock()
	defer s.pinMu.Unlock()
	if err := s.cfg.Journal.SetSetting(ctx, SettingRecovery, raw); err != nil {
		return "", journalErr(err, "Storing the recovery code")
	}
	s.audit(ctx, who, ActionRecoveryMade, "", "a new one-time recovery code replaces any previous one", nil)
	var groups []string
	for i := 0; i < len(code); i += 4 {
		groups = append(groups, code[i:i+4])
	}
	return strings.Join(groups, " "), nil
}

// ClearLockout lifts every origin's lockout with the one-time recovery
// code, typed at origin, even while that origin's pad is locked: for staff
// kept out by a customer at a kiosk without a keyboard. The code serves
// once; the PIN is not changed and no session opens (the PIN is asked
// next). Spaces and dashes in the code are ignored.
func (s *Staff) ClearLockout(ctx context.Context, origin Origin, code string) error {
	if !origin.valid() {
		return errorf(EINVALID, "%q is not where a code is typed.", origin)
	}
	code = strings.NewReplacer(" ", "", "-", "").Replace(code)
	if len(code) != RecoveryCodeDigits || strings.Trim(code, "0123456789") != "" {
		return errorf(EINVALID, "A recovery code has %d digits.", RecoveryCodeDigits)
	}
	s.pinMu.Lock()
	defer s.pinMu.Unlock()
	raw, ok, err := s.cfg.Journal.Setting(ctx, SettingRecovery)
	if err != nil {
		return journalErr(err, "Reading the recovery code")
	}
	var rec recoveryRecord
	switch {
	case !ok:
		return errorf(ENOTFOUND, "No recovery code is set. On this PC, `comptoir pin --recovery-code` makes one.")
	case json.Unmarshal(raw, &rec) != nil || rec.check() != nil:
		return errorf(EPINDAMAGED, "The stored recovery code cannot be checked. On this PC, `comptoir pin --recovery-code` makes a new one.")
	case !rec.UsedAt.IsZero():
		return errorf(ENOTFOUND, "The recovery code was used on %s: it serves once. On this PC, `comptoir pin --recovery-code` makes a new one.", rec.UsedAt.Format(time.DateOnly))
	}
	if !rec.matches(code) {
		s.audit(ctx, "kiosk", ActionRecoveryFailed, string(origin), "wrong recovery code at "+origin.place(), nil)
		return errorf(EWRONGPIN, "The recovery code is not right.")
	}
	rec.UsedAt = s.now().UTC()
	used, _ := json.Marshal(rec)
	if err := s.cfg.Journal.SetSetting(ctx, SettingRecovery, used); err != nil {
		return journalErr(err, "Using the recovery code")
	}
	if err := s.writeFailures(ctx, failures{}); err != nil {
		return err
	}
	s.audit(ctx, "recovery code", ActionLockoutCleared, string(origin), "every PIN pad lockout lifted with the one-time recovery code, typed at "+origin.place(), nil)
	return nil
}
