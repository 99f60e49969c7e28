package journal

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// dirLock is the exclusive hold on a data directory. SQLite's own file locks
// only serialise transactions; they would let two Comptoir processes take
// turns driving the same terminal from the same journal, each believing it
// alone resumes the unfinished attempts. The lock is advisory, on a file of
// its own (never on the database: POSIX record locks on the database file
// would be dropped by SQLite closing any descriptor on it), and the kernel
// drops it when the process dies, so a crash never leaves a stale lock.
type dirLock struct {
	f   *os.File
	dir string
}

// lockDir takes the lock on dir or fails at once with ELOCKED.
func lockDir(dir string) (*dirLock, error) {
	p := filepath.Join(dir, lockFileName)
	// No O_TRUNC: the holder's PID must survive a contender's open.
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, notWritable(dir, err)
	}
	ok, err := tryLock(f)
	if err != nil {
		f.Close()
		return nil, failure(EINTERNAL, "lock data directory "+dir, err)
	}
	if !ok {
		pid := readHolder(f)
		f.Close()
		msg := fmt.Sprintf("data directory %s is in use by another Comptoir process", dir)
		if pid > 0 {
			msg = fmt.Sprintf("data directory %s is in use by another Comptoir process (pid %d)", dir, pid)
		}
		return nil, failure(ELOCKED, msg, nil)
	}
	// The PID is for the message above only: the lock, not the file's
	// content, says who holds the directory.
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &dirLock{f: f, dir: dir}, nil
}

// readHolder returns the PID the holder wrote, 0 if none yet.
func readHolder(f *os.File) int {
	buf := make([]byte, 32)
	n, _ := f.ReadAt(buf, 0)
	pid, err := strconv.Atoi(strings.TrimSpace(string(buf[:n])))
	if err != nil || pid <= 0 {
		return 0
	}
	return pid
}

// release clears the PID and drops the lock. The file stays: removing it
// would let a contender lock a new file while a third process still holds
// the old, unlinked one.
func (l *dirLock) release() error {
	if l == nil || l.f == nil {
		return nil
	}
	_ = l.f.Truncate(0)
	err := errors.Join(unlock(l.f), l.f.Close())
	l.f = nil
	if err != nil {
		return failure(EINTERNAL, "unlock data directory "+l.dir, err)
	}
	return nil
}
