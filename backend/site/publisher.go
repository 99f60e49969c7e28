package site

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/comptoir-pos/comptoir/backend/journal"
)

// Outbox is the journal as the publisher reads it.
type Outbox interface {
	Unpublished(ctx context.Context, limit int) ([]journal.OutboxEntry, error)
	MarkPublished(ctx context.Context, seqs ...int64) error
	PruneOutbox(ctx context.Context, before time.Time) (int64, error)
	OutboxWritten() <-chan struct{}
}

// PublisherConfig is one kiosk's publisher.
type PublisherConfig struct {
	Outbox   Outbox
	JS       jetstream.JetStream
	Subjects Subjects
	Kiosk    string
	// Batch is how many rows go out before their acknowledgements are
	// awaited; 0: 128.
	Batch int
	// AckWait bounds the wait for a batch's acknowledgements; 0: 5 s.
	AckWait time.Duration
	// Keep is how long published rows stay in the outbox; 0: 7 days.
	Keep   time.Duration
	Logger *slog.Logger
}

// Publisher copies the outbox to the stream, in the journal's order.
type Publisher struct {
	c         PublisherConfig
	published atomic.Int64
	failures  atomic.Int64
	lastErr   atomic.Pointer[string]
}

// NewPublisher checks the configuration.
func NewPublisher(c PublisherConfig) (*Publisher, error) {
	if c.Outbox == nil || c.JS == nil {
		return nil, errors.New("site publisher: an outbox and a stream")
	}
	if !ValidToken(c.Kiosk) {
		return nil, fmt.Errorf("site publisher: kiosk %q is not a token (letters, digits, '-', '_')", c.Kiosk)
	}
	if c.Batch <= 0 {
		c.Batch = 128
	}
	if c.AckWait <= 0 {
		c.AckWait = 5 * time.Second
	}
	if c.Keep <= 0 {
		c.Keep = 7 * 24 * time.Hour
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return &Publisher{c: c}, nil
}

// Published is how many rows the stream acknowledged since the start.
func (p *Publisher) Published() int64 { return p.published.Load() }

// Run publishes until ctx ends: at once after each commit of the journal,
// and every few seconds in any case; after a failure it waits longer each
// time (up to 10 s). It never holds anything the journal's writers wait
// for beyond one short transaction marking rows published.
func (p *Publisher) Run(ctx context.Context) {
	backoff := time.Duration(0)
	tick := time.NewTicker(2 * time.Second)
	defer tick.Stop()
	prune := time.Now()
	for {
		n, err := p.Flush(ctx)
		switch {
		case ctx.Err() != nil:
			return
		case err != nil:
			p.failures.Add(1)
			msg := err.Error()
			if last := p.lastErr.Swap(&msg); last == nil || *last != msg {
				p.c.Logger.Warn("site: outbox not published yet: it waits in the journal", "err", err)
			}
			backoff = min(max(backoff*2, 200*time.Millisecond), 10*time.Second)
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff):
			}
			continue
		case n == p.c.Batch:
			continue // more waiting
		}
		if p.lastErr.Swap(nil) != nil {
			p.c.Logger.Info("site: the outbox is published again")
		}
		backoff = 0
		if time.Since(prune) > time.Hour {
			prune = time.Now()
			if _, err := p.c.Outbox.PruneOutbox(ctx, time.Now().Add(-p.c.Keep)); err != nil {
				p.c.Logger.Warn("site: prune the outbox", "err", err)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-p.c.Outbox.OutboxWritten():
		case <-tick.C:
		}
	}
}

// Flush publishes one batch of unpublished rows and marks those the
// stream acknowledged, in order: a row is marked only when every row
// before it was, so that after a failure the next round starts at the
// first row the stream may lack (rows after it that were stored are
// dropped as duplicates when sent again).
func (p *Publisher) Flush(ctx context.Context) (int, error) {
	rows, err := p.c.Outbox.Unpublished(ctx, p.c.Batch)
	if err != nil || len(rows) == 0 {
		return 0, err
	}
	futures := make([]jetstream.PubAckFuture, 0, len(rows))
	var sendErr error
	for _, r := range rows {
		m := nats.NewMsg(p.c.Subjects.Fact(p.c.Kiosk, r.Kind))
		m.Data = r.Payload
		m.Header.Set(HeaderKiosk, p.c.Kiosk)
		m.Header.Set(HeaderSeq, strconv.FormatInt(r.Seq, 10))
		f, err := p.c.JS.PublishMsgAsync(m, jetstream.WithMsgID(r.MsgID), jetstream.WithExpectStream(StreamOrders))
		if err != nil {
			sendErr = err
			break
		}
		futures = append(futures, f)
	}
	acked := make([]int64, 0, len(futures))
	timeout := time.NewTimer(p.c.AckWait)
	defer timeout.Stop()
wait:
	for i, f := range futures {
		select {
		case <-f.Ok():
			acked = append(acked, rows[i].Seq)
		case err := <-f.Err():
			sendErr = err
			break wait
		case <-timeout.C:
			sendErr = errors.New("no acknowledgement from the site in time")
			break wait
		case <-ctx.Done():
			sendErr = ctx.Err()
			break wait
		}
	}
	if len(acked) > 0 {
		// The stream has them: marking may wait for a payment's write,
		// never the reverse for longer than this short transaction.
		if err := p.c.Outbox.MarkPublished(context.WithoutCancel(ctx), acked...); err != nil {
			return 0, err
		}
		p.published.Add(int64(len(acked)))
	}
	if sendErr != nil {
		return len(acked), fmt.Errorf("publish the outbox: %w", sendErr)
	}
	return len(acked), nil
}
