package journal

import (
	"fmt"
	"testing"
)

// A fiscal chain is written one record at a time: each is sealed with the
// one before it, numbered without gaps per kind, and returned as stored. A
// record asked for again by its source is the one already made (seal not
// called, nothing appended); records without a source are all made.
func TestAFiscalRecordIsMadeOncePerSourceAndChainedToTheLast(t *testing.T) {
	ctx := t.Context()
	db := openMemory(t)
	seals := 0
	seal := func(next FiscalRecord, prev *FiscalRecord) ([]byte, string, error) {
		seals++
		if (prev == nil) != (next.Seq == 1) || (prev != nil && (prev.Seq != next.Seq-1 || next.PrevSig != prev.Sig)) {
			return nil, "", fmt.Errorf("record %d sealed with %+v", next.Seq, prev)
		}
		return fmt.Appendf(nil, `{"n":%d}`, next.Seq), fmt.Sprintf("sig-%s-%d", next.Kind, next.Seq), nil
	}
	appendOne := func(kind, source string) (FiscalRecord, bool) {
		t.Helper()
		rec, created, err := db.AppendFiscal(ctx, kind, source, seal)
		if err != nil {
			t.Fatalf("append %s %q: %v", kind, source, err)
		}
		return rec, created
	}
	first, created := appendOne(FiscalClosing, "day:2026-03-01")
	if !created || first.ID == 0 || first.Seq != 1 || first.Sig != "sig-closing-1" || first.PrevSig != "" ||
		first.Source != "day:2026-03-01" || string(first.Payload) != `{"n":1}` || first.At.IsZero() {
		t.Fatalf("first record %+v, created %v", first, created)
	}
	again, created := appendOne(FiscalClosing, "day:2026-03-01")
	if created || again.ID != first.ID || again.Seq != 1 || again.Sig != first.Sig || seals != 1 {
		t.Fatalf("the same day's closing asked again: %+v, created %v, %d seals", again, created, seals)
	}
	for want := int64(2); want <= 3; want++ {
		rec, created := appendOne(FiscalClosing, "")
		if !created || rec.Seq != want || rec.PrevSig != fmt.Sprintf("sig-closing-%d", want-1) || rec.Source != "" {
			t.Fatalf("record without a source %+v, created %v, want number %d", rec, created, want)
		}
	}
	if other, created := appendOne(FiscalEvent, "day:2026-03-01"); !created || other.Seq != 1 || other.PrevSig != "" {
		t.Fatalf("another kind's chain: %+v, created %v", other, created)
	}
}
