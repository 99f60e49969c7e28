package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/user"

	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/payment"
)

// giveBackResult is what `comptoir refund` and `comptoir reverse` print.
type giveBackResult struct {
	Order          string        `json:"order"`
	Kind           journal.Kind  `json:"kind"`
	Status         journal.State `json:"status"`
	IdempotentUUID string        `json:"idempotentUuid"`
	TransactionID  string        `json:"transactionId,omitempty"`
	// InitialTransactionID is the debit a reversal reversed.
	InitialTransactionID string `json:"initialTransactionId,omitempty"`
	Amount               int64  `json:"amount"`
	Message              string `json:"message,omitempty"`
	// Givable is what the order can still give back after this.
	Givable int64 `json:"givable"`
	// Resumed: the order's attempt left open by a process that stopped,
	// followed to its end instead of a new one.
	Resumed bool `json:"resumed,omitempty"`
}

// cliWho names the machine's user in the journal's audit trail.
func cliWho() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return "cli:" + u.Username
	}
	return "cli"
}

// cmdRefund refunds part or all of a paid order on the terminal (the
// customer presents the card): an attempt of its own, journaled before it
// leaves, never beyond what the order can still give back. Ctrl-C asks the
// terminal to abort it, then prints the true outcome.
func cmdRefund(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs, common, lf := newPaymentFlagSet("refund", stderr)
	amount := fs.Int64("amount", 0, "amount to give back, in cents (required)")
	orderID := fs.String("order", "", "the order (required)")
	byAPI := fs.Bool("by-api", false, "without the card, through the provider's Webservices: the order's approved debit (or --attempt)")
	attempt := fs.String("attempt", "", "with --by-api: the debit's idempotentUuid, when the order has several")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *amount <= 0 || (*orderID == "" && !(*byAPI && *attempt != "")) {
		fmt.Fprintln(stderr, "comptoir refund: --order (or --by-api --attempt) and a positive --amount are required")
		return 2
	}
	p, err := openPayments(context.WithoutCancel(ctx), *common, lf.limits(), nil, warnLogger(stderr), false)
	if err != nil {
		return failed(stderr, "refund", err)
	}
	defer p.close()
	order := *orderID
	if order == "" {
		if a, err := p.db.Attempt(ctx, *attempt); err == nil {
			order = a.OrderID
		}
	}
	if v, done, code := p.rerun(ctx, order, journal.KindRefund, stderr); done {
		if code == 0 {
			return printGiveBack(ctx, p, v, true, stdout, stderr)
		}
		return code
	}
	if *byAPI {
		return refundByAPI(ctx, p, *orderID, *attempt, *amount, stdout, stderr)
	}
	v, err := p.o.Pay(ctx, payment.Request{OrderID: *orderID, Amount: *amount, Policy: journal.PolicyRefund, Reference: cliWho()})
	if err != nil {
		return failed(stderr, "refund", err)
	}
	return printGiveBack(ctx, p, v, false, stdout, stderr)
}

// refundByAPI refunds part or all of an approved debit through the
// Webservices, and prints the provider's first word: refunded, declined,
// or pending or waiting (for its checks, or a manager's approval), which
// goes on by itself (`comptoir recover` follows it again).
func refundByAPI(ctx context.Context, p *payments, orderID, attempt string, amount int64, stdout, stderr io.Writer) int {
	if p.refunds == nil {
		fmt.Fprintln(stderr, "comptoir refund: refunds by API need the provider's cloud (--cloud or "+settingCloudURL+", and the key)")
		return 1
	}
	var err error
	if attempt == "" {
		if attempt, err = onlyApprovedDebit(ctx, p.db, orderID); err != nil {
			return failed(stderr, "refund", err)
		}
	}
	v, err := p.refunds.APIRefund(ctx, attempt, amount)
	if err != nil {
		return failed(stderr, "refund", err)
	}
	if !v.Final() {
		// Pending or waiting: the provider decides, and this process
		// follows it until it does or Ctrl-C (recovery follows it then).
		fmt.Fprintf(stderr, "refund %s is %s at the provider: following it (Ctrl-C leaves it to `comptoir recover`)\n", v.UUID, v.ProviderStatus)
		if h, ok := p.refunds.Active(v.UUID); ok {
			select {
			case <-h.Done():
				v = h.View()
			case <-ctx.Done():
			}
		}
	}
	return printGiveBack(ctx, p, v, false, stdout, stderr)
}

// cmdReverse reverses an approved debit (--attempt, or the order's only
// approved debit with --order) on the terminal that took it: the whole of
// it, tip included, journaled before it leaves.
func cmdReverse(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs, common, lf := newPaymentFlagSet("reverse", stderr)
	attempt := fs.String("attempt", "", "the debit's idempotentUuid")
	orderID := fs.String("order", "", "the order whose approved debit is reversed (when it has one)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if (*attempt == "") == (*orderID == "") {
		fmt.Fprintln(stderr, "comptoir reverse: give --attempt or --order")
		return 2
	}
	p, err := openPayments(context.WithoutCancel(ctx), *common, lf.limits(), nil, warnLogger(stderr), false)
	if err != nil {
		return failed(stderr, "reverse", err)
	}
	defer p.close()
	order := *orderID
	if order == "" {
		if a, err := p.db.Attempt(ctx, *attempt); err == nil {
			order = a.OrderID
		}
	}
	if v, done, code := p.rerun(ctx, order, journal.KindReversal, stderr); done {
		if code == 0 {
			return printGiveBack(ctx, p, v, true, stdout, stderr)
		}
		return code
	}
	if *attempt == "" {
		id, err := onlyApprovedDebit(ctx, p.db, *orderID)
		if err != nil {
			return failed(stderr, "reverse", err)
		}
		*attempt = id
	}
	// A reversal is not cancelled: Ctrl-C does not stop it.
	v, err := p.o.Reverse(context.WithoutCancel(ctx), *attempt)
	if err != nil {
		return failed(stderr, "reverse", err)
	}
	return printGiveBack(ctx, p, v, false, stdout, stderr)
}

// onlyApprovedDebit is the order's approved debit, when there is exactly one.
func onlyApprovedDebit(ctx context.Context, db *journal.DB, orderID string) (string, error) {
	atts, err := db.AttemptsForOrder(ctx, orderID)
	if err != nil {
		return "", err
	}
	var found []string
	for _, a := range atts {
		if a.Kind == journal.KindDebit && a.State == journal.StateApproved {
			found = append(found, a.UUID)
		}
	}
	switch len(found) {
	case 0:
		return "", fmt.Errorf("order %s has no approved payment", orderID)
	case 1:
		return found[0], nil
	}
	return "", errors.New("order " + orderID + " was paid in several parts: name the one to reverse with --attempt")
}

// rerun recovers every channel before a command gives money back, and
// follows the order's attempt of this kind that a process left open: done
// says it was (v is its outcome), or that recovery failed (code).
func (p *payments) rerun(ctx context.Context, orderID string, kind journal.Kind, stderr io.Writer) (v payment.View, done bool, code int) {
	open, reran, err := openAttemptOf(ctx, p.db, orderID)
	if err != nil {
		fmt.Fprintln(stderr, "comptoir:", err)
		return v, true, 1
	}
	if code := recoverFirst(ctx, p, stderr); code != 0 {
		return v, true, code
	}
	if !reran {
		return v, false, 0
	}
	v = p.followOpen(ctx, open, stderr)
	return v, open.Kind == kind, 0
}

func printGiveBack(ctx context.Context, p *payments, v payment.View, resumed bool, stdout, stderr io.Writer) int {
	if err := p.db.AddNote(ctx, v.UUID, cliWho(), "asked from the command line"); err != nil {
		fmt.Fprintln(stderr, "comptoir: note not written:", err)
	}
	r := giveBackResult{Order: v.OrderID, Kind: v.Kind, Status: v.State, IdempotentUUID: v.UUID,
		TransactionID: v.TransactionID, Amount: v.Amount + v.GiftAmount, Message: v.Message, Resumed: resumed}
	if a, err := p.db.Attempt(ctx, v.UUID); err == nil {
		r.InitialTransactionID = a.InitialTransactionID
	}
	if m, err := p.db.OrderMoney(ctx, v.OrderID); err == nil {
		r.Givable = m.Givable()
	}
	printJSON(stdout, r)
	return exitCode(v)
}
