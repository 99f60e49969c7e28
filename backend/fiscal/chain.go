package fiscal

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
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
	// lookedAt is when RecordTickets last looked through the journal
	// whole or since the look before.
	mu       sync.Mutex
	lookedAt time.Time
	// Kiosk and Software name the till and the software version on every
	// record.
	Kiosk, Software string
}

// NewLedger is a ledger on db signing with key.
func NewLedger(db *journal.DB, key ed25519.PrivateKey, kiosk, software string) *Ledger {
	return &Ledger{db: db, key: key, Kiosk: kiosk, Software: software}
}

// PublicKey is the key that verifies the ledger's records.
func (l *Ledger) PublicKey() ed25519.PublicKey { return l.key.Public().(ed25519.PublicKey) }

// append writes the next record of kind for source (once: an existing one
// is returned, created false); build makes its payload for its number and
// time.
func (l *Ledger) append(ctx context.Context, kind, source string, build func(seq int64, at time.Time) (any, error)) (journal.FiscalRecord, bool, error) {
	return l.db.AppendFiscal(ctx, kind, source, func(next journal.FiscalRecord, _ *journal.FiscalRecord) ([]byte, string, error) {
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
	sig, err := base64.StdEncoding.DecodeString(r.Sig)
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
	Records     map[string]int64 `json:"records"` // by chain
	PublicKey   string           `json:"publicKey"`
	Fingerprint string           `json:"fingerprint"`
	OK          bool             `json:"ok"`
	Broken      *Break           `json:"broken,omitempty"`
}

// VerifyJournal checks every chain of the journal with pub: each record's
// number, link and signature. It names the first broken record.
func VerifyJournal(ctx context.Context, db *journal.DB, pub ed25519.PublicKey) (Verification, error) {
	v := Verification{Records: map[string]int64{}, PublicKey: string(PublicKeyPEM(pub)), Fingerprint: Fingerprint(pub), OK: true}
	for _, kind := range journal.FiscalKinds {
		c := &chainCheck{pub: pub, kind: kind}
		for after := int64(0); ; {
			rs, err := db.FiscalRecords(ctx, kind, after, 500)
			if err != nil {
				return v, err
			}
			for _, r := range rs {
				if b := c.next(r); b != nil {
					v.Records[kind], v.OK, v.Broken = c.n, false, b
					return v, nil
				}
				after = r.ID
			}
			if len(rs) < 500 {
				break
			}
		}
		v.Records[kind] = c.n
	}
	// Records removed from a chain's end leave no gap: the technical
	// events say how far each chain had gone when they were recorded.
	if b, err := truncated(ctx, db, v.Records); err != nil || b != nil {
		v.OK, v.Broken = b == nil, b
		return v, err
	}
	return v, nil
}

// truncated compares each chain's length with the longest an event saw.
func truncated(ctx context.Context, db *journal.DB, length map[string]int64) (*Break, error) {
	for after := int64(0); ; {
		rs, err := db.FiscalRecords(ctx, journal.FiscalEvent, after, 500)
		if err != nil {
			return nil, err
		}
		for _, r := range rs {
			after = r.ID
			var e Event
			if json.Unmarshal(r.Payload, &e) != nil {
				continue
			}
			for _, kind := range journal.FiscalKinds {
				if seen := e.Tips[kind]; seen > length[kind] {
					return &Break{Kind: kind, Seq: length[kind] + 1, Why: fmt.Sprintf(
						"the chain ends at %d, and event %d saw it reach %d: records were removed from its end", length[kind], e.Number, seen)}, nil
				}
			}
		}
		if len(rs) < 500 {
			return nil, nil
		}
	}
}

// Verify checks the ledger's own journal.
func (l *Ledger) Verify(ctx context.Context) (Verification, error) {
	return VerifyJournal(ctx, l.db, l.PublicKey())
}
