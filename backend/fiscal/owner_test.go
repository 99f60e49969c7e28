package fiscal

import (
	"crypto/ed25519"
	"crypto/rand"
	"database/sql"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/journal"
)

// ownerEnv is a journal of three sales, a day closed after them (its Z
// printed: the fingerprint on paper), the key exported at installation
// and a witness kept beside the key, in a folder of its own.
type ownerEnv struct {
	*env
	exported ed25519.PublicKey
	paper    Head // the Z's fingerprint
	z        Closing
	keyDir   string
}

func newOwnerEnv(t *testing.T) *ownerEnv {
	clock := &testClock{t: time.Date(2026, 11, 24, 9, 0, 0, 0, paris)}
	e := newClockedEnv(t, clock)
	o := &ownerEnv{env: e, exported: e.ledger.PublicKey(), keyDir: t.TempDir()}
	if err := e.ledger.KeepWitness(filepath.Join(o.keyDir, WitnessFile)); err != nil {
		t.Fatal(err)
	}
	if err := e.ledger.Start(e.ctx, ""); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		clock.Set(clock.Now().Add(time.Minute))
		e.sale(fmt.Sprintf("o-%d", i))
		e.record()
	}
	clock.Set(time.Date(2026, 11, 25, 8, 0, 0, 0, paris))
	z, err := e.ledger.CloseDay(e.ctx, "2026-11-24", paris)
	if err != nil {
		t.Fatal(err)
	}
	if o.paper, err = ParseHead(z.Fingerprint); err != nil {
		t.Fatal(err)
	}
	o.z = z
	if _, err := e.ledger.Event(e.ctx, EventStop, "", ""); err != nil {
		t.Fatal(err)
	}
	return o
}

// verify checks the journal as an inspector would: with the exported key
// and the paper, and the witness if it is still there.
func (o *ownerEnv) verify(key ed25519.PublicKey, expect ...Head) Verification {
	o.t.Helper()
	w, _, err := ReadWitness(filepath.Join(o.keyDir, WitnessFile))
	if err != nil {
		o.t.Fatal(err)
	}
	v, err := VerifyJournal(o.ctx, o.db, key, VerifyOptions{KeyGiven: true, Expect: expect, Witness: w})
	if err != nil {
		o.t.Fatal(err)
	}
	return v
}

// rewrite is the owner rewriting the records with SQL and signing them all
// again with key, in order, as Comptoir would have: change alters a
// record's payload (nil: every record kept as it was), drop removes
// records (before the chains are signed again). The closings' heads of
// the other chains are brought up to date, so that the journal holds
// together on its own.
func (o *ownerEnv) rewrite(key ed25519.PrivateKey, change func(r *journal.FiscalRecord), drop string) {
	o.t.Helper()
	path := o.db.Path()
	o.db.Close()
	raw, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		o.t.Fatal(err)
	}
	defer raw.Close()
	exec := func(q string, args ...any) {
		if _, err := raw.Exec(q, args...); err != nil {
			o.t.Fatalf("%s: %v", q, err)
		}
	}
	exec("DROP TRIGGER fiscal_records_no_update")
	exec("DROP TRIGGER fiscal_records_no_delete")
	if drop != "" {
		exec("DELETE FROM fiscal_records WHERE " + drop)
	}
	newSig := map[string]string{}
	for _, kind := range []string{journal.FiscalTicket, journal.FiscalEvent, journal.FiscalArchive, journal.FiscalClosing} {
		rows, err := raw.Query(`SELECT id, seq, at, COALESCE(source, ''), payload, sig FROM fiscal_records WHERE kind = ? ORDER BY seq`, kind)
		if err != nil {
			o.t.Fatal(err)
		}
		var recs []journal.FiscalRecord
		for rows.Next() {
			r := journal.FiscalRecord{Kind: kind}
			var at int64
			var payload string
			if err := rows.Scan(&r.ID, &r.Seq, &at, &r.Source, &payload, &r.Sig); err != nil {
				o.t.Fatal(err)
			}
			r.At, r.Payload = time.UnixMilli(at).UTC(), []byte(payload)
			recs = append(recs, r)
		}
		rows.Close()
		prev := ""
		for _, r := range recs {
			if change != nil {
				change(&r)
			}
			if kind == journal.FiscalClosing {
				text := string(r.Payload)
				for old, sig := range newSig {
					text = strings.ReplaceAll(text, `"sig":"`+old+`"`, `"sig":"`+sig+`"`)
				}
				r.Payload = []byte(text)
			}
			old := r.Sig
			r.PrevSig = prev
			r.Sig = base64.StdEncoding.EncodeToString(ed25519.Sign(key, SignedBytes(r)))
			newSig[old], prev = r.Sig, r.Sig
			exec(`UPDATE fiscal_records SET payload = ?, prev_sig = ?, sig = ? WHERE id = ?`, string(r.Payload), r.PrevSig, r.Sig, r.ID)
		}
	}
	raw.Close()
	o.open()
}

// ticket2To1Cent is the owner's change: ticket 2's 11.00 made 0.01.
func ticket2To1Cent(r *journal.FiscalRecord) {
	if r.Kind == journal.FiscalTicket && r.Seq == 2 {
		r.Payload = []byte(strings.Replace(string(r.Payload), `"totalInclTax":1100`, `"totalInclTax":1`, 1))
	}
}

// The owner changes a sale and signs the chains again with a key of their
// own beside the data: the journal holds together with that key, and
// verify says that it proves consistency only; the key exported at
// installation names the first record it did not sign.
func TestReSignedWithALocalKeyFailsWithTheExportedKey(t *testing.T) {
	o := newOwnerEnv(t)
	if v := o.verify(o.exported, o.paper); !v.OK || len(v.Expected) != 1 || !v.Expected[0].OK {
		t.Fatalf("before: %+v %+v", v, v.Broken)
	}
	pub, forged, _ := ed25519.GenerateKey(rand.Reader)
	o.rewrite(forged, ticket2To1Cent, "")
	local, err := VerifyJournal(o.ctx, o.db, pub, VerifyOptions{})
	if err != nil || !local.OK || local.KeyGiven || local.Note != LocalKeyNote {
		t.Fatalf("with the local key: %+v %v", local, err)
	}
	// The closings are checked first: Z1 is the first record the exported
	// key did not sign.
	v := o.verify(o.exported)
	if v.OK || v.Broken.Kind != journal.FiscalClosing || v.Broken.Seq != 1 || !strings.Contains(v.Broken.Why, "signature") {
		t.Fatalf("with the exported key: %+v", v.Broken)
	}
}

// The owner holds the signing key (root on the PC): they change a sale,
// sign every chain again with it and remove the witness. Every signature
// holds with the exported key; the fingerprint printed on the Z does not.
func TestReSignedWithTheRealKeyFailsAgainstThePaper(t *testing.T) {
	o := newOwnerEnv(t)
	o.rewrite(o.ledger.key, ticket2To1Cent, "")
	if err := os.Remove(filepath.Join(o.keyDir, WitnessFile)); err != nil {
		t.Fatal(err)
	}
	if v := o.verify(o.exported); !v.OK {
		t.Fatalf("the rewrite shows without paper (the test rewrites badly): %+v", v.Broken)
	}
	v := o.verify(o.exported, o.paper)
	if v.OK || v.Broken.Kind != journal.FiscalClosing || v.Broken.Seq != o.paper.Seq || !strings.Contains(v.Broken.Why, "paper") {
		t.Fatalf("against the paper: %+v", v.Broken)
	}
}

// The last ticket and every event after it are removed, and the chains
// signed again with the real key. The closing made after the ticket
// counts it; the paper names the closing; with the closing removed too,
// the paper alone still shows the cut.
func TestTailCutShowsByTheCountsAndThePaper(t *testing.T) {
	for _, tc := range []struct {
		name, drop string
		paper      bool
		kind, why  string
	}{
		{"by the Z's counts", `(kind = 'ticket' AND seq = 3) OR (kind = 'event' AND at >= (SELECT at FROM fiscal_records WHERE kind = 'ticket' AND seq = 3))`, false, journal.FiscalTicket, "closing 1 saw it reach 3"},
		{"by the paper", `(kind = 'ticket' AND seq = 3) OR (kind = 'event' AND at >= (SELECT at FROM fiscal_records WHERE kind = 'ticket' AND seq = 3))`, true, journal.FiscalTicket, "reach 3"},
		{"the Z removed too: by the paper", `(kind = 'ticket' AND seq = 3) OR kind = 'closing' OR (kind = 'event' AND at >= (SELECT at FROM fiscal_records WHERE kind = 'ticket' AND seq = 3))`, true, journal.FiscalClosing, "the paper's Z1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := newOwnerEnv(t)
			o.rewrite(o.ledger.key, nil, tc.drop)
			if err := os.Remove(filepath.Join(o.keyDir, WitnessFile)); err != nil {
				t.Fatal(err)
			}
			var expect []Head
			if tc.paper {
				expect = append(expect, o.paper)
			}
			v := o.verify(o.exported, expect...)
			if v.OK || v.Broken.Kind != tc.kind || !strings.Contains(v.Broken.Why, tc.why) {
				t.Fatalf("%+v %+v", v.Records, v.Broken)
			}
		})
	}
}

// Removing exactly the last record of the journal leaves no gap and no
// record that saw it: the witness kept beside the key names it.
func TestRemovingTheLastRecordShows(t *testing.T) {
	o := newOwnerEnv(t)
	o.rewrite(o.ledger.key, nil, `id = (SELECT MAX(id) FROM fiscal_records)`)
	v := o.verify(o.exported)
	if v.OK || v.Witness != "checked" || v.Broken.Kind != journal.FiscalEvent || !strings.Contains(v.Broken.Why, "witness") {
		t.Fatalf("%+v %+v", v.Records, v.Broken)
	}
}

// A closing pins the other chains: it carries the key, its fingerprint,
// the running counts, and prints them with its own fingerprint.
func TestTheZCarriesTheCountsAndFingerprints(t *testing.T) {
	o := newOwnerEnv(t)
	z := o.z
	if z.Chains[journal.FiscalTicket].Count != 3 || z.Chains[journal.FiscalEvent].Count != 1 || z.Perpetual != 3300 ||
		z.KeyFingerprint != ShortFingerprint(o.exported) || z.PublicKey != PublicKeyText(o.exported) {
		t.Fatalf("%+v", z)
	}
	text := z.Text(32, func(c int64) string { return fmt.Sprintf("%d.%02d", c/100, c%100) })
	for _, want := range []string{"Tickets to date", " 3\n", "Events to date", "Perpetual total", "33.00", z.Fingerprint, z.KeyFingerprint} {
		if !strings.Contains(text, want) {
			t.Errorf("the Z lacks %q:\n%s", want, text)
		}
	}
	// The key as printed reads back.
	var printed strings.Builder
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		if l == "Public key:" {
			for _, k := range lines[i+1:] {
				if strings.HasPrefix(k, "test") || k == "" {
					break
				}
				printed.WriteString(k)
			}
		}
	}
	if k, err := ParsePublicKeyText([]byte(printed.String())); err != nil || !k.Equal(o.exported) {
		t.Fatalf("the printed key %q: %v", printed.String(), err)
	}
	v := o.verify(o.exported, o.paper)
	if !v.OK || !v.Expected[0].OK || v.Expected[0].Chains[journal.FiscalTicket] != 3 || *v.Expected[0].Perpetual != 3300 {
		t.Fatalf("%+v", v.Expected)
	}
}

// A fingerprint reads back as typed from paper, and nothing else does.
func TestParseHead(t *testing.T) {
	for in, want := range map[string]string{"T42-9f3a1c7b22d0": "T42-9f3a1c7b22d0", " z17 - 9F3A 1C7B 22D0 ": "Z17-9f3a1c7b22d0", "E3abcdefabcdef": "E3-abcdefabcdef"} {
		if h, err := ParseHead(in); err != nil || h.String() != want {
			t.Errorf("%q: %v %v", in, h, err)
		}
	}
	for _, bad := range []string{"", "T", "X4-9f3a1c7b22d0", "T0-9f3a1c7b22d0", "T4-9f3a1c7b22", "T4-9f3a1c7b22dz"} {
		if _, err := ParseHead(bad); err == nil {
			t.Errorf("%q read", bad)
		}
	}
}
