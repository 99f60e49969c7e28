package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/journal"
)

// `comptoir purge` removes card details past the retention and nothing
// else; a retention under a week is refused.
func TestPurgeRemovesOnlyCardDetails(t *testing.T) {
	sim := startSim(t)
	dir := t.TempDir()
	var out, errOut bytes.Buffer
	if code := run([]string{"pay", "--terminal", sim.URL(), "--data-dir", dir, "--amount", "1250", "--order", "C1"}, &out, &errOut); code != 0 {
		t.Fatalf("pay: exit %d %s %s", code, out.String(), errOut.String())
	}
	if code := run([]string{"purge", "--data-dir", dir, "--keep-days", "1"}, &out, &errOut); code != 2 {
		t.Fatalf("a retention of one day: exit %d", code)
	}
	out.Reset()
	if code := run([]string{"purge", "--data-dir", dir}, &out, &errOut); code != 0 || !strings.Contains(out.String(), `"purged": 0`) {
		t.Fatalf("purge within the retention: exit %d %s %s", code, out.String(), errOut.String())
	}
	out.Reset()
	if code := run([]string{"receipt", "--data-dir", dir, "--order", "C1", "--preview"}, &out, &errOut); code != 0 || !strings.Contains(out.String(), "CUSTOMER COPY") {
		t.Fatalf("receipt before the purge: exit %d %s %s", code, out.String(), errOut.String())
	}
	ctx := context.Background()
	db, err := journal.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	atts, _ := db.AttemptsForOrder(ctx, "C1")
	if len(atts) != 1 || !strings.Contains(string(atts[0].Response), "clientCardTicket") {
		t.Fatalf("the card ticket is not kept for the receipt: %+v", atts)
	}
	n, err := db.PurgeCardDetails(ctx, atts[0].FinalAt.Add(time.Millisecond))
	db.Close()
	if err != nil || n != 1 {
		t.Fatalf("purge: %d %v", n, err)
	}
	out.Reset()
	if code := run([]string{"receipt", "--data-dir", dir, "--order", "C1", "--preview"}, &out, &errOut); code != 0 {
		t.Fatalf("receipt after the purge: exit %d %s", code, errOut.String())
	}
	if strings.Contains(out.String(), "CUSTOMER COPY") || !strings.Contains(out.String(), "12") {
		t.Fatalf("receipt after the purge: %s", out.String())
	}
}
