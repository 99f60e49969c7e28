package hub

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/comptoir-pos/comptoir/backend/internal/testenv"
	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/site"
)

// msg is a message of head office's streams, as the ledger reads it.
type msg struct {
	jetstream.Msg
	subject string
	header  nats.Header
	data    []byte
}

func (m msg) Subject() string      { return m.subject }
func (m msg) Headers() nats.Header { return m.header }
func (m msg) Data() []byte         { return m.data }

// outboxMsg is a fact as a kiosk's publisher sends it, forwarded to head
// office: its kiosk in a header and its outbox row's id.
func outboxMsg(r, kiosk, kind, id string, body any) msg {
	m := factMsg(site.HQ{Restaurant: r}.Fact(kiosk, kind), kiosk, body)
	m.Header.Set(jetstream.MsgIDHeader, id)
	return msg{subject: m.Subject, header: m.Header, data: m.Data}
}

// archivePartMsg is an archive's part whose part header is part.
func archivePartMsg(r, kiosk, part string) msg {
	m := outboxMsg(r, kiosk, site.KindArchivePart, "archive-x", nil)
	m.header.Set(site.HeaderArchivePart, part)
	return m
}

// The ledger counts only what reads as a kiosk's outbox fact: the fact
// its subject names, with the kiosk in its header and the id the outbox
// gave it (a UUID), each id once. Anything else on a restaurant's
// subjects (an answer, an acknowledgement, a body of another kind, a
// copy under another id) is counted as ignored and in nothing else.
func TestTheLedgerBelievesOnlyOutboxFacts(t *testing.T) {
	l := &Ledger{kiosks: map[string]*KioskView{}, sales: map[SalesRow]int64{}, totals: map[string]*Totals{},
		seen: map[string]bool{}, paid: map[string]bool{}, aside: map[string]bool{}, gifts: map[string]bool{},
		warned: map[string]bool{}, kinds: map[string]uint64{}, assembling: map[string]*assembly{}, log: testLog(t)}
	now := time.Now().UnixMilli()
	aside := journal.OrderFact{OrderID: "A-1", To: journal.OrderNeedsAttention, Total: 500, At: now}
	paid := journal.OrderFact{OrderID: "A-2", To: journal.OrderPaid, Total: 700, Paid: 700, At: now,
		Data: json.RawMessage(`{"dining":"eat_in","lines":[{"qty":1,"total":700,"vatRate":1000}]}`)}
	asideID, paidID := uuid.NewString(), uuid.NewString()
	good := []msg{
		outboxMsg("r2", "A", journal.OutboxAttention, asideID, aside),
		outboxMsg("r2", "A", journal.OutboxPaid, paidID, paid),
		outboxMsg("r2", "A", journal.OutboxGiveBack, uuid.NewString(),
			journal.GiveBackFact{OrderID: "A-2", Attempt: uuid.NewString(), Amount: 200, At: now}),
	}
	for _, m := range good {
		l.fact(m)
	}
	want := Totals{Orders: 1, Paid: 700, GivenBack: 200, Attention: 1}
	if got := *l.Dashboard().Totals["r2"]; got != want {
		t.Fatalf("the kiosk's own facts: %+v, want %+v", got, want)
	}

	ack := msg{subject: site.HQ{Restaurant: "r2"}.Fact("A", journal.OutboxAttention), header: nats.Header{},
		data: []byte(`{"stream":"HQ","domain":"hub","seq":7}`)}
	menu := msg{subject: site.HQ{Restaurant: "r2"}.Fact("ghost", journal.OutboxPaid), header: nats.Header{},
		data: []byte(`{"version":3,"catalog":{"x":1}}`)}
	noKiosk := outboxMsg("r2", "A", journal.OutboxAttention, uuid.NewString(), journal.OrderFact{OrderID: "A-9", To: journal.OrderNeedsAttention, At: now})
	noKiosk.header.Del(site.HeaderKiosk)
	otherKiosk := outboxMsg("r2", "A", journal.OutboxAttention, uuid.NewString(), journal.OrderFact{OrderID: "A-9", To: journal.OrderNeedsAttention, At: now})
	otherKiosk.header.Set(site.HeaderKiosk, "B")
	noID := outboxMsg("r2", "A", journal.OutboxAttention, "", journal.OrderFact{OrderID: "A-9", To: journal.OrderNeedsAttention, At: now})
	noID.header.Del(jetstream.MsgIDHeader)
	bad := []msg{
		ack, menu, noKiosk, otherKiosk, noID,
		outboxMsg("r2", "A", journal.OutboxAttention, "r2-A-9", journal.OrderFact{OrderID: "A-9", To: journal.OrderNeedsAttention, At: now}),
		// The body of another kind, or of none.
		outboxMsg("r2", "A", journal.OutboxAttention, uuid.NewString(), paid),
		outboxMsg("r2", "A", journal.OutboxPaid, uuid.NewString(), journal.OrderFact{To: journal.OrderPaid, Paid: 9, At: now}),
		outboxMsg("r2", "A", journal.OutboxPaid, uuid.NewString(), journal.OrderFact{OrderID: "A-3", To: journal.OrderPaid, Paid: -900, At: now}),
		outboxMsg("r2", "A", journal.OutboxGiveBack, uuid.NewString(), journal.GiveBackFact{OrderID: "A-2", At: now, Amount: 5}),
		outboxMsg("r2", "A", journal.OutboxClosing, uuid.NewString(), journal.FiscalFact{Kind: journal.FiscalArchive, Seq: 1}),
		outboxMsg("r2", "A", "order.refunded", uuid.NewString(), paid),
		archivePartMsg("r2", "A", "x/2"),
		archivePartMsg("r2", "A", "y/2"),
	}
	for _, m := range bad {
		l.fact(m)
	}
	// The same facts again, under their ids: past the stream's window.
	for _, m := range good[:2] {
		l.fact(m)
	}
	// The same order set aside again, under another id: one order.
	l.fact(outboxMsg("r2", "A", journal.OutboxAttention, uuid.NewString(), aside))
	want.Ignored = len(bad)
	d := l.Dashboard()
	if got := *d.Totals["r2"]; got != want {
		t.Errorf("after what is no fact: %+v, want %+v", got, want)
	}
	if d.Facts != 4 || d.FactsByKind[journal.OutboxAttention] != 2 || d.FactsByKind["order.refunded"] != 0 {
		t.Errorf("facts folded: %d %v", d.Facts, d.FactsByKind)
	}
	if len(d.Kiosks) != 1 || d.Kiosks[0].Kiosk != "A" {
		t.Errorf("kiosks: %+v", d.Kiosks)
	}
	// Said once per reason, whatever the messages carry.
	if len(l.warned) != 6 {
		t.Errorf("said in the log: %v", l.warned)
	}

	// A heartbeat is believed only for the kiosk and restaurant of its
	// subject.
	beat := func(subjectKiosk string, p site.Presence) msg {
		data, _ := json.Marshal(p)
		return msg{subject: site.HQ{Restaurant: "r2"}.Presence(subjectKiosk), data: data}
	}
	l.presence(beat("A", site.Presence{Kiosk: "A", Restaurant: "r2", At: now, Terminal: "connected"}))
	l.presence(beat("A", site.Presence{}))
	l.presence(beat("A", site.Presence{Kiosk: "B", Restaurant: "r2", At: now, Terminal: "forged"}))
	l.presence(beat("ghost", site.Presence{Kiosk: "A", Restaurant: "r2", At: now}))
	d = l.Dashboard()
	if len(d.Kiosks) != 1 || d.Kiosks[0].Terminal != "connected" || !d.Kiosks[0].Online {
		t.Errorf("kiosks after heartbeats: %+v", d.Kiosks)
	}
}

// r1 makes head office's JetStream acknowledge its messages into r2's
// facts and heartbeats, and sends into its own subjects what no kiosk
// sends: neither restaurant's figures move, no kiosk appears, and what
// head office ignored is counted.
func TestARestaurantCannotMoveAnothersFigures(t *testing.T) {
	h := newHub(t)
	r1, r2 := h.join("r1", passwords["r1"]), h.join("r2", passwords["r2"])
	testenv.Eventually(t, "both joined", func() bool { return h.hub.Leaves() == 2 })
	r2.paid(t, "A", "o1", 700)
	testenv.Eventually(t, "r2's sale", func() bool {
		d := h.hub.Ledger.Dashboard()
		return d.Totals["r2"] != nil && d.Totals["r2"].Paid == 700
	})
	hq1, hq2 := site.HQ{Restaurant: "r1"}, site.HQ{Restaurant: "r2"}
	send := func(m *nats.Msg) {
		t.Helper()
		if err := r1.nc.PublishMsg(m); err != nil {
			t.Fatal(err)
		}
	}
	for i, reply := range []string{hq2.Fact("A", journal.OutboxAttention), hq2.Fact("ghost", journal.OutboxPaid), hq2.Presence("A"), hq2.Presence("ghost")} {
		m := nats.NewMsg(hq1.Fact("Z", journal.OutboxCancelled))
		m.Data, m.Reply = []byte(`{}`), reply
		m.Header.Set(jetstream.MsgIDHeader, fmt.Sprintf("r1-%d", i))
		send(m)
	}
	for i := range 5 {
		m := factMsg(hq1.Fact("A", journal.OutboxAttention), "A", journal.OrderFact{OrderID: "x", To: journal.OrderNeedsAttention, At: 1})
		m.Header.Set(jetstream.MsgIDHeader, fmt.Sprintf("not-an-outbox-id-%d", i))
		send(m)
	}
	// r1's own sale, over the same connection after the rest: once it is
	// folded, so is what came before it.
	r1.paid(t, "A", "o1", 100)
	testenv.Eventually(t, "r1's sale", func() bool {
		tot := h.hub.Ledger.Dashboard().Totals["r1"]
		return tot != nil && tot.Orders == 1
	})
	time.Sleep(200 * time.Millisecond)
	d := h.hub.Ledger.Dashboard()
	if got, want := *d.Totals["r2"], (Totals{Orders: 1, Paid: 700, Ignored: 4}); got != want {
		t.Errorf("r2's figures: %+v, want %+v", got, want)
	}
	if got, want := *d.Totals["r1"], (Totals{Orders: 1, Paid: 100, Ignored: 9}); got != want {
		t.Errorf("r1's figures: %+v, want %+v", got, want)
	}
	rec := httptest.NewRecorder()
	Handler(h.hub).ServeHTTP(rec, httptest.NewRequest("GET", "http://localhost/", nil))
	if !strings.Contains(rec.Body.String(), `<td>r2</td><td>1</td><td>7.00</td><td>0.00</td><td>0</td><td class="warn"`) {
		t.Errorf("head office's page does not show what it ignored:\n%s", rec.Body)
	}
	for _, k := range d.Kiosks {
		if k.Kiosk != "A" {
			t.Errorf("a kiosk that never was: %+v", k)
		}
	}
}
