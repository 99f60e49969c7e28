package cloudsim_test

import (
	"errors"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/cloudapi"
	"github.com/comptoir-pos/comptoir/backend/cloudsim"
	"github.com/comptoir-pos/comptoir/backend/localapi"
	"github.com/comptoir-pos/comptoir/backend/terminalsim"
)

// lanCloud is a cloud whose virtual terminal also serves its Local API on
// loopback, with a client of each way and the Webservices.
func lanCloud(t *testing.T) (*cloudsim.Cloud, *cloudapi.Client, *cloudapi.Webservices, *localapi.Client) {
	t.Helper()
	approve := terminalsim.Approve()
	// A reversal answered after 200 ms leaves time to read the record
	// while the terminal has made it and the cloud has not yet answered.
	c, cl, _ := start(t, cloudsim.Config{Serials: []string{"SN-L"}, LAN: true,
		Terminal: terminalsim.Config{Default: &approve, TimeScale: 0.001, NoTestAmounts: true,
			Timings: terminalsim.Timings{Reversal: 200 * time.Second}}})
	ws, err := cloudapi.NewWebservices(cloudapi.DefaultWebservicesURL(c.URL()), c.Key())
	if err != nil {
		t.Fatal(err)
	}
	if c.LANURL("SN-L") == "" {
		t.Fatal("the terminal serves no Local API")
	}
	lan, err := localapi.NewClient(c.LANURL("SN-L"))
	if err != nil {
		t.Fatal(err)
	}
	return c, cl, ws, lan
}

// A terminal reached both ways is one terminal: a payment made over its
// LAN is in the provider's record too, under the id the control chose,
// and a payment the cloud started is listed once.
func TestTheProviderKnowsTransactionsMadeOverTheLAN(t *testing.T) {
	for _, mode := range []string{cloudsim.LANIDsCloud, cloudsim.LANIDsEither, cloudsim.LANIDsTerminal} {
		t.Run(mode, func(t *testing.T) {
			c, cl, ws, lan := lanCloud(t)
			ctx := ctxT(t)
			if err := c.SetLANIDs(mode); err != nil {
				t.Fatal(err)
			}
			tx, err := lan.Payment(ctx, &localapi.PaymentRequest{Amount: 990, IdempotentUUID: "u-lan", CartID: "order-1"})
			if err != nil || !tx.Approved() {
				t.Fatalf("payment over the LAN: %+v %v", tx, err)
			}
			viaCloud := paid(t, c, cl, "SN-L", "u-cloud", 450)
			all, err := ws.BatchAll(ctx, cloudapi.BatchRequest{SerialNumbers: []string{"SN-L"}}, time.Now().Add(time.Minute))
			if err != nil || len(all) != 2 {
				t.Fatalf("the company's list: %+v %v", all, err)
			}
			var listed cloudapi.HistoryEntry
			for _, e := range all {
				if e.CartID == "order-1" {
					listed = e
				}
			}
			if listed.Amount != 990 || listed.Status != "ok" || listed.CurrencyCode != "EUR" || listed.SerialNumber != "SN-L" {
				t.Fatalf("the LAN payment as listed %+v", listed)
			}
			if (mode == cloudsim.LANIDsTerminal) != (listed.TransactionID == tx.TransactionID) {
				t.Fatalf("mode %s: listed as %s, the terminal said %s", mode, listed.TransactionID, tx.TransactionID)
			}
			byTerminalID, err := ws.Details(ctx, tx.TransactionID)
			var he *cloudapi.HTTPError
			switch mode {
			case cloudsim.LANIDsCloud:
				if !errors.As(err, &he) || he.Status != 404 {
					t.Fatalf("fetched by the terminal's id: %+v %v, want 404", byTerminalID, err)
				}
			default:
				if err != nil || byTerminalID.AskedAmount != 990 || byTerminalID.TransactionID != listed.TransactionID {
					t.Fatalf("fetched by the terminal's id: %+v %v", byTerminalID, err)
				}
			}
			if d, err := ws.Details(ctx, listed.TransactionID); err != nil || d.AskedAmount != 990 {
				t.Fatalf("fetched by the cloud's id: %+v %v", d, err)
			}
			var mine, lanMade int
			for _, x := range c.Transactions() {
				switch {
				case x.TransactionID == viaCloud:
					mine++
				case x.Via == cloudsim.ViaTerminal && x.LocalID == tx.TransactionID:
					lanMade++
				}
			}
			if mine != 1 || lanMade != 1 {
				t.Fatalf("the cloud's payment listed %d times, the LAN's %d", mine, lanMade)
			}
		})
	}
}

// The provider's record may lag: a transaction made over the LAN stays
// hidden from the next reads of the Webservices, then shows.
func TestTheProvidersRecordLags(t *testing.T) {
	c, _, ws, lan := lanCloud(t)
	ctx := ctxT(t)
	if err := c.SetRecordLag(2); err != nil {
		t.Fatal(err)
	}
	if err := c.SetLANIDs(cloudsim.LANIDsTerminal); err != nil {
		t.Fatal(err)
	}
	tx, err := lan.Payment(ctx, &localapi.PaymentRequest{Amount: 700, IdempotentUUID: "u-lag", CartID: "order-lag"})
	if err != nil || !tx.Approved() {
		t.Fatal(tx, err)
	}
	for read := 1; read <= 2; read++ {
		if _, err := ws.Details(ctx, tx.TransactionID); err == nil {
			t.Fatalf("read %d shows a transaction the record still hides", read)
		}
	}
	if d, err := ws.Details(ctx, tx.TransactionID); err != nil || d.AskedAmount != 700 {
		t.Fatalf("third read: %+v %v", d, err)
	}
	if err := c.SetRecordLag(-1); err == nil {
		t.Fatal("a negative lag was taken")
	}
}

// A reversal the cloud asked for is the cloud's; one made over the LAN
// joins the company's transactions, naming the debit it reverses.
func TestReversalsOfATerminalReachedBothWays(t *testing.T) {
	c, cl, ws, lan := lanCloud(t)
	ctx := ctxT(t)
	viaCloud := paid(t, c, cl, "SN-L", "u-c", 300)
	done := make(chan error, 1)
	go func() {
		_, err := cl.Reversal(ctx, body(t, map[string]any{"amount": 300, "initialTransactionId": viaCloud}))
		done <- err
	}()
	sim, _ := c.Terminal("SN-L")
	if err := sim.WaitFor(ctx, func(s terminalsim.State) bool { return len(sim.Ledger()) == 2 }); err != nil {
		t.Fatal(err)
	}
	// Made on the terminal, not answered yet: still the cloud's own.
	for _, x := range c.Transactions() {
		if x.Via == cloudsim.ViaTerminal {
			t.Fatalf("the cloud's reversal listed as the terminal's own: %+v", x)
		}
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	tx, err := lan.Payment(ctx, &localapi.PaymentRequest{Amount: 500, IdempotentUUID: "u-l", CartID: "order-r"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lan.Reversal(ctx, &localapi.ReversalRequest{Amount: 500, InitialTransactionID: tx.TransactionID}); err != nil {
		t.Fatal(err)
	}
	all, err := ws.BatchAll(ctx, cloudapi.BatchRequest{}, time.Now().Add(time.Minute))
	if err != nil || len(all) != 4 {
		t.Fatalf("the company's list %+v %v: want two debits and two reversals", all, err)
	}
	var lanDebit, lanRev *cloudsim.Transaction
	txs := c.Transactions()
	for i := range txs {
		switch x := &txs[i]; {
		case x.Via == cloudsim.ViaTerminal && x.TransactionType == "debit":
			lanDebit = x
		case x.Via == cloudsim.ViaTerminal && x.TransactionType == "reversal":
			lanRev = x
		}
	}
	if lanDebit == nil || lanRev == nil || lanRev.Initial != lanDebit.TransactionID || lanRev.CartID != "order-r" || lanRev.Amount != 500 {
		t.Fatalf("the LAN's debit %+v and reversal %+v", lanDebit, lanRev)
	}
}

// The LAN can be cut and mended on the same address: cut, a request is
// refused before it leaves and one in flight is dropped; the cloud still
// reaches the terminal.
func TestTheLANIsCutAndMended(t *testing.T) {
	c, cl, _, lan := lanCloud(t)
	ctx := ctxT(t)
	if _, err := lan.Ping(ctx, false); err != nil {
		t.Fatal(err)
	}
	sim, _ := c.Terminal("SN-L")
	sim.Script(terminalsim.Hold())
	done := make(chan error, 1)
	go func() {
		_, err := lan.Payment(ctx, &localapi.PaymentRequest{Amount: 100, IdempotentUUID: "u-held"})
		done <- err
	}()
	if err := sim.WaitPhase(ctx, "u-held", terminalsim.PhaseBanking); err != nil {
		t.Fatal(err)
	}
	if err := c.SetLAN("SN-L", false); err != nil {
		t.Fatal(err)
	}
	var te *localapi.TransportError
	if err := <-done; !errors.As(err, &te) || !te.Sent {
		t.Fatalf("the request in flight: %v, want a transport error after it was sent", err)
	}
	if _, err := lan.Ping(ctx, false); !errors.As(err, &te) || te.Sent {
		t.Fatalf("ping over a cut LAN: %v, want refused before it left", err)
	}
	if err := sim.PresentCard(); err != nil {
		t.Fatal(err)
	}
	paid(t, c, cl, "SN-L", "u-cloud-while-cut", 200)
	if err := c.SetLAN("SN-L", true); err != nil {
		t.Fatal(err)
	}
	tx, err := lan.Payment(ctx, &localapi.PaymentRequest{Amount: 100, IdempotentUUID: "u-held"})
	if err != nil || !tx.Approved() {
		t.Fatalf("the same payment asked again once the LAN is back: %+v %v", tx, err)
	}
	if n := len(sim.ChargesFor("u-held")); n != 1 {
		t.Fatalf("%d charges for the held payment", n)
	}
}
