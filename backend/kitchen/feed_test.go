package kitchen

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/comptoir-pos/comptoir/backend/internal/testenv"
	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/site"
)

// pay journals an order of a burger and a cola, paid.
func pay(t testing.TB, db *journal.DB, id, number string) {
	data := fmt.Sprintf(`{"number":%q,"dining":"eat_in","lines":[{"productId":"burger","name":{"fr":"Burger"},"qty":1},{"productId":"cola","name":{"fr":"Cola"},"qty":2}]}`, number)
	testenv.PaidOrder(t, db, journal.Order{ID: id, Total: 900, Data: []byte(data)})
}

// rig is a restaurant on loopback: its site server, one kiosk's journal
// and publisher.
type rig struct {
	t    testing.TB
	dir  string
	addr string
	srv  *site.Server
	db   *journal.DB
	subj site.Subjects
}

// siteRig is the restaurant's site server on loopback with its streams,
// and a connection of its own to it: a rig without a kiosk yet.
func siteRig(t testing.TB) (*rig, jetstream.JetStream) {
	t.Helper()
	r := &rig{t: t, dir: t.TempDir(), addr: testenv.FreeAddr(t)}
	r.subj, _ = site.NewSubjects("r1")
	js := r.up()
	t.Cleanup(func() { r.srv.Close() })
	return r, js
}

// up starts the site's server and makes its streams, as the site's
// owner; it returns a connection of its own to it, a kiosk's.
func (r *rig) up() jetstream.JetStream {
	r.start()
	own, err := r.srv.Conn("owner")
	if err != nil {
		r.t.Fatal(err)
	}
	defer own.Close()
	ojs, err := jetstream.New(own)
	if err != nil {
		r.t.Fatal(err)
	}
	if err := site.EnsureStreams(r.t.Context(), ojs, r.subj); err != nil {
		r.t.Fatal(err)
	}
	return r.js()
}

func newRig(t testing.TB) *rig {
	t.Helper()
	r, js := siteRig(t)
	db, err := journal.OpenMemory(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	r.db = db
	t.Cleanup(func() { r.db.Close() })
	p, err := site.NewPublisher(site.PublisherConfig{Outbox: r.db, JS: js, Subjects: r.subj, Kiosk: "A", AckWait: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); p.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return r
}

func (r *rig) start() {
	srv, err := site.StartServer(site.ServerConfig{Name: "site", Domain: "r1", StoreDir: r.dir, Listen: r.addr})
	if err != nil {
		r.t.Fatal(err)
	}
	r.srv = srv
}

// js is a connection of its own to the site, as another machine's.
func (r *rig) js() jetstream.JetStream {
	nc, err := site.Dial(site.DialConfig{URL: "nats://" + r.addr, Name: "test"})
	if err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		r.t.Fatal(err)
	}
	return js
}

func (r *rig) kitchen() *Kitchen {
	k, err := Start(Config{JS: r.js(), Subjects: r.subj, Stations: stations, Category: category,
		Since: time.Now().Add(-time.Hour)})
	if err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(k.Close)
	return k
}

func numbers(ts []Ticket) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Number)
	}
	return out
}

// Two screens follow the stream: every paid order appears on both, in
// order; a bump on one shows on the other; with the site's server down
// the kiosk's orders wait in its journal, and once it is back both screens
// catch up, each order once; a screen started afterwards replays the same
// view.
func TestScreensAgreeAndCatchUp(t *testing.T) {
	r := newRig(t)
	grill, expo := r.kitchen(), r.kitchen()
	for i := 1; i <= 3; i++ {
		pay(t, r.db, fmt.Sprintf("o%d", i), fmt.Sprintf("A%d", i))
	}
	for _, k := range []*Kitchen{grill, expo} {
		testenv.Eventually(t, "three tickets on a screen", func() bool { return len(k.Orders("").Orders) == 3 })
		if got := numbers(k.Orders("").Orders); !slices.Equal(got, []string{"A1", "A2", "A3"}) {
			t.Fatalf("tickets %v", got)
		}
	}
	if err := grill.Bump(t.Context(), Bump{Key: "A/o1", Line: -1, Action: ActionReady, Station: "grill"}); err != nil {
		t.Fatal(err)
	}
	if g := grill.Orders("grill"); len(g.Orders) != 2 || len(g.Recent) != 1 {
		t.Fatalf("grill after its bump: %v, recent %v", numbers(g.Orders), numbers(g.Recent))
	}
	testenv.Eventually(t, "the grill's bump on the expeditor's screen", func() bool {
		o := expo.Orders("").Orders
		return len(o) == 3 && o[0].Lines[0].Ready && !o[0].Lines[1].Ready
	})
	r.srv.Close()
	testenv.Eventually(t, "the screens know the site is gone", func() bool { return !grill.Orders("").Online })
	pay(t, r.db, "o4", "A4")
	pay(t, r.db, "o5", "A5")
	r.start()
	for _, k := range []*Kitchen{grill, expo} {
		testenv.Eventually(t, "five tickets after the site came back", func() bool { return len(k.Orders("").Orders) == 5 })
		if got := numbers(k.Orders("").Orders); !slices.Equal(got, []string{"A1", "A2", "A3", "A4", "A5"}) {
			t.Fatalf("tickets after catching up %v", got)
		}
	}
	late := r.kitchen()
	testenv.Eventually(t, "a new screen replays the day", func() bool { return late.Board().Version == expo.Board().Version })
	if a, b := late.Orders(""), expo.Orders(""); fmt.Sprint(a.Orders) != fmt.Sprint(b.Orders) {
		t.Fatalf("screens disagree\n%+v\n%+v", a.Orders, b.Orders)
	}
}

// A bump names a ticket that is on the screen and one of its lines.
func TestBumpChecked(t *testing.T) {
	r := newRig(t)
	k := r.kitchen()
	pay(t, r.db, "o1", "A1")
	testenv.Eventually(t, "the ticket", func() bool { return len(k.Orders("").Orders) == 1 })
	for _, b := range []Bump{
		{Key: "A/nope", Line: -1, Action: ActionReady},
		{Key: "A/o1", Line: 2, Action: ActionReady},
		{Key: "A/o1", Line: -1, Action: "eat"},
		{Key: "A/o1", Line: -1, Action: ActionReady, Station: "dessert"},
	} {
		if err := k.Bump(t.Context(), b); err == nil {
			t.Errorf("bump %+v taken", b)
		}
	}
}
