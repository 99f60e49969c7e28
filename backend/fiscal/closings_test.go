package fiscal

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/journal"
)

type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) Now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *testClock) Set(t time.Time) { c.mu.Lock(); c.t = t; c.mu.Unlock() }

var paris = time.FixedZone("CET", 3600)

// newClockedEnv is an env whose journal reads the time from clock.
func newClockedEnv(t *testing.T, clock *testClock) *env {
	e := &env{t: t, ctx: t.Context(), dir: t.TempDir()}
	db, err := journal.Open(e.ctx, e.dir, journal.WithClock(clock.Now))
	if err != nil {
		t.Fatal(err)
	}
	key, err := LoadOrCreateKey(e.dir)
	if err != nil {
		t.Fatal(err)
	}
	e.db, e.ledger = db, NewLedger(db, key, "kiosk-1", "test")
	t.Cleanup(func() { db.Close() })
	return e
}

// randomSale records a paid order of random lines at the three French
// rates, in the kiosk's shape.
func (e *env) randomSale(rng *rand.Rand, id string) int64 {
	e.t.Helper()
	type line struct {
		Name      map[string]string `json:"name"`
		Qty       int               `json:"qty"`
		UnitPrice int64             `json:"unitPrice"`
		Total     int64             `json:"total"`
		VATRate   int               `json:"vatRate"`
	}
	rates := []int{550, 1000, 2000}
	var lines []line
	var total int64
	for i := range 1 + rng.IntN(4) {
		l := line{Name: map[string]string{"fr": fmt.Sprintf("article %d", i)}, Qty: 1 + rng.IntN(3), UnitPrice: int64(50 + rng.IntN(1500)), VATRate: rates[rng.IntN(3)]}
		l.Total = int64(l.Qty) * l.UnitPrice
		total += l.Total
		lines = append(lines, l)
	}
	data, _ := json.Marshal(map[string]any{"number": id, "language": "fr", "lines": lines})
	if err := e.db.CreateOrder(e.ctx, journal.Order{ID: id, Currency: "EUR", Total: total, Data: data}); err != nil {
		e.t.Fatal(err)
	}
	e.attempt(id, journal.KindDebit, total, "")
	return total
}

// Closings are exact: over random days of sales, refunds and reversals,
// each day's totals by rate and by means are the sums of its tickets, its
// total theirs, the perpetual total the sum of every day; a month is the
// sum of its days.
func TestClosingsAreExact(t *testing.T) {
	for seed := uint64(1); seed <= 5; seed++ {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 7))
			clock := &testClock{t: time.Date(2026, 10, 29, 9, 0, 0, 0, paris)}
			e := newClockedEnv(t, clock)
			days := []time.Time{}
			for d := range 5 { // 29, 30, 31 October, 1, 2 November
				day := time.Date(2026, 10, 29+d, 9, 0, 0, 0, paris)
				days = append(days, day)
				for i := range 2 + rng.IntN(5) {
					clock.Set(day.Add(time.Duration(i) * 17 * time.Minute))
					id := fmt.Sprintf("d%d-%d", d, i)
					total := e.randomSale(rng, id)
					switch rng.IntN(4) {
					case 0:
						e.attempt(id, journal.KindRefund, 1+rng.Int64N(total), "")
					case 1:
						e.attempt(id, journal.KindReversal, total, debitOf(t, e, id).TransactionID)
					}
					e.record()
				}
			}
			clock.Set(time.Date(2026, 11, 3, 8, 0, 0, 0, paris))
			closings, err := e.ledger.CloseDue(e.ctx, clock.Now(), paris, 1)
			if err != nil {
				t.Fatal(err)
			}
			// Five days, and October (November is not over).
			if len(closings) != 6 || closings[5].Period != PeriodMonth || closings[5].Name != "2026-10" {
				t.Fatalf("closings %+v", closings)
			}
			// Each day against its tickets, summed here independently.
			var perpetual int64
			byDay := map[string]*totals{}
			for _, tk := range e.tickets() {
				d := tk.At.In(paris).Format(time.DateOnly)
				if byDay[d] == nil {
					byDay[d] = newTotals()
				}
				byDay[d].ticket(tk)
			}
			var october totals
			october.vat, october.means = map[int]*VAT{}, map[string]*MeansTotal{}
			for i, c := range closings[:5] {
				want := Closing{}
				byDay[days[i].Format(time.DateOnly)].into(&want)
				perpetual += want.Total
				if c.Period != PeriodDay || c.Total != want.Total || c.TotalExcl != want.TotalExcl || c.Perpetual != perpetual ||
					fmt.Sprint(c.ByVAT) != fmt.Sprint(want.ByVAT) || fmt.Sprint(c.ByMeans) != fmt.Sprint(want.ByMeans) {
					t.Fatalf("day %s: %+v, want %+v (perpetual %d)", c.Name, c, want, perpetual)
				}
				var vatSum int64
				for _, v := range c.ByVAT {
					vatSum += v.Gross
					if v.Gross != v.Net+v.Tax {
						t.Fatalf("rate %d does not add up: %+v", v.Rate, v)
					}
				}
				if c.Period == PeriodDay && c.From.Month() == time.October {
					october.closing(c)
				}
			}
			m := closings[5]
			want := Closing{}
			october.into(&want)
			if m.Total != want.Total || fmt.Sprint(m.ByVAT) != fmt.Sprint(want.ByVAT) || m.Perpetual != closings[2].Perpetual || len(m.Parts) != 3 {
				t.Fatalf("october %+v, want %+v", m, want)
			}
			// Closing again changes nothing; the chains verify.
			if again, err := e.ledger.CloseDue(e.ctx, clock.Now(), paris, 1); err != nil || len(again) != 0 {
				t.Fatalf("again %+v %v", again, err)
			}
			if v := e.verify(); !v.OK || v.Records[journal.FiscalClosing] != 6 {
				t.Fatalf("verify %+v", v)
			}
		})
	}
}

// A day not over is not closed, and nothing is written.
func TestADayNotOverIsNotClosed(t *testing.T) {
	clock := &testClock{t: time.Date(2026, 11, 24, 9, 0, 0, 0, paris)}
	e := newClockedEnv(t, clock)
	e.sale("o-1")
	e.record()
	if _, err := e.ledger.CloseDay(e.ctx, "2026-11-24", paris); err == nil {
		t.Fatal("closed a day not over")
	}
	if v := e.verify(); !v.OK || v.Records[journal.FiscalClosing] != 0 {
		t.Fatalf("verify %+v", v)
	}
	clock.Set(time.Date(2026, 11, 25, 0, 1, 0, 0, paris))
	c, err := e.ledger.CloseDay(e.ctx, "2026-11-24", paris)
	if err != nil || c.Tickets != 1 || c.Total != 1100 || c.Perpetual != 1100 || c.Number != 1 {
		t.Fatalf("closing %+v %v", c, err)
	}
}

// headerSig is the signature an archive's header line carries.
func headerSig(t *testing.T, line string) string {
	var h ArchiveHeader
	if err := json.Unmarshal([]byte(line), &h); err != nil || h.Sig == "" {
		t.Fatalf("header %q: %v", line, err)
	}
	return h.Sig
}

// respelled is a padded standard base64 text spelled otherwise: the
// character before the padding keeps its meaningful bits and changes the
// ones decoding drops (an ed25519 signature's last character carries four
// such bits).
func respelled(b64 string) string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	body := strings.TrimRight(b64, "=")
	i := strings.IndexByte(alphabet, body[len(body)-1])
	j := i&^15 | (i+1)&15
	return body[:len(body)-1] + alphabet[j:j+1] + b64[len(body):]
}

// An archive holds the month's records with the public key; it verifies on
// its own, and names the line of a record changed or removed, or a header
// changed.
func TestArchive(t *testing.T) {
	clock := &testClock{t: time.Date(2026, 10, 30, 9, 0, 0, 0, paris)}
	e := newClockedEnv(t, clock)
	for i := range 3 {
		e.sale(fmt.Sprint("oct-", i))
	}
	e.record()
	clock.Set(time.Date(2026, 11, 2, 9, 0, 0, 0, paris))
	e.sale("nov-1")
	e.record()
	if _, err := e.ledger.CloseDue(e.ctx, clock.Now(), paris, 1); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path, rec, err := e.ledger.Archive(e.ctx, "2026-10", paris, dir)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	v, err := VerifyArchive(bytes.NewReader(raw), nil)
	if err != nil || !v.OK || v.Header.Records[journal.FiscalTicket] != 3 || v.SHA256 != rec.SHA256 {
		t.Fatalf("archive %+v %v (record %+v)", v, err, rec)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Fatalf("archive mode %v", fi.Mode())
	}
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	edit := func(i int, old, new string) []string {
		out := append([]string{}, lines...)
		out[i] = strings.Replace(out[i], old, new, 1)
		return out
	}
	for name, tc := range map[string]struct {
		lines []string
		line  int64
	}{
		"an amount changed": {edit(2, `\"totalInclTax\":1100`, `\"totalInclTax\":110`), 3},
		"a record removed":  {append(append([]string{}, lines[:2]...), lines[3:]...), 3},
		"the header edited": {edit(0, `"kiosk":"kiosk-1"`, `"kiosk":"kiosk-2"`), 1},
		// Bits a lenient decoder would drop: the same signature, spelled
		// otherwise.
		"the header's signature respelled": {edit(0, headerSig(t, lines[0]), respelled(headerSig(t, lines[0]))), 1},
	} {
		if tc.lines[0] == lines[0] && strings.HasPrefix(name, "the header") || (name == "an amount changed" && tc.lines[2] == lines[2]) {
			t.Fatalf("%s: the edit did not apply", name)
		}
		v, err := VerifyArchive(strings.NewReader(strings.Join(tc.lines, "\n")), nil)
		if err != nil || v.OK || v.Broken == nil || v.Broken.ID != tc.line {
			t.Errorf("%s: %+v %+v %v", name, v, v.Broken, err)
		}
	}
	// The archive is in its chain; the chains still verify.
	if v := e.verify(); !v.OK || v.Records[journal.FiscalArchive] != 1 {
		t.Fatalf("verify %+v", v)
	}
}
