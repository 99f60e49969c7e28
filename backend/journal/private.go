package journal

import (
	"errors"
	"io/fs"
	"os"
	"runtime"
)

// The data directory holds payments, card tickets, the staff PIN's hash,
// logs and keys: it is the kiosk user's alone. Folders are 0700 and files
// 0600, even when the folder existed before with looser modes (a data
// directory made by hand, an installer's). SQLite creates the WAL and the
// shared-memory files with the database file's own mode, so a private
// database file keeps them private too.

// PrivateDir creates dir (and its parents) if needed and makes it 0700.
func PrivateDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	return tighten(dir, 0o700)
}

// PrivateFile makes the file at path 0600, creating it empty if it does
// not exist.
func PrivateFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return tighten(path, 0o600)
}

// tighten removes every permission beyond mode from path, if it exists.
// Windows has no such modes: its folders under the user's profile are
// already the user's.
func tighten(path string, mode fs.FileMode) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	info, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if info.Mode().Perm()&^mode == 0 {
		return nil
	}
	return os.Chmod(path, info.Mode().Perm()&mode)
}
