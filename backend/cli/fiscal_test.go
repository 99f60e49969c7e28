package cli

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/fiscal"
	"github.com/comptoir-pos/comptoir/backend/internal/testenv"
	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/kiosk"
	"github.com/comptoir-pos/comptoir/backend/payment"
	"github.com/comptoir-pos/comptoir/backend/staff"
	"github.com/comptoir-pos/comptoir/backend/staffapi"
	_ "modernc.org/sqlite"
)

// TestMain keeps the tests' signing keys in a folder of their own: run as
// root on Linux, the commands would keep them under /var/lib.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "comptoir-fiscal-keys-")
	if err != nil {
		panic(err)
	}
	os.Setenv("COMPTOIR_FISCAL_KEYS", dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// Orders paid at the command line get their tickets; `comptoir verify`
// holds, then names the record a SQL client changed or deleted behind the
// journal's back; an archive verifies on its own.
func TestVerifyNamesATamperedRecord(t *testing.T) {
	sim := startSim(t)
	dir := t.TempDir()
	var out, errOut bytes.Buffer
	for _, order := range []string{"F1", "F2", "F3"} {
		if code := run([]string{"pay", "--terminal", sim.URL(), "--data-dir", dir, "--amount", "1250", "--order", order}, &out, &errOut); code != 0 {
			t.Fatalf("pay: exit %d %s", code, errOut.String())
		}
	}
	out.Reset()
	if code := run([]string{"close", "--data-dir", dir}, &out, &errOut); code != 0 {
		t.Fatalf("close: exit %d %s", code, errOut.String())
	}
	verify := func(args ...string) (int, fiscal.Verification, string) {
		var out, errOut bytes.Buffer
		code := run(append([]string{"verify", "--data-dir", dir}, args...), &out, &errOut)
		var v fiscal.Verification
		_ = json.Unmarshal(out.Bytes(), &v)
		return code, v, errOut.String()
	}
	if code, v, msg := verify(); code != 0 || !v.OK || v.Records[journal.FiscalTicket] != 3 {
		t.Fatalf("verify: exit %d %+v %s", code, v, msg)
	}
	out.Reset()
	period := time.Now().Format("2006-01")
	if code := run([]string{"archive", "--data-dir", dir, "--period", period, "--out", filepath.Join(dir, "usb")}, &out, &errOut); code != 0 {
		t.Fatalf("archive: exit %d %s", code, errOut.String())
	}
	var arch struct{ Path string }
	if err := json.Unmarshal(out.Bytes(), &arch); err != nil || arch.Path == "" {
		t.Fatalf("archive printed %s", out.String())
	}
	if code, _, msg := verify("--key", filepath.Join(dir, fiscal.PublicKeyFile), arch.Path); code != 0 {
		t.Fatalf("verify the archive: exit %d %s", code, msg)
	}

	raw, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "comptoir.db"))
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"DROP TRIGGER fiscal_records_no_update",
		`UPDATE fiscal_records SET payload = replace(payload, '"totalInclTax":1250', '"totalInclTax":125') WHERE kind = 'ticket' AND seq = 2`} {
		if _, err := raw.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	raw.Close()
	code, v, msg := verify()
	if code != 1 || v.OK || v.Broken == nil || v.Broken.Kind != journal.FiscalTicket || v.Broken.Seq != 2 || !strings.Contains(msg, "record 2") {
		t.Fatalf("after the change: exit %d %+v %s", code, v.Broken, msg)
	}
	// The kiosk starting on these records takes orders all the same, and
	// tells staff.
	db, err := journal.Open(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	p := &payments{dir: dir, db: db}
	l, _, err := openLedger(t.Context(), p)
	if err != nil {
		t.Fatal(err)
	}
	warn := &fiscalWarning{}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	runLedger(ctx, l, db, dir, warn, warnLogger(&errOut))
	if w := warn.get(); !strings.Contains(w, "ticket chain breaks at record 2") {
		t.Fatalf("staff are told %q", w)
	}
	audit, err := db.Audit(t.Context(), journal.AuditQuery{Action: "fiscal_broken"})
	if err != nil || len(audit) != 1 {
		t.Fatalf("audit %+v %v", audit, err)
	}
}

// The key exported at installation and the fingerprints read from a Z are
// what `comptoir verify` is given from outside: it says plainly when it
// has only the key beside the data; a Z's fingerprint catches a cut the
// journal alone cannot show; an archive is checked with the exported key,
// and refused with another; a PIN reset from the command line is a
// technical event.
func TestVerifyWithAKeyAndFingerprintsFromOutside(t *testing.T) {
	sim := startSim(t)
	dir := t.TempDir()
	run1 := func(args ...string) (int, string, string) {
		var out, errOut bytes.Buffer
		code := run(append(args[:1:1], append([]string{"--data-dir", dir}, args[1:]...)...), &out, &errOut)
		return code, out.String(), errOut.String()
	}
	for _, order := range []string{"K1", "K2"} {
		if code, _, msg := run1("pay", "--terminal", sim.URL(), "--amount", "640", "--order", order); code != 0 {
			t.Fatalf("pay: %s", msg)
		}
	}
	var keyOut, keyErr bytes.Buffer
	code := run([]string{"fiscal", "key", "--data-dir", dir}, &keyOut, &keyErr)
	out, msg := keyOut.String(), keyErr.String()
	var key struct {
		Base64, ShortFingerprint, KeyStore, Witness string
		Outside                                     bool
	}
	if err := json.Unmarshal([]byte(out), &key); code != 0 || err != nil || key.Base64 == "" || !key.Outside || strings.HasPrefix(key.KeyStore, dir) {
		t.Fatalf("fiscal key: exit %d %s %s", code, out, msg)
	}
	if _, err := os.Stat(filepath.Join(dir, fiscal.PrivateKeyFile)); err == nil {
		t.Fatal("the signing key is in the data folder")
	}
	yesterday := time.Now().AddDate(0, 0, -1).Format(time.DateOnly)
	code, out, msg = run1("close", "--day", yesterday)
	var zs []fiscal.Closing
	if err := json.Unmarshal([]byte(out), &zs); code != 0 || err != nil || len(zs) != 1 || zs[0].Fingerprint == "" {
		t.Fatalf("close: exit %d %s %s", code, out, msg)
	}
	z := zs[0]
	if z.KeyFingerprint != key.ShortFingerprint || z.Chains[journal.FiscalTicket].Count != 2 {
		t.Fatalf("the Z %+v", z)
	}
	verify := func(args ...string) (int, fiscal.Verification, string) {
		code, out, msg := run1(append([]string{"verify"}, args...)...)
		var v fiscal.Verification
		_ = json.Unmarshal([]byte(out), &v)
		return code, v, msg
	}
	if code, v, msg := verify(); code != 0 || v.KeyGiven || !strings.Contains(msg, "verified against the local key only: proves consistency, not origin") {
		t.Fatalf("with the local key: exit %d %+v %s", code, v, msg)
	}
	code, v, msg := verify("--key", key.Base64, "--expect", z.Fingerprint)
	if code != 0 || !v.KeyGiven || strings.Contains(msg, "local key") || len(v.Expected) != 1 || !v.Expected[0].OK || v.Expected[0].Chains[journal.FiscalTicket] != 2 {
		t.Fatalf("with the exported key and the Z: exit %d %+v %s", code, v, msg)
	}
	if code, _, msg := verify("--expect", "T9-nothex"); code != 2 || !strings.Contains(msg, "not a chain fingerprint") {
		t.Fatalf("a bad fingerprint: exit %d %s", code, msg)
	}

	// An archive, with the exported key; with the key it carries (said);
	// with another key (refused).
	code, out, msg = run1("archive", "--period", time.Now().Format("2006-01"), "--out", filepath.Join(dir, "usb"))
	var arch struct{ Path string }
	if err := json.Unmarshal([]byte(out), &arch); code != 0 || err != nil {
		t.Fatalf("archive: exit %d %s", code, msg)
	}
	if code, out, msg := run1("verify", "--key", key.Base64, arch.Path); code != 0 || !strings.Contains(out, `"keyGiven": true`) || strings.Contains(msg, "local key") {
		t.Fatalf("the archive with the exported key: exit %d %s %s", code, out, msg)
	}
	if code, _, msg := run1("verify", arch.Path); code != 0 || !strings.Contains(msg, "verified against the local key only") {
		t.Fatalf("the archive alone: exit %d %s", code, msg)
	}
	other := t.TempDir()
	if _, err := fiscal.LoadOrCreateKey(other); err != nil {
		t.Fatal(err)
	}
	if code, _, msg := run1("verify", "--key", filepath.Join(other, fiscal.PublicKeyFile), arch.Path); code != 1 || !strings.Contains(msg, "another key") {
		t.Fatalf("the archive with another key: exit %d %s", code, msg)
	}

	stdin = strings.NewReader("2468\n")
	defer func() { stdin = os.Stdin }()
	if code, _, msg := run1("pin"); code != 0 {
		t.Fatalf("pin: %s", msg)
	}
	db, err := journal.Open(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	last, ok, err := db.FiscalLast(t.Context(), journal.FiscalEvent)
	db.Close()
	if err != nil || !ok || !strings.Contains(string(last.Payload), `"type":"pin"`) || strings.Contains(string(last.Payload), "2468") {
		t.Fatalf("the reset's event %s %v", last.Payload, err)
	}

	// The owner removes the last ticket, the Z and the event after it, and
	// the witness: nothing in the journal says so; the Z's fingerprint on
	// paper does.
	raw, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "comptoir.db"))
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"DROP TRIGGER fiscal_records_no_delete",
		`DELETE FROM fiscal_records WHERE (kind = 'ticket' AND seq = 2) OR kind IN ('closing', 'event', 'archive')`} {
		if _, err := raw.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	raw.Close()
	if err := os.Remove(key.Witness); err != nil {
		t.Fatal(err)
	}
	if code, _, msg := verify("--key", key.Base64); code != 0 || !strings.Contains(msg, "no witness") {
		t.Fatalf("without paper: exit %d %s", code, msg)
	}
	code, v, msg = verify("--key", key.Base64, "--expect", z.Fingerprint)
	if code != 1 || v.OK || v.Broken.Kind != journal.FiscalClosing || !strings.Contains(msg, "removed from its end") {
		t.Fatalf("against the Z: exit %d %+v %s", code, v.Broken, msg)
	}
}

// A customer who prints the receipt twice at the kiosk gets the original,
// then a copy marked and counted in the fiscal journal with staff's
// reprints: the kiosk's copy is no. 1, staff's next is no. 2.
func TestTheKiosksSecondPrintIsACopyCountedWithStaffReprints(t *testing.T) {
	sim := startSim(t)
	stack, err := startKiosk(context.Background(), commonFlags{terminal: sim.URL(), dataDir: t.TempDir()},
		payment.DefaultLimits, kiosk.NewRelay(nil), warnLogger(io.Discard))
	if err != nil {
		t.Fatal(err)
	}
	defer stack.Close()
	if r, err := stack.Staff.Call(t.Context(), "SetPIN", []json.RawMessage{json.RawMessage(`"4829"`)}); err != nil || !r.OK {
		t.Fatalf("SetPIN: %v %+v", err, r.Error)
	}
	kioskPays(t, stack, kiosk.PhaseApproved)
	uuid := stack.Svc.Checkout().Payment.AttemptUUID
	// The customer's receipts (with the card ticket), not the terminal's
	// own or the order ticket.
	receipts := func() []string {
		var out []string
		for _, p := range sim.Printed() {
			if strings.Contains(p.Text, "CUSTOMER COPY") {
				out = append(out, p.Text)
			}
		}
		return out
	}
	for n := 1; n <= 2; n++ {
		stack.Svc.ChooseReceipt(kiosk.ReceiptPrint)
		testenv.Eventually(t, "the receipt's outcome", func() bool {
			r := stack.Svc.Checkout().Receipt
			return r != nil && r.Status != kiosk.ReceiptWorking
		})
		if r := stack.Svc.Checkout().Receipt; r.Status != kiosk.ReceiptDone || len(receipts()) != n {
			t.Fatalf("print %d: %+v, %d receipts printed", n, r, len(receipts()))
		}
	}
	call := func(name string, args ...any) staffapi.Result {
		t.Helper()
		var raw []json.RawMessage
		for _, a := range args {
			b, _ := json.Marshal(a)
			raw = append(raw, b)
		}
		r, err := stack.Staff.Call(t.Context(), name, raw)
		if err != nil || !r.OK {
			t.Fatalf("%s: %v %+v", name, err, r.Error)
		}
		return r
	}
	sess := call("Unlock", "4829").Value.(staff.Session)
	call("Reprint", sess.ID, uuid)
	got := receipts()
	if len(got) != 3 {
		t.Fatalf("%d receipts printed, want 3", len(got))
	}
	for i, want := range []string{"", "DUPLICATE no. 1", "DUPLICATE no. 2"} {
		if (want == "") == strings.Contains(got[i], "DUPLICATE") || !strings.Contains(got[i], want) {
			t.Fatalf("receipt %d, want %q:\n%s", i+1, want, got[i])
		}
	}
}
