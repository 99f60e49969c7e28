package fiscal

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/comptoir-pos/comptoir/backend/journal"
)

// ArchiveFormat names the archive format (docs/fiscal.md describes it).
const ArchiveFormat = "comptoir-fiscal-archive-1"

// ArchiveHeader is an archive's first line.
type ArchiveHeader struct {
	Format      string    `json:"format"`
	Period      string    `json:"period"` // yyyy-MM
	From        time.Time `json:"from"`
	To          time.Time `json:"to"`
	Kiosk       string    `json:"kiosk"`
	Software    string    `json:"software"`
	CreatedAt   time.Time `json:"createdAt"`
	PublicKey   string    `json:"publicKey"` // PEM
	Fingerprint string    `json:"fingerprint"`
	// Records counts the lines of each chain; each chain's lines are
	// consecutive, and the first one's prevSig is the signature of the
	// record before it (in the archive before this one).
	Records map[string]int64 `json:"records"`
	// Sig signs the header with Sig empty (its JSON as written here).
	Sig string `json:"sig,omitempty"`
}

// headerBytes are the bytes the header's signature covers.
func headerBytes(h ArchiveHeader) []byte {
	h.Sig = ""
	b, _ := json.Marshal(h)
	return append([]byte(signedPrefix+"\narchive\n"), b...)
}

// ArchiveLine is one record, exactly as signed: at in Unix milliseconds,
// the payload as its stored text.
type ArchiveLine struct {
	Kind    string `json:"kind"`
	Seq     int64  `json:"seq"`
	At      int64  `json:"at"`
	Source  string `json:"source,omitempty"`
	Payload string `json:"payload"`
	PrevSig string `json:"prevSig"`
	Sig     string `json:"sig"`
}

// ArchiveRecord is the chain's record of an archive made.
type ArchiveRecord struct {
	Number  int64            `json:"number"`
	Period  string           `json:"period"`
	File    string           `json:"file"`
	SHA256  string           `json:"sha256"`
	Records map[string]int64 `json:"records"`
	At      time.Time        `json:"at"`
	Kiosk   string           `json:"kiosk"`
}

// Archive writes the month's records (yyyy-MM in loc: every chain's
// records from the first to the last written in the month) to a file in
// dir, whole or not at all, then records the archive in its chain. It
// returns the file's path.
func (l *Ledger) Archive(ctx context.Context, month string, loc *time.Location, dir string) (string, ArchiveRecord, error) {
	from, err := time.ParseInLocation("2006-01", month, loc)
	if err != nil {
		return "", ArchiveRecord{}, fmt.Errorf("fiscal: period %q is not yyyy-MM", month)
	}
	to := from.AddDate(0, 1, 0)
	h := ArchiveHeader{Format: ArchiveFormat, Period: month, From: from, To: to, Kiosk: l.Kiosk, Software: l.Software,
		CreatedAt: time.Now().UTC(), PublicKey: string(PublicKeyPEM(l.PublicKey())), Fingerprint: Fingerprint(l.PublicKey()),
		Records: map[string]int64{}}
	var body bytes.Buffer
	enc := json.NewEncoder(&body)
	for _, kind := range journal.FiscalKinds {
		var first, last int64
		err := l.eachRecord(ctx, kind, func(r journal.FiscalRecord) error {
			if !r.At.Before(from) && r.At.Before(to) {
				if first == 0 {
					first = r.Seq
				}
				last = r.Seq
			}
			return nil
		})
		if err != nil {
			return "", ArchiveRecord{}, err
		}
		err = l.eachRecord(ctx, kind, func(r journal.FiscalRecord) error {
			if first == 0 || r.Seq < first || r.Seq > last {
				return nil
			}
			h.Records[kind]++
			return enc.Encode(ArchiveLine{Kind: r.Kind, Seq: r.Seq, At: r.At.UnixMilli(), Source: r.Source, Payload: string(r.Payload), PrevSig: r.PrevSig, Sig: r.Sig})
		})
		if err != nil {
			return "", ArchiveRecord{}, err
		}
	}
	h.Sig = base64.StdEncoding.EncodeToString(ed25519.Sign(l.key, headerBytes(h)))
	head, _ := json.Marshal(h)
	data := append(append(head, '\n'), body.Bytes()...)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", ArchiveRecord{}, err
	}
	name := fmt.Sprintf("comptoir-fiscal-%s-%s.jsonl", l.Kiosk, month)
	// What a process killed while writing left: never an archive.
	stale, _ := filepath.Glob(filepath.Join(dir, ".tmp-comptoir-fiscal-*"))
	for _, f := range stale {
		_ = os.Remove(f)
	}
	path := filepath.Join(dir, name)
	if err := writeFile(path, data, 0o600); err != nil {
		return "", ArchiveRecord{}, fmt.Errorf("fiscal: write the archive: %w", err)
	}
	sum := sha256.Sum256(data)
	rec, _, err := l.append(ctx, journal.FiscalArchive, "", func(seq int64, at time.Time) (any, error) {
		return ArchiveRecord{Number: seq, Period: month, File: name, SHA256: hex.EncodeToString(sum[:]), Records: h.Records, At: at, Kiosk: l.Kiosk}, nil
	})
	if err != nil {
		return path, ArchiveRecord{}, err
	}
	var ar ArchiveRecord
	_ = json.Unmarshal(rec.Payload, &ar)
	return path, ar, nil
}

// ArchiveVerification is what VerifyArchive found.
type ArchiveVerification struct {
	Header  ArchiveHeader `json:"header"`
	SHA256  string        `json:"sha256"`
	Records int64         `json:"records"`
	// KeyGiven: the archive was checked with a key given from outside;
	// false: with the key it carries, and Note says what that leaves.
	KeyGiven bool   `json:"keyGiven"`
	Note     string `json:"note,omitempty"`
	OK       bool   `json:"ok"`
	Broken   *Break `json:"broken,omitempty"`
}

// VerifyArchive checks an archive with pub, a key given from outside (PEM
// or base64, as printed on a Z), and that the archive names that key; or,
// pub empty, with the key the archive carries (which proves consistency,
// not origin): every record's signature, and each chain's numbers and
// links from its first line on. Line numbers name a broken record
// (Break.ID).
func VerifyArchive(r io.Reader, pub []byte) (ArchiveVerification, error) {
	var v ArchiveVerification
	raw, err := io.ReadAll(r)
	if err != nil {
		return v, err
	}
	sum := sha256.Sum256(raw)
	v.SHA256 = hex.EncodeToString(sum[:])
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	if !sc.Scan() {
		return v, fmt.Errorf("fiscal: an empty archive")
	}
	if err := json.Unmarshal(sc.Bytes(), &v.Header); err != nil || v.Header.Format != ArchiveFormat {
		return v, fmt.Errorf("fiscal: not a %s archive", ArchiveFormat)
	}
	key, err := ParsePublicKey([]byte(v.Header.PublicKey))
	if err != nil {
		return v, fmt.Errorf("fiscal: the archive's public key: %w", err)
	}
	v.Note = LocalKeyNote
	if len(pub) > 0 {
		want, err := ParsePublicKeyText(pub)
		if err != nil {
			return v, err
		}
		if !want.Equal(key) {
			return v, fmt.Errorf("fiscal: the archive was signed with another key (%s) than the one given (%s)", ShortFingerprint(key), ShortFingerprint(want))
		}
		// Every signature below is checked with key, now known equal to
		// the one given.
		v.KeyGiven, v.Note = true, ""
	}
	if sig, err := base64.StdEncoding.Strict().DecodeString(v.Header.Sig); err != nil || !ed25519.Verify(key, headerBytes(v.Header), sig) {
		v.Broken = &Break{ID: 1, Why: "the header's signature does not match it: it was changed"}
		return v, nil
	}
	v.OK = true
	checks := map[string]*chainCheck{}
	line := int64(1)
	for sc.Scan() {
		line++
		var l ArchiveLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			v.OK, v.Broken = false, &Break{ID: line, Why: "the line is not a record"}
			return v, nil
		}
		c := checks[l.Kind]
		if c == nil {
			// The chain goes on from the record before the archive.
			c = &chainCheck{pub: key, kind: l.Kind, n: l.Seq - 1, prev: l.PrevSig}
			checks[l.Kind] = c
		}
		rec := journal.FiscalRecord{ID: line, Kind: l.Kind, Seq: l.Seq, At: time.UnixMilli(l.At).UTC(), Source: l.Source,
			Payload: []byte(l.Payload), PrevSig: l.PrevSig, Sig: l.Sig}
		if b := c.next(rec); b != nil {
			v.OK, v.Broken = false, b
			return v, nil
		}
		v.Records++
	}
	if err := sc.Err(); err != nil {
		return v, err
	}
	var want int64
	for _, n := range v.Header.Records {
		want += n
	}
	if want != v.Records {
		v.OK, v.Broken = false, &Break{ID: line, Why: fmt.Sprintf("the header counts %d records, the archive holds %d", want, v.Records)}
	}
	return v, nil
}
