package fiscal

import (
	"context"
	"crypto/ed25519"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/journal"
)

// A head names one record: its chain, its number and the start of its
// signature's digest; a record that differs in any of them is another.
func TestAHeadNamesOneRecordByChainNumberAndSignature(t *testing.T) {
	r := journal.FiscalRecord{Kind: journal.FiscalTicket, Seq: 42, Sig: "c2lnbmF0dXJl"}
	h, err := ParseHead(HeadFingerprint(r))
	if err != nil {
		t.Fatal(err)
	}
	other := func(change func(*journal.FiscalRecord)) journal.FiscalRecord { o := r; change(&o); return o }
	for _, tc := range []struct {
		name string
		r    journal.FiscalRecord
		ok   bool
	}{
		{"the record", r, true},
		{"another chain", other(func(o *journal.FiscalRecord) { o.Kind = journal.FiscalClosing }), false},
		{"another number", other(func(o *journal.FiscalRecord) { o.Seq = 41 }), false},
		{"another signature", other(func(o *journal.FiscalRecord) { o.Sig = "b3RoZXI=" }), false},
	} {
		if got := h.Matches(tc.r); got != tc.ok {
			t.Errorf("%s: matches %v, want %v", tc.name, got, tc.ok)
		}
	}
}

// A head typed without its dash is read up to its last digit of the
// number, 0 and 9 included, when the digest starts with a letter.
func TestAHeadWithoutItsDashKeepsEveryDigitOfItsNumber(t *testing.T) {
	for in, want := range map[string]string{
		"t10abcdef012345": "T10-abcdef012345",
		"T19ABCDEF012345": "T19-abcdef012345",
		"z90fedcba987654": "Z90-fedcba987654",
	} {
		h, err := ParseHead(in)
		if err != nil || h.String() != want {
			t.Errorf("%s: %v %v, want %s", in, h, err, want)
		}
	}
}

// events records n events, a ticket between each two, so that a chain's
// numbers are not its rows'.
func (e *env) events(n int) {
	e.t.Helper()
	for i := range n {
		if _, err := e.ledger.Event(e.ctx, EventSetting, "", fmt.Sprint(i)); err != nil {
			e.t.Fatal(err)
		}
		if _, _, err := e.ledger.append(e.ctx, journal.FiscalTicket, fmt.Sprint("order:e", i), func(seq int64, at time.Time) (any, error) {
			return Ticket{Number: seq}, nil
		}); err != nil {
			e.t.Fatal(err)
		}
	}
}

// A record is found by its number from 1 to the chain's last, each its
// own; no number outside them names one, and such a number costs one
// read of the chain's last record, not a search.
func TestARecordIsFoundByItsNumberFromTheFirstToTheLast(t *testing.T) {
	e := newEnv(t)
	e.events(9)
	rd := e.ledger.rd
	for seq := int64(-1); seq <= 11; seq++ {
		before := rd.reads.Load()
		r, ok, err := rd.bySeq(e.ctx, journal.FiscalEvent, seq)
		reads := rd.reads.Load() - before
		if err != nil {
			t.Fatal(err)
		}
		in := seq >= 1 && seq <= 9
		if ok != in || ok && (r.Seq != seq || r.Kind != journal.FiscalEvent) {
			t.Errorf("record %d: %v %+v", seq, ok, r)
		}
		if !in && reads != 1 {
			t.Errorf("record %d, outside the chain, read %d records", seq, reads)
		}
	}
	if _, ok, err := rd.bySeq(e.ctx, journal.FiscalArchive, 1); ok || err != nil {
		t.Errorf("an empty chain has a record 1: %v", err)
	}
}

// A record removed from the middle of a chain is not found, and the
// search for it ends.
func TestARecordRemovedFromTheMiddleIsNotFound(t *testing.T) {
	e := newEnv(t)
	e.events(9)
	e.tamper(`DELETE FROM fiscal_records WHERE kind = 'event' AND seq = 4`)
	rd := e.ledger.rd
	for seq := int64(1); seq <= 9; seq++ {
		// A halving search of 9 records among 18 rows reads a handful: one
		// that reads a thousand never ends, and is stopped.
		ctx, cancel := context.WithCancel(e.ctx)
		start := rd.reads.Load()
		go func() {
			for ctx.Err() == nil && rd.reads.Load()-start < 1000 {
				time.Sleep(time.Millisecond)
			}
			cancel()
		}()
		r, ok, err := rd.bySeq(ctx, journal.FiscalEvent, seq)
		reads := rd.reads.Load() - start
		cancel()
		if err != nil || ok != (seq != 4) || ok && r.Seq != seq || reads >= 1000 {
			t.Fatalf("record %d: %v %+v %v (%d reads)", seq, ok, r, err, reads)
		}
	}
}

// A walk back visits each record once, the newest first, down to the
// first or to the record where it is told to stop.
func TestAWalkBackVisitsEachRecordOnceNewestFirst(t *testing.T) {
	e := newEnv(t)
	n := 0
	for _, total := range []int{1, 3, 4, 5, 12, 13, 40} {
		e.events(total - n)
		n = total
		for _, stop := range []int64{1, 2, int64(total) / 2} {
			var seen []int64
			err := e.ledger.rd.backward(e.ctx, journal.FiscalEvent, func(r journal.FiscalRecord) (bool, error) {
				seen = append(seen, r.Seq)
				return r.Seq > stop, nil
			})
			if err != nil {
				t.Fatal(err)
			}
			var want []int64
			for s := int64(total); s >= 1; s-- {
				want = append(want, s)
				if s <= stop {
					break
				}
			}
			if fmt.Sprint(seen) != fmt.Sprint(want) {
				t.Fatalf("%d records, stop at %d: walked %v", total, stop, seen)
			}
		}
	}
}

// Every head a verification is given is checked, several on one chain
// included: each true one is confirmed, a false one breaks the chain
// whichever comes first.
func TestEveryPaperHeadOfAChainIsChecked(t *testing.T) {
	e := newEnv(t)
	for i := range 3 {
		e.sale(fmt.Sprint("o-", i))
	}
	e.record()
	heads := map[int64]Head{}
	for seq := int64(1); seq <= 3; seq++ {
		r, ok, err := e.ledger.rd.bySeq(e.ctx, journal.FiscalTicket, seq)
		if err != nil || !ok {
			t.Fatal(err)
		}
		heads[seq], _ = ParseHead(HeadFingerprint(r))
	}
	forged := heads[1]
	forged.Digest = "000000000000"
	verify := func(expect ...Head) Verification {
		v, err := VerifyJournal(e.ctx, e.db, e.ledger.PublicKey(), VerifyOptions{KeyGiven: true, Expect: expect})
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	v := verify(heads[3], heads[1], heads[2])
	if !v.OK || len(v.Expected) != 3 {
		t.Fatalf("three true heads: %+v", v)
	}
	for _, x := range v.Expected {
		if !x.OK {
			t.Errorf("head %s not confirmed", x.Head)
		}
	}
	for _, order := range [][]Head{{heads[3], forged}, {forged, heads[3]}, {heads[2], forged, heads[3]}} {
		if v := verify(order...); v.OK || v.Broken == nil || v.Broken.Seq != 1 {
			t.Errorf("heads %v: %+v", order, v)
		}
	}
}

// The witness keeps the first record it saw at each number: a journal
// that reaches that number again (restored, or another one) does not
// rewrite it, and the witness still names the record it saw.
func TestTheWitnessNeverRewritesANumberItHolds(t *testing.T) {
	path := filepath.Join(t.TempDir(), WitnessFile)
	first := newEnv(t)
	if err := first.ledger.KeepWitness(path); err != nil {
		t.Fatal(err)
	}
	first.sale("o-1")
	first.record()
	saw, _, err := ReadWitness(path)
	if err != nil || saw[journal.FiscalTicket].Seq != 1 {
		t.Fatalf("witness %+v %v", saw, err)
	}
	second := newEnv(t)
	if err := second.ledger.KeepWitness(path); err != nil {
		t.Fatal(err)
	}
	second.sale("o-2")
	second.record()
	now, _, err := ReadWitness(path)
	if err != nil || now[journal.FiscalTicket] != saw[journal.FiscalTicket] {
		t.Fatalf("the witness was %+v, is %+v (%v)", saw[journal.FiscalTicket], now[journal.FiscalTicket], err)
	}
	if v := second.verify(); v.OK {
		t.Fatal("the other journal verifies against the witness")
	}
	second.sale("o-3")
	second.record()
	if now, _, _ := ReadWitness(path); now[journal.FiscalTicket].Seq != 2 {
		t.Fatalf("the witness did not move on: %+v", now)
	}
}

// Only a PEM block of type PUBLIC KEY is read as a public key: the same
// key under another type, or no PEM at all, is refused.
func TestOnlyAPEMPublicKeyIsReadAsOne(t *testing.T) {
	pub, _, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		raw  []byte
		ok   bool
	}{
		{"a public key", pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), true},
		{"under another type", pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), false},
		{"no PEM", der, false},
		{"nothing", nil, false},
	} {
		got, err := ParsePublicKey(tc.raw)
		if (err == nil) != tc.ok || tc.ok && !got.Equal(pub) {
			t.Errorf("%s: %v %v", tc.name, got, err)
		}
	}
}
