package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/site"
)

// KioskView is one kiosk as head office sees it.
type KioskView struct {
	Restaurant  string    `json:"restaurant"`
	Kiosk       string    `json:"kiosk"`
	Online      bool      `json:"online"`
	LastSeen    time.Time `json:"lastSeen,omitzero"`
	Terminal    string    `json:"terminal"`
	Ready       bool      `json:"ready"`
	NeedStaff   int       `json:"needStaff"`
	LastPayment time.Time `json:"lastPayment,omitzero"`
	Version     string    `json:"version,omitempty"`
	Menu        uint64    `json:"menu,omitempty"`      // the menu version it applied
	MenuError   string    `json:"menuError,omitempty"` // why it refused the last one
}

// SalesRow is the day's sales of a restaurant for one dining mode and VAT
// rate, VAT included.
type SalesRow struct {
	Day        string `json:"day"` // YYYY-MM-DD, head office's time
	Restaurant string `json:"restaurant"`
	Dining     string `json:"dining"`
	VATRate    int    `json:"vatRate"` // basis points
	Amount     int64  `json:"amount"`  // cents
}

// Totals are a restaurant's figures.
type Totals struct {
	Orders    int   `json:"orders"`
	Paid      int64 `json:"paid"`
	GivenBack int64 `json:"givenBack"`
	Attention int   `json:"attention"` // orders set aside for staff
	// Ignored is how many messages on the restaurant's subjects were not
	// facts as a kiosk's outbox sends them (counted in nothing else).
	Ignored int `json:"ignored,omitempty"`
}

// Dashboard is head office's page.
type Dashboard struct {
	Kiosks []KioskView        `json:"kiosks"`
	Sales  []SalesRow         `json:"sales"`
	Totals map[string]*Totals `json:"totals"` // by restaurant
	Facts  uint64             `json:"facts"`  // facts folded
	// FactsByKind counts them by kind (order.paid...): head office's
	// stream holds each fact once, so order.paid is the orders paid.
	FactsByKind map[string]uint64 `json:"factsByKind"`
}

// Ledger folds what the restaurants send: each fact once (by its id, by
// restaurant, kiosk and order, and the stream's own duplicate window), in
// order, and only what a kiosk's outbox sends (checkFact).
type Ledger struct {
	mu     sync.Mutex
	kiosks map[string]*KioskView
	sales  map[SalesRow]int64
	totals map[string]*Totals
	seen   map[string]bool // restaurant/Nats-Msg-Id folded
	paid   map[string]bool // restaurant/kiosk/order counted
	aside  map[string]bool // restaurant/kiosk/order set aside, counted
	gifts  map[string]bool // give-backs counted, by their attempt
	warned map[string]bool // restaurant/reason said in the log
	facts  uint64
	kinds  map[string]uint64
	// fiscal keeps each closing and archive record as signed, one object
	// per record (FiscalBucket), for checks away from the restaurant.
	fiscal jetstream.ObjectStore
	// assembling holds, by restaurant/kiosk, the archive whose parts are
	// arriving.
	assembling map[string]*assembly
	stop       context.CancelFunc
	done       chan struct{}
	log        *slog.Logger
}

func startLedger(js jetstream.JetStream, fiscal jetstream.ObjectStore, log *slog.Logger) *Ledger {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	l := &Ledger{kiosks: map[string]*KioskView{}, sales: map[SalesRow]int64{}, totals: map[string]*Totals{},
		seen: map[string]bool{}, paid: map[string]bool{}, aside: map[string]bool{}, gifts: map[string]bool{}, warned: map[string]bool{}, fiscal: fiscal, assembling: map[string]*assembly{}, kinds: map[string]uint64{}, stop: cancel, done: make(chan struct{}), log: log}
	go func() {
		defer close(l.done)
		var wg sync.WaitGroup
		wg.Add(2)
		go func() { defer wg.Done(); l.follow(ctx, js, site.StreamHQ, l.fact) }()
		go func() { defer wg.Done(); l.follow(ctx, js, site.StreamHQPresence, l.presence) }()
		wg.Wait()
	}()
	return l
}

func (l *Ledger) close() {
	l.stop()
	<-l.done
}

// follow folds a stream from its start with an ordered consumer.
func (l *Ledger) follow(ctx context.Context, js jetstream.JetStream, stream string, apply func(jetstream.Msg)) {
	var last uint64
	for ctx.Err() == nil {
		cfg := jetstream.OrderedConsumerConfig{}
		if last > 0 {
			cfg.DeliverPolicy, cfg.OptStartSeq = jetstream.DeliverByStartSequencePolicy, last+1
		}
		cons, err := js.OrderedConsumer(ctx, stream, cfg)
		if err == nil {
			var cc jetstream.ConsumeContext
			cc, err = cons.Consume(func(m jetstream.Msg) {
				if md, err := m.Metadata(); err == nil && md.Sequence.Stream > last {
					last = md.Sequence.Stream
					apply(m)
				}
			})
			if err == nil {
				select {
				case <-ctx.Done():
				case <-cc.Closed():
				}
				cc.Stop()
			}
		}
		if err != nil && ctx.Err() == nil {
			l.log.Warn("hub: stream not followed: retrying", "stream", stream, "err", err)
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
		}
	}
}

// kioskOf parses hq.R.k.KIOSK.kind or hq.R.presence.KIOSK.
func kioskOf(subject string) (restaurant, kiosk, kind string) {
	parts := strings.SplitN(subject, ".", 5)
	if len(parts) < 4 || parts[0] != "hq" {
		return "", "", ""
	}
	if parts[2] == "k" && len(parts) == 5 {
		return parts[1], parts[3], parts[4]
	}
	return parts[1], parts[3], ""
}

func (l *Ledger) kiosk(r, k string) *KioskView {
	v := l.kiosks[r+"/"+k]
	if v == nil {
		v = &KioskView{Restaurant: r, Kiosk: k}
		l.kiosks[r+"/"+k] = v
	}
	return v
}

func (l *Ledger) totalsOf(r string) *Totals {
	t := l.totals[r]
	if t == nil {
		t = &Totals{}
		l.totals[r] = t
	}
	return t
}

type line struct {
	Qty      int   `json:"qty"`
	Total    int64 `json:"total"`
	VATRate  int   `json:"vatRate"`
	VATParts []struct {
		Rate   int   `json:"rate"`
		Amount int64 `json:"amount"`
	} `json:"vatParts"`
	Choices []struct {
		Price   int64 `json:"price"`
		VATRate int   `json:"vatRate"`
	} `json:"choices"`
}

func (l *Ledger) fact(m jetstream.Msg) {
	r, k, kind := kioskOf(m.Subject())
	if r == "" {
		return
	}
	id, body, err := checkFact(k, kind, m.Headers(), m.Data())
	l.mu.Lock()
	defer l.mu.Unlock()
	if err != nil {
		l.ignore(r, k, kind, err)
		return
	}
	if l.seen[r+"/"+id] {
		return // the same fact again, past the stream's duplicate window
	}
	l.seen[r+"/"+id] = true
	l.facts++
	l.kinds[kind]++
	switch f := body.(type) {
	case journal.OrderFact:
		l.order(r, k, kind, f)
	case journal.GiveBackFact:
		if l.gifts[r+"/"+k+"/"+f.Attempt] {
			return
		}
		l.gifts[r+"/"+k+"/"+f.Attempt] = true
		l.totalsOf(r).GivenBack += f.Amount
	case journal.FiscalFact:
		l.keepFiscal(r, k, f, m.Data())
	case archivePart:
		l.archivePart(r, k, f, m.Data())
	}
}

// order folds an order's status: a payment once per order, an order set
// aside for staff once.
func (l *Ledger) order(r, k, kind string, f journal.OrderFact) {
	key := r + "/" + k + "/" + f.OrderID
	switch kind {
	case journal.OutboxPaid:
		if l.paid[key] {
			return
		}
		l.paid[key] = true
		t := l.totalsOf(r)
		t.Orders++
		t.Paid += f.Paid
		kv := l.kiosk(r, k)
		if at := time.UnixMilli(f.At); at.After(kv.LastPayment) {
			kv.LastPayment = at
		}
		l.addSales(r, time.UnixMilli(f.At).Format(time.DateOnly), f.Data)
	case journal.OutboxAttention:
		if l.aside[key] {
			return
		}
		l.aside[key] = true
		l.totalsOf(r).Attention++
	}
}

// ignore counts a message that is not a fact, and says so in the log
// once per restaurant and reason: anyone can make a NATS server answer
// onto a subject (a reply, JetStream's acknowledgement), so what lands on
// a restaurant's subjects is not a fact until it reads as one.
func (l *Ledger) ignore(r, k, kind string, err error) {
	l.totalsOf(r).Ignored++
	reason := "other"
	for _, e := range notFacts {
		if errors.Is(err, e) {
			reason = e.Error()
		}
	}
	if key := r + "/" + reason; !l.warned[key] {
		l.warned[key] = true
		l.log.Warn("hub: a message on a restaurant's subjects is not a fact: ignored (said once)",
			"restaurant", r, "kiosk", k, "kind", kind, "err", err)
	}
}

// archivePart is one part of a kiosk's archive, as its headers say.
type archivePart struct {
	period, sum string
	i, n        int
}

// Why a message is not a fact.
var (
	errNoKiosk   = errors.New("no kiosk, or a header naming another")
	errNoID      = errors.New("no id, or not the one the kiosk gives it")
	errBody      = errors.New("not the fact its subject names")
	errKind      = errors.New("no such kind of fact")
	errNotOutbox = errors.New("not a UUID, as the outbox gives its facts")
	errPart      = errors.New("not an archive part's headers")
	// notFacts are the reasons, a few per restaurant in the log at most
	// (the details a message carries are not one).
	notFacts = []error{errNoKiosk, errNoID, errBody, errKind, errNotOutbox, errPart}
)

// checkFact reads a message on hq.R.k.<kiosk>.<kind> as a kiosk's outbox
// (site.Publisher) or archive shipper (site.ArchiveShipper) sends it: the
// kiosk in its header, its id (Nats-Msg-Id: the outbox row's UUID, or the
// archive part's), and a body that is the fact the kind names. It
// returns the id and the fact.
func checkFact(kiosk, kind string, h nats.Header, data []byte) (string, any, error) {
	if !site.ValidToken(kiosk) || h.Get(site.HeaderKiosk) != kiosk {
		return "", nil, errNoKiosk
	}
	id := h.Get(jetstream.MsgIDHeader)
	if id == "" {
		return "", nil, errNoID
	}
	if kind == site.KindArchivePart {
		period, sum, i, n, err := site.ArchivePartOf(h)
		if err != nil {
			return "", nil, fmt.Errorf("%w: %w", errPart, err)
		}
		if id != site.ArchivePartID(sum, i) {
			return "", nil, errNoID
		}
		return id, archivePart{period: period, sum: sum, i: i, n: n}, nil
	}
	if u, err := uuid.Parse(id); err != nil || u.String() != id {
		return "", nil, errNotOutbox
	}
	switch kind {
	case journal.OutboxPaid, journal.OutboxCancelled, journal.OutboxAttention:
		var f journal.OrderFact
		to := map[string]journal.OrderStatus{journal.OutboxPaid: journal.OrderPaid,
			journal.OutboxCancelled: journal.OrderCancelled, journal.OutboxAttention: journal.OrderNeedsAttention}[kind]
		if json.Unmarshal(data, &f) != nil || f.OrderID == "" || f.To != to || f.At <= 0 ||
			f.Total < 0 || f.Paid < 0 || f.GivenBack < 0 {
			return "", nil, errBody
		}
		return id, f, nil
	case journal.OutboxGiveBack:
		var g journal.GiveBackFact
		if json.Unmarshal(data, &g) != nil || g.OrderID == "" || g.Attempt == "" || g.Amount < 0 || g.At <= 0 {
			return "", nil, errBody
		}
		return id, g, nil
	case journal.OutboxClosing, journal.OutboxArchive:
		var f journal.FiscalFact
		want := map[string]string{journal.OutboxClosing: journal.FiscalClosing, journal.OutboxArchive: journal.FiscalArchive}[kind]
		if json.Unmarshal(data, &f) != nil || f.Kind != want || f.Seq <= 0 {
			return "", nil, errBody
		}
		return id, f, nil
	}
	return "", nil, errKind
}

// keepFiscal puts a fiscal record in the object store under
// R/<kiosk>/<kind>/<seq>: the same record again is the same object.
func (l *Ledger) keepFiscal(r, k string, f journal.FiscalFact, data []byte) {
	if l.fiscal == nil {
		return
	}
	name := fmt.Sprintf("%s/%s/%s/%08d", r, k, f.Kind, f.Seq)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := l.fiscal.PutBytes(ctx, name, data); err != nil {
		l.log.Error("hub: a fiscal record not kept", "name", name, "err", err)
	}
}

// FiscalRecord reads back a restaurant's kiosk's fiscal record.
func (l *Ledger) FiscalRecord(ctx context.Context, r, kiosk, kind string, seq int64) ([]byte, error) {
	return l.fiscal.GetBytes(ctx, fmt.Sprintf("%s/%s/%s/%08d", r, kiosk, kind, seq))
}

// addSales splits a paid order's lines by dining mode and VAT rate.
func (l *Ledger) addSales(r, day string, data json.RawMessage) {
	var d struct {
		Dining string `json:"dining"`
		Lines  []line `json:"lines"`
	}
	if json.Unmarshal(data, &d) != nil {
		return
	}
	add := func(rate int, amount int64) {
		l.sales[SalesRow{Day: day, Restaurant: r, Dining: d.Dining, VATRate: rate}] += amount
	}
	for _, ln := range d.Lines {
		own := ln.Total
		for _, c := range ln.Choices {
			add(c.VATRate, c.Price*int64(ln.Qty))
			own -= c.Price * int64(ln.Qty)
		}
		for _, p := range ln.VATParts {
			add(p.Rate, p.Amount*int64(ln.Qty))
			own -= p.Amount * int64(ln.Qty)
		}
		if own != 0 {
			add(ln.VATRate, own)
		}
	}
}

// presence folds a heartbeat: one that names the kiosk and restaurant of
// its subject (RunPresence), anything else is ignored.
func (l *Ledger) presence(m jetstream.Msg) {
	var p site.Presence
	r, k, _ := kioskOf(m.Subject())
	if r == "" {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if json.Unmarshal(m.Data(), &p) != nil || p.Kiosk != k || p.Restaurant != r || p.At <= 0 || !site.ValidToken(k) {
		l.ignore(r, k, "presence", errBody)
		return
	}
	v := l.kiosk(r, k)
	v.LastSeen, v.Terminal, v.Ready, v.NeedStaff, v.Version = time.UnixMilli(p.At), p.Terminal, p.Ready, p.NeedStaff, p.Version
	v.Menu, v.MenuError = p.Menu, p.MenuError
}

// Dashboard is the figures now; a kiosk not heard from for three
// heartbeats is offline.
func (l *Ledger) Dashboard() Dashboard {
	l.mu.Lock()
	defer l.mu.Unlock()
	d := Dashboard{Kiosks: []KioskView{}, Sales: []SalesRow{}, Totals: map[string]*Totals{}, Facts: l.facts,
		FactsByKind: maps.Clone(l.kinds)}
	for _, k := range l.kiosks {
		v := *k
		v.Online = time.Since(v.LastSeen) < 3*site.PresenceEvery
		d.Kiosks = append(d.Kiosks, v)
	}
	sort.Slice(d.Kiosks, func(i, j int) bool {
		return d.Kiosks[i].Restaurant+"/"+d.Kiosks[i].Kiosk < d.Kiosks[j].Restaurant+"/"+d.Kiosks[j].Kiosk
	})
	for row, amount := range l.sales {
		row.Amount = amount
		d.Sales = append(d.Sales, row)
	}
	sort.Slice(d.Sales, func(i, j int) bool {
		a, b := d.Sales[i], d.Sales[j]
		if a.Day != b.Day {
			return a.Day > b.Day
		}
		if a.Restaurant != b.Restaurant {
			return a.Restaurant < b.Restaurant
		}
		if a.Dining != b.Dining {
			return a.Dining < b.Dining
		}
		return a.VATRate < b.VATRate
	})
	for r, t := range l.totals {
		c := *t
		d.Totals[r] = &c
	}
	return d
}
