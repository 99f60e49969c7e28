package site

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/comptoir-pos/comptoir/backend/internal/testenv"
	"github.com/comptoir-pos/comptoir/backend/journal"
)

// ownedSite is a restaurant's site on loopback with its streams and menu
// bucket made by its owner (this process), a menu in the bucket, and the
// owner's connection.
func ownedSite(t *testing.T, secret string) (srv *Server, addr string, own jetstream.JetStream, menu jetstream.KeyValue) {
	t.Helper()
	addr = testenv.FreeAddr(t)
	srv, err := StartServer(ServerConfig{Name: "site", Domain: "r1", StoreDir: t.TempDir(), Listen: addr, Secret: secret})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	nc, err := srv.Conn("owner")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	own, _ = kioskStreams(t, nc)
	if menu, err = siteMenu(t.Context(), own, true); err != nil {
		t.Fatal(err)
	}
	if _, err := menu.Put(t.Context(), siteMenuKey, []byte(`{"version":7,"catalog":{"name":"head office's"}}`)); err != nil {
		t.Fatal(err)
	}
	return srv, addr, own, menu
}

// A member of the site (a kiosk or a kitchen PC on the LAN, with the
// site's secret) does what a kiosk does: publishes its facts and
// heartbeats, follows the menu bucket, reads the stream through a
// consumer of its own.
func TestAMemberDoesWhatAKioskDoes(t *testing.T) {
	ctx := t.Context()
	_, addr, own, menu := ownedSite(t, "the-site-secret")
	nc, err := Dial(DialConfig{URL: "nats://" + addr, Secret: "the-site-secret", Name: "kiosk B"})
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js := jsOf(t, nc)
	subj, _ := NewSubjects("r1")

	db, err := journal.OpenMemory(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	pay(t, db, "B1", 900)
	p, err := NewPublisher(PublisherConfig{Outbox: db, JS: js, Subjects: subj, Kiosk: "B", AckWait: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, "the fact published", func() bool { n, err := p.Flush(ctx); return err == nil && n == 1 })

	pctx, stop := context.WithCancel(ctx)
	defer stop()
	go RunPresence(pctx, js, subj, time.Hour, func() Presence { return Presence{Kiosk: "B"} }, nil)
	testenv.Eventually(t, "the heartbeat kept", func() bool {
		m, err := own.Stream(ctx, StreamPresence)
		if err != nil {
			return false
		}
		_, err = m.GetLastMsgForSubject(ctx, subj.Presence("B"))
		return err == nil
	})

	var mu sync.Mutex
	var got []Menu
	fctx, stopFollow := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		FollowMenu(fctx, js, func(m Menu) error { mu.Lock(); got = append(got, m); mu.Unlock(); return nil }, slog.New(slog.DiscardHandler))
	}()
	defer func() { stopFollow(); <-done }()
	last := func() uint64 {
		mu.Lock()
		defer mu.Unlock()
		if len(got) == 0 {
			return 0
		}
		return got[len(got)-1].Version
	}
	testenv.Eventually(t, "the menu in force followed", func() bool { return last() == 7 })
	if _, err := menu.Put(ctx, siteMenuKey, []byte(`{"version":8,"catalog":{}}`)); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, "the next menu followed", func() bool { return last() == 8 })

	cons, err := js.OrderedConsumer(ctx, StreamOrders, jetstream.OrderedConsumerConfig{FilterSubjects: []string{subj.Facts()}})
	if err != nil {
		t.Fatal(err)
	}
	m, err := cons.Next(jetstream.FetchMaxWait(2 * time.Second))
	if err != nil || m.Subject() != subj.Fact("B", journal.OutboxPaid) {
		t.Fatalf("the stream read by a member: %v %v", m, err)
	}
}

// A member cannot write the menu every kiosk applies, nor make, change,
// purge or delete a stream or a bucket, nor touch head office's consumer,
// nor publish into head office's subjects or another client's inbox. What
// the site holds afterwards is what its owner made.
func TestAMemberCannotWriteTheMenuNorRunTheStreams(t *testing.T) {
	ctx := t.Context()
	srv, addr, own, menu := ownedSite(t, "the-site-secret")
	subj, _ := NewSubjects("r1")
	hqCons, err := own.CreateOrUpdateConsumer(ctx, StreamOrders, jetstream.ConsumerConfig{Durable: consumerHQ,
		FilterSubject: subj.Facts(), AckPolicy: jetstream.AckExplicitPolicy})
	if err != nil {
		t.Fatal(err)
	}
	ownNC, _ := srv.Conn("owner's watch")
	defer ownNC.Close()
	stray := make(chan *nats.Msg, 64)
	for _, s := range []string{"hq.>", "_INBOX.planted.>"} {
		sub, err := ownNC.ChanSubscribe(s, stray)
		if err != nil {
			t.Fatal(err)
		}
		defer sub.Unsubscribe()
	}
	ownNC.Flush()
	var said testenv.Buffer
	member := jsOf(t, dialSecret(t, addr, "the-site-secret", slog.New(slog.NewTextHandler(&said, nil))))
	pay := journal.OrderFact{OrderID: "B1", To: journal.OrderPaid, Paid: 900, At: 1}
	data, _ := json.Marshal(pay)
	if _, err := member.Publish(ctx, subj.Fact("B", journal.OutboxPaid), data); err != nil {
		t.Fatalf("a member's fact: %v", err)
	}

	var wg sync.WaitGroup
	rogue, _ := json.Marshal(Menu{Version: 1<<64 - 1, Catalog: json.RawMessage(`{"name":"rogue"}`)})
	for name, try := range map[string]func(ctx context.Context) error{
		"put the menu": func(ctx context.Context) error {
			kv, err := member.KeyValue(ctx, SiteMenuBucket)
			if err != nil {
				return err
			}
			_, err = kv.Put(ctx, siteMenuKey, rogue)
			return err
		},
		"publish on the bucket": func(ctx context.Context) error {
			_, err := member.Publish(ctx, "$KV."+SiteMenuBucket+"."+siteMenuKey, rogue)
			return err
		},
		"make the bucket again": func(ctx context.Context) error {
			_, err := member.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: SiteMenuBucket, History: 1})
			return err
		},
		"delete the bucket": func(ctx context.Context) error { return member.DeleteKeyValue(ctx, SiteMenuBucket) },
		"make a stream": func(ctx context.Context) error {
			_, err := member.CreateStream(ctx, jetstream.StreamConfig{Name: "MINE", Subjects: []string{"mine.>"}})
			return err
		},
		"change ORDERS": func(ctx context.Context) error {
			_, err := member.UpdateStream(ctx, jetstream.StreamConfig{Name: StreamOrders, Subjects: []string{subj.Facts()}, MaxMsgs: 1})
			return err
		},
		"purge ORDERS": func(ctx context.Context) error {
			s, err := member.Stream(ctx, StreamOrders)
			if err != nil {
				return err
			}
			return s.Purge(ctx)
		},
		"delete a fact": func(ctx context.Context) error {
			s, err := member.Stream(ctx, StreamOrders)
			if err != nil {
				return err
			}
			return s.DeleteMsg(ctx, 1)
		},
		"delete PRESENCE":               func(ctx context.Context) error { return member.DeleteStream(ctx, StreamPresence) },
		"delete head office's consumer": func(ctx context.Context) error { return member.DeleteConsumer(ctx, StreamOrders, consumerHQ) },
		"change head office's consumer": func(ctx context.Context) error {
			_, err := member.CreateOrUpdateConsumer(ctx, StreamOrders, jetstream.ConsumerConfig{Durable: consumerHQ, FilterSubject: subj.Fact("X", "none"), AckPolicy: jetstream.AckExplicitPolicy})
			return err
		},
		"name head office's consumer in the body": func(ctx context.Context) error {
			req, _ := json.Marshal(map[string]any{"stream_name": StreamOrders, "config": map[string]any{"name": consumerHQ, "ack_policy": "none"}})
			_, err := member.Conn().RequestWithContext(ctx, jsAPI+"CONSUMER.CREATE."+StreamOrders, req)
			return err
		},
		"take head office's facts": func(ctx context.Context) error {
			c, err := member.Consumer(ctx, StreamOrders, consumerHQ)
			if err != nil {
				return err
			}
			m, err := c.Next(jetstream.FetchMaxWait(time.Second))
			if err != nil {
				return err
			}
			return m.Ack()
		},
	} {
		wg.Go(func() {
			tctx, cancel := context.WithTimeout(ctx, time.Second)
			defer cancel()
			if err := try(tctx); err == nil {
				t.Errorf("a member could %s", name)
			}
		})
	}
	wg.Wait()
	nc := member.Conn()
	for _, s := range []string{"hq.r1.k.A.order.paid", "hq.r1.menu.get", "_INBOX.planted.x"} {
		_ = nc.Publish(s, []byte(`{}`))
	}
	nc.Flush()

	names := map[string]bool{}
	for n := range own.StreamNames(ctx).Name() {
		names[n] = true
	}
	if fmt.Sprint(names) != fmt.Sprint(map[string]bool{StreamOrders: true, StreamPresence: true, "KV_" + SiteMenuBucket: true}) {
		t.Errorf("the site's streams: %v", names)
	}
	if e, err := menu.Get(ctx, siteMenuKey); err != nil || e.Revision() != 1 || string(e.Value()) != `{"version":7,"catalog":{"name":"head office's"}}` {
		t.Errorf("the menu: %v %v", e, err)
	}
	if st, _ := own.Stream(ctx, StreamOrders); st == nil {
		t.Error("ORDERS gone")
	} else if info, _ := st.Info(ctx); info.State.Msgs != 1 || info.Config.MaxMsgs != -1 {
		t.Errorf("ORDERS: %+v %+v", info.State, info.Config)
	}
	if info, err := hqCons.Info(ctx); err != nil || info.Config.FilterSubject != subj.Facts() || info.NumPending != 1 || info.NumAckPending != 0 {
		t.Errorf("head office's consumer: %+v %v", info, err)
	}
	select {
	case m := <-stray:
		t.Errorf("a member published on %s", m.Subject)
	case <-time.After(200 * time.Millisecond):
	}
	// A member cannot listen to head office's subjects either.
	sub, _ := nc.SubscribeSync("hq.>")
	nc.Flush()
	_ = ownNC.Publish("hq.r1.menu.changed", nil)
	if m, err := sub.NextMsg(300 * time.Millisecond); err == nil {
		t.Errorf("a member heard %s", m.Subject)
	}
	// What the site refuses a kiosk is in the kiosk's log.
	testenv.Eventually(t, "the refusals in the member's log", func() bool {
		return strings.Contains(said.String(), "Permissions Violation for Publish to") && strings.Contains(said.String(), "$KV.SITE_MENU.current")
	})
}

func dialSecret(t *testing.T, addr, secret string, log *slog.Logger) *nats.Conn {
	t.Helper()
	nc, err := Dial(DialConfig{URL: "nats://" + addr, Secret: secret, Name: "member", Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	testenv.Eventually(t, "connected", nc.IsConnected)
	return nc
}

// The owner's password works in this process only, and a client that
// gives a user at all is not a member: it is the owner or nobody.
func TestTheOwnerIsThisProcessOnly(t *testing.T) {
	srv, addr, _, _ := ownedSite(t, "the-site-secret")
	owner := srv.user
	for name, opts := range map[string][]nats.Option{
		"the owner's credentials over the network": {nats.UserInfo(owner.Username, owner.Password)},
		"a user with the secret as password":       {nats.UserInfo("member", "the-site-secret")},
		"the secret and a user":                    {nats.Token("the-site-secret"), nats.UserInfo("x", "")},
		"a wrong secret":                           {nats.Token("the-site-secreT")},
		"nothing":                                  nil,
	} {
		nc, err := nats.Connect("nats://"+addr, append(opts, nats.Timeout(2*time.Second))...)
		if err == nil {
			nc.Close()
			t.Errorf("%s: connected", name)
		}
	}
}
