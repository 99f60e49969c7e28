package hub

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/comptoir-pos/comptoir/backend/internal/testenv"
	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/site"
)

// Head office answers a restaurant's request for its menu only into that
// restaurant's own inbox: r1 naming a reply in r2's facts or heartbeats,
// in its own facts, or in another's inbox gets no answer there, while its request with its own
// inbox is answered.
func TestHeadOfficeAnswersOnlyIntoTheAsker(t *testing.T) {
	h := newHub(t)
	r1 := h.join("r1", passwords["r1"])
	testenv.Eventually(t, "joined", func() bool { return h.hub.Leaves() == 1 })
	if _, err := h.hub.Menus.Publish(t.Context(), "r1", []byte(`{"catalog":{"x":1}}`)); err != nil {
		t.Fatal(err)
	}
	stray := make(chan *nats.Msg, 64)
	for _, subject := range []string{"hq.r2.>", "hq.r1.k.>", "hq.r1.presence.>"} {
		sub, err := h.hub.nc.ChanSubscribe(subject, stray)
		if err != nil {
			t.Fatal(err)
		}
		defer sub.Unsubscribe()
	}
	if err := h.hub.nc.Flush(); err != nil {
		t.Fatal(err)
	}
	hq1, hq2 := site.HQ{Restaurant: "r1"}, site.HQ{Restaurant: "r2"}
	for _, reply := range []string{hq2.Fact("A", journal.OutboxAttention), hq1.Fact("A", journal.OutboxAttention),
		hq2.Presence("A"), hq2.Inbox() + ".x"} {
		m := nats.NewMsg(hq1.MenuGet())
		m.Reply = reply
		if err := r1.nc.PublishMsg(m); err != nil {
			t.Fatal(err)
		}
	}
	// Asked properly afterwards: answered, so the requests before it were
	// handled too (one subscription, in order).
	testenv.Eventually(t, "r1's own request answered", func() bool {
		reply, err := r1.nc.Request(hq1.MenuGet(), nil, 2*time.Second)
		var m site.Menu
		return err == nil && json.Unmarshal(reply.Data, &m) == nil && m.Version > 0
	})
	select {
	case m := <-stray:
		t.Fatalf("head office answered into %s: %s", m.Subject, m.Data)
	case <-time.After(500 * time.Millisecond):
	}
}
