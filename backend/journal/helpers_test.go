package journal

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/uuid"

	"github.com/comptoir-pos/comptoir/backend/fault"
)

// Child processes: the test binary re-executes itself with childRoleEnv set
// to play a second Comptoir process (holding the lock, or dying mid-payment).
const (
	childRoleEnv = "COMPTOIR_JOURNAL_TEST_CHILD"
	childDirEnv  = "COMPTOIR_JOURNAL_TEST_DIR"
)

func TestMain(m *testing.M) {
	if role := os.Getenv(childRoleEnv); role != "" {
		os.Exit(runChild(role, os.Getenv(childDirEnv)))
	}
	os.Exit(m.Run())
}

// runChild is the body of a child process. It talks to the parent by lines
// on stdout; the first line is "ready ..." or "error ...".
func runChild(role, dir string) int {
	ctx := context.Background()
	db, err := Open(ctx, dir)
	if err != nil {
		fmt.Printf("error %s %v\n", fault.CodeOf(err), err)
		return 2
	}
	switch role {
	case "hold":
		// Hold the directory until the parent closes our stdin.
		fmt.Printf("ready %d\n", os.Getpid())
		_, _ = io.Copy(io.Discard, os.Stdin)
		if err := db.Close(); err != nil {
			return 3
		}
		return 0
	case "prepare-exit", "prepare-hang":
		uuids, err := childPrepare(ctx, db)
		if err != nil {
			fmt.Printf("error %s %v\n", fault.CodeOf(err), err)
			return 2
		}
		// PrepareAttempt and MarkSent have returned: the parent may now
		// kill us; both rows must survive without a Close.
		fmt.Printf("ready %s\n", strings.Join(uuids, " "))
		if role == "prepare-exit" {
			os.Exit(1)
		}
		time.Sleep(time.Hour) // until the parent's SIGKILL
		return 4
	case "audit-exit":
		// AppendAudit has returned: the line must survive an exit without Close.
		for i := range 3 {
			r := AuditRecord{Who: "staff:child", Action: "child", Subject: fmt.Sprint(i)}
			if err := db.AppendAudit(ctx, r); err != nil {
				fmt.Printf("error %s %v\n", fault.CodeOf(err), err)
				return 2
			}
		}
		fmt.Println("ready")
		os.Exit(1)
	}
	fmt.Printf("error unknown role %q\n", role)
	return 2
}

// childPrepare journals one prepared and one sent attempt.
func childPrepare(ctx context.Context, db *DB) ([]string, error) {
	var uuids []string
	for i, sent := range []bool{false, true} {
		order := fmt.Sprintf("child-order-%d", i)
		if err := db.CreateOrder(ctx, Order{ID: order, Currency: "EUR", Total: 1250}); err != nil {
			return nil, err
		}
		id := uuid.Must(uuid.NewV7()).String()
		a := Attempt{UUID: id, OrderID: order, Kind: KindDebit, Amount: 1250, Policy: PolicyKiosk,
			Terminal: fmt.Sprintf("child-terminal-%d", i), RequestBody: debitBody(id, order, 1250)}
		if _, err := db.PrepareAttempt(ctx, a); err != nil {
			return nil, err
		}
		if sent {
			if _, err := db.MarkSent(ctx, id); err != nil {
				return nil, err
			}
		}
		uuids = append(uuids, id)
	}
	return uuids, nil
}

// child is a running child process.
type child struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	first string // its first line, after "ready " or "error "
	ok    bool
	out   *bufio.Reader
}

// startChild runs the test binary as a child with role, and waits for its
// first line. The wait is bounded so a broken child fails the test instead
// of hanging it; it is not a timing assertion.
func startChild(t *testing.T, role, dir string) *child {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childRoleEnv+"="+role, childDirEnv+"="+dir)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &child{cmd: cmd, stdin: stdin, out: bufio.NewReader(stdout)}
	t.Cleanup(func() {
		_ = c.cmd.Process.Kill()
		_ = c.cmd.Wait()
	})
	lines := make(chan string, 1)
	go func() {
		line, _ := c.out.ReadString('\n')
		lines <- strings.TrimSpace(line)
	}()
	select {
	case line := <-lines:
		switch {
		case strings.HasPrefix(line, "ready"):
			c.ok, c.first = true, strings.TrimSpace(strings.TrimPrefix(line, "ready"))
		case strings.HasPrefix(line, "error"):
			c.first = strings.TrimSpace(strings.TrimPrefix(line, "error"))
		default:
			t.Fatalf("child %s: unexpected first line %q", role, line)
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("child %s: no answer", role)
	}
	return c
}

// debitBody is a Local API /payment body as the orchestrator would send it.
// Its spacing is deliberately irregular: the journal must keep it byte for byte.
func debitBody(id, order string, amount int64) []byte {
	return []byte(fmt.Sprintf(`{"amount": %d,"currencyCode":"EUR", "idempotentUuid":"%s","cartId":"%s","enableGiftScreen":false,"reference":"caf\u00e9 \"crème\""}`,
		amount, id, order))
}

func newUUID(t testing.TB) string {
	t.Helper()
	u, err := uuid.NewV7()
	if err != nil {
		t.Fatal(err)
	}
	return u.String()
}

func openMemory(t testing.TB, opts ...Option) *DB {
	t.Helper()
	db, err := OpenMemory(context.Background(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func openDir(t testing.TB, dir string, opts ...Option) *DB {
	t.Helper()
	db, err := Open(context.Background(), dir, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// stepClock returns times one second apart, so ordering and ranges are
// deterministic without sleeping.
type stepClock struct {
	mu sync.Mutex
	t  time.Time
}

func newStepClock() *stepClock {
	return &stepClock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
}

func (c *stepClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Second)
	return c.t
}

var orderSeq struct {
	sync.Mutex
	n int
}

// fixture creates a fresh order and returns a ready-to-prepare debit attempt
// for it on a terminal of its own.
func fixture(t testing.TB, db *DB) Attempt {
	t.Helper()
	orderSeq.Lock()
	orderSeq.n++
	n := orderSeq.n
	orderSeq.Unlock()
	order := fmt.Sprintf("order-%04d", n)
	if err := db.CreateOrder(context.Background(), Order{ID: order, Currency: "EUR", Total: 1250,
		Data: []byte(`[{"sku":"coffee","qty":1}]`)}); err != nil {
		t.Fatal(err)
	}
	return newAttempt(t, order, fmt.Sprintf("terminal-%04d", n))
}

func newAttempt(t testing.TB, order, terminal string) Attempt {
	id := newUUID(t)
	return Attempt{UUID: id, OrderID: order, Kind: KindDebit, Amount: 1250, Policy: PolicyKiosk,
		Terminal: terminal, RequestBody: debitBody(id, order, 1250)}
}

// attemptIn prepares an attempt and drives it to state s by allowed steps.
func attemptIn(t testing.TB, db *DB, s State) Attempt {
	t.Helper()
	ctx := context.Background()
	a, err := db.PrepareAttempt(ctx, fixture(t, db))
	if err != nil {
		t.Fatal(err)
	}
	if s == StatePrepared {
		return a
	}
	if a, err = db.MarkSent(ctx, a.UUID); err != nil {
		t.Fatal(err)
	}
	if s == StateSent {
		return a
	}
	if a, err = db.Transition(ctx, a.UUID, StateSent, s, TransitionInfo{Note: "setup"}); err != nil {
		t.Fatal(err)
	}
	return a
}

func wantCode(t testing.TB, err error, code string) {
	t.Helper()
	if got := fault.CodeOf(err); got != code {
		t.Fatalf("error code = %q, want %q (err: %v)", got, code, err)
	}
}

func countEvents(t testing.TB, db *DB, id string) int {
	t.Helper()
	evs, err := db.Events(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return len(evs)
}

// queryPlan is SQLite's plan for query, its steps joined with " | ".
func queryPlan(t testing.TB, q interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}, query string, args ...any) string {
	t.Helper()
	rows, err := q.QueryContext(context.Background(), "EXPLAIN QUERY PLAN "+query, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, notused int
		var detail string
		if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	return strings.Join(plan, " | ")
}

// fillDisk simulates a disk with room for only a few more pages: SQLite's
// max_page_count, a per-connection limit on the file's size. It returns
// the function that makes room again.
func fillDisk(t testing.TB, db *DB, room int) (makeRoom func()) {
	t.Helper()
	ctx := context.Background()
	var pages int
	if err := db.w.QueryRowContext(ctx, "PRAGMA page_count").Scan(&pages); err != nil {
		t.Fatal(err)
	}
	if _, err := db.w.ExecContext(ctx, fmt.Sprintf("PRAGMA max_page_count = %d", pages+room)); err != nil {
		t.Fatal(err)
	}
	return func() {
		if _, err := db.w.ExecContext(ctx, "PRAGMA max_page_count = 1073741823"); err != nil {
			t.Fatal(err)
		}
	}
}

// openOldBuild opens a journal in dir as an older build would: only the
// given migrations applied. The caller closes the returned DB's connection.
func openOldBuild(t testing.TB, dir string, migrations ...string) *DB {
	t.Helper()
	old := fstest.MapFS{}
	for _, name := range migrations {
		b, err := fs.ReadFile(migrationFS, "migrations/"+name)
		if err != nil {
			t.Fatal(err)
		}
		old["migrations/"+name] = &fstest.MapFile{Data: b}
	}
	p := filepath.Join(dir, dbFileName)
	conn, err := sql.Open("sqlite", fileDSN(p, buildOptions(nil), false))
	if err != nil {
		t.Fatal(err)
	}
	conn.SetMaxOpenConns(1)
	if err := migrate(context.Background(), conn, old, p); err != nil {
		t.Fatal(err)
	}
	return &DB{w: conn, r: conn, now: time.Now}
}

// oldAttemptIn writes, with the SQL of migrations 1 to 3 (which this
// build's PrepareAttempt no longer speaks), an order and one attempt that
// reached state s, with the events the builds of that time wrote: what an
// older build leaves behind for an upgrade to carry over. An approved
// attempt's response is a terminal answer with the given gift.
func oldAttemptIn(t testing.TB, db *DB, s State, gift int64) Attempt {
	t.Helper()
	ctx := context.Background()
	a := fixture(t, db)
	var response, txID any
	if s == StateApproved {
		txID = "tx-" + a.UUID[len(a.UUID)-8:]
		response = fmt.Sprintf(`{"status":"ok","transactionId":%q,"amount":%d,"giftAmount":%d,"idempotentUuid":%q}`,
			txID, a.Amount, gift, a.UUID)
	}
	err := db.update(ctx, "old build's attempt", func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO attempts (uuid, order_id, kind, amount, gift_amount, policy, terminal,
			request_body, state, response, transaction_id, send_count, created_at, first_sent_at, last_sent_at, updated_at)
			VALUES (?, ?, 'debit', ?, 0, 'kiosk', ?, ?, ?, ?, ?, 1, 1000, 1001, 1001, 1002)`,
			a.UUID, a.OrderID, a.Amount, a.Terminal, string(a.RequestBody), string(s), response, txID)
		if err != nil {
			return err
		}
		id, err := res.LastInsertId()
		if err != nil {
			return err
		}
		if err := insertEvent(ctx, tx, id, 1000, "", StatePrepared, EventPrepared, "", "prepared", nil); err != nil {
			return err
		}
		if err := insertEvent(ctx, tx, id, 1001, StatePrepared, StateSent, EventSent, "", "send #1", nil); err != nil {
			return err
		}
		if s == StateSent {
			return nil
		}
		return insertEvent(ctx, tx, id, 1002, StateSent, s, EventTransition, "", "setup", nil)
	})
	if err != nil {
		t.Fatal(err)
	}
	var state string
	if err := db.w.QueryRowContext(ctx, `SELECT id, state FROM attempts WHERE uuid = ?`, a.UUID).Scan(&a.ID, &state); err != nil {
		t.Fatal(err)
	}
	a.State = State(state)
	if s == StateApproved {
		a.TransactionID = txID.(string)
	}
	return a
}
