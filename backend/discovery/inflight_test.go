package discovery

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/internal/testenv"
	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/payment"
	"github.com/comptoir-pos/comptoir/backend/terminalsim"
	"github.com/grandcat/zeroconf"
)

// serveAt serves the terminal's handler on a new loopback port (on HTTPS
// with cert, when given) and advertises it there; stop ends both, dropping
// open connections, as a terminal whose address changes does.
func serveAt(t *testing.T, sim *terminalsim.Terminal, instance string, cert *tls.Certificate) (port int, stop func()) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if cert != nil {
		ln = tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{*cert}, MinVersion: tls.VersionTLS12})
	}
	srv := &http.Server{Handler: sim.Handler()}
	go srv.Serve(ln)
	port = ln.Addr().(*net.TCPAddr).Port
	adv, err := zeroconf.RegisterProxy(instance, DefaultServiceType, DefaultDomain, port, "moving-"+strings.ToLower(tag()),
		[]string{"127.0.0.1"}, []string{"path=/localapi/v4"}, []net.Interface{testenv.Loopback(t)})
	if err != nil {
		t.Fatal(err)
	}
	stop = func() { adv.Shutdown(); srv.Close() }
	t.Cleanup(stop)
	return port, stop
}

// inFlight starts a payment of order on a simulated terminal served as
// name (on HTTPS with cert, when given), found by a Tracker held by the
// journal, and waits until the terminal waits for the card.
type inFlight struct {
	sim   *terminalsim.Terminal
	tr    *Tracker
	db    *journal.DB
	h     *payment.Handle
	stopA func()
	first string
}

func startInFlight(t *testing.T, ctx context.Context, name string, cert *tls.Certificate, lim payment.Limits) inFlight {
	t.Helper()
	sim, err := terminalsim.New(terminalsim.Config{TimeScale: 0.001, NoTestAmounts: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sim.Close() })
	_, stopA := serveAt(t, sim, name, cert)

	db := testenv.Journal(t, "")
	opts := loOptions(t, strings.TrimPrefix(name, "Yavin "))
	opts.Window = time.Second
	tr := newTracker(t, Config{Browse: opts, Held: HeldWhileOpen(db.OpenTerminals), ResolveInterval: 50 * time.Millisecond, SearchInterval: 100 * time.Millisecond}, nil)
	testenv.Eventually(t, "connected", func() bool { return tr.Status().State == StateConnected })

	o, err := payment.New(payment.Config{Journal: db, Terminal: tr, TerminalID: "mdns:" + name, Limits: lim})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { o.Close() })
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
	return inFlight{sim: sim, tr: tr, db: db, h: h, stopA: stopA, first: tr.Status().Address}
}

// The terminal moves to another address in the middle of a payment, with
// the certificate it was adopted with: that proves it is the same device,
// so the orchestrator's resend goes through the Tracker to the new address
// with the same uuid, attaches to the payment still in progress, and there
// is one charge.
func TestInFlightPaymentFollowsTheTerminal(t *testing.T) {
	needMulticast(t)
	ctx := ctxFor(t, 60*time.Second)
	name := "Yavin Moving " + tag()
	cert := selfSignedCert(t)
	lim := payment.DefaultLimits
	lim.KioskTimeout, lim.ResendPause = 500*time.Millisecond, 50*time.Millisecond
	f := startInFlight(t, ctx, name, cert, lim)
	sim, tr, db, h, first := f.sim, f.tr, f.db, f.h, f.first
	if !strings.HasPrefix(first, "https://") || tr.Identity().Pin == "" {
		t.Fatalf("adopted at %s with identity %+v: want HTTPS, pinned on first use", first, tr.Identity())
	}

	f.stopA() // DHCP: the terminal is now elsewhere
	serveAt(t, sim, name, cert)
	testenv.Eventually(t, "a resend attached at the new address", func() bool {
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

// The real terminal drops off in the middle of a payment and a rogue device
// announces the same name from another address and would approve: the
// attempt is never sent to it, and the order is not paid.
func TestInFlightPaymentIsNeverSentToARogue(t *testing.T) {
	needMulticast(t)
	ctx := ctxFor(t, 60*time.Second)
	name := "Yavin Rogue " + tag()
	lim := payment.DefaultLimits
	lim.KioskTimeout, lim.ResendPause, lim.RequestOpen = 500*time.Millisecond, 50*time.Millisecond, 12*time.Second
	lim.SettleAfter, lim.HistorySkew = time.Millisecond, time.Millisecond
	f := startInFlight(t, ctx, name, nil, lim)

	rogue := newSim(t, name)
	advertiseSim(t, rogue)
	f.stopA() // the real terminal drops off the network
	testenv.Eventually(t, "the rogue heard and held for staff", func() bool {
		p := f.tr.Status().Pending
		return p != nil && p.Address == rogue.URL() && p.Standing == StandingNewAddress
	})
	select {
	case <-f.h.Done():
		t.Fatal("the attempt ended before the rogue was heard: nothing was proven")
	default:
	}
	select {
	case <-f.h.Done():
	case <-ctx.Done():
		t.Fatalf("the payment never ended: %+v", f.h.View())
	}
	if v := f.h.View(); v.State == journal.StateApproved {
		t.Fatalf("approved: %+v", v)
	}
	if got := rogue.Ledger(); len(got) != 0 {
		t.Fatalf("the rogue took a request: %+v", got)
	}
	if o, err := f.db.Order(ctx, "M1"); err != nil || o.Status == journal.OrderPaid {
		t.Fatalf("order %+v, %v", o, err)
	}
	if s := f.tr.Status(); s.State != StateUnreachable || s.Address != f.first {
		t.Errorf("status %+v: the tracker moved off the adopted address", s)
	}
}
