package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/comptoir-pos/comptoir/backend/device"
	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/payment"
)

// linkResult is what `comptoir link` prints.
type linkResult struct {
	Order                string        `json:"order"`
	Status               journal.State `json:"status"`
	IdempotentUUID       string        `json:"idempotentUuid"`
	Link                 string        `json:"link,omitempty"`
	ProviderStatus       string        `json:"providerStatus,omitempty"`
	Amount               int64         `json:"amount"`
	Paid                 int64         `json:"paid,omitempty"`
	ChargedAmount        int64         `json:"chargedAmount,omitempty"`
	GiftAmount           int64         `json:"giftAmount"`
	TransactionID        string        `json:"transactionId,omitempty"`
	Message              string        `json:"message,omitempty"`
	ChargedDespiteCancel bool          `json:"chargedDespiteCancel,omitempty"`
	OrderPaid            bool          `json:"orderPaid"`
	// Resumed: the order's link left open by a process that stopped,
	// followed to its end instead of a new one.
	Resumed bool `json:"resumed,omitempty"`
}

// linkShowEvery is how often the command looks for the link's address and
// progress to print.
const linkShowEvery = 100 * time.Millisecond

func cmdLink(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs, common, lf := newPaymentFlagSet("link", stderr)
	amount := fs.Int64("amount", 0, "amount in cents (required)")
	orderID := fs.String("order", "", "order id; default: a new order of --amount")
	mode := fs.String("mode", "counter", "counter (a phone or click-and-collect order) or kiosk (no tip)")
	email := fs.String("email", "", "the provider sends the link to this address")
	sms := fs.String("sms", "", "the provider sends the link to this phone (international format)")
	first := fs.String("first", "", "the customer's first name (needed to send the link)")
	last := fs.String("last", "", "the customer's last name (needed to send the link)")
	authorise := fs.Bool("authorise", false, "authorise only: the paid cart is captured later")
	var vouchers optionalBool
	fs.Var(&vouchers, "meal-vouchers", "true or false: whether the customer may pay by meal voucher (default: the provider's, which accepts them)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	policy := journal.Policy(*mode)
	if *amount <= 0 || (policy != journal.PolicyKiosk && policy != journal.PolicyCounter) {
		fmt.Fprintln(stderr, "comptoir link: --amount must be positive and --mode kiosk or counter")
		return 2
	}
	fail := func(err error) int { fmt.Fprintln(stderr, "comptoir link:", err); return 1 }
	// The link must outlive a Ctrl-C: that is the customer's cancel, which
	// cancels the cart and then reads it.
	bg := context.WithoutCancel(ctx)
	dir, err := common.resolveDataDir()
	if err != nil {
		return fail(err)
	}
	p, err := openWithoutTerminal(bg, *common, dir, lf.limits(), warnLogger(stderr))
	if err != nil {
		return fail(err)
	}
	defer func() { p.close() }()
	if p.links == nil && p.linksOff != nil {
		return fail(p.linksOff)
	}
	if p.links == nil {
		return fail(fmt.Errorf("payment links need the provider's cloud: --cloud URL (or the %s setting) and the key (%s), or --demo", settingCloudURL, envCloudKey))
	}
	open, reran, err := openAttemptOf(ctx, p.db, *orderID)
	if err != nil {
		return fail(err)
	}
	// The terminal's attempts wait for a process that has the terminal.
	if _, err := p.recoverAll(ctx); err != nil {
		return fail(err)
	}
	if reran {
		if v, done, err := p.rerunLink(ctx, open, stderr); err != nil {
			return fail(err)
		} else if done {
			return printLink(stdout, v, true)
		}
	}
	if err := ensureOrder(ctx, p.db, orderID, *amount); err != nil {
		return fail(err)
	}
	req := payment.Request{OrderID: *orderID, Amount: *amount, Policy: policy, Link: &payment.LinkDetails{
		Source: "click_and_collect", ShareByEmail: *email != "", ShareBySMS: *sms != "", AuthoriseOnly: *authorise,
		MealVouchers: vouchers.v,
	}}
	if policy == journal.PolicyKiosk {
		off := false
		req.Link.Source, req.Link.Tips = "pay_at_table", &off
	}
	if *email != "" || *sms != "" || *first != "" || *last != "" {
		req.Customer = &device.Customer{FirstName: *first, LastName: *last, Email: *email, Phone: *sms}
	}
	h, err := p.links.Start(bg, req)
	if err != nil {
		return fail(err)
	}
	return printLink(stdout, followLink(ctx, h, stderr), false)
}

// rerunLink follows the order's attempt left open by a process that
// stopped: its link, to its end (done); a refund by API, to its end, and
// then a link may start; a payment on the terminal, which this command
// cannot ask about, is an error.
func (p *payments) rerunLink(ctx context.Context, open journal.Attempt, stderr io.Writer) (payment.View, bool, error) {
	switch open.Channel {
	case journal.ChannelLink:
		return p.followOpen(ctx, open, stderr), true, nil
	case journal.ChannelWebservices:
		p.followOpen(ctx, open, stderr)
		return payment.View{}, false, nil
	}
	return payment.View{}, false, fmt.Errorf("order %s has %s %s open on the terminal (%s): `comptoir recover` with the terminal settles it first",
		open.OrderID, open.Kind, open.UUID, open.Channel)
}

// optionalBool is a flag that is true, false, or not given.
type optionalBool struct{ v *bool }

func (o *optionalBool) String() string {
	if o == nil || o.v == nil {
		return ""
	}
	return strconv.FormatBool(*o.v)
}

func (o *optionalBool) Set(s string) error {
	b, err := strconv.ParseBool(s)
	if err != nil {
		return errors.New("true or false")
	}
	o.v = &b
	return nil
}

func (o *optionalBool) IsBoolFlag() bool { return true }

// printLink prints a link's outcome and returns the exit code.
func printLink(stdout io.Writer, v payment.View, resumed bool) int {
	printJSON(stdout, linkResult{
		Order: v.OrderID, Status: v.State, IdempotentUUID: v.UUID, Link: v.Link, ProviderStatus: v.ProviderStatus,
		Amount: v.Amount, Paid: v.Paid, ChargedAmount: v.ChargedAmount, GiftAmount: v.GiftAmount, TransactionID: v.TransactionID,
		Message: v.Message, ChargedDespiteCancel: v.ChargedDespiteCancel, OrderPaid: v.OrderPaid, Resumed: resumed,
	})
	return exitCode(v)
}

// followLink prints the link once the provider gave it, and what is paid
// as it comes, until the attempt ends; ctx's end is the cancel.
func followLink(ctx context.Context, h *payment.Handle, stderr io.Writer) payment.View {
	tick := time.NewTicker(linkShowEvery)
	defer tick.Stop()
	shown, paid := "", int64(0)
	cancel := ctx.Done()
	for {
		v := h.View()
		if v.Link != "" && v.Link != shown {
			shown = v.Link
			fmt.Fprintf(stderr, "Pay %d.%02d at %s\n", v.Amount/100, v.Amount%100, v.Link)
		}
		if v.Paid != paid {
			paid = v.Paid
			fmt.Fprintf(stderr, "%d.%02d of %d.%02d paid\n", paid/100, paid%100, v.Amount/100, v.Amount%100)
		}
		select {
		case <-h.Done():
			return h.View()
		case <-cancel:
			cancel = nil
			fmt.Fprintln(stderr, "cancelling the link; its cart decides")
			h.Cancel()
		case <-tick.C:
		}
	}
}
