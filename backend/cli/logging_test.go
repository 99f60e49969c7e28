package cli

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestKioskLoggerWritesJSONToTheDataDir(t *testing.T) {
	dir := t.TempDir()
	logger, closer := kioskLogger(dir, io.Discard)
	logger.Info("payment decided", "uuid", "u-1", "state", "approved")
	closer.Close()
	b, err := os.ReadFile(filepath.Join(dir, "logs", "comptoir.log"))
	if err != nil {
		t.Fatal(err)
	}
	var line map[string]any
	if err := json.Unmarshal([]byte(strings.TrimSpace(string(b))), &line); err != nil || line["uuid"] != "u-1" {
		t.Errorf("log line %q (%v)", b, err)
	}
}

func TestKioskLoggerWithoutAWritableFolderStillLogs(t *testing.T) {
	blocker := filepath.Join(t.TempDir(), "file")
	os.WriteFile(blocker, nil, 0o600)
	var out strings.Builder
	logger, closer := kioskLogger(blocker, &out) // logs/ cannot be made under a file
	logger.Info("still here")
	closer.Close()
	if !strings.Contains(out.String(), "still here") {
		t.Errorf("stderr got %q", out.String())
	}
}

type failingWriter struct{ err error }

func (f failingWriter) Write([]byte) (int, error) { return 0, f.err }

// TestEveryWriterKeepsWritingAfterAFailure: a log file on a full disk must
// not silence stderr.
func TestEveryWriterKeepsWritingAfterAFailure(t *testing.T) {
	var out strings.Builder
	full := failingWriter{errors.New("no space left on device")}
	n, err := everyWriter{full, &out}.Write([]byte("line\n"))
	if out.String() != "line\n" || n != 5 || err == nil {
		t.Fatalf("wrote %q, n %d, err %v", out.String(), n, err)
	}
}

// The logs are private like the journal, even in a folder made before with
// looser modes.
func TestKioskLogIsPrivate(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no Unix modes")
	}
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "logs"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "logs", "comptoir.log"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	logger, closer := kioskLogger(dir, io.Discard)
	logger.Info("hello")
	closer.Close()
	for p, want := range map[string]os.FileMode{filepath.Join(dir, "logs"): 0o700, filepath.Join(dir, "logs", "comptoir.log"): 0o600} {
		info, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if info.Mode().Perm() != want {
			t.Errorf("%s is %o, want %o", p, info.Mode().Perm(), want)
		}
	}
}
