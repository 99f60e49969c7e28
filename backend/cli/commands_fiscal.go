package cli

import (
	"context"
	"crypto/ed25519"
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

// openFiscal opens the journal and its ledger for a command, and says on
// stderr when the signing key is beside the data for want of a keyring.
// The store's DataDir is the data directory.
func openFiscal(ctx context.Context, common commonFlags, stderr io.Writer) (*journal.DB, *fiscal.Ledger, fiscal.KeyStore, error) {
	db, dir, err := common.openJournal(ctx)
	if err != nil {
		return nil, nil, fiscal.KeyStore{}, err
	}
	l, ks, err := loadLedger(ctx, dir, db)
	if err != nil {
		db.Close()
		return nil, nil, ks, err
	}
	if ks.Warning != "" {
		fmt.Fprintln(stderr, "comptoir: fiscal:", ks.Warning)
	}
	return db, l, ks, nil
}

// readKey reads a public key given from outside: a file (PEM or base64),
// or the base64 text itself as printed on a Z.
func readKey(arg string) ([]byte, error) {
	raw, err := os.ReadFile(arg)
	if err == nil {
		return raw, nil
	}
	if _, perr := fiscal.ParsePublicKeyText([]byte(arg)); perr == nil {
		return []byte(arg), nil
	}
	return nil, fmt.Errorf("--key %s: neither a key file nor a key: %w", arg, err)
}

// cmdVerify checks the fiscal records: the live journal's (every chain),
// or an archive file's. Exit 0: they hold; 1: a record is broken (named).
func cmdVerify(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var common commonFlags
	fs := newFlagSet("verify", stderr, &common)
	keyArg := fs.String("key", "", "the public key exported at installation or printed on a Z: a PEM file, or its base64 text (default: the key found beside the data, which proves consistency, not origin)")
	var expect []fiscal.Head
	fs.Func("expect", "a chain fingerprint read from paper (a Z, a receipt: T42-9f3a1c7b22d0); repeatable", func(s string) error {
		h, err := fiscal.ParseHead(s)
		if err == nil {
			expect = append(expect, h)
		}
		return err
	})
	var at hubArchive
	fs.StringVar(&at.hub, "hub", "", "check an archive kept at head office: its page's address (http://127.0.0.1:8090), with --restaurant, --kiosk, --period and --key")
	fs.StringVar(&at.restaurant, "restaurant", "", "with --hub: the restaurant (its id at head office)")
	fs.StringVar(&at.kiosk, "kiosk", "", "with --hub: the kiosk (its number prefix, as head office's page lists it)")
	fs.StringVar(&at.period, "period", "", "with --hub: the month, yyyy-MM")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 1 {
		fmt.Fprintln(stderr, "comptoir verify: one archive at most")
		return 2
	}
	var pub []byte
	if *keyArg != "" {
		var err error
		if pub, err = readKey(*keyArg); err != nil {
			fmt.Fprintln(stderr, "comptoir verify:", err)
			return 2
		}
	}
	if at.hub != "" || at.restaurant != "" || at.kiosk != "" || at.period != "" {
		if err := at.check(fs.NArg(), len(expect), len(pub)); err != nil {
			fmt.Fprintln(stderr, "comptoir verify:", err)
			return 2
		}
		return verifyAtHub(ctx, at, pub, stdout, stderr)
	}
	if fs.NArg() == 1 {
		if len(expect) > 0 {
			fmt.Fprintln(stderr, "comptoir verify: --expect checks the journal, not an archive")
			return 2
		}
		return verifyArchive(fs.Arg(0), pub, stdout, stderr)
	}
	return verifyJournal(ctx, common, pub, expect, stdout, stderr)
}

// verifyArchive checks one archive file.
func verifyArchive(path string, pub []byte, stdout, stderr io.Writer) int {
	f, err := os.Open(path)
	if err != nil {
		return failed(stderr, "verify", err)
	}
	defer f.Close()
	return reportArchive(f, pub, "", stdout, stderr)
}

// reportArchive checks an archive read from r and prints what it found;
// period, when given, is the month it must cover.
func reportArchive(r io.Reader, pub []byte, period string, stdout, stderr io.Writer) int {
	v, err := fiscal.VerifyArchive(r, pub)
	if err == nil && period != "" && v.Header.Period != period {
		err = fmt.Errorf("the archive covers %s, not %s", v.Header.Period, period)
	}
	if err != nil {
		return failed(stderr, "verify", err)
	}
	printJSON(stdout, v)
	if v.Note != "" {
		fmt.Fprintln(stderr, "comptoir verify:", v.Note, "(the key the archive carries; give --key)")
	}
	if !v.OK {
		fmt.Fprintf(stderr, "comptoir verify: line %d: %s\n", v.Broken.ID, v.Broken.Why)
		return 1
	}
	return 0
}

// verifyJournal checks the live journal with the key given, else the one
// beside the data, against the witness beside the key and the heads read
// from paper. It makes no key: a journal without one has nothing signed.
func verifyJournal(ctx context.Context, common commonFlags, pubArg []byte, expect []fiscal.Head, stdout, stderr io.Writer) int {
	dir, err := common.resolveDataDir()
	if err != nil {
		return failed(stderr, "verify", err)
	}
	ks, err := keyStore(dir)
	if err != nil {
		return failed(stderr, "verify", err)
	}
	opt := fiscal.VerifyOptions{Expect: expect, KeyGiven: len(pubArg) > 0}
	var pub ed25519.PublicKey
	if opt.KeyGiven {
		pub, err = fiscal.ParsePublicKeyText(pubArg)
	} else {
		pub, err = ks.PublicKey()
	}
	if err == nil {
		opt.Witness, _, err = fiscal.ReadWitness(ks.WitnessPath())
	}
	if err != nil {
		return failed(stderr, "verify", err)
	}
	db, err := journal.Open(ctx, dir)
	if err != nil {
		return failed(stderr, "verify", err)
	}
	defer db.Close()
	v, err := fiscal.VerifyJournal(ctx, db, pub, opt)
	if err != nil {
		return failed(stderr, "verify", err)
	}
	printJSON(stdout, v)
	if v.Note != "" {
		fmt.Fprintln(stderr, "comptoir verify:", v.Note, "(the key beside the data; give --key)")
	}
	if v.Witness == "none" {
		fmt.Fprintln(stderr, "comptoir verify: no witness beside the key: a cut of the chains' last records shows only against paper (--expect)")
	}
	if !v.OK {
		fmt.Fprintln(stderr, "comptoir verify:", v.Broken.Error())
		return 1
	}
	return 0
}

// cmdFiscal is `comptoir fiscal key`: the public key, to export once at
// installation (made if there is none yet), with its fingerprint.
func cmdFiscal(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "key" {
		fmt.Fprintln(stderr, "usage: comptoir fiscal key [--data-dir DIR]")
		return 2
	}
	var common commonFlags
	fs := newFlagSet("fiscal key", stderr, &common)
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	if fs.NArg() != 0 {
		fmt.Fprintln(stderr, "usage: comptoir fiscal key [--data-dir DIR]")
		return 2
	}
	db, l, ks, err := openFiscal(ctx, common, stderr)
	if err != nil {
		return failed(stderr, "fiscal key", err)
	}
	defer db.Close()
	pub := l.PublicKey()
	keyDir := ks.Dir
	if ks.Keyring != nil && ks.Outside {
		keyDir = ""
	}
	printJSON(stdout, struct {
		PublicKey        string `json:"publicKey"`
		Base64           string `json:"base64"`
		Fingerprint      string `json:"fingerprint"`
		ShortFingerprint string `json:"shortFingerprint"`
		KeyStore         string `json:"keyStore"` // the folder of the key file; "" in a keyring
		Keyring          string `json:"keyring"`  // the keyring that holds the key; "" in a file
		Outside          bool   `json:"outside"`
		Where            string `json:"where"`
		Witness          string `json:"witness"`
		Warning          string `json:"warning,omitempty"`
	}{string(fiscal.PublicKeyPEM(pub)), fiscal.PublicKeyText(pub), fiscal.Fingerprint(pub), fiscal.ShortFingerprint(pub),
		keyDir, keyringName(ks), ks.Outside, ks.Where(), ks.WitnessPath(), ks.Warning})
	fmt.Fprintln(stderr, "Keep this public key and its fingerprint away from this PC (print it, write it down):",
		fiscal.ShortFingerprint(pub)+". The signing key is kept "+ks.Where()+".")
	return 0
}

// keyringName is the keyring that holds the store's key ("" when a file
// does).
func keyringName(ks fiscal.KeyStore) string {
	if ks.Keyring != nil && ks.Outside {
		return ks.KeyringName
	}
	return ""
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
	db, l, ks, err := openFiscal(ctx, common, stderr)
	if err != nil {
		return failed(stderr, "close", err)
	}
	defer db.Close()
	if _, err := l.RecordTickets(ctx, warnLogger(stderr)); err != nil {
		return failed(stderr, "close", err)
	}
	var out []fiscal.Closing
	if *day != "" {
		c, err := l.CloseDay(ctx, *day, time.Local)
		if err != nil {
			return failed(stderr, "close", err)
		}
		out = append(out, c)
	} else if out, err = closeDue(ctx, l, db, ks.DataDir, stderr); err != nil {
		return failed(stderr, "close", err)
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
	db, l, ks, err := openFiscal(ctx, common, stderr)
	if err != nil {
		return failed(stderr, "archive", err)
	}
	defer db.Close()
	if *outDir == "" {
		*outDir = filepath.Join(ks.DataDir, archivesDir)
	}
	path, rec, err := l.Archive(ctx, *period, time.Local, *outDir)
	if err != nil {
		return failed(stderr, "archive", err)
	}
	printJSON(stdout, struct {
		Path string `json:"path"`
		fiscal.ArchiveRecord
	}{path, rec})
	return 0
}
