//go:build windows

package journal

import (
	"errors"
	"os"

	"golang.org/x/sys/windows"
)

// Windows byte-range locks are mandatory: a locked range cannot be read by
// anyone else. Locking one byte far beyond the end of the file (allowed)
// leaves the PID at the start readable by a contender.
const lockOffsetHigh = 0x7fffffff

func lockRange() *windows.Overlapped {
	return &windows.Overlapped{Offset: 0, OffsetHigh: lockOffsetHigh}
}

// tryLock takes LockFileEx(EXCLUSIVE|FAIL_IMMEDIATELY). The lock belongs to
// the handle: a second handle in the same process is refused too.
func tryLock(f *os.File) (bool, error) {
	err := windows.LockFileEx(windows.Handle(f.Fd()),
		windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, lockRange())
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, windows.ERROR_LOCK_VIOLATION), errors.Is(err, windows.ERROR_IO_PENDING):
		return false, nil
	}
	return false, err
}

func unlock(f *os.File) error {
	return windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, lockRange())
}
