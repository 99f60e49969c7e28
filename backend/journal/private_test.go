//go:build !windows

package journal

import (
	"os"
	"path/filepath"
	"testing"
)

// The journal's files are the kiosk user's alone, even in a folder made
// before with looser modes, and even when they were left looser by
// another program.
func TestDataDirectoryIsPrivate(t *testing.T) {
	for _, tt := range []struct {
		name  string
		setup func(t *testing.T, dir string)
	}{
		{"a folder made with 0755", func(t *testing.T, dir string) {
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
		}},
		{"a database left 0644", func(t *testing.T, dir string) {
			db := openDir(t, dir)
			db.Close()
			for _, f := range []string{dbFileName, lockFileName} {
				if err := os.Chmod(filepath.Join(dir, f), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.Chmod(dir, 0o755); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "data")
			tt.setup(t, dir)
			db := openDir(t, dir)
			// A write makes the WAL and the shared memory.
			if err := db.SetSetting(t.Context(), "probe", []byte(`1`)); err != nil {
				t.Fatal(err)
			}
			want := map[string]os.FileMode{
				dir: 0o700, filepath.Join(dir, dbFileName): 0o600, filepath.Join(dir, dbFileName+"-wal"): 0o600,
				filepath.Join(dir, dbFileName+"-shm"): 0o600, filepath.Join(dir, lockFileName): 0o600,
			}
			for p, mode := range want {
				info, err := os.Stat(p)
				if err != nil {
					t.Fatal(err)
				}
				if got := info.Mode().Perm(); got != mode {
					t.Errorf("%s is %o, want %o", filepath.Base(p), got, mode)
				}
			}
		})
	}
}
