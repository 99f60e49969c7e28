package journal

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestLockInProcess(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	db := openDir(t, dir)

	_, err := Open(ctx, dir)
	wantCode(t, err, ELOCKED)
	if !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), fmt.Sprintf("pid %d", os.Getpid())) {
		t.Fatalf("the message should name the directory and the holder: %v", err)
	}
	t.Logf("error: %v", err)
	// The refused Open changed nothing for the holder.
	if err := db.CreateOrder(ctx, Order{ID: "o", Currency: "EUR", Total: 1}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil { // idempotent
		t.Fatal(err)
	}
	again := openDir(t, dir)
	if _, err := again.Order(ctx, "o"); err != nil {
		t.Fatal(err)
	}
}

// Another process holds the directory: Open fails at once, naming it; it
// succeeds once the other closes, or dies.
func TestLockAcrossProcesses(t *testing.T) {
	for _, release := range []string{"close", "kill"} {
		t.Run(release, func(t *testing.T) {
			ctx := t.Context()
			dir := t.TempDir()
			c := startChild(t, "hold", dir)
			if !c.ok {
				t.Fatalf("child could not open: %s", c.first)
			}
			pid, _ := strconv.Atoi(c.first)

			_, err := Open(ctx, dir)
			wantCode(t, err, ELOCKED)
			if !strings.Contains(err.Error(), fmt.Sprintf("(pid %d)", pid)) {
				t.Fatalf("the message should name the child's pid %d: %v", pid, err)
			}

			if release == "close" {
				c.stdin.Close()
			} else {
				_ = c.cmd.Process.Kill()
			}
			err = c.cmd.Wait()
			if release == "close" && err != nil {
				t.Fatalf("child: %v", err)
			}
			openDir(t, dir)
		})
	}
}

// Invariant 1 survives a crash: once PrepareAttempt (and MarkSent) returned,
// the rows are on disk even though the process dies without Close.
func TestAttemptsSurviveProcessDeath(t *testing.T) {
	for _, death := range []string{"prepare-exit", "prepare-hang"} {
		t.Run(death, func(t *testing.T) {
			ctx := t.Context()
			dir := t.TempDir()
			c := startChild(t, death, dir)
			if !c.ok {
				t.Fatalf("child failed: %s", c.first)
			}
			uuids := strings.Fields(c.first)
			if death == "prepare-hang" {
				_ = c.cmd.Process.Kill() // SIGKILL on Unix: no deferred code, no Close
			}
			_ = c.cmd.Wait()

			db := openDir(t, dir)
			open, err := db.OpenAttempts(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(open) != 2 || open[0].UUID != uuids[0] || open[1].UUID != uuids[1] {
				t.Fatalf("after the crash: %+v, want %v", open, uuids)
			}
			if open[0].State != StatePrepared || open[1].State != StateSent || open[1].SendCount != 1 {
				t.Fatalf("states after the crash: %s, %s (sends %d)", open[0].State, open[1].State, open[1].SendCount)
			}
			for i, a := range open {
				if want := debitBody(a.UUID, fmt.Sprintf("child-order-%d", i), 1250); !bytes.Equal(a.RequestBody, want) {
					t.Fatalf("body after the crash:\n got %q\nwant %q", a.RequestBody, want)
				}
			}
		})
	}
}

// SQLITE_FULL is simulated with max_page_count, a per-connection limit on
// the file's size: the failing write is EFULL, the earlier ones are intact,
// and the journal works again once there is room.
func TestDiskFull(t *testing.T) {
	ctx := t.Context()
	db := openDir(t, t.TempDir())
	makeRoom := fillDisk(t, db, 6)
	data := []byte(`"` + strings.Repeat("x", 1500) + `"`)
	created := 0
	var err error
	for i := range 200 {
		err = db.CreateOrder(ctx, Order{ID: fmt.Sprint("o", i), Currency: "EUR", Total: int64(i), Data: data})
		if err != nil {
			break
		}
		created++
	}
	wantCode(t, err, EFULL)
	t.Logf("after %d orders: %v", created, err)
	if created == 0 {
		t.Fatal("the database was full from the start: the test proves nothing")
	}
	for i := range created {
		o, err := db.Order(ctx, fmt.Sprint("o", i))
		if err != nil || o.Total != int64(i) || !bytes.Equal(o.Data, data) {
			t.Fatalf("order %d after disk full: %+v, %v", i, o, err)
		}
		// Each order's creation event went with it, not half of it.
		if evs, err := db.OrderEvents(ctx, o.ID); err != nil || len(evs) != 1 {
			t.Fatalf("order %d events: %v, %v", i, evs, err)
		}
	}
	_, err = db.Order(ctx, fmt.Sprint("o", created))
	wantCode(t, err, ENOTFOUND)

	makeRoom()
	if err := db.CreateOrder(ctx, Order{ID: fmt.Sprint("o", created), Currency: "EUR", Total: 1, Data: data}); err != nil {
		t.Fatalf("after room was made: %v", err)
	}
}

func TestReadOnlyDataDir(t *testing.T) {
	t.Run("under a regular file", func(t *testing.T) {
		// Works as root too: no permission bit is involved.
		file := filepath.Join(t.TempDir(), "not-a-dir")
		if err := os.WriteFile(file, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := Open(t.Context(), filepath.Join(file, "data"))
		wantCode(t, err, EREADONLY)
		t.Logf("error: %v", err)
	})
	t.Run("chmod 0500", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "data")
		if err := os.Mkdir(dir, 0o500); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Chmod(dir, 0o700) })
		probe := filepath.Join(dir, "probe")
		if err := os.WriteFile(probe, nil, 0o600); err == nil {
			os.Remove(probe)
			t.Skip("this user can write to a 0500 directory (root, or a filesystem ignoring modes): nothing to test")
		}
		_, err := Open(t.Context(), dir)
		wantCode(t, err, EREADONLY)
		if !strings.Contains(err.Error(), dir) {
			t.Fatalf("the message should name the directory: %v", err)
		}
	})
}

// A database file this user cannot write (restored from a backup as another
// user, say) is refused at Open, not at the first payment.
func TestReadOnlyDatabaseFile(t *testing.T) {
	dir := t.TempDir()
	db := openDir(t, dir)
	db.Close()
	p := filepath.Join(dir, dbFileName)
	if err := os.Chmod(p, 0o400); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(p, 0o600) })
	if f, err := os.OpenFile(p, os.O_RDWR, 0); err == nil {
		f.Close()
		t.Skip("this user can write to a 0400 file (root): nothing to test")
	}
	_, err := Open(t.Context(), dir)
	wantCode(t, err, EREADONLY)
	t.Logf("error: %v", err)
}

func TestCorruptDatabase(t *testing.T) {
	t.Run("not a database", func(t *testing.T) {
		dir := t.TempDir()
		garbage := bytes.Repeat([]byte("this is not a database. "), 400)
		if err := os.WriteFile(filepath.Join(dir, dbFileName), garbage, 0o600); err != nil {
			t.Fatal(err)
		}
		for range 2 { // the failed Open released the lock: same error again, not ELOCKED
			_, err := Open(t.Context(), dir)
			wantCode(t, err, EINTERNAL)
			if !strings.Contains(err.Error(), "corrupt") || !strings.Contains(err.Error(), dir) {
				t.Fatalf("unclear error: %v", err)
			}
			t.Logf("error: %v", err)
		}
	})
	t.Run("damaged pages", func(t *testing.T) {
		ctx := t.Context()
		dir := t.TempDir()
		db := openDir(t, dir)
		attemptIn(t, db, StateApproved)
		// Enough rows for a file of many pages, in one transaction.
		if _, err := db.w.ExecContext(ctx, `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3000)
			INSERT INTO orders (id, created_at, updated_at, currency, total, status, data)
			SELECT 'bulk-' || i, i, i, 'EUR', i, 'paid', '"' || hex(randomblob(40)) || '"' FROM n`); err != nil {
			t.Fatal(err)
		}
		db.Close()
		p := filepath.Join(dir, dbFileName)
		f, err := os.OpenFile(p, os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		st, _ := f.Stat()
		// Scribble over the second half of the file, header left intact.
		junk := bytes.Repeat([]byte{0xA5}, int(st.Size()/2))
		if _, err := f.WriteAt(junk, st.Size()/2); err != nil {
			t.Fatal(err)
		}
		f.Close()

		db, err = Open(ctx, dir)
		if err != nil {
			wantCode(t, err, EINTERNAL)
			return
		}
		defer db.Close()
		err = db.Check(ctx)
		wantCode(t, err, EINTERNAL)
		if !strings.Contains(err.Error(), "damaged") && !strings.Contains(err.Error(), "corrupt") {
			t.Fatalf("unclear error: %v", err)
		}
		// Reading through the damage fails cleanly or succeeds; it never panics.
		_, err = db.ListAttempts(ctx, AttemptFilter{})
		t.Logf("list over damaged pages: %v", err)
	})
}
