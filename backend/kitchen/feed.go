package kitchen

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/comptoir-pos/comptoir/backend/site"
)

// Config is one process's kitchen: its screens and its board.
type Config struct {
	JS       jetstream.JetStream
	Subjects site.Subjects
	// Stations name each station's categories of the catalog.
	Stations map[string][]string
	// Category is a product's category in the catalog ("" when unknown:
	// the line is the expeditor's only).
	Category func(product string) string
	Lang     string // the kitchen's language for choices; default fr
	// Since is where the fold starts: the start of the service day.
	Since time.Time
	// WarnAfter and LateAfter colour a ticket's age; ReadyFor is how long
	// a ready number stays on the board unless collected.
	WarnAfter, LateAfter, ReadyFor time.Duration
	Chime                          bool
	Logger                         *slog.Logger
	Now                            func() time.Time
}

// Defaults of the kitchen's settings.
const (
	DefaultWarnAfter = 5 * time.Minute
	DefaultLateAfter = 10 * time.Minute
	DefaultReadyFor  = 10 * time.Minute
)

// Kitchen follows the restaurant's stream.
type Kitchen struct {
	c       Config
	mu      sync.Mutex
	st      *state
	changed chan struct{} // closed and replaced at each change
	online  bool
	cancel  context.CancelFunc
	done    chan struct{}
}

// Start follows the stream from c.Since in the background: a site that
// cannot be reached yet is waited for.
func Start(c Config) (*Kitchen, error) {
	if c.JS == nil {
		return nil, errors.New("kitchen: no stream")
	}
	for name := range c.Stations {
		if !site.ValidToken(name) {
			return nil, fmt.Errorf("kitchen: station %q: letters, digits, '-' and '_'", name)
		}
	}
	if c.Lang == "" {
		c.Lang = "fr"
	}
	if c.WarnAfter <= 0 {
		c.WarnAfter = DefaultWarnAfter
	}
	if c.LateAfter <= c.WarnAfter {
		c.LateAfter = max(DefaultLateAfter, 2*c.WarnAfter)
	}
	if c.ReadyFor <= 0 {
		c.ReadyFor = DefaultReadyFor
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	ctx, cancel := context.WithCancel(context.Background())
	k := &Kitchen{c: c, st: newState(c.Category, c.Lang), changed: make(chan struct{}), cancel: cancel, done: make(chan struct{})}
	go k.follow(ctx)
	return k, nil
}

// Close stops following the stream.
func (k *Kitchen) Close() {
	k.cancel()
	<-k.done
}

// follow consumes the stream with an ordered consumer: in order, without
// gaps, resuming after the last message applied when it is recreated.
func (k *Kitchen) follow(ctx context.Context) {
	defer close(k.done)
	wait := 200 * time.Millisecond
	for ctx.Err() == nil {
		err := k.consume(ctx)
		k.setOnline(false)
		if ctx.Err() != nil {
			return
		}
		k.c.Logger.Warn("kitchen: the site's stream is not followed: retrying", "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = min(wait*2, 5*time.Second)
	}
}

func (k *Kitchen) consume(ctx context.Context) error {
	cfg := jetstream.OrderedConsumerConfig{FilterSubjects: []string{k.c.Subjects.Facts(), k.c.Subjects.Bumps()}}
	k.mu.Lock()
	last := k.st.lastSeq
	k.mu.Unlock()
	if last > 0 {
		cfg.DeliverPolicy, cfg.OptStartSeq = jetstream.DeliverByStartSequencePolicy, last+1
	} else {
		since := k.c.Since
		cfg.DeliverPolicy, cfg.OptStartTime = jetstream.DeliverByStartTimePolicy, &since
	}
	opCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	cons, err := k.c.JS.OrderedConsumer(opCtx, site.StreamOrders, cfg)
	cancel()
	if err != nil {
		return err
	}
	cc, err := cons.Consume(k.apply, jetstream.ConsumeErrHandler(func(_ jetstream.ConsumeContext, err error) {
		if errors.Is(err, jetstream.ErrNoHeartbeat) || errors.Is(err, nats.ErrConnectionClosed) {
			k.setOnline(false)
		}
	}))
	if err != nil {
		return err
	}
	defer cc.Stop()
	k.setOnline(true)
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-cc.Closed():
		return errors.New("the consumer stopped")
	}
}

// apply folds one message, once: a sequence already applied is skipped.
func (k *Kitchen) apply(m jetstream.Msg) {
	md, err := m.Metadata()
	if err != nil {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	k.online = true
	seq := md.Sequence.Stream
	if seq <= k.st.lastSeq {
		return
	}
	k.st.lastSeq = seq
	changed := false
	if kiosk, kind, ok := k.c.Subjects.KioskOf(m.Subject()); ok {
		changed = k.st.applyFact(seq, kiosk, kind, m.Data())
	} else {
		var b Bump
		if json.Unmarshal(m.Data(), &b) == nil {
			changed = k.st.applyBump(b, k.c.Stations)
		}
	}
	if changed {
		k.bumpVersionLocked()
	}
}

func (k *Kitchen) bumpVersionLocked() {
	k.st.version++
	close(k.changed)
	k.changed = make(chan struct{})
}

func (k *Kitchen) setOnline(on bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.online != on {
		k.online = on
		k.bumpVersionLocked()
	}
}

// onlineLocked: following the stream, over a connection that is up.
func (k *Kitchen) onlineLocked() bool {
	return k.online && k.c.JS.Conn().IsConnected()
}

// Orders is a station's view now ("" for the expeditor).
func (k *Kitchen) Orders(station string) OrdersView {
	k.mu.Lock()
	defer k.mu.Unlock()
	v := k.st.ordersView(station, k.c.Stations, k.c.Now())
	v.WarnAfter, v.LateAfter, v.Online = int(k.c.WarnAfter/time.Second), int(k.c.LateAfter/time.Second), k.onlineLocked()
	return v
}

// Board is the board's view now.
func (k *Kitchen) Board() BoardView {
	k.mu.Lock()
	defer k.mu.Unlock()
	v := k.st.boardView(k.c.Now(), k.c.ReadyFor)
	v.Chime, v.Online = k.c.Chime, k.onlineLocked()
	return v
}

// Wait returns once the view's version differs from since, or ctx ends.
func (k *Kitchen) Wait(ctx context.Context, since uint64) {
	k.mu.Lock()
	if k.st.version != since {
		k.mu.Unlock()
		return
	}
	ch := k.changed
	k.mu.Unlock()
	select {
	case <-ctx.Done():
	case <-ch:
	}
}

// Station reports whether name is a station ("" being the expeditor).
func (k *Kitchen) Station(name string) bool {
	_, ok := k.c.Stations[name]
	return name == "" || ok
}

// Errors of Bump that the screen shows as they are.
var (
	ErrUnknownTicket = errors.New("no such ticket on the kitchen screen")
	ErrBadBump       = errors.New("a bump is ready, recall or collect, of a line of the ticket or all of it")
)

// Bump publishes a screen's bump to the stream, and returns once this
// kitchen has applied it: every screen applies it from the stream, in the
// same order, so that they agree.
func (k *Kitchen) Bump(ctx context.Context, b Bump) error {
	if b.Action != ActionReady && b.Action != ActionRecall && b.Action != ActionCollect {
		return ErrBadBump
	}
	if !k.Station(b.Station) {
		return fmt.Errorf("kitchen: no station %q", b.Station)
	}
	k.mu.Lock()
	t := k.st.tickets[b.Key]
	lines := 0
	if t != nil {
		lines = len(t.Lines)
	}
	k.mu.Unlock()
	if t == nil {
		return ErrUnknownTicket
	}
	if b.Line < -1 || b.Line >= lines {
		return ErrBadBump
	}
	b.At = k.c.Now().UnixMilli()
	data, err := json.Marshal(b)
	if err != nil {
		return err
	}
	id, err := uuid.NewV7()
	if err != nil {
		return err
	}
	station := b.Station
	if station == "" {
		station = "expo"
	}
	pubCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	ack, err := k.c.JS.Publish(pubCtx, k.c.Subjects.Bump(station), data, jetstream.WithMsgID(id.String()))
	if err != nil {
		return fmt.Errorf("kitchen: the bump did not reach the site: %w", err)
	}
	for {
		k.mu.Lock()
		applied, ch := k.st.lastSeq >= ack.Sequence, k.changed
		k.mu.Unlock()
		if applied {
			return nil
		}
		select {
		case <-pubCtx.Done():
			return nil // stored: it shows as soon as the stream delivers it
		case <-ch:
		case <-time.After(20 * time.Millisecond):
		}
	}
}
