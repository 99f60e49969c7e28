package discovery

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/payment"
	"github.com/comptoir-pos/comptoir/backend/terminalsim"
	"github.com/grandcat/zeroconf"
)

// serveAt serves the terminal's handler on a new loopback port and
// advertises it there; stop ends both, dropping open connections, as a
// terminal whose address changes does.
func serveAt(t *testing.T, sim *terminalsim.Terminal, instance string) (port int, stop func()) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: sim.Handler()}
	go srv.Serve(ln)
	port = ln.Addr().(*net.TCPAddr).Port
	adv, err := zeroconf.RegisterProxy(instance, DefaultServiceType, DefaultDomain, port, "moving-"+strings.ToLower(tag()),
		[]string{"127.0.0.1"}, []string{"path=/localapi/v4"}, []net.Interface{loopback(t)})
	if err != nil {
		t.Fatal(err)
	}
	stop = func() { adv.Shutdown(); srv.Close() }
	t.Cleanup(stop)
	return port, stop
}

// The terminal moves to another address in the middle of a payment: the
// orchestrator's resend goes through the Tracker to the new address with the
// same uuid, attaches to the payment still in progress, and there is one
// charge.
func TestInFlightPaymentFollowsTheTerminal(t *testing.T) {
	needMulticast(t)
	ctx := ctxFor(t, 60*time.Second)
	name := "Yavin Moving " + tag()
	sim, err := terminalsim.New(terminalsim.Config{TimeScale: 0.001, NoTestAmounts: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sim.Close() })
	_, stopA := serveAt(t, sim, name)

	opts := loOptions(t, strings.TrimPrefix(name, "Yavin "))
	opts.Window = time.Second
	tr := newTracker(t, Config{Browse: opts, ResolveInterval: 50 * time.Millisecond, SearchInterval: 100 * time.Millisecond}, nil)
	eventually(t, 15*time.Second, "connected", func() bool { return tr.Status().State == StateConnected })
	first := tr.Status().Address

	db, err := journal.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	lim := payment.DefaultLimits
	lim.KioskTimeout, lim.ResendPause = 500*time.Millisecond, 50*time.Millisecond
	o, err := payment.New(payment.Config{Journal: db, Terminal: tr, TerminalID: "mdns:" + name, Limits: lim})
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	if _, err := o.Recover(ctx); err != nil {
		t.Fatal(err)
	}
	if err := db.CreateOrder(ctx, journal.Order{ID: "M1", Currency: "EUR", Total: 1250}); err != nil {
		t.Fatal(err)
	}
	sim.Script(terminalsim.Hold())
	h, err := o.Start(ctx, payment.Request{OrderID: "M1", Amount: 1250, Policy: journal.PolicyKiosk})
	if err != nil {
		t.Fatal(err)
	}
	if err := sim.WaitPhase(ctx, h.UUID(), terminalsim.PhaseBanking); err != nil {
		t.Fatal(err)
	}

	stopA() // DHCP: the terminal is now elsewhere
	serveAt(t, sim, name)
	eventually(t, 30*time.Second, "a resend attached at the new address", func() bool {
		st := sim.State()
		return st.Current != nil && st.Current.Waiters > 0 && tr.Status().Address != first
	})
	if err := sim.PresentCard(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-h.Done():
	case <-ctx.Done():
		t.Fatalf("the payment never finished: %+v", h.View())
	}
	v := h.View()
	if v.State != journal.StateApproved || len(sim.ChargesFor(h.UUID())) != 1 || len(sim.Ledger()) != 1 {
		t.Fatalf("view %+v, ledger %+v", v, sim.Ledger())
	}
	if a, _ := db.Attempt(context.Background(), h.UUID()); a.SendCount < 2 {
		t.Errorf("%d sends: the payment did not go through the new address", a.SendCount)
	}
}
