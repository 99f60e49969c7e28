package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/comptoir-pos/comptoir/backend/fiscal"
	"github.com/comptoir-pos/comptoir/backend/journal"
)

// settingYearStart is the month (1-12) the fiscal year starts in.
const settingYearStart = "fiscal.year_start"

// archivesDir is where the monthly archives go in the data directory.
const archivesDir = "archives"

// yearStart reads the fiscal year's first month (default January).
func yearStart(ctx context.Context, db *journal.DB) int {
	if raw, ok, err := db.Setting(ctx, settingYearStart); err == nil && ok {
		var m float64
		if jsonNumber(raw, &m) && m >= 1 && m <= 12 && m == float64(int(m)) {
			return int(m)
		}
	}
	return 1
}

// openFiscal opens the journal and its ledger for a command.
func openFiscal(ctx context.Context, common commonFlags) (*journal.DB, *fiscal.Ledger, string, error) {
	dir, err := common.resolveDataDir()
	if err != nil {
		return nil, nil, "", err
	}
	db, err := journal.Open(ctx, dir)
	if err != nil {
		return nil, nil, "", err
	}
	key, err := fiscal.LoadOrCreateKey(dir)
	if err != nil {
		db.Close()
		return nil, nil, "", err
	}
	return db, fiscal.NewLedger(db, key, kioskID(ctx, db), "Comptoir "+version), dir, nil
}

// cmdVerify checks the fiscal records: the live journal's (every chain),
// or an archive file's. Exit 0: they hold; 1: a record is broken (named).
func cmdVerify(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var common commonFlags
	fs := newFlagSet("verify", stderr, &common)
	keyFile := fs.String("key", "", "with an archive: the public key (PEM) it must be signed with")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 1 {
		fmt.Fprintln(stderr, "comptoir verify: one archive at most")
		return 2
	}
	if fs.NArg() == 1 {
		f, err := os.Open(fs.Arg(0))
		if err != nil {
			fmt.Fprintln(stderr, "comptoir verify:", err)
			return 1
		}
		defer f.Close()
		var pub []byte
		if *keyFile != "" {
			if pub, err = os.ReadFile(*keyFile); err != nil {
				fmt.Fprintln(stderr, "comptoir verify:", err)
				return 1
			}
		}
		v, err := fiscal.VerifyArchive(f, pub)
		if err != nil {
			fmt.Fprintln(stderr, "comptoir verify:", err)
			return 1
		}
		printJSON(stdout, v)
		if !v.OK {
			fmt.Fprintf(stderr, "comptoir verify: line %d: %s\n", v.Broken.ID, v.Broken.Why)
			return 1
		}
		return 0
	}
	db, l, _, err := openFiscal(ctx, common)
	if err != nil {
		fmt.Fprintln(stderr, "comptoir verify:", err)
		return 1
	}
	defer db.Close()
	v, err := l.Verify(ctx)
	if err != nil {
		fmt.Fprintln(stderr, "comptoir verify:", err)
		return 1
	}
	printJSON(stdout, v)
	if !v.OK {
		fmt.Fprintln(stderr, "comptoir verify:", v.Broken.Error())
		return 1
	}
	return 0
}

// cmdClose records the tickets not recorded yet and the closings due (or
// one day's), and prints them.
func cmdClose(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var common commonFlags
	fs := newFlagSet("close", stderr, &common)
	day := fs.String("day", "", "close this day (yyyy-MM-dd, over) instead of every closing due")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	db, l, dir, err := openFiscal(ctx, common)
	if err != nil {
		fmt.Fprintln(stderr, "comptoir close:", err)
		return 1
	}
	defer db.Close()
	if _, err := l.RecordTickets(ctx, warnLogger(stderr)); err != nil {
		fmt.Fprintln(stderr, "comptoir close:", err)
		return 1
	}
	var out []fiscal.Closing
	if *day != "" {
		c, err := l.CloseDay(ctx, *day, time.Local)
		if err != nil {
			fmt.Fprintln(stderr, "comptoir close:", err)
			return 1
		}
		out = append(out, c)
	} else if out, err = closeDue(ctx, l, db, dir, stderr); err != nil {
		fmt.Fprintln(stderr, "comptoir close:", err)
		return 1
	}
	if out == nil {
		out = []fiscal.Closing{}
	}
	printJSON(stdout, out)
	return 0
}

// closeDue makes the closings due, and the archive of each month closed.
func closeDue(ctx context.Context, l *fiscal.Ledger, db *journal.DB, dir string, log io.Writer) ([]fiscal.Closing, error) {
	out, err := l.CloseDue(ctx, time.Now(), time.Local, yearStart(ctx, db))
	for _, c := range out {
		if c.Period != fiscal.PeriodMonth {
			continue
		}
		path, _, aerr := l.Archive(ctx, c.Name, time.Local, filepath.Join(dir, archivesDir))
		if aerr != nil {
			return out, aerr
		}
		fmt.Fprintln(log, "archived", c.Name, "in", path)
	}
	return out, err
}

// cmdArchive writes a month's archive (default: into the data directory's
// archives) and prints where, with its SHA-256.
func cmdArchive(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var common commonFlags
	fs := newFlagSet("archive", stderr, &common)
	period := fs.String("period", "", "the month, yyyy-MM (required)")
	outDir := fs.String("out", "", "where to write it (default: the data directory's archives folder); a removable disk, for instance")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *period == "" {
		fmt.Fprintln(stderr, "comptoir archive: --period yyyy-MM is required")
		return 2
	}
	db, l, dir, err := openFiscal(ctx, common)
	if err != nil {
		fmt.Fprintln(stderr, "comptoir archive:", err)
		return 1
	}
	defer db.Close()
	if *outDir == "" {
		*outDir = filepath.Join(dir, archivesDir)
	}
	path, rec, err := l.Archive(ctx, *period, time.Local, *outDir)
	if err != nil {
		fmt.Fprintln(stderr, "comptoir archive:", err)
		return 1
	}
	printJSON(stdout, struct {
		Path string `json:"path"`
		fiscal.ArchiveRecord
	}{path, rec})
	return 0
}
