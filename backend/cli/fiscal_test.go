package cli

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/fiscal"
	"github.com/comptoir-pos/comptoir/backend/journal"
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
	l, err := openLedger(t.Context(), p)
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
