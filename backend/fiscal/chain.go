package fiscal

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/comptoir-pos/comptoir/backend/journal"
)

const signedPrefix = "comptoir-fiscal-1"

// SignedBytes are the bytes a record's signature covers.
func SignedBytes(r journal.FiscalRecord) []byte {
	sum := sha256.Sum256(r.Payload)
	return []byte(strings.Join([]string{signedPrefix, r.Kind, strconv.FormatInt(r.Seq, 10), strconv.FormatInt(r.At.UnixMilli(), 10),
		r.Source, r.PrevSig, hex.EncodeToString(sum[:])}, "\n"))
}

// Ledger appends signed records to the journal's fiscal chains.
type Ledger struct {
	db  *journal.DB
	key ed25519.PrivateKey
	rd  *reader
	// witness, when kept, records each chain's last head outside the
	// journal.
	witness *witness
	// lookedAt is when RecordTickets last looked through the journal
	// whole or since the look before.
	mu       sync.Mutex
	lookedAt time.Time
	// Kiosk and Software name the till and the software version on every
	// record.
	Kiosk, Software string
	// PendingAtStart is how many payment attempts were unfinished when the
	// process opened the journal: Start records their recovery.
	PendingAtStart int
	// onRefused, when set, is told of a sale refused (out of bounds), once
	// per order (under mu).
	onRefused func(orderID, why string)
}

// OnRefused sets what is told of a sale refused (out of bounds), once per
// order: staff are to look at it.
func (l *Ledger) OnRefused(f func(orderID, why string)) {
	l.mu.Lock()
	l.onRefused = f
	l.mu.Unlock()
}

// NewLedger is a ledger on db signing with key.
func NewLedger(db *journal.DB, key ed25519.PrivateKey, kiosk, software string) *Ledger {
	return &Ledger{db: db, key: key, rd: &reader{db: db}, Kiosk: kiosk, Software: software}
}

// PublicKey is the key that verifies the ledger's records.
func (l *Ledger) PublicKey() ed25519.PublicKey { return l.key.Public().(ed25519.PublicKey) }

// append writes the next record of kind for source (once: an existing one
// is returned, created false); build makes its payload for its number and
// time.
func (l *Ledger) append(ctx context.Context, kind, source string, build func(seq int64, at time.Time) (any, error)) (journal.FiscalRecord, bool, error) {
	rec, created, err := l.db.AppendFiscal(ctx, kind, source, func(next journal.FiscalRecord, _ *journal.FiscalRecord) ([]byte, string, error) {
		v, err := build(next.Seq, next.At)
		if err != nil {
			return nil, "", err
		}
		payload, err := json.Marshal(v)
		if err != nil {
			return nil, "", fmt.Errorf("fiscal: encode a %s: %w", kind, err)
		}
		next.Payload = payload
		return payload, base64.StdEncoding.EncodeToString(ed25519.Sign(l.key, SignedBytes(next))), nil
	})
	if err == nil && created {
		// A witness behind is harmless (Verify reads it as a floor).
		_ = l.witness.saw(rec)
	}
	return rec, created, err
}

// Break is the first record where a chain does not hold.
type Break struct {
	Kind string `json:"kind"`
	Seq  int64  `json:"seq"` // the number the record carries
	ID   int64  `json:"id"`  // its row in the journal (or line in an archive)
	Why  string `json:"why"`
}

func (b *Break) Error() string {
	return fmt.Sprintf("fiscal: the %s chain breaks at record %d (row %d): %s", b.Kind, b.Seq, b.ID, b.Why)
}

// chainCheck walks one chain in stored order.
type chainCheck struct {
	pub  ed25519.PublicKey
	kind string
	n    int64 // records seen
	prev string
}

// next checks one record; nil when it holds.
func (c *chainCheck) next(r journal.FiscalRecord) *Break {
	c.n++
	brk := func(why string) *Break { return &Break{Kind: c.kind, Seq: r.Seq, ID: r.ID, Why: why} }
	switch {
	case r.Kind != c.kind:
		return brk("a record of the " + r.Kind + " chain in the " + c.kind + " chain")
	case r.Seq != c.n:
		return brk(fmt.Sprintf("numbered %d where %d comes next: a record is missing, added or moved", r.Seq, c.n))
	case r.PrevSig != c.prev:
		return brk("it does not follow the record before it (its previous signature differs)")
	}
	sig, err := base64.StdEncoding.Strict().DecodeString(r.Sig)
	if err != nil || !ed25519.Verify(c.pub, SignedBytes(r), sig) {
		return brk("its signature does not match its content: it was changed")
	}
	if !json.Valid(r.Payload) {
		return brk("its content is not JSON")
	}
	c.prev = r.Sig
	return nil
}

// Verification is what Verify found.
type Verification struct {
	Records          map[string]int64 `json:"records"` // by chain
	PublicKey        string           `json:"publicKey"`
	Fingerprint      string           `json:"fingerprint"`
	ShortFingerprint string           `json:"shortFingerprint"`
	// KeyGiven: the key was given from outside the data (--key); false:
	// it is the key found beside the data, and Note says what that leaves.
	KeyGiven bool   `json:"keyGiven"`
	Note     string `json:"note,omitempty"`
	// Witness: "checked" (the heads kept beside the key were found),
	// "none" (no witness to compare with).
	Witness  string     `json:"witness"`
	Expected []Expected `json:"expected,omitempty"`
	OK       bool       `json:"ok"`
	Broken   *Break     `json:"broken,omitempty"`
}

// Expected is a head given from paper, and what the record it names says.
type Expected struct {
	Head string `json:"head"`
	OK   bool   `json:"ok"`
	// A closing's name, running counts by chain and perpetual total.
	Name      string           `json:"name,omitempty"`
	Chains    map[string]int64 `json:"chains,omitempty"`
	Perpetual *int64           `json:"perpetual,omitempty"`
}

// LocalKeyNote is what a verification with the key found beside the data
// says of itself.
const LocalKeyNote = "verified against the local key only: proves consistency, not origin"

// VerifyOptions is what is known from outside the journal.
type VerifyOptions struct {
	// KeyGiven: the key was given from outside the data folder.
	KeyGiven bool
	// Expect are heads read from paper (a Z, a receipt).
	Expect []Head
	// Witness are the heads kept beside the key (nil: none).
	Witness map[string]WitnessHead
}

// claim is what a record, a paper or the witness says of another chain:
// that its record seq exists and, with a digest, which one it is.
type claim struct {
	seq    int64
	digest string // start of the SHA-256 of the record's signature; "" for a count
	by     string
	expect int // index in Verification.Expected, -1 if none
}

// claims are the claims on each chain.
type claims map[string][]claim

func (cs claims) add(kind string, c claim) { cs[kind] = append(cs[kind], c) }

// check returns a break when r is a record a claim names and it is not
// the one named.
func (cs claims) check(r journal.FiscalRecord, v *Verification) *Break {
	for _, c := range cs[r.Kind] {
		if c.seq != r.Seq || c.digest == "" {
			continue
		}
		if !strings.HasPrefix(sigDigest(r.Sig), c.digest) {
			return &Break{Kind: r.Kind, Seq: r.Seq, ID: r.ID, Why: c.by + " names another record here: the chain was rewritten up to this record"}
		}
		if c.expect >= 0 {
			v.Expected[c.expect].OK = true
		}
	}
	return nil
}

// short says which claim on a chain of length n names a record past its
// end.
func (cs claims) short(kind string, n int64) *Break {
	for _, c := range cs[kind] {
		if c.seq > n {
			return &Break{Kind: kind, Seq: n + 1, Why: fmt.Sprintf("the chain ends at %d, and %s saw it reach %d: records were removed from its end", n, c.by, c.seq)}
		}
	}
	return nil
}

// verifyOrder walks the closings first: they name the heads of the other
// chains, checked as those are walked.
var verifyOrder = []string{journal.FiscalClosing, journal.FiscalTicket, journal.FiscalEvent, journal.FiscalArchive}

// VerifyJournal checks every chain of the journal with pub: each record's
// number, link and signature; that no chain is shorter than a closing, an
// event, the witness or a paper head saw it; that the records they name
// are the ones they saw. It names the first broken record.
func VerifyJournal(ctx context.Context, db *journal.DB, pub ed25519.PublicKey, opt VerifyOptions) (Verification, error) {
	v := Verification{Records: map[string]int64{}, PublicKey: string(PublicKeyPEM(pub)), Fingerprint: Fingerprint(pub),
		ShortFingerprint: ShortFingerprint(pub), KeyGiven: opt.KeyGiven, Witness: "none", OK: true}
	if !opt.KeyGiven {
		v.Note = LocalKeyNote
	}
	cs := claims{}
	for i, h := range opt.Expect {
		v.Expected = append(v.Expected, Expected{Head: h.String()})
		cs.add(h.Kind, claim{seq: h.Seq, digest: h.Digest, by: "the paper's " + h.String(), expect: i})
	}
	if opt.Witness != nil {
		v.Witness = "checked"
		for kind, h := range opt.Witness {
			cs.add(kind, claim{seq: h.Seq, digest: h.Digest, by: "the witness kept beside the key", expect: -1})
		}
	}
	rd := &reader{db: db}
	for _, kind := range verifyOrder {
		c := &chainCheck{pub: pub, kind: kind}
		err := rd.forward(ctx, kind, 1, 500, func(r journal.FiscalRecord) (bool, error) {
			if b := c.next(r); b != nil {
				v.Broken = b
				return false, nil
			}
			if b := cs.check(r, &v); b != nil {
				v.Broken = b
				return false, nil
			}
			seen(cs, r)
			expected(&v, r)
			return true, nil
		})
		v.Records[kind] = c.n
		if err != nil || v.Broken != nil {
			v.OK = false
			return v, err
		}
	}
	for _, kind := range journal.FiscalKinds {
		if b := cs.short(kind, v.Records[kind]); b != nil {
			v.OK, v.Broken = false, b
			return v, nil
		}
	}
	return v, nil
}

// seen adds what a record says of the other chains: an event how far each
// went, a closing which record ended each.
func seen(cs claims, r journal.FiscalRecord) {
	switch r.Kind {
	case journal.FiscalEvent:
		var e Event
		if json.Unmarshal(r.Payload, &e) == nil {
			for kind, n := range e.Tips {
				cs.add(kind, claim{seq: n, by: fmt.Sprintf("event %d", e.Number), expect: -1})
			}
		}
	case journal.FiscalClosing:
		var c Closing
		if json.Unmarshal(r.Payload, &c) == nil {
			for kind, h := range c.Chains {
				if h.Count > 0 {
					cs.add(kind, claim{seq: h.Count, digest: sigDigest(h.Sig), by: fmt.Sprintf("closing %d", c.Number), expect: -1})
				}
			}
		}
	}
}

// expected fills in what a closing named on paper carries.
func expected(v *Verification, r journal.FiscalRecord) {
	if r.Kind != journal.FiscalClosing {
		return
	}
	for i := range v.Expected {
		h, _ := ParseHead(v.Expected[i].Head)
		if !h.Matches(r) {
			continue
		}
		c, err := decodeClosing(r)
		if err != nil {
			continue
		}
		e := &v.Expected[i]
		e.Name, e.Perpetual, e.Chains = c.Period+" "+c.Name, &c.Perpetual, map[string]int64{}
		for kind, ch := range c.Chains {
			e.Chains[kind] = ch.Count
		}
	}
}

// Verify checks the ledger's own journal with its own key.
func (l *Ledger) Verify(ctx context.Context) (Verification, error) {
	opt := VerifyOptions{}
	if l.witness != nil {
		l.witness.mu.Lock()
		opt.Witness = maps.Clone(l.witness.heads)
		l.witness.mu.Unlock()
	}
	return VerifyJournal(ctx, l.db, l.PublicKey(), opt)
}
