//go:build darwin || dragonfly || freebsd || linux || netbsd || openbsd || solaris

package journal

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// tryLock takes flock(LOCK_EX|LOCK_NB). flock locks belong to the open file
// description, not the process: a second open of the file in this same
// process is refused too, which is what lets a test try two Opens in one
// process. (fcntl locks would not: they are per process and are dropped when
// any descriptor on the file is closed.)
func tryLock(f *os.File) (bool, error) {
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		switch {
		case err == nil:
			return true, nil
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.EWOULDBLOCK):
			return false, nil
		}
		return false, err
	}
}

func unlock(f *os.File) error {
	return unix.Flock(int(f.Fd()), unix.LOCK_UN)
}
