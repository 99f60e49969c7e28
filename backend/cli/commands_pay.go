package cli

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/comptoir-pos/comptoir/backend/fault"
	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/payment"
	"github.com/comptoir-pos/comptoir/backend/settings"
)

// limitFlags are the money-safety durations, settable per command.
type limitFlags struct {
	clientTimeout time.Duration
	requestOpen   time.Duration
	resendPause   time.Duration
	settleAfter   time.Duration
}

func (l *limitFlags) register(fs *flag.FlagSet) {
	fs.DurationVar(&l.clientTimeout, "client-timeout", 0, "one /payment request's timeout (default: kiosk 62s, counter 125s)")
	fs.DurationVar(&l.requestOpen, "request-open", payment.DefaultLimits.RequestOpen, "resend after a timeout until this long after the first send; then the outcome is unknown")
	fs.DurationVar(&l.resendPause, "resend-pause", payment.DefaultLimits.ResendPause, "pause before asking again after an error")
	fs.DurationVar(&l.settleAfter, "settle-after", payment.DefaultLimits.SettleAfter, "after an attempt's last send, when the provider's history is complete: an attempt missing from it then charged nothing (keep it below -request-open, or such attempts end unknown)")
}

// newPaymentFlagSet is the flag set of a command that drives payments:
// the common flags and the payment driver's limits.
func newPaymentFlagSet(name string, stderr io.Writer) (*flag.FlagSet, *commonFlags, *limitFlags) {
	var (
		common commonFlags
		lf     limitFlags
	)
	fs := newFlagSet(name, stderr, &common)
	lf.register(fs)
	return fs, &common, &lf
}

func (l limitFlags) limits() payment.Limits {
	lim := payment.DefaultLimits
	if l.clientTimeout > 0 {
		lim.KioskTimeout, lim.CounterTimeout, lim.RefundTimeout = l.clientTimeout, l.clientTimeout, l.clientTimeout
	}
	lim.RequestOpen, lim.ResendPause, lim.SettleAfter = l.requestOpen, l.resendPause, l.settleAfter
	return lim
}

// payResult is what `comptoir pay` prints.
type payResult struct {
	Order                string              `json:"order"`
	Status               journal.State       `json:"status"`
	IdempotentUUID       string              `json:"idempotentUuid"`
	TransactionID        string              `json:"transactionId,omitempty"`
	Amount               int64               `json:"amount"`
	GiftAmount           int64               `json:"giftAmount"` // the terminal's once it answered (a tip chosen on it)
	ChargedAmount        int64               `json:"chargedAmount,omitempty"`
	Message              string              `json:"message,omitempty"`
	Abort                payment.AbortAnswer `json:"abort,omitempty"`
	ChargedDespiteCancel bool                `json:"chargedDespiteCancel,omitempty"`
	OrderPaid            bool                `json:"orderPaid"`
	// Flag: the terminal approved something else than what was asked, or
	// the provider's record does not show its approval; the order is not
	// paid and needs staff.
	Flag string `json:"flag,omitempty"`
	// Channel is which way the payment went: local (the LAN) or cloud.
	Channel journal.Channel `json:"channel,omitempty"`
	// Resumed: the order's attempt left open by a process that stopped,
	// followed to its end instead of a new one.
	Resumed bool `json:"resumed,omitempty"`
}

func payResultOf(v payment.View, resumed bool) payResult {
	return payResult{
		Order: v.OrderID, Status: v.State, IdempotentUUID: v.UUID, TransactionID: v.TransactionID,
		Amount: v.Amount, GiftAmount: v.GiftAmount, ChargedAmount: v.ChargedAmount, Message: v.Message, Abort: v.Abort,
		ChargedDespiteCancel: v.ChargedDespiteCancel, OrderPaid: v.OrderPaid, Flag: v.Flag, Channel: v.Channel, Resumed: resumed,
	}
}

func cmdPay(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs, common, lf := newPaymentFlagSet("pay", stderr)
	amount := fs.Int64("amount", 0, "amount in cents (required)")
	gift := fs.Int64("gift", 0, "tip chosen on the POS side, in cents")
	orderID := fs.String("order", "", "order id (sent as cartId); default: a new order of --amount")
	mode := fs.String("mode", "kiosk", "kiosk (no optional terminal screens) or counter (terminal tip screen allowed)")
	medium := fs.String("accepted", "", "restrict the medium: lunch_vouchers_only or bank_cards_only")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	policy := journal.Policy(*mode)
	if *amount <= 0 || (policy != journal.PolicyKiosk && policy != journal.PolicyCounter) {
		fmt.Fprintln(stderr, "comptoir pay: --amount must be positive and --mode kiosk or counter")
		return 2
	}
	// The payment must outlive a Ctrl-C: that is the customer's cancel, and
	// the abort-then-wait protocol still needs the process.
	p, err := openPayments(context.WithoutCancel(ctx), *common, lf.limits(), nil, warnLogger(stderr), false)
	if err != nil {
		return failed(stderr, "pay", err)
	}
	defer p.close()
	open, reran, err := openAttemptOf(ctx, p.db, *orderID)
	if err != nil {
		return failed(stderr, "pay", err)
	}
	if code := recoverFirst(ctx, p, stderr); code != 0 {
		return code
	}
	if reran {
		if v := p.followOpen(ctx, open, stderr); open.Kind == journal.KindDebit {
			printJSON(stdout, payResultOf(v, true))
			return exitCode(v)
		}
	}
	if err := ensureOrder(ctx, p.db, orderID, *amount); err != nil {
		return failed(stderr, "pay", err)
	}
	v, err := p.o.Pay(ctx, payment.Request{OrderID: *orderID, Amount: *amount, GiftAmount: *gift, Policy: policy, AcceptedMedium: *medium})
	if err != nil {
		return failed(stderr, "pay", err)
	}
	printJSON(stdout, payResultOf(v, false))
	return exitCode(v)
}

// exitCode is an attempt's: 0 approved as asked, 3 outcome unknown, 4
// approved for something else than was asked (staff must look), 1
// otherwise.
func exitCode(v payment.View) int {
	switch {
	case v.State == journal.StateApproved && v.Flag != "":
		return 4
	case v.State == journal.StateApproved:
		return 0
	case v.State == journal.StateUnknown:
		return 3
	}
	return 1
}

// ensureOrder names a new order of amount when *id is empty, and records
// the order when the journal does not know it.
func ensureOrder(ctx context.Context, db *journal.DB, id *string, amount int64) error {
	if *id == "" {
		*id = newOrderID()
	}
	_, err := db.Order(ctx, *id)
	if fault.CodeOf(err) == fault.ENOTFOUND {
		return db.CreateOrder(ctx, journal.Order{ID: *id, Currency: configuredCurrency(ctx, db), Total: amount})
	}
	return err
}

// configuredCurrency is the kiosk.currency setting, EUR when it is unset
// or unreadable (the journal refuses a currency that is not a code).
func configuredCurrency(ctx context.Context, db *journal.DB) string {
	raw, ok, err := db.Setting(ctx, settings.SettingCurrency)
	var cur string
	if err != nil || !ok || json.Unmarshal(raw, &cur) != nil || len(cur) != 3 {
		return settings.DefaultCurrency
	}
	return strings.ToUpper(cur)
}

// recoverFirst settles the attempts left open, of every channel this
// process has, before anything new starts (see recoverAll).
func recoverFirst(ctx context.Context, p *payments, stderr io.Writer) int {
	views, err := p.recoverAll(ctx)
	for _, v := range views {
		fmt.Fprintf(stderr, "recovered attempt %s of order %s (%s): %s %s\n", v.UUID, v.OrderID, v.Channel, v.State, v.Message)
	}
	if err != nil {
		fmt.Fprintln(stderr, "comptoir: recovery incomplete:", err)
		return 1
	}
	return 0
}

// attemptRow is one attempt as `comptoir attempts` prints it.
type attemptRow struct {
	IdempotentUUID string          `json:"idempotentUuid"`
	Order          string          `json:"order"`
	Kind           journal.Kind    `json:"kind"`
	Policy         journal.Policy  `json:"policy"`
	State          journal.State   `json:"state"`
	Channel        journal.Channel `json:"channel"`
	Amount         int64           `json:"amount"`
	GiftAmount     int64           `json:"giftAmount"`
	// ChargedAmount and ChargedGift: what the terminal says it charged
	// (or gave back), when it said so.
	ChargedAmount        *int64     `json:"chargedAmount,omitempty"`
	ChargedGift          *int64     `json:"chargedGift,omitempty"`
	InitialTransactionID string     `json:"initialTransactionId,omitempty"`
	TransactionID        string     `json:"transactionId,omitempty"`
	Error                string     `json:"error,omitempty"`
	SendCount            int        `json:"sendCount"`
	Terminal             string     `json:"terminal"`
	CreatedAt            time.Time  `json:"createdAt"`
	FinalAt              *time.Time `json:"finalAt,omitempty"`
	// The provider's id and word (a payment link's address; its cart's
	// status, "authorised" until captured).
	ProviderID     string `json:"providerId,omitempty"`
	ProviderStatus string `json:"providerStatus,omitempty"`
	// Witness is the provider's record's word on an approval over the LAN.
	Witness journal.Witness `json:"witness,omitempty"`
}

func cmdAttempts(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var common commonFlags
	fs := newFlagSet("attempts", stderr, &common)
	open := fs.Bool("open", false, "only unresolved attempts")
	limit := fs.Int("limit", 0, "at most this many (0: all)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	db, _, err := common.openJournal(ctx)
	if err != nil {
		return failed(stderr, "attempts", err)
	}
	defer db.Close()
	atts, err := db.ListAttempts(ctx, journal.AttemptFilter{OnlyOpen: *open, Limit: *limit})
	if err != nil {
		return failed(stderr, "attempts", err)
	}
	rows := make([]attemptRow, 0, len(atts))
	for _, a := range atts {
		r := attemptRow{IdempotentUUID: a.UUID, Order: a.OrderID, Kind: a.Kind, Policy: a.Policy, State: a.State,
			Channel: a.Channel, Amount: a.Amount, GiftAmount: a.GiftAmount, TransactionID: a.TransactionID, Error: a.Error,
			InitialTransactionID: a.InitialTransactionID,
			SendCount:            a.SendCount, Terminal: a.Terminal, CreatedAt: a.CreatedAt.UTC(),
			ProviderID: a.ProviderID, ProviderStatus: a.ProviderStatus, Witness: a.Witness}
		if a.Charged {
			r.ChargedAmount, r.ChargedGift = &a.ChargedAmount, &a.ChargedGift
		}
		if !a.FinalAt.IsZero() {
			at := a.FinalAt.UTC()
			r.FinalAt = &at
		}
		rows = append(rows, r)
	}
	printJSON(stdout, rows)
	return 0
}

func newOrderID() string {
	var b [3]byte
	rand.Read(b[:])
	return time.Now().UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b[:])
}
