package site

import (
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/comptoir-pos/comptoir/backend/journal"
)

// A fact without an id (any member can publish one, and JetStream
// acknowledges onto whatever subject it is asked to) is dropped on its
// way to head office, not tried again and again ahead of the facts after
// it.
func TestAFactWithoutIDHoldsNothingBack(t *testing.T) {
	ctx := t.Context()
	srv, addr, _, _ := ownedSite(t, "")
	hq := HQ{Restaurant: "r1"}
	nc, err := srv.Conn("head office", nats.CustomInboxPrefix(hq.Inbox()))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js := jsOf(t, nc)
	// Head office's stream, on the site's own server for the test.
	hqStream, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: StreamHQ, Subjects: []string{"hq.*.k.>"}})
	if err != nil {
		t.Fatal(err)
	}
	member := jsOf(t, dialKiosk(t, addr))
	subj, _ := NewSubjects("r1")
	m := nats.NewMsg(subj.Fact("B", journal.OutboxPaid))
	m.Data, m.Reply = []byte(`{"orderId":"B-1"}`), ""
	if _, err := member.PublishMsg(ctx, m); err != nil {
		t.Fatal(err)
	}
	good := nats.NewMsg(subj.Fact("A", journal.OutboxPaid))
	good.Data = []byte(`{"orderId":"A-1"}`)
	if _, err := member.PublishMsg(ctx, good, jetstream.WithMsgID("0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b")); err != nil {
		t.Fatal(err)
	}
	fw, err := NewForwarder(nc, subj, nil)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := fw.Step(ctx, 16); err != nil {
			t.Fatalf("the forwarder stopped at: %v", err)
		}
	}
	if ci, err := fw.cons.Info(ctx); err != nil || ci.NumPending != 0 || ci.NumAckPending != 0 || ci.NumRedelivered != 0 {
		t.Fatalf("the site's consumer for head office: %+v %v", ci, err)
	}
	info, err := hqStream.Info(ctx)
	if err != nil || info.State.Msgs != 1 {
		t.Fatalf("head office's stream: %+v %v", info.State, err)
	}
	if got, _ := hqStream.GetMsg(ctx, 1); got.Subject != hq.Fact("A", journal.OutboxPaid) {
		t.Fatalf("forwarded %s", got.Subject)
	}
}
