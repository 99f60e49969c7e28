package kitchen

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/journal"
)

var t0 = time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)

func paidFact(order, number, dining string, lines ...string) []byte {
	type choice struct {
		Name map[string]string `json:"name"`
	}
	type line struct {
		ProductID string            `json:"productId"`
		Name      map[string]string `json:"name"`
		Qty       int               `json:"qty"`
		Choices   []choice          `json:"choices,omitempty"`
	}
	var ls []line
	for _, p := range lines {
		ls = append(ls, line{ProductID: p, Name: map[string]string{"fr": p + "-fr", "en": p}, Qty: 2,
			Choices: []choice{{Name: map[string]string{"fr": "sans oignon", "en": "no onion"}}}})
	}
	data, _ := json.Marshal(map[string]any{"number": number, "dining": dining, "lines": ls})
	f, _ := json.Marshal(journal.OrderFact{OrderID: order, To: journal.OrderPaid, At: t0.UnixMilli(), Data: data})
	return f
}

var stations = map[string][]string{"grill": {"burgers"}, "bar": {"drinks"}}

func category(p string) string {
	return map[string]string{"burger": "burgers", "cola": "drinks"}[p]
}

// A paid order is one ticket, whatever the stream repeats; each station
// sees its lines only and the expeditor all; a station's bump readies its
// lines only; the order is ready (on the board) once every line is; a
// recall puts it back; collected, it leaves the board.
func TestFoldStationsAndBoard(t *testing.T) {
	s := newState(category, "fr")
	seq := uint64(0)
	fact := func(kiosk, kind string, data []byte) bool { seq++; return s.applyFact(seq, kiosk, kind, data) }
	fact("A", journal.OutboxPaid, paidFact("o1", "A1", "eat_in", "burger", "cola"))
	fact("B", journal.OutboxPaid, paidFact("o1", "B1", "take_away", "burger"))
	if fact("A", journal.OutboxPaid, paidFact("o1", "A1", "eat_in", "burger", "cola")) {
		t.Fatal("a second payment fact made a second ticket")
	}
	expo := s.ordersView("", stations, t0)
	if len(expo.Orders) != 2 || expo.Orders[0].Number != "A1" || expo.Orders[1].Number != "B1" || len(expo.Orders[0].Lines) != 2 {
		t.Fatalf("expeditor %+v", expo.Orders)
	}
	if l := expo.Orders[0].Lines[0]; l.Choices[0] != "sans oignon" || l.Category != "burgers" || expo.Orders[0].Dining != "eat_in" {
		t.Fatalf("line %+v", l)
	}
	if ad := expo.AllDay; len(ad) != 2 || ad[0].Product != "burger" || ad[0].Qty != 4 || ad[1].Qty != 2 {
		t.Fatalf("all day %+v", ad)
	}
	bar := s.ordersView("bar", stations, t0)
	if len(bar.Orders) != 1 || len(bar.Orders[0].Lines) != 1 || bar.Orders[0].Lines[0].Product != "cola" {
		t.Fatalf("bar %+v", bar.Orders)
	}
	s.applyBump(Bump{Key: "A/o1", Line: -1, Action: ActionReady, Station: "grill", At: t0.UnixMilli()}, stations)
	if b := s.boardView(t0, time.Minute); len(b.Preparing) != 2 || len(b.Ready) != 0 {
		t.Fatalf("board after the grill's part %+v", b)
	}
	if g := s.ordersView("grill", stations, t0); len(g.Orders) != 1 || g.Orders[0].Number != "B1" || len(g.Recent) != 1 {
		t.Fatalf("grill after its bump %+v", g)
	}
	s.applyBump(Bump{Key: "A/o1", Line: 1, Action: ActionReady, Station: "bar", At: t0.UnixMilli() + 1}, stations)
	if b := s.boardView(t0, time.Minute); len(b.Preparing) != 1 || len(b.Ready) != 1 || b.Ready[0] != "A1" {
		t.Fatalf("board once every line is ready %+v", b)
	}
	s.applyBump(Bump{Key: "A/o1", Line: 0, Action: ActionRecall, Station: "grill", At: t0.UnixMilli() + 2}, stations)
	if b := s.boardView(t0, time.Minute); len(b.Ready) != 0 || len(b.Preparing) != 2 {
		t.Fatalf("board after a recall %+v", b)
	}
	s.applyBump(Bump{Key: "A/o1", Line: -1, Action: ActionReady, At: t0.UnixMilli() + 3}, stations)
	if b := s.boardView(t0.Add(59*time.Second), time.Minute); len(b.Ready) != 1 {
		t.Fatalf("board before the time %+v", b)
	}
	if b := s.boardView(t0.Add(61*time.Second), time.Minute); len(b.Ready) != 0 {
		t.Fatalf("a ready number stayed past its time %+v", b)
	}
	s.applyBump(Bump{Key: "A/o1", Line: -1, Action: ActionCollect, At: t0.UnixMilli() + 4}, stations)
	if b := s.boardView(t0, time.Minute); len(b.Ready) != 0 || len(b.Preparing) != 1 {
		t.Fatalf("board after collection %+v", b)
	}
}

// An order cancelled or refunded after it reached the kitchen stays,
// struck through, out of the all-day count and off the board; one the
// kitchen never had is no ticket.
func TestFoldVoid(t *testing.T) {
	s := newState(category, "fr")
	s.applyFact(1, "A", journal.OutboxPaid, paidFact("o1", "A1", "", "burger"))
	gb, _ := json.Marshal(journal.GiveBackFact{OrderID: "o1", Amount: 100})
	if !s.applyFact(2, "A", journal.OutboxGiveBack, gb) {
		t.Fatal("a refund did not void the ticket")
	}
	if s.applyFact(3, "A", journal.OutboxCancelled, []byte(`{"orderId":"o9"}`)) {
		t.Fatal("a cancelled order the kitchen never had changed the view")
	}
	v := s.ordersView("", stations, t0)
	if len(v.Orders) != 1 || v.Orders[0].Void != "refunded" || len(v.AllDay) != 0 {
		t.Fatalf("view %+v", v)
	}
	if b := s.boardView(t0, time.Minute); len(b.Preparing) != 0 {
		t.Fatalf("a refunded order on the board %+v", b)
	}
}

// What the stream says is checked: a fact that does not parse is no
// ticket, and a ticket holds at most maxLines lines.
func TestFoldBounded(t *testing.T) {
	s := newState(nil, "fr")
	if s.applyFact(1, "A", journal.OutboxPaid, []byte(`{"orderId":`)) {
		t.Fatal("a broken fact made a ticket")
	}
	many := make([]string, maxLines+50)
	for i := range many {
		many[i] = fmt.Sprintf("p%d", i)
	}
	s.applyFact(2, "A", journal.OutboxPaid, paidFact("o1", "A1", "", many...))
	if n := len(s.tickets["A/o1"].Lines); n != maxLines {
		t.Fatalf("%d lines kept", n)
	}
}
