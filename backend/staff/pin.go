package staff

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/comptoir-pos/comptoir/backend/fiscal"
	"golang.org/x/crypto/argon2"
)

// Settings keys this package owns in the journal's settings table. They are
// never shown by Settings nor written by SaveSetting.
const (
	SettingPIN         = "staff.pin"          // pinRecord: the argon2id hash and its parameters
	SettingPINFailures = "staff.pin_failures" // failureRecord: survives a restart
	SettingAudit       = "staff.audit"        // older builds' audit list, moved to the audit table (audit.go)
)

// DemoPIN is accepted, in demo mode only, while no PIN has been set. The
// demo build shows it on the PIN screen; Session.DemoPIN tells the UI to
// say that the PIN is the demo default.
const DemoPIN = "1234"

// Lockout rules: after MaxPINFailures wrong PINs in a row the pad locks for
// FirstLockout, doubled at each further wrong PIN, at most MaxLockout. A
// correct PIN resets the count.
const (
	MaxPINFailures    = 3
	FirstLockout      = 30 * time.Second
	MaxLockout        = 15 * time.Minute
	DefaultSessionTTL = 5 * time.Minute
	minPINLength      = 4
	maxPINLength      = 8
)

// Argon2Params is the cost of the PIN hash.
type Argon2Params struct {
	Time    uint32 `json:"t"`
	Memory  uint32 `json:"m"` // KiB
	Threads uint8  `json:"p"`
}

// DefaultArgon2 follows OWASP's minimum for argon2id (19 MiB, 2 passes,
// 1 thread): slow enough that a stolen database does not give the PIN away
// in seconds (a PIN has at most 10^8 values), fast enough for a kiosk PC.
var DefaultArgon2 = Argon2Params{Time: 2, Memory: 19 * 1024, Threads: 1}

const (
	saltLen = 16
	keyLen  = 32
)

// pinRecord is the stored PIN: never the PIN, only its salted hash.
type pinRecord struct {
	Alg     string       `json:"alg"` // "argon2id"
	Version int          `json:"v"`   // argon2.Version
	Params  Argon2Params `json:"params"`
	Salt    string       `json:"salt"` // base64
	Hash    string       `json:"hash"` // base64
	SetAt   time.Time    `json:"setAt"`
}

// failureRecord counts wrong PINs in a row.
type failureRecord struct {
	Count       int       `json:"count"`
	LockedUntil time.Time `json:"lockedUntil,omitzero"`
	Last        time.Time `json:"last,omitzero"`
}

// Session is an unlocked staff session.
type Session struct {
	ID        string    `json:"id"`
	Who       string    `json:"who"` // as written in the audit trail
	ExpiresAt time.Time `json:"expiresAt"`
	// DemoPIN: unlocked with the demo default PIN; the UI says so and offers
	// to set a real one.
	DemoPIN bool `json:"demoPin,omitempty"`
	// Notice is a sentence the UI shows on entry, if any.
	Notice string `json:"notice,omitempty"`
}

type session struct {
	Session
	lastSeen time.Time
}

// validPIN checks the shape of a new PIN.
func validPIN(pin string) error {
	if len(pin) < minPINLength || len(pin) > maxPINLength {
		return errorf(EINVALID, "The PIN must have %d to %d digits.", minPINLength, maxPINLength)
	}
	for _, c := range pin {
		if c < '0' || c > '9' {
			return errorf(EINVALID, "The PIN must have digits only.")
		}
	}
	return nil
}

func (s *Staff) params() Argon2Params {
	if s.cfg.Argon2 != nil {
		return *s.cfg.Argon2
	}
	return DefaultArgon2
}

func hashPIN(pin string, salt []byte, p Argon2Params) []byte {
	return argon2.IDKey([]byte(pin), salt, p.Time, p.Memory, p.Threads, keyLen)
}

func (s *Staff) readPIN(ctx context.Context) (*pinRecord, error) {
	raw, ok, err := s.cfg.Journal.Setting(ctx, SettingPIN)
	if err != nil {
		return nil, journalErr(err, "Reading the staff PIN")
	}
	if !ok {
		return nil, nil
	}
	var rec pinRecord
	if err := json.Unmarshal(raw, &rec); err != nil || rec.Alg != "argon2id" || rec.Hash == "" {
		// A damaged record is not "no PIN": that would let anyone set one.
		return nil, &Error{Code: EINTERNAL, Message: "The stored staff PIN is damaged: the PIN cannot be checked. Restore the settings from a backup.", Err: err}
	}
	return &rec, nil
}

// HasPIN reports whether a staff PIN has been set.
func (s *Staff) HasPIN(ctx context.Context) (bool, error) {
	rec, err := s.readPIN(ctx)
	return rec != nil, err
}

// SetPIN sets the staff PIN at first run, when none is set: 4 to 8 digits,
// stored as an argon2id hash with a random salt. Afterwards only ChangePIN,
// from an open session, changes it.
func (s *Staff) SetPIN(ctx context.Context, pin string) error {
	s.pinMu.Lock()
	defer s.pinMu.Unlock()
	rec, err := s.readPIN(ctx)
	if err != nil {
		return err
	}
	if rec != nil {
		return errorf(EPINSET, "A staff PIN is already set: unlock with it to change it.")
	}
	if err := s.storePIN(ctx, pin); err != nil {
		return err
	}
	s.audit(ctx, "system", "pin_set", "", "staff PIN set at first run", nil)
	s.pinEvent(ctx, "system", "staff PIN set at first run")
	return nil
}

// ResetPIN sets the PIN whatever it was, and lifts a lockout: for whoever
// has the machine itself (the command line, an installer), when the PIN is
// forgotten or must be set before the kiosk is opened to the public. Every
// open session ends. who names the caller in the audit trail.
func (s *Staff) ResetPIN(ctx context.Context, pin, who string) error {
	s.pinMu.Lock()
	defer s.pinMu.Unlock()
	if err := s.storePIN(ctx, pin); err != nil {
		return err
	}
	if err := s.writeFailures(ctx, failureRecord{}); err != nil {
		return err
	}
	s.mu.Lock()
	clear(s.sessions)
	s.mu.Unlock()
	s.audit(ctx, who, "pin_reset", "", "staff PIN set from outside staff mode; lockout lifted, sessions ended", nil)
	s.pinEvent(ctx, who, "staff PIN reset from outside staff mode")
	return nil
}

// ChangePIN replaces the PIN; the current one is asked again, so a session
// left open cannot be used to take the kiosk over.
func (s *Staff) ChangePIN(ctx context.Context, sessionID, current, next string) error {
	sess, err := s.session(sessionID)
	if err != nil {
		return err
	}
	s.pinMu.Lock()
	defer s.pinMu.Unlock()
	f, err := s.readFailures(ctx)
	if err != nil {
		return err
	}
	if now := s.now(); now.Before(f.LockedUntil) {
		return lockedOut(f.LockedUntil.Sub(now))
	}
	rec, err := s.readPIN(ctx)
	if err != nil {
		return err
	}
	ok := false
	if rec == nil {
		ok = s.cfg.Demo && subtle.ConstantTimeCompare([]byte(current), []byte(DemoPIN)) == 1
	} else {
		ok = rec.matches(current)
	}
	if !ok {
		err := s.wrongPIN(ctx, f, sess.Who, "pin_change_refused")
		if ErrorCode(err) == ELOCKEDOUT {
			s.Lock(ctx, sessionID)
			return err
		}
		if ErrorCode(err) == EWRONGPIN {
			return &Error{Code: EWRONGPIN, Message: "The current PIN is not right: the PIN was not changed. " + err.Error()}
		}
		return err
	}
	if f.Count != 0 {
		if err := s.writeFailures(ctx, failureRecord{}); err != nil {
			return err
		}
	}
	if err := s.storePIN(ctx, next); err != nil {
		return err
	}
	s.audit(ctx, sess.Who, "pin_changed", "", "staff PIN changed", nil)
	s.pinEvent(ctx, sess.Who, "staff PIN changed")
	return nil
}

func (s *Staff) storePIN(ctx context.Context, pin string) error {
	if err := validPIN(pin); err != nil {
		return err
	}
	salt := make([]byte, saltLen)
	if _, err := rand.Read(salt); err != nil {
		return &Error{Code: EINTERNAL, Message: "No random salt could be drawn: the PIN was not set.", Err: err}
	}
	p := s.params()
	rec := pinRecord{
		Alg: "argon2id", Version: argon2.Version, Params: p,
		Salt: base64.StdEncoding.EncodeToString(salt), Hash: base64.StdEncoding.EncodeToString(hashPIN(pin, salt, p)),
		SetAt: s.now().UTC(),
	}
	raw, err := json.Marshal(rec)
	if err != nil {
		return &Error{Code: EINTERNAL, Message: "The PIN could not be stored.", Err: err}
	}
	if err := s.cfg.Journal.SetSetting(ctx, SettingPIN, raw); err != nil {
		return journalErr(err, "Storing the staff PIN")
	}
	return nil
}

// matches hashes pin with the record's own salt and parameters and compares
// in constant time.
func (r *pinRecord) matches(pin string) bool {
	salt, err1 := base64.StdEncoding.DecodeString(r.Salt)
	want, err2 := base64.StdEncoding.DecodeString(r.Hash)
	if err1 != nil || err2 != nil || len(want) == 0 {
		return false
	}
	got := argon2.IDKey([]byte(pin), salt, r.Params.Time, r.Params.Memory, r.Params.Threads, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1
}

func (s *Staff) readFailures(ctx context.Context) (failureRecord, error) {
	var f failureRecord
	raw, ok, err := s.cfg.Journal.Setting(ctx, SettingPINFailures)
	if err != nil {
		return f, journalErr(err, "Reading the PIN lockout")
	}
	if ok {
		// A damaged counter counts as locked at its maximum rather than as
		// zero: resetting it would be a way around the lockout.
		if json.Unmarshal(raw, &f) != nil {
			f = failureRecord{Count: 99, LockedUntil: s.now().Add(MaxLockout)}
		}
	}
	return f, nil
}

func (s *Staff) writeFailures(ctx context.Context, f failureRecord) error {
	raw, _ := json.Marshal(f)
	if err := s.cfg.Journal.SetSetting(ctx, SettingPINFailures, raw); err != nil {
		return journalErr(err, "Recording the PIN attempt")
	}
	return nil
}

// lockoutFor is how long the pad locks after count wrong PINs in a row.
func lockoutFor(count int) time.Duration {
	if count < MaxPINFailures {
		return 0
	}
	d := FirstLockout
	for i := MaxPINFailures; i < count; i++ {
		d *= 2
		if d >= MaxLockout {
			return MaxLockout
		}
	}
	return d
}

func lockedOut(retry time.Duration) *Error {
	secs := int((retry + time.Second - 1) / time.Second)
	msg := fmt.Sprintf("Too many wrong PINs: the PIN pad is locked for %d seconds.", secs)
	if secs >= 120 {
		msg = fmt.Sprintf("Too many wrong PINs: the PIN pad is locked for %d minutes.", (secs+59)/60)
	}
	return &Error{Code: ELOCKEDOUT, Message: msg, RetryAfter: retry}
}

// Unlock checks the PIN and opens a session. Wrong PINs are counted in the
// journal (a restart does not reset them); from the third in a row the pad
// locks for 30 s, doubling each time, at most 15 min: ELOCKED_OUT with
// RetryAfter. While locked, no PIN is even checked.
func (s *Staff) Unlock(ctx context.Context, pin string) (Session, error) {
	s.pinMu.Lock()
	defer s.pinMu.Unlock()
	now := s.now()
	f, err := s.readFailures(ctx)
	if err != nil {
		return Session{}, err
	}
	if now.Before(f.LockedUntil) {
		return Session{}, lockedOut(f.LockedUntil.Sub(now))
	}
	rec, err := s.readPIN(ctx)
	if err != nil {
		return Session{}, err
	}
	demo := false
	var ok bool
	switch {
	case rec != nil:
		ok = rec.matches(pin)
	case s.cfg.Demo:
		demo = true
		ok = subtle.ConstantTimeCompare([]byte(pin), []byte(DemoPIN)) == 1
	default:
		return Session{}, errorf(ENOPIN, "No staff PIN has been set yet: choose one first (4 to 8 digits).")
	}
	if !ok {
		return Session{}, s.wrongPIN(ctx, f, "kiosk", "unlock_failed")
	}
	if f.Count != 0 || !f.LockedUntil.IsZero() {
		if err := s.writeFailures(ctx, failureRecord{}); err != nil {
			return Session{}, err
		}
	}
	sess, err := s.newSession(demo)
	if err != nil {
		return Session{}, err
	}
	s.audit(ctx, sess.Who, "unlock", "", "staff session opened", nil)
	return sess, nil
}

// wrongPIN counts a wrong PIN (f is the record read under pinMu) and locks
// the pad once there are too many in a row. Unlock and ChangePIN share the
// count: a session left open must not be a way to guess the PIN.
func (s *Staff) wrongPIN(ctx context.Context, f failureRecord, who, action string) error {
	now := s.now()
	f.Count++
	f.Last = now.UTC()
	lock := lockoutFor(f.Count)
	if lock > 0 {
		f.LockedUntil = now.Add(lock).UTC()
	}
	if err := s.writeFailures(ctx, f); err != nil {
		return err
	}
	s.audit(ctx, who, action, "", fmt.Sprintf("wrong staff PIN (%d in a row)", f.Count), nil)
	s.log.Warn("staff: wrong PIN", "inARow", f.Count, "lockedFor", lock)
	if lock > 0 {
		return lockedOut(lock)
	}
	left := MaxPINFailures - f.Count
	return errorf(EWRONGPIN, "Wrong PIN. %d more wrong PIN(s) and the pad locks.", left)
}

func (s *Staff) newSession(demo bool) (Session, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return Session{}, &Error{Code: EINTERNAL, Message: "No session could be opened.", Err: err}
	}
	id := hex.EncodeToString(b)
	now := s.now()
	sess := &session{Session: Session{ID: id, Who: "staff:" + id[:8], ExpiresAt: now.Add(s.cfg.SessionTTL), DemoPIN: demo}, lastSeen: now}
	if demo {
		sess.Notice = "Demo mode: the staff PIN is the demo default, " + DemoPIN + ". Set a PIN of your own before taking real payments."
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, v := range s.sessions { // forget the expired ones
		if !now.Before(v.ExpiresAt) {
			delete(s.sessions, k)
		}
	}
	s.sessions[id] = sess
	return sess.Session, nil
}

// session returns the live session with this id and extends it: any staff
// action counts as activity.
func (s *Staff) session(id string) (Session, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sess, ok := s.sessions[id]
	now := s.now()
	if !ok || !now.Before(sess.ExpiresAt) {
		delete(s.sessions, id)
		return Session{}, errorf(ESESSION, "The staff session has ended: enter the PIN again.")
	}
	sess.lastSeen = now
	sess.ExpiresAt = now.Add(s.cfg.SessionTTL)
	return sess.Session, nil
}

// Touch extends a session (the UI calls it on any touch of a staff screen).
func (s *Staff) Touch(id string) (Session, error) { return s.session(id) }

// Lock ends a session at once.
func (s *Staff) Lock(ctx context.Context, id string) {
	s.mu.Lock()
	sess, ok := s.sessions[id]
	delete(s.sessions, id)
	s.mu.Unlock()
	if ok {
		s.audit(ctx, sess.Who, "lock", "", "staff session closed", nil)
	}
}

// pinEvent records a PIN change in the fiscal journal's technical events
// (never the PIN).
func (s *Staff) pinEvent(ctx context.Context, who, detail string) {
	if s.cfg.Ledger == nil {
		return
	}
	if _, err := s.cfg.Ledger.Event(ctx, fiscal.EventPIN, who, detail); err != nil {
		s.log.Error("fiscal: a PIN change is not recorded", "err", err)
	}
}
