package cli

import (
	"context"
	"encoding/hex"
	"fmt"
	"io"

	"github.com/comptoir-pos/comptoir/backend/localapi"
	"github.com/comptoir-pos/comptoir/backend/orders"
	"github.com/comptoir-pos/comptoir/backend/receipt"
	"github.com/comptoir-pos/comptoir/backend/settings"
)

// cmdReceipt shows (--preview, the default) or prints (--print) a paid
// order's customer receipt, rebuilt from the journal.
func cmdReceipt(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var common commonFlags
	fs := newFlagSet("receipt", stderr, &common)
	orderID := fs.String("order", "", "the order's id (required)")
	toPrinter := fs.Bool("print", false, "print it on the terminal's printer")
	fs.Bool("preview", true, "show it as text (the default)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *orderID == "" {
		fmt.Fprintln(stderr, "comptoir receipt: --order is required")
		return 2
	}
	db, _, err := common.openJournal(ctx)
	if err != nil {
		return failed(stderr, "receipt", err)
	}
	defer db.Close()
	st, err := settings.LoadSettings(ctx, db, warnLogger(stderr))
	if err != nil {
		return failed(stderr, "receipt", err)
	}
	r, opt, err := orders.OrderReceipt(ctx, db, st, *orderID)
	if err != nil {
		return failed(stderr, "receipt", err)
	}
	if !*toPrinter {
		fmt.Fprint(stdout, receipt.CustomerReceiptText(r, opt))
		return 0
	}
	b, err := receipt.CustomerReceipt(r, opt)
	if err != nil {
		return failed(stderr, "receipt", err)
	}
	// The stored trust applies here as everywhere: a terminal bound to
	// HTTPS is never sent a receipt over plain HTTP.
	addr, trust, err := storedTrust(ctx, common, db)
	var client *localapi.Client
	if err == nil {
		client, err = newTerminalClient(addr, trust)
	}
	if err != nil {
		fmt.Fprintln(stderr, "comptoir receipt:", err)
		return 2
	}
	if _, err := client.Print(ctx, &localapi.PrintRequest{Data: hex.EncodeToString(b), Format: localapi.FormatESCPOS}); err != nil {
		return failed(stderr, "receipt", err)
	}
	fmt.Fprintln(stdout, "sent to the printer (the terminal accepts a print even without paper: check it came out)")
	return 0
}
