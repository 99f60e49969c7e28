package fiscal

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/comptoir-pos/comptoir/backend/journal"
)

// A head fingerprint names one record and pins every record before it in
// its chain: "T42-9f3a1c7b22d0" is ticket 42 whose signature's SHA-256
// starts 9f3a1c7b22d0. A signature covers the previous one, so a record
// rewritten, removed or added before ticket 42 changes ticket 42's
// signature, even when the whole chain is signed again with the same key.
// Twelve hex digits are 48 bits: finding a rewritten chain whose head
// matches the paper takes about 2^47 signatures.
const headHexDigits = 12

// chainLetters are the chains' letters in a head fingerprint.
var chainLetters = map[string]string{
	journal.FiscalTicket: "T", journal.FiscalClosing: "Z", journal.FiscalEvent: "E", journal.FiscalArchive: "A",
}

// HeadFingerprint is the record's short fingerprint, printed on receipts
// and closings.
func HeadFingerprint(r journal.FiscalRecord) string {
	return fmt.Sprintf("%s%d-%s", chainLetters[r.Kind], r.Seq, sigDigest(r.Sig)[:headHexDigits])
}

func sigDigest(sig string) string {
	sum := sha256.Sum256([]byte(sig))
	return hex.EncodeToString(sum[:])
}

// Head is a head fingerprint read back: a chain, a number and the start of
// the record's signature digest.
type Head struct {
	Kind   string `json:"kind"`
	Seq    int64  `json:"seq"`
	Digest string `json:"digest"`
}

// ParseHead reads a head fingerprint as printed ("T42-9f3a1c7b22d0"; case,
// spaces and a missing dash are forgiven: it is typed from paper).
func ParseHead(s string) (Head, error) {
	t := strings.ToLower(strings.Join(strings.Fields(s), ""))
	bad := fmt.Errorf("fiscal: %q is not a chain fingerprint (a letter T, Z, E or A, a number, a dash, %d hex digits)", s, headHexDigits)
	if len(t) < 2 {
		return Head{}, bad
	}
	var h Head
	for kind, letter := range chainLetters {
		if strings.ToLower(letter) == t[:1] {
			h.Kind = kind
		}
	}
	num, digest, ok := strings.Cut(t[1:], "-")
	if !ok {
		i := strings.IndexFunc(t[1:], func(r rune) bool { return r < '0' || r > '9' })
		if i < 0 {
			return Head{}, bad
		}
		num, digest = t[1:1+i], t[1+i:]
	}
	seq, err := strconv.ParseInt(num, 10, 64)
	if h.Kind == "" || err != nil || seq < 1 || len(digest) != headHexDigits {
		return Head{}, bad
	}
	if _, err := hex.DecodeString(digest); err != nil {
		return Head{}, bad
	}
	h.Seq, h.Digest = seq, digest
	return h, nil
}

func (h Head) String() string {
	return fmt.Sprintf("%s%d-%s", chainLetters[h.Kind], h.Seq, h.Digest)
}

// Matches says whether r is the record the head names.
func (h Head) Matches(r journal.FiscalRecord) bool {
	return r.Kind == h.Kind && r.Seq == h.Seq && strings.HasPrefix(sigDigest(r.Sig), h.Digest)
}

// reader reads a chain's records by number without walking it from its
// start: the journal numbers rows in the order written, and a chain's
// numbers follow its rows, so a record is found by halving the rows
// between the first and the last. It counts what it reads (tests prove
// with it that a closing reads its period, not the journal's age).
type reader struct {
	db    *journal.DB
	reads atomic.Int64
}

// bySeq is the record numbered seq in kind's chain (ok false: none).
func (rd *reader) bySeq(ctx context.Context, kind string, seq int64) (journal.FiscalRecord, bool, error) {
	last, ok, err := rd.db.FiscalLast(ctx, kind)
	rd.reads.Add(1)
	if err != nil || !ok || seq < 1 || seq > last.Seq {
		return journal.FiscalRecord{}, false, err
	}
	if seq == last.Seq {
		return last, true, nil
	}
	lo, hi := int64(0), last.ID // the record is after row lo, at or before row hi
	for lo < hi {
		mid := lo + (hi-lo)/2
		rs, err := rd.db.FiscalRecords(ctx, kind, mid, 1)
		rd.reads.Add(1)
		if err != nil {
			return journal.FiscalRecord{}, false, err
		}
		if len(rs) == 0 {
			return journal.FiscalRecord{}, false, nil
		}
		switch r := rs[0]; {
		case r.Seq == seq:
			return r, true, nil
		case r.Seq < seq:
			lo = r.ID
		default:
			hi = mid
		}
	}
	return journal.FiscalRecord{}, false, nil
}

// forward calls f on kind's records from number from on, in order, until
// f says stop or the chain ends, reading batch records at a time.
// From the first record, it reads the rows as stored, whatever their
// numbers say (Verify walks them so).
func (rd *reader) forward(ctx context.Context, kind string, from int64, batch int, f func(journal.FiscalRecord) (bool, error)) error {
	var after int64
	if from > 1 {
		start, ok, err := rd.bySeq(ctx, kind, from)
		if err != nil || !ok {
			return err
		}
		if more, err := f(start); err != nil || !more {
			return err
		}
		after = start.ID
	}
	return rd.after(ctx, kind, after, batch, f)
}

// after calls f on kind's records stored after row afterID (0: from the
// first), in order, until f says stop or the chain ends, batch at a time.
func (rd *reader) after(ctx context.Context, kind string, afterID int64, batch int, f func(journal.FiscalRecord) (bool, error)) error {
	for {
		rs, err := rd.db.FiscalRecords(ctx, kind, afterID, batch)
		rd.reads.Add(int64(len(rs)))
		if err != nil {
			return err
		}
		for _, r := range rs {
			if more, err := f(r); err != nil || !more {
				return err
			}
			afterID = r.ID
		}
		if len(rs) < batch {
			return nil
		}
	}
}

// backward calls f on kind's records from the last one back, until f says
// stop or the chain's first record.
func (rd *reader) backward(ctx context.Context, kind string, f func(journal.FiscalRecord) (bool, error)) error {
	last, ok, err := rd.db.FiscalLast(ctx, kind)
	rd.reads.Add(1)
	if err != nil || !ok {
		return err
	}
	// Most walks back stop after a few records: pages start small.
	page := int64(4)
	for top := last.Seq; top >= 1; top, page = top-page, min(2*page, 256) {
		from := max(top-page+1, 1)
		var rs []journal.FiscalRecord
		err := rd.forward(ctx, kind, from, int(max(top-from, 1)), func(r journal.FiscalRecord) (bool, error) {
			if r.Seq > top {
				return false, nil
			}
			rs = append(rs, r)
			return r.Seq < top, nil
		})
		if err != nil {
			return err
		}
		if len(rs) == 0 {
			return fmt.Errorf("fiscal: the %s chain has no record %d: run comptoir verify", kind, from)
		}
		for i := len(rs) - 1; i >= 0; i-- {
			if more, err := f(rs[i]); err != nil || !more {
				return err
			}
		}
	}
	return nil
}
