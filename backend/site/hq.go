package site

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Head office's subjects for a restaurant R: everything R sends or
// receives there is under hq.R., so that one permission per restaurant
// ("hq.R.>", both ways) keeps each to its own.
//
//	hq.R.k.<kiosk>.<kind>   a kiosk's fact, copied from the site's stream
//	hq.R.presence.<kiosk>   a kiosk's heartbeat
//	hq.R.menu.get           a request: the menu head office holds for R
//	hq.R.menu.changed       head office published a menu for R
//	hq.R.inbox.>            replies to R (its connection's inbox prefix)
type HQ struct{ Restaurant string }

func (h HQ) root() string { return "hq." + h.Restaurant }

// Fact is the subject of a kiosk's fact at head office.
func (h HQ) Fact(kiosk, kind string) string { return h.root() + ".k." + kiosk + "." + kind }

// Presence is the subject of a kiosk's heartbeat at head office.
func (h HQ) Presence(kiosk string) string { return h.root() + ".presence." + kiosk }

// MenuGet is where a restaurant asks for its menu.
func (h HQ) MenuGet() string { return h.root() + ".menu.get" }

// MenuChanged is where head office says a restaurant's menu changed.
func (h HQ) MenuChanged() string { return h.root() + ".menu.changed" }

// Inbox is the inbox prefix of a restaurant's connection.
func (h HQ) Inbox() string { return h.root() + ".inbox" }

// InInbox reports whether subject is a reply subject of the restaurant's
// own connection (under Inbox): the only place head office answers it.
func (h HQ) InInbox(subject string) bool {
	rest, ok := strings.CutPrefix(subject, h.Inbox()+".")
	return ok && rest != "" && !strings.ContainsAny(subject, "*> \t")
}

// All is what a restaurant may send and receive at head office.
func (h HQ) All() string { return h.root() + ".>" }

// HQ stream names at head office.
const (
	StreamHQ         = "HQ"
	StreamHQPresence = "HQ_PRESENCE"
	consumerHQ       = "hq"
)

// Forwarder copies the site's facts to head office over the leaf
// connection: a durable consumer of the site's stream, each message sent
// on with its Nats-Msg-Id and acknowledged at the site only once head
// office's stream has it. While head office is unreachable the messages
// wait in the site's stream (store and forward) and go, in order, when it
// is back; head office's stream drops a copy sent twice.
type Forwarder struct {
	js   jetstream.JetStream // the site's, on a connection whose inbox is hq.R.inbox
	nc   *nats.Conn
	subj Subjects
	hq   HQ
	log  *slog.Logger
	cons jetstream.Consumer
	// stray counts the messages dropped for want of an id.
	stray atomic.Int64
}

// NewForwarder runs on the site's own server (the connection nc), with
// the restaurant's inbox prefix (HQ.Inbox) so that replies from head
// office are within the restaurant's permissions.
func NewForwarder(nc *nats.Conn, subj Subjects, log *slog.Logger) (*Forwarder, error) {
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Forwarder{js: js, nc: nc, subj: subj, hq: HQ(subj), log: log}, nil
}

// Run forwards until ctx ends.
func (f *Forwarder) Run(ctx context.Context) {
	// Heartbeats go as they come: the latest is all head office wants.
	sub, err := f.nc.Subscribe(f.subj.Presences(), func(m *nats.Msg) {
		kiosk := m.Subject[strings.LastIndexByte(m.Subject, '.')+1:]
		_ = f.nc.Publish(f.hq.Presence(kiosk), m.Data)
	})
	if err == nil {
		defer sub.Unsubscribe()
	}
	wait := 200 * time.Millisecond
	for ctx.Err() == nil {
		n, err := f.Step(ctx, 256)
		if err != nil && ctx.Err() == nil {
			f.log.Debug("head office: facts wait at the site", "err", err)
		}
		if err == nil && n > 0 {
			wait = 200 * time.Millisecond
			continue
		}
		if err != nil {
			wait = min(wait*2, 5*time.Second)
		}
		select {
		case <-ctx.Done():
		case <-time.After(wait):
		}
	}
}

// Step forwards up to max waiting facts, in order, and says how many
// went; it stops at the first that head office did not take.
func (f *Forwarder) Step(ctx context.Context, max int) (int, error) {
	if f.cons == nil {
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		cons, err := f.js.CreateOrUpdateConsumer(cctx, StreamOrders, jetstream.ConsumerConfig{
			Durable: consumerHQ, FilterSubject: f.subj.Facts(), AckPolicy: jetstream.AckExplicitPolicy,
			AckWait: 30 * time.Second, MaxAckPending: max, DeliverPolicy: jetstream.DeliverAllPolicy,
		})
		cancel()
		if err != nil {
			return 0, fmt.Errorf("the site's consumer for head office: %w", err)
		}
		f.cons = cons
	}
	batch, err := f.cons.FetchNoWait(max)
	if err != nil {
		f.cons = nil
		return 0, err
	}
	n := 0
	for m := range batch.Messages() {
		if err := f.forward(ctx, m); err != nil {
			_ = m.NakWithDelay(time.Second)
			// The rest of the batch comes again after its ack wait; Nak
			// them now so that they come back in order at once.
			for rest := range batch.Messages() {
				_ = rest.Nak()
			}
			return n, err
		}
		n++
	}
	return n, batch.Error()
}

func (f *Forwarder) forward(ctx context.Context, m jetstream.Msg) error {
	kiosk, kind, ok := f.subj.KioskOf(m.Subject())
	if !ok {
		return m.Term() // not a fact: never forwarded
	}
	out := nats.NewMsg(f.hq.Fact(kiosk, kind))
	out.Data = m.Data()
	for k, v := range m.Headers() {
		out.Header[k] = v
	}
	id := m.Headers().Get(jetstream.MsgIDHeader)
	if id == "" {
		// Not a fact of an outbox (any member of the site can publish
		// here, and JetStream acknowledges onto any subject it is asked
		// to): it cannot be sent once, and holding it would hold every
		// fact after it.
		if f.stray.Add(1) == 1 {
			f.log.Warn("head office: a message without an id on the site's facts is not forwarded (said once)",
				"subject", m.Subject())
		}
		return m.Term()
	}
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := f.js.PublishMsg(pctx, out, jetstream.WithMsgID(id), jetstream.WithExpectStream(StreamHQ)); err != nil {
		return err
	}
	return m.DoubleAck(pctx)
}
