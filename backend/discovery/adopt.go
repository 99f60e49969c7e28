package discovery

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/comptoir-pos/comptoir/backend/localapi"
)

// reconcileChoice settles the remembered name against the stored
// identity. A name without an identity (chosen by name, or remembered by
// an earlier version) is adopted at its next sighting; another name than
// the identity's is another terminal, whose addresses are not this one's.
func reconcileChoice(name string, id Identity) (string, Identity) {
	switch {
	case name == "":
		return id.Instance, id
	case id.Instance == "":
		id.Instance = name
	case !strings.EqualFold(name, id.Instance):
		id = Identity{Instance: name, Pin: id.Pin, HTTPS: id.HTTPS}
	}
	return name, id
}

// adoptInto binds id to term, a device it accepts: its address is
// recorded, and its certificate is pinned when it offers HTTPS and none
// is pinned yet (trust on first use).
func adoptInto(id Identity, term Terminal, now time.Time) Identity {
	by := "known"
	switch {
	case len(id.Addresses) == 0:
		by = "adopted"
	case !id.Knows(term.BaseURL):
		by = "certificate"
	}
	out := id.Record(term.BaseURL, by, now)
	if out.Instance == "" {
		out.Instance = term.Instance
	}
	if term.Fingerprint != "" && out.Pin == "" {
		out.Pin, out.HTTPS = term.Fingerprint, true
	}
	return out
}

// decision is what one browse means for the terminal in use.
type decision struct {
	use     *Terminal  // the device to use now
	pending *Candidate // a device waiting for staff
	others  []Terminal // confirmed devices under other names
	why     []string   // why a device heard is not used
}

// decide judges the confirmed devices of a browse against id. A device
// the identity accepts is used, unless payments are open (held) and using
// it would move them to another device: only the device in use itself, at
// the same address or proven by the same certificate, is followed then.
// With no device in use (a start with payments left open), the adopted
// terminal is taken up again, but not deferred: a device staff confirmed
// while the payments were open.
func decide(id Identity, instance string, confirmed []Terminal, current *localapi.Client, inUsePin string, held bool, deferred *Candidate, now time.Time) decision {
	var (
		d         decision
		best      *Terminal
		bestRank  int
		firstUses []Terminal
	)
	currentKey := ""
	if current != nil {
		currentKey = endpointKey(current.BaseURL())
	}
	for _, f := range confirmed {
		if !strings.EqualFold(f.Instance, instance) {
			d.others = append(d.others, f)
			continue
		}
		switch st := id.Judge(f); st {
		case StandingAdopted, StandingFirstUse:
			same := currentKey != "" && endpointKey(f.BaseURL) == currentKey
			proven := f.Fingerprint != "" && f.Fingerprint == inUsePin
			confirmedMeanwhile := deferred != nil && samePending(*deferred, Candidate{Address: f.BaseURL, Fingerprint: f.Fingerprint})
			if held && ((current != nil && !same && !proven) || (current == nil && confirmedMeanwhile)) {
				d.why = append(d.why, fmt.Sprintf("it answers at %s, which is not used while a payment is open on the terminal", f.BaseURL))
				continue
			}
			if st == StandingFirstUse {
				firstUses = append(firstUses, f)
				continue
			}
			rank := 1
			if same {
				rank = 2
			}
			if rank > bestRank {
				best, bestRank = &f, rank
			}
		case StandingNewAddress, StandingOtherCertificate:
			if d.pending == nil {
				d.pending = &Candidate{Instance: f.Instance, Address: f.BaseURL, Fingerprint: f.Fingerprint, Standing: st, Since: now}
			}
		case StandingPlainHTTP:
			d.why = append(d.why, fmt.Sprintf("a device answers under its name over plain HTTP at %s: refused, the terminal is bound to HTTPS", f.BaseURL))
		case StandingRefused:
			d.why = append(d.why, fmt.Sprintf("a device staff refused answers under its name at %s", f.BaseURL))
		}
	}
	switch {
	case best == nil && len(firstUses) == 1:
		best = &firstUses[0]
	case best == nil && len(firstUses) > 1:
		d.why = append(d.why, fmt.Sprintf("%d devices answer under its name: none is adopted", len(firstUses)))
	}
	if best != nil {
		d.use, d.pending = best, nil
	}
	return d
}

// describe is the sentence staff read about a waiting device.
func (c Candidate) describe() string {
	switch c.Standing {
	case StandingOtherCertificate:
		return fmt.Sprintf("a device answers as %q at %s with another certificate (%s): it is not used until staff confirm it in staff mode (Terminal)",
			c.Instance, c.Address, FingerprintText(c.Fingerprint))
	default:
		return fmt.Sprintf("a device answers as %q from a new address, %s: it is not used until staff confirm it in staff mode (Terminal)",
			c.Instance, c.Address)
	}
}

// reresolve looks for the chosen instance again after failed (the client
// that just failed, or nil for the periodic ping) and returns the client of
// a new address, or nil when there is none: not found, same address, not
// accepted by the identity, held by open payments, manual mode, or too
// soon after the last try.
func (t *Tracker) reresolve(ctx context.Context, failed *localapi.Client, cause error) *localapi.Client {
	t.resolveMu.Lock()
	defer t.resolveMu.Unlock()

	t.mu.Lock()
	if failed != nil && t.client != nil && t.client != failed {
		c := t.client // another caller already switched
		t.mu.Unlock()
		return c
	}
	instance, now := t.instance, t.cfg.Now()
	if t.manual || instance == "" || (!t.lastResolve.IsZero() && now.Sub(t.lastResolve) < t.cfg.ResolveInterval) {
		manual := t.manual
		t.mu.Unlock()
		if !manual && instance != "" && cause != nil {
			// Too soon to browse again, but the failure is news.
			t.markUnreachable(instance, cause, nil, nil, false)
		}
		return nil
	}
	t.lastResolve = now
	id, current, inUsePin := t.identity, t.client, t.inUsePin
	var deferred *Candidate
	if t.pending != nil && t.pending.Confirmed {
		deferred = clonePending(t.pending)
	}
	t.mu.Unlock()

	t.log.Info("re-resolving the terminal", "instance", instance, "cause", cause)
	opts := t.browseOptions(id)
	opts.stopWhen = func(d Terminal) bool { return id.Judge(d).Usable() }
	found, err := t.find(ctx, opts, instance)
	held := t.held(ctx, instance)
	d := decide(id, instance, Confirmed(found), current, inUsePin, held, deferred, t.cfg.Now())
	if d.use == nil {
		var msgs []string
		if cause != nil {
			msgs = append(msgs, cause.Error())
		}
		switch {
		case d.pending != nil:
			msgs = append(msgs, d.pending.describe())
		case len(d.why) == 0 && err == nil:
			msgs = append(msgs, fmt.Sprintf("%v: %q", ErrNotFound, instance))
		case len(d.why) == 0:
			msgs = append(msgs, "re-resolve: "+err.Error())
		}
		msgs = append(msgs, d.why...)
		if d.pending != nil {
			t.log.Warn("a device answers under the terminal's name with another identity: not used", "instance", instance,
				"address", d.pending.Address, "standing", d.pending.Standing, "fingerprint", d.pending.Fingerprint)
		}
		t.markUnreachable(instance, fmt.Errorf("%s", strings.Join(msgs, "; ")), d.others, d.pending, true)
		return nil
	}
	return t.switchTo(ctx, instance, id, *d.use)
}

// switchTo records use in the identity, then makes it the device in use.
// An identity that cannot be recorded is not extended: the device is not
// used.
func (t *Tracker) switchTo(ctx context.Context, instance string, id Identity, use Terminal) *localapi.Client {
	next := adoptInto(id, use, t.cfg.Now())
	if err := t.cfg.Trust.SaveIdentity(ctx, next); err != nil {
		t.log.Error("the terminal's identity cannot be recorded: the device is not used", "address", use.BaseURL, "err", err)
		t.markUnreachable(instance, fmt.Errorf("the terminal answers at %s, but its identity cannot be recorded, so it is not used: %w", use.BaseURL, err), nil, nil, false)
		return nil
	}
	var c *localapi.Client
	t.update(func(s *Status) {
		if t.manual || !strings.EqualFold(t.instance, instance) {
			return // changed while we were browsing
		}
		t.identity = next
		old := t.client
		t.connectLocked(s, use)
		if old == nil || old.BaseURL() != t.client.BaseURL() {
			c = t.client
		} else {
			t.client = old // same address: the failure was not a move
		}
	})
	if c != nil {
		t.log.Info("terminal found at a new address", "instance", instance, "address", c.BaseURL(), "certificate", FingerprintText(use.Fingerprint))
	}
	return c
}

// browseOptions are the browse options under id: a terminal bound to
// HTTPS is never tried over plain HTTP.
func (t *Tracker) browseOptions(id Identity) Options {
	opts := t.cfg.Browse
	opts.HTTPS = opts.HTTPS || id.HTTPS || id.Pin != ""
	if opts.ClientOptions == nil {
		opts.ClientOptions = t.cfg.ClientOptions
	}
	return opts
}

// clientOptions are the options of a client for a device presenting
// fingerprint: on HTTPS that certificate alone is trusted.
func (t *Tracker) clientOptions(fingerprint string) []localapi.Option {
	opts := slices.Clip(t.cfg.ClientOptions)
	if fingerprint != "" {
		opts = append(opts, localapi.WithTLS(localapi.TLS{Pin: fingerprint}))
	}
	return opts
}

// held says whether payments are open on instance; an error counts as
// held.
func (t *Tracker) held(ctx context.Context, instance string) bool {
	if t.cfg.Held == nil {
		return false
	}
	h, err := t.cfg.Held(ctx, instance)
	if err != nil {
		t.log.Warn("open payments on the terminal cannot be read: the terminal in use is kept", "err", err)
		return true
	}
	return h
}

// connectLocked makes term the terminal in use.
func (t *Tracker) connectLocked(s *Status, term Terminal) {
	c, err := localapi.NewClient(term.BaseURL, t.clientOptions(term.Fingerprint)...)
	if err != nil { // a URL built by browse is always valid
		s.LastError = err.Error()
		return
	}
	t.client, t.inUsePin, t.pending = c, term.Fingerprint, nil
	t.instance = term.Instance
	if s.State != StateConnected || s.Address != c.BaseURL() {
		s.Since = t.cfg.Now()
	}
	s.State, s.Instance, s.Address, s.Candidates, s.Pending, s.LastError = StateConnected, term.Instance, c.BaseURL(), nil, nil, ""
}

// markUnreachable records that instance was not found (or not accepted);
// others are the confirmed terminals heard instead, offered to staff;
// pending, a device waiting for staff, replaces the one waiting unless it
// is the same. With browsed false, only the error is news.
func (t *Tracker) markUnreachable(instance string, cause error, others []Terminal, pending *Candidate, browsed bool) {
	t.update(func(s *Status) {
		if t.manual || !strings.EqualFold(t.instance, instance) {
			return
		}
		if s.State != StateUnreachable {
			s.State, s.Since = StateUnreachable, t.cfg.Now()
		}
		if browsed {
			s.Instance = t.instance
			s.Candidates = others
		}
		if pending != nil && (t.pending == nil || !samePending(*t.pending, *pending)) {
			t.pending = pending
		}
		s.Pending = clonePending(t.pending)
		if cause != nil {
			s.LastError = cause.Error()
		}
	})
}

func samePending(a, b Candidate) bool {
	return endpointKey(a.Address) == endpointKey(b.Address) && a.Fingerprint == b.Fingerprint
}

func clonePending(p *Candidate) *Candidate {
	if p == nil {
		return nil
	}
	c := *p
	return &c
}

// discover browses for a terminal when none is chosen: one confirmed that
// the identity accepts is adopted and remembered; several are offered to
// choose from.
func (t *Tracker) discover(ctx context.Context) {
	t.mu.Lock()
	id := t.identity
	t.mu.Unlock()
	found, err := t.find(ctx, t.browseOptions(id), "")
	if ctx.Err() != nil {
		return
	}
	var cands []Terminal
	for _, f := range Confirmed(found) {
		if id.Judge(f).Usable() {
			cands = append(cands, f)
		}
	}
	if len(cands) == 1 {
		t.adoptFirst(ctx, id, cands[0])
		return
	}
	t.update(func(s *Status) {
		if t.manual || t.instance != "" {
			return // chosen meanwhile
		}
		now := t.cfg.Now()
		if len(cands) == 0 {
			if s.State != StateSearching {
				s.Since = now
			}
			s.State, s.Candidates, s.LastError = StateSearching, nil, ""
			if err != nil {
				s.LastError = err.Error()
			}
			return
		}
		if s.State != StateChoose {
			s.Since = now
		}
		s.State, s.Candidates, s.LastError = StateChoose, cands, ""
	})
}

// adoptFirst adopts the only terminal found while none was chosen.
func (t *Tracker) adoptFirst(ctx context.Context, id Identity, term Terminal) {
	t.resolveMu.Lock()
	defer t.resolveMu.Unlock()
	next := adoptInto(id, term, t.cfg.Now())
	if err := t.cfg.Trust.SaveIdentity(ctx, next); err != nil {
		t.log.Error("the terminal's identity cannot be recorded: it is not adopted", "instance", term.Instance, "err", err)
		t.update(func(s *Status) {
			if !t.manual && t.instance == "" {
				s.LastError = fmt.Sprintf("%q answers, but its identity cannot be recorded, so it is not used: %v", term.Instance, err)
			}
		})
		return
	}
	adopted := false
	t.update(func(s *Status) {
		if t.manual || t.instance != "" {
			return // chosen meanwhile
		}
		t.identity = next
		t.connectLocked(s, term)
		adopted = true
	})
	if !adopted {
		return
	}
	t.log.Info("terminal adopted", "instance", term.Instance, "address", term.BaseURL, "certificate", FingerprintText(term.Fingerprint))
	if err := t.cfg.Store.Set(ctx, t.cfg.StoreKey, term.Instance); err != nil {
		t.log.Error("remember the terminal", "err", err)
	}
}

// Identity is the adopted terminal's identity as the Tracker holds it.
func (t *Tracker) Identity() Identity {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.identity.clone()
}

// Confirm is staff's word that the device waiting at address, presenting
// fingerprint ("" on plain HTTP), is the terminal: its address joins the
// identity and its certificate becomes the pinned one. It is used at once,
// unless payments are open on the terminal: then once they are settled
// (they are never moved to another device, even one staff vouch for).
// ErrNoSuchCandidate when that device is not the one waiting.
func (t *Tracker) Confirm(ctx context.Context, address, fingerprint string) error {
	p, id, err := t.waiting(address, fingerprint)
	if err != nil {
		return err
	}
	defer t.resolveMu.Unlock()
	next := id.Confirm(Terminal{Instance: p.Instance, BaseURL: p.Address, Fingerprint: p.Fingerprint}, "staff", t.cfg.Now())
	if err := t.cfg.Trust.SaveIdentity(ctx, next); err != nil {
		return fmt.Errorf("discovery: record the confirmed terminal: %w", err)
	}
	held := t.held(ctx, p.Instance)
	t.update(func(s *Status) {
		t.identity = next
		if held {
			c := p
			c.Confirmed = true
			t.pending, s.Pending = &c, clonePending(&c)
			return
		}
		t.connectLocked(s, Terminal{Instance: p.Instance, BaseURL: p.Address, Fingerprint: p.Fingerprint, Confirmed: true})
	})
	t.log.Info("staff confirmed the terminal", "instance", p.Instance, "address", p.Address, "certificate", FingerprintText(p.Fingerprint), "deferred", held)
	return nil
}

// Refuse is staff's word that the device waiting at address is not the
// terminal: it is never offered again at that address with that
// certificate. ErrNoSuchCandidate when that device is not the one waiting.
func (t *Tracker) Refuse(ctx context.Context, address, fingerprint string) error {
	p, id, err := t.waiting(address, fingerprint)
	if err != nil {
		return err
	}
	defer t.resolveMu.Unlock()
	next := id.Refuse(p.Address, p.Fingerprint, t.cfg.Now())
	if err := t.cfg.Trust.SaveIdentity(ctx, next); err != nil {
		return fmt.Errorf("discovery: record the refusal: %w", err)
	}
	t.update(func(s *Status) {
		t.identity, t.pending, s.Pending = next, nil, nil
	})
	t.log.Info("staff refused a device announcing itself as the terminal", "instance", p.Instance, "address", p.Address)
	return nil
}

// waiting returns the device waiting for staff if it is the one named,
// with resolveMu held (the caller releases it).
func (t *Tracker) waiting(address, fingerprint string) (Candidate, Identity, error) {
	fp := ""
	if strings.TrimSpace(fingerprint) != "" {
		var err error
		if fp, err = localapi.NormalizePin(fingerprint); err != nil {
			return Candidate{}, Identity{}, err
		}
	}
	t.resolveMu.Lock()
	t.mu.Lock()
	p, id, manual := t.pending, t.identity, t.manual
	t.mu.Unlock()
	if manual || p == nil || endpointKey(p.Address) != endpointKey(address) || p.Fingerprint != fp {
		t.resolveMu.Unlock()
		return Candidate{}, Identity{}, ErrNoSuchCandidate
	}
	return *p, id, nil
}
