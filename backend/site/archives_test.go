package site

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/internal/testenv"
)

// The shipper sends only the archives of its folder, each once, and
// keeps one it could not send for the next round: a site that is away
// leaves it unmarked, a file that is not an archive is said and never
// sent.
func TestArchiveShipperSendsEachArchiveOnce(t *testing.T) {
	ctx := t.Context()
	dir, addr := t.TempDir(), testenv.FreeAddr(t)
	srv := startSite(t, dir, addr)
	js, subj := memberStreams(t, srv, addr)
	data := t.TempDir()
	archives := filepath.Join(data, "archives")
	if err := os.MkdirAll(archives, 0o700); err != nil {
		t.Fatal(err)
	}
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(archives, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	archive := `{"format":"comptoir-fiscal-archive-1","period":"2026-10"}` + "\n" + strings.Repeat("x", ArchivePartSize+10) + "\n"
	write("comptoir-fiscal-till-2026-10.jsonl", archive)
	write("notes.txt", "not an archive")
	write("comptoir-fiscal-till-2026-11.jsonl", "a file named like one, without its header\n")
	state := filepath.Join(data, ArchivesShippedFile)
	ship := &ArchiveShipper{JS: js, Subjects: subj, Kiosk: "A", Dir: archives, State: state, AckWait: time.Second}

	srv.Close()
	if n, err := ship.ShipAll(ctx); n != 0 || err == nil {
		t.Fatalf("with the site away: %d sent, %v", n, err)
	}
	if _, err := os.Stat(state); !os.IsNotExist(err) {
		t.Fatalf("something marked sent with the site away: %v", err)
	}
	startSite(t, dir, addr)
	var n int
	var err error
	testenv.Eventually(t, "the archive sent once the site is back", func() bool {
		n, err = ship.ShipAll(ctx)
		return n == 1
	})
	if err == nil || !strings.Contains(err.Error(), "2026-11") || !strings.Contains(err.Error(), "not a fiscal archive") {
		t.Fatalf("the file without a header: %v", err)
	}
	if got := streamMsgs(t, js); got != 2 {
		t.Fatalf("%d messages for an archive of 2 parts", got)
	}
	st, _ := js.Stream(ctx, StreamOrders)
	m, err := st.GetMsg(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	if p, _, i, parts, err := ArchivePartOf(m.Header); err != nil || p != "2026-10" || i != 1 || parts != 2 || m.Subject != subj.Fact("A", KindArchivePart) {
		t.Fatalf("the second part: %s %v %s %d/%d %v", m.Subject, m.Header, p, i, parts, err)
	}
	if n, _ := ship.ShipAll(ctx); n != 0 {
		t.Fatalf("sent again: %d", n)
	}
	if got := streamMsgs(t, js); got != 2 {
		t.Fatalf("%d messages after a second round", got)
	}
}
