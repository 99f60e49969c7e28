package hub

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/comptoir-pos/comptoir/backend/internal/testenv"
	"github.com/comptoir-pos/comptoir/backend/site"
)

// fakeArchive is an archive's shape (its header line names the format
// and the month) over several parts.
func fakeArchive(period string, fill byte) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, `{"format":"comptoir-fiscal-archive-1","period":%q}`+"\n", period)
	for b.Len() < 2*site.ArchivePartSize+1000 {
		fmt.Fprintf(&b, `{"kind":"ticket","payload":"%s"}`+"\n", strings.Repeat(string(fill), 200))
	}
	return b.Bytes()
}

func sumOf(data []byte) string { s := sha256.Sum256(data); return hex.EncodeToString(s[:]) }

func (h *hubRig) archives(t *testing.T, r string) []ArchiveInfo {
	t.Helper()
	list, err := h.hub.Ledger.Archives(t.Context(), r)
	if err != nil {
		t.Fatal(err)
	}
	return list
}

// A kiosk's monthly archive goes, in parts, from the data folder to head
// office's object store, whole and once; made again, it is kept beside
// the first copy, never over it; one whose parts do not add up to the
// SHA-256 announced is not kept; head office's API gives each back.
func TestArchivesKeptAtHeadOffice(t *testing.T) {
	h := newHub(t)
	r1 := h.join("r1", passwords["r1"])
	testenv.Eventually(t, "joined", func() bool { return h.hub.Leaves() == 1 })
	dir := t.TempDir()
	archives := filepath.Join(dir, "archives")
	if err := os.MkdirAll(archives, 0o700); err != nil {
		t.Fatal(err)
	}
	first := fakeArchive("2026-10", 'a')
	path := filepath.Join(archives, "comptoir-fiscal-till-1-2026-10.jsonl")
	if err := os.WriteFile(path, first, 0o600); err != nil {
		t.Fatal(err)
	}
	ship := &site.ArchiveShipper{JS: r1.js, Subjects: r1.subj, Kiosk: "A", Dir: archives, State: filepath.Join(dir, site.ArchivesShippedFile)}
	if n, err := ship.ShipAll(t.Context()); n != 1 || err != nil {
		t.Fatalf("shipped %d, %v", n, err)
	}
	testenv.Eventually(t, "the archive at head office", func() bool { return len(h.archives(t, "r1")) == 1 })
	got, err := h.hub.Ledger.Archive(t.Context(), "r1", "A", "2026-10", sumOf(first))
	if err != nil || !bytes.Equal(got, first) {
		t.Fatalf("kept %d bytes, %v", len(got), err)
	}
	if n, err := ship.ShipAll(t.Context()); n != 0 || err != nil {
		t.Fatalf("shipped again: %d, %v", n, err)
	}

	// Parts whose whole is not what was announced: never kept.
	forged, claimed := fakeArchive("2026-09", 'b'), sumOf(fakeArchive("2026-09", 'z'))
	for i, part := range [][]byte{forged[:site.ArchivePartSize], forged[site.ArchivePartSize:]} {
		m := nats.NewMsg(r1.subj.Fact("A", site.KindArchivePart))
		m.Data = part
		m.Header.Set(site.HeaderKiosk, "A")
		m.Header.Set(site.HeaderArchivePeriod, "2026-09")
		m.Header.Set(site.HeaderArchiveSHA256, claimed)
		m.Header.Set(site.HeaderArchivePart, fmt.Sprintf("%d/2", i))
		if _, err := r1.js.PublishMsg(t.Context(), m, jetstream.WithMsgID(site.ArchivePartID(claimed, i))); err != nil {
			t.Fatal(err)
		}
	}
	// The archive made again (altered or not): a second version.
	second := fakeArchive("2026-10", 'c')
	if err := os.WriteFile(path, second, 0o600); err != nil {
		t.Fatal(err)
	}
	if n, err := ship.ShipAll(t.Context()); n != 1 || err != nil {
		t.Fatalf("the new version: shipped %d, %v", n, err)
	}
	testenv.Eventually(t, "both versions at head office", func() bool { return len(h.archives(t, "r1")) == 2 })
	list := h.archives(t, "r1")
	if list[0].SHA256 != sumOf(first) || list[1].SHA256 != sumOf(second) || list[0].Period != "2026-10" {
		t.Fatalf("kept %+v", list)
	}

	srv := httptest.NewServer(Handler(h.hub))
	defer srv.Close()
	get := func(q string) (int, []byte) {
		resp, err := http.Get(srv.URL + "/api/fiscal/archive?" + q)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, body
	}
	if code, body := get("restaurant=r1&kiosk=A&period=2026-10&sha256=" + sumOf(first)); code != 200 || !bytes.Equal(body, first) {
		t.Fatalf("the first copy over HTTP: %d, %d bytes", code, len(body))
	}
	if code, _ := get("restaurant=r1&kiosk=A&period=2026-09&sha256=" + claimed); code != 404 {
		t.Fatalf("the forged archive: %d", code)
	}
	if code, _ := get("restaurant=r1&kiosk=A&period=2026-9&sha256=" + sumOf(first)); code != 400 {
		t.Fatalf("a bad month: %d", code)
	}
	resp, err := http.Get(srv.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(page), sumOf(first)) || !strings.Contains(string(page), sumOf(second)) {
		t.Fatalf("head office's page does not list the archives:\n%s", page)
	}

	// Head office started again folds its stream anew: the same copies.
	h.hub.Close()
	h.start()
	testenv.Eventually(t, "head office back", func() bool { return h.hub.Leaves() == 1 })
	if got := h.archives(t, "r1"); len(got) != 2 {
		t.Fatalf("after a restart: %+v", got)
	}
}
