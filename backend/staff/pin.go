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

	"github.com/comptoir-pos/comptoir/backend/fault"
	"github.com/comptoir-pos/comptoir/backend/fiscal"
	"golang.org/x/crypto/argon2"
)

// Settings keys this package owns in the journal's settings table. They are
// never shown by Settings nor written by SaveSetting.
const (
	SettingPIN         = "staff.pin"          // pinRecord: the argon2id hash and its parameters
	SettingPINFailures = "staff.pin_failures" // failures, by origin: survive a restart
	SettingRecovery    = "staff.recovery"     // recoveryRecord: the one-time recovery code's hash
	SettingAudit       = "staff.audit"        // older builds' audit list, moved to the audit table (audit.go)
)

// DemoPIN is accepted, in demo mode only, while no PIN has been set. The
// demo build shows it on the PIN screen; Session.DemoPIN tells the UI to
// say that the PIN is the demo default.
const DemoPIN = "1234"

// Lockout rules: after MaxPINFailures wrong PINs in a row at one origin
// (lockout.go) that origin's pad locks for FirstLockout, doubled at each
// further wrong PIN, at most MaxLockout. A correct PIN resets the count.
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

// The sane range of argon2id parameters, configured or read back from the
// journal: outside it a PIN check panics (no pass, no thread) or takes the
// machine's memory (16 GiB). The defaults sit well inside.
const (
	MaxArgon2Time    = 16
	MaxArgon2Memory  = 256 << 10 // KiB: 256 MiB
	MaxArgon2Threads = 16
)

// check says what is wrong with p, nil when it is in the sane range.
func (p Argon2Params) check() error {
	switch {
	case p.Time < 1 || p.Time > MaxArgon2Time:
		return fmt.Errorf("argon2 passes t=%d outside 1 to %d", p.Time, MaxArgon2Time)
	case p.Threads < 1 || p.Threads > MaxArgon2Threads:
		return fmt.Errorf("argon2 threads p=%d outside 1 to %d", p.Threads, MaxArgon2Threads)
	case p.Memory < 8*uint32(p.Threads) || p.Memory > MaxArgon2Memory:
		return fmt.Errorf("argon2 memory m=%d KiB outside %d to %d", p.Memory, 8*uint32(p.Threads), MaxArgon2Memory)
	}
	return nil
}

// DefaultArgon2 follows OWASP's minimum for argon2id (19 MiB, 2 passes,
// 1 thread): slow enough that a stolen database does not give the PIN away
// in seconds (a PIN has at most 10^8 values), fast enough for a kiosk PC.
var DefaultArgon2 = Argon2Params{Time: 2, Memory: 19 * 1024, Threads: 1}

const (
	saltLen = 16
	keyLen  = 32
	// Lengths a stored record's salt and hash may have (bytes).
	minSaltLen, maxSaltLen = 8, 64
	minKeyLen, maxKeyLen   = 16, 64
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
	origin   Origin // where its PIN was typed: ChangePIN counts wrong PINs there
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
	err = json.Unmarshal(raw, &rec)
	if err == nil {
		err = rec.check()
	}
	if err != nil {
		// A damaged record is not "no PIN": that would let anyone set one.
		return nil, &Error{Code: EPINDAMAGED, Err: err, Message: "The stored staff PIN cannot be checked (" + err.Error() +
			"). On this PC, with Comptoir closed, set a new one: echo NEWPIN | comptoir pin"}
	}
	return &rec, nil
}

// check refuses a record a PIN check cannot run on safely: another
// algorithm or version, parameters outside the sane range, a salt or a
// hash of a length no build writes.
func (r *pinRecord) check() error {
	if r.Alg != "argon2id" || r.Version != argon2.Version {
		return fmt.Errorf("algorithm %q version %d, not argon2id version %d", r.Alg, r.Version, argon2.Version)
	}
	if err := r.Params.check(); err != nil {
		return err
	}
	salt, err1 := base64.StdEncoding.DecodeString(r.Salt)
	hash, err2 := base64.StdEncoding.DecodeString(r.Hash)
	switch {
	case err1 != nil || len(salt) < minSaltLen || len(salt) > maxSaltLen:
		return fmt.Errorf("a salt of %d bytes", len(salt))
	case err2 != nil || len(hash) < minKeyLen || len(hash) > maxKeyLen:
		return fmt.Errorf("a hash of %d bytes", len(hash))
	}
	return nil
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
	if err := s.writeFailures(ctx, failures{}); err != nil {
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
	origin := s.sessionOrigin(sessionID)
	s.pinMu.Lock()
	defer s.pinMu.Unlock()
	fs, err := s.readFailures(ctx)
	if err != nil {
		return err
	}
	if now := s.now(); now.Before(fs[origin].LockedUntil) {
		return lockedOut(fs[origin].LockedUntil.Sub(now))
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
		err := s.wrongPIN(ctx, fs, origin, sess.Who, "pin_change_refused")
		if fault.CodeOf(err) == ELOCKEDOUT {
			s.Lock(ctx, sessionID)
			return err
		}
		if fault.CodeOf(err) == EWRONGPIN {
			return &Error{Code: EWRONGPIN, Message: "The current PIN is not right: the PIN was not changed. " + err.Error()}
		}
		return err
	}
	if _, ok := fs[origin]; ok {
		delete(fs, origin)
		if err := s.writeFailures(ctx, fs); err != nil {
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
// in constant time. The record was checked when it was read.
func (r *pinRecord) matches(pin string) bool {
	salt, err1 := base64.StdEncoding.DecodeString(r.Salt)
	want, err2 := base64.StdEncoding.DecodeString(r.Hash)
	if err1 != nil || err2 != nil || len(want) == 0 {
		return false
	}
	got := argon2.IDKey([]byte(pin), salt, r.Params.Time, r.Params.Memory, r.Params.Threads, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1
}

// Unlock is UnlockFrom the customer screen, the origin anyone can reach.
func (s *Staff) Unlock(ctx context.Context, pin string) (Session, error) {
	return s.UnlockFrom(ctx, OriginScreen, pin)
}

// UnlockFrom checks the PIN typed at origin and opens a session. Wrong
// PINs are counted per origin in the journal (a restart does not reset
// them); from the third in a row that origin's pad locks for 30 s,
// doubling each time, at most 15 min: ELOCKED_OUT with RetryAfter. While
// locked, no PIN is even checked there; the other origins are not
// locked. A right PIN forgets its own origin's wrong PINs only.
func (s *Staff) UnlockFrom(ctx context.Context, origin Origin, pin string) (Session, error) {
	if !origin.valid() {
		return Session{}, errorf(EINVALID, "%q is not where a PIN is typed.", origin)
	}
	s.pinMu.Lock()
	defer s.pinMu.Unlock()
	now := s.now()
	fs, err := s.readFailures(ctx)
	if err != nil {
		return Session{}, err
	}
	if f := fs[origin]; now.Before(f.LockedUntil) {
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
		return Session{}, s.wrongPIN(ctx, fs, origin, "kiosk", "unlock_failed")
	}
	if _, ok := fs[origin]; ok {
		delete(fs, origin)
		if err := s.writeFailures(ctx, fs); err != nil {
			return Session{}, err
		}
	}
	sess, err := s.newSession(demo, origin)
	if err != nil {
		return Session{}, err
	}
	s.audit(ctx, sess.Who, "unlock", "", "staff session opened", nil)
	return sess, nil
}

func (s *Staff) newSession(demo bool, origin Origin) (Session, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return Session{}, &Error{Code: EINTERNAL, Message: "No session could be opened.", Err: err}
	}
	id := hex.EncodeToString(b)
	now := s.now()
	sess := &session{Session: Session{ID: id, Who: "staff:" + id[:8], ExpiresAt: now.Add(s.cfg.SessionTTL), DemoPIN: demo}, lastSeen: now, origin: origin}
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

// sessionOrigin is where the session's PIN was typed; the customer screen
// for a session this process does not know.
func (s *Staff) sessionOrigin(id string) Origin {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sess, ok := s.sessions[id]; ok && sess.origin.valid() {
		return sess.origin
	}
	return OriginScreen
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
