package cli

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/cloudsim"
	"github.com/comptoir-pos/comptoir/backend/internal/testenv"
	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/payment"
	"github.com/comptoir-pos/comptoir/backend/terminalsim"
)

// deadLink leaves what a `comptoir link` killed with SIGKILL leaves: the
// link generated at the provider, its attempt sent and open in the journal,
// and nobody following it.
func deadLink(t *testing.T, cloud *cloudsim.Cloud, dir, order string, amount int64) (journal.Attempt, cloudsim.CartView) {
	t.Helper()
	ctx := t.Context()
	db, err := journal.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	p := &payments{dir: dir, db: db, close: func() { db.Close() }}
	defer func() { p.close() }()
	err = openLinksBeside(ctx, commonFlags{cloudURL: cloud.URL(), dataDir: dir}, p,
		[]journal.Channel{journal.ChannelLocal, journal.ChannelCloud, journal.ChannelWebservices}, payment.DefaultLimits, nil, warnLogger(io.Discard))
	if err != nil || p.links == nil {
		t.Fatalf("links: %v", err)
	}
	if _, err := p.links.Recover(ctx); err != nil {
		t.Fatal(err)
	}
	if err := ensureOrder(ctx, db, &order, amount); err != nil {
		t.Fatal(err)
	}
	h, err := p.links.Start(ctx, payment.Request{OrderID: order, Amount: amount, Policy: journal.PolicyCounter})
	if err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, "the link is given", func() bool { return h.View().Link != "" })
	// The process dies: its driver stops, deciding nothing.
	p.links.Close()
	att, err := db.Attempt(ctx, h.UUID())
	if err != nil || att.State != journal.StateSent {
		t.Fatalf("after the kill: %+v (%v)", att, err)
	}
	for _, c := range cloud.Carts() {
		if c.PaymentLink == att.ProviderID {
			return att, c
		}
	}
	t.Fatalf("no cart for %s", att.ProviderID)
	return att, cloudsim.CartView{}
}

// recoverRun runs `comptoir recover` and reads its rows.
func recoverRun(t *testing.T, args ...string) (int, []recoveryRow, string) {
	t.Helper()
	var out, errOut syncBuffer
	code := cmdRecover(t.Context(), args, &out, &errOut)
	var rows []recoveryRow
	if err := json.Unmarshal([]byte(out.String()), &rows); err != nil {
		t.Fatalf("recover printed %q (%v); stderr %s", out.String(), err, errOut.String())
	}
	return code, rows, errOut.String()
}

func rowOf(t *testing.T, rows []recoveryRow, uuid string) recoveryRow {
	t.Helper()
	for _, r := range rows {
		if r.IdempotentUUID == uuid {
			return r
		}
	}
	t.Fatalf("no row for %s in %+v", uuid, rows)
	return recoveryRow{}
}

// A `comptoir link` killed, then its customer pays: `comptoir recover`
// reads the cart and settles the link approved, whether or not a terminal
// is named, and says so.
func TestRecoverSettlesALinkPaidAfterItsProcessDied(t *testing.T) {
	for name, extra := range map[string][]string{
		"the cloud alone":         nil,
		"with the cloud terminal": {"--serial", "SN-REC"},
	} {
		t.Run(name, func(t *testing.T) {
			cloud := linkCloud(t)
			if _, err := cloud.AddTerminal("SN-REC"); err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			att, cart := deadLink(t, cloud, dir, "L1", 1990)
			if _, err := cloud.PayCart(cart.CartID, 0, 0, cloudsim.PayCard, false); err != nil {
				t.Fatal(err)
			}
			code, rows, stderr := recoverRun(t, append([]string{"--cloud", cloud.URL(), "--data-dir", dir}, extra...)...)
			if code != 0 {
				t.Fatalf("exit %d: %s %+v", code, stderr, rows)
			}
			r := rowOf(t, rows, att.UUID)
			if r.Channel != journal.ChannelLink || r.Kind != journal.KindDebit || r.Before != journal.StateSent || r.After != journal.StateApproved || r.Open != "" {
				t.Fatalf("row %+v", r)
			}
			db := openJournal(t, dir)
			if ord, err := db.Order(t.Context(), "L1"); err != nil || ord.Status != journal.OrderPaid {
				t.Fatalf("order %+v (%v)", ord, err)
			}
		})
	}
}

// openJournal opens the data directory's journal once the command is done
// with it.
func openJournal(t *testing.T, dir string) *journal.DB {
	t.Helper()
	db, err := journal.Open(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// refundCloud is a simulated cloud whose terminal approves every payment,
// with an order paid through it.
func refundCloud(t *testing.T, order string, amount int64) (*cloudsim.Cloud, string) {
	t.Helper()
	approve := terminalsim.Approve()
	cloud, _ := testenv.Cloud(t, cloudsim.Config{Key: "sk_recover", Serials: []string{"SN-R"}, TimeScale: 0.01,
		Terminal: terminalsim.Config{TimeScale: 0.01, NoTestAmounts: true, Default: &approve}})
	t.Setenv(envCloudKey, cloud.Key())
	dir := t.TempDir()
	for _, args := range [][]string{
		{"pay", "--cloud", cloud.URL(), "--serial", "SN-R", "--data-dir", dir, "--order", order, "--amount", itoa(amount)},
		{"settings", "--data-dir", dir, "set", settingWSUserEmail, `"owner@example.com"`},
		{"settings", "--data-dir", dir, "set", settingWSPollEvery, "0.2"},
	} {
		var out, errOut syncBuffer
		if code := run(args, &out, &errOut); code != 0 {
			t.Fatalf("%v: exit %d %s %s", args, code, out.String(), errOut.String())
		}
	}
	return cloud, dir
}

func itoa(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// deadRefund leaves what a `comptoir refund --by-api` killed after the
// provider's first word leaves: the refund sent, pending or waiting.
func deadRefund(t *testing.T, cloud *cloudsim.Cloud, dir, order string, amount int64) journal.Attempt {
	t.Helper()
	ctx := t.Context()
	p, err := openPayments(ctx, commonFlags{cloudURL: cloud.URL(), serial: "SN-R", dataDir: dir}, payment.DefaultLimits, nil, warnLogger(io.Discard), false)
	if err != nil {
		t.Fatal(err)
	}
	defer p.close()
	if _, err := p.o.Recover(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := p.recoverAPIRefunds(ctx); err != nil {
		t.Fatal(err)
	}
	debit, err := onlyApprovedDebit(ctx, p.db, order)
	if err != nil {
		t.Fatal(err)
	}
	v, err := p.refunds.APIRefund(ctx, debit, amount)
	if err != nil || v.Final() {
		t.Fatalf("refund %+v (%v)", v, err)
	}
	att, err := p.db.Attempt(ctx, v.UUID)
	if err != nil || att.State != journal.StateSent {
		t.Fatalf("refund attempt %+v (%v)", att, err)
	}
	return att
}

// A refund by API left waiting for a manager, whose process died, then
// rejected in the back office: `comptoir recover` fetches it and settles it
// declined (nothing given back), and the order can give its money back
// again.
func TestRecoverSettlesARejectedRefundByAPI(t *testing.T) {
	cloud, dir := refundCloud(t, "RR1", 1500)
	cloud.ScriptRefunds(cloudsim.ScriptWaiting)
	att := deadRefund(t, cloud, dir, "RR1", 1500)
	if _, err := cloud.DecideRefund(att.ProviderID, false); err != nil {
		t.Fatal(err)
	}
	code, rows, stderr := recoverRun(t, "--cloud", cloud.URL(), "--serial", "SN-R", "--data-dir", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s %+v", code, stderr, rows)
	}
	r := rowOf(t, rows, att.UUID)
	if r.Channel != journal.ChannelWebservices || r.Kind != journal.KindRefund || r.Before != journal.StateSent || r.After != journal.StateDeclined {
		t.Fatalf("row %+v", r)
	}
	m, err := openJournal(t, dir).OrderMoney(t.Context(), "RR1")
	if err != nil || m.Givable() != 1500 {
		t.Fatalf("money %+v (%v)", m, err)
	}
}

// A refund still waiting for its manager when the wait ends is named, open,
// with why; recover exits 3.
func TestRecoverSaysWhichRefundStaysOpenAndWhy(t *testing.T) {
	cloud, dir := refundCloud(t, "RR2", 900)
	cloud.ScriptRefunds(cloudsim.ScriptWaiting)
	att := deadRefund(t, cloud, dir, "RR2", 900)
	code, rows, stderr := recoverRun(t, "--cloud", cloud.URL(), "--serial", "SN-R", "--data-dir", dir, "--wait", "300ms")
	r := rowOf(t, rows, att.UUID)
	if code != exitStillOpen || r.After != journal.StateSent || !strings.Contains(r.Open, "manager") {
		t.Fatalf("exit %d (%s): row %+v", code, stderr, r)
	}
}

// `comptoir link --order X` run again while X's link is open (its process
// died) follows that link to its end instead of refusing: the same link,
// the same attempt, paid once.
func TestRerunLinkFollowsTheOpenAttempt(t *testing.T) {
	cloud := linkCloud(t)
	dir := t.TempDir()
	att, cart := deadLink(t, cloud, dir, "L2", 1200)
	var out, errOut syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- cmdLink(t.Context(), []string{"--cloud", cloud.URL(), "--data-dir", dir, "--amount", "1200", "--order", "L2"}, &out, &errOut)
	}()
	testenv.Eventually(t, "the command shows the open link", func() bool {
		select {
		case code := <-done:
			t.Fatalf("exit %d: %s %s", code, out.String(), errOut.String())
		default:
		}
		return strings.Contains(errOut.String(), cart.PaymentLink)
	})
	if _, err := cloud.PayCart(cart.CartID, 0, 0, cloudsim.PayCard, false); err != nil {
		t.Fatal(err)
	}
	var code int
	select {
	case code = <-done:
	case <-time.After(60 * time.Second):
		t.Fatalf("still running: %s", errOut.String())
	}
	var res linkResult
	if err := json.Unmarshal([]byte(out.String()), &res); err != nil || code != 0 || res.IdempotentUUID != att.UUID || res.Status != journal.StateApproved || !res.OrderPaid {
		t.Fatalf("exit %d: %s %s (%v)", code, out.String(), errOut.String(), err)
	}
	if n := len(cloud.Carts()); n != 1 {
		t.Fatalf("%d carts", n)
	}
}

// `comptoir pay --order X` run again while X has an open link follows the
// link: paid by it, the order is not charged again.
func TestRerunPayFollowsTheOpenLink(t *testing.T) {
	cloud := linkCloud(t)
	dir := t.TempDir()
	att, cart := deadLink(t, cloud, dir, "L3", 700)
	if _, err := cloud.PayCart(cart.CartID, 0, 0, cloudsim.PayCard, false); err != nil {
		t.Fatal(err)
	}
	sim := startSim(t)
	var so, se syncBuffer
	if code := run([]string{"settings", "--data-dir", dir, "set", settingCloudURL, `"` + cloud.URL() + `"`}, &so, &se); code != 0 {
		t.Fatal(se.String())
	}
	var out, errOut syncBuffer
	code := cmdPay(t.Context(), []string{"--terminal", sim.URL(), "--data-dir", dir, "--amount", "700", "--order", "L3"}, &out, &errOut)
	var res payResult
	if err := json.Unmarshal([]byte(out.String()), &res); err != nil || code != 0 || res.IdempotentUUID != att.UUID || res.Status != journal.StateApproved || !res.OrderPaid {
		t.Fatalf("exit %d: %s %s (%v)", code, out.String(), errOut.String(), err)
	}
	if n := len(sim.Ledger()); n != 0 {
		t.Fatalf("the terminal charged %d times", n)
	}
}

// `comptoir link` leaves a refund by API that waits for its manager to the
// Webservices: it follows it, and never closes it as unknown.
func TestLinkLeavesAnOpenRefundByAPIOpen(t *testing.T) {
	cloud, dir := refundCloud(t, "RR3", 800)
	cloud.ScriptRefunds(cloudsim.ScriptWaiting)
	att := deadRefund(t, cloud, dir, "RR3", 800)
	ctx, cancel := context.WithCancel(t.Context())
	var out, errOut syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- cmdLink(ctx, []string{"--cloud", cloud.URL(), "--data-dir", dir, "--amount", "500", "--order", "LL1"}, &out, &errOut)
	}()
	testenv.Eventually(t, "the link is given", func() bool { return strings.Contains(errOut.String(), "Pay 5.00 at") })
	cancel()
	<-done
	a, err := openJournal(t, dir).Attempt(t.Context(), att.UUID)
	if err != nil || a.State != journal.StateSent {
		t.Fatalf("the waiting refund: %+v (%v); %s", a, err, errOut.String())
	}
}
