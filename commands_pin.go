package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/kiosk"
	"github.com/comptoir-pos/comptoir/backend/staff"
)

// stdin is where `comptoir pin` reads the PIN (tests replace it).
var stdin io.Reader = os.Stdin

// cmdPin sets the staff PIN from the machine itself: before a kiosk is
// opened to the public (otherwise the first person to find the PIN pad
// sets it), or when the PIN is forgotten. It replaces any PIN, lifts a
// lockout and ends open sessions; the audit trail says it was done here.
// The PIN is read from standard input, never from the command line, which
// other users of the machine can see.
func cmdPin(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var common commonFlags
	fs := newFlagSet("pin", stderr, &common)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() != 0 {
		fmt.Fprintln(stderr, "usage: echo NEWPIN | comptoir pin [--data-dir DIR]")
		return 2
	}
	line, err := bufio.NewReader(stdin).ReadString('\n')
	if err != nil && line == "" {
		fmt.Fprintln(stderr, "comptoir pin: no PIN on standard input (echo NEWPIN | comptoir pin)")
		return 2
	}
	pin := strings.TrimSpace(line)
	dir, err := common.resolveDataDir()
	if err != nil {
		fmt.Fprintln(stderr, "comptoir pin:", err)
		return 1
	}
	db, err := journal.Open(ctx, dir)
	if err != nil {
		fmt.Fprintln(stderr, "comptoir pin:", err)
		return 1
	}
	defer db.Close()
	st, err := staff.New(staff.Config{Journal: db, Terminal: kiosk.PrinterAt(func() string { return "" })})
	if err != nil {
		fmt.Fprintln(stderr, "comptoir pin:", err)
		return 1
	}
	if err := st.ResetPIN(ctx, pin, "command line"); err != nil {
		fmt.Fprintln(stderr, "comptoir pin:", err)
		if staff.ErrorCode(err) == staff.EINVALID {
			return 2
		}
		return 1
	}
	fmt.Fprintln(stdout, "The staff PIN is set.")
	return 0
}
