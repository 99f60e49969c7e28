package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/comptoir-pos/comptoir/backend/discovery"
	"github.com/comptoir-pos/comptoir/backend/journal"
)

func cmdDiscover(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var common commonFlags
	fs := newFlagSet("discover", stderr, &common)
	timeout := fs.Duration("timeout", discovery.DefaultWindow, "how long to listen")
	ifaces := fs.String("iface", "", "interfaces to browse, comma-separated (default: every multicast IPv4 interface)")
	sims := fs.Bool("simulators", false, "also list simulated terminals (comptoir simulator --mdns)")
	choose := fs.String("choose", "", "adopt this instance (by name) as the terminal to use: bound to the address and certificate it answers with now")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	var list []string
	if *ifaces != "" {
		list = strings.Split(*ifaces, ",")
	}
	ifs, err := discovery.InterfacesByName(list)
	if err != nil {
		fmt.Fprintln(stderr, "comptoir discover:", err)
		return 2
	}
	opts := discovery.Options{Window: *timeout, Interfaces: ifs, AcceptSimulated: *sims, ClientOptions: baseOptions()}
	if dir, err := common.resolveDataDir(); err == nil {
		opts = announced(ctx, peekSettings{dir}, opts)
	}
	if *choose != "" {
		return chooseTerminal(ctx, common, *choose, opts, stdout, stderr)
	}
	// The stored trust, peeked at (the kiosk may hold the journal): a
	// terminal bound to HTTPS is never pinged over plain HTTP, and each
	// device found says what it is to the adopted one.
	var id discovery.Identity
	if dir, err := common.resolveDataDir(); err == nil {
		if id, err = readIdentity(ctx, peekSettings{dir}, common.terminalPin); err != nil {
			return failed(stderr, "discover", err)
		}
	}
	opts.HTTPS = id.HTTPS
	found, err := discovery.Browse(ctx, opts)
	for i := range found {
		if found[i].Confirmed {
			found[i].Standing = id.Judge(found[i])
		}
	}
	printJSON(stdout, found)
	if err != nil && !errors.Is(err, context.Canceled) {
		return failed(stderr, "discover", err)
	}
	return 0
}

// chooseTerminal adopts an instance: its name, the address and the
// certificate it answers with now, in the journal's settings, where the
// kiosk's discovery looks first. It must answer now, alone under its name,
// so that a typo or a device beside it is not adopted. Run on the PC
// itself, it is the owner's word, as staff's confirmation is.
func chooseTerminal(ctx context.Context, c commonFlags, name string, opts discovery.Options, stdout, stderr io.Writer) int {
	db, _, err := c.openJournal(ctx)
	if err != nil {
		return failed(stderr, "discover", err)
	}
	defer db.Close()
	trust, err := loadTrust(ctx, c, db)
	if err != nil {
		return failed(stderr, "discover", err)
	}
	opts.HTTPS = trust.https
	t, err := discovery.Resolve(ctx, name, opts)
	if err != nil {
		fmt.Fprintf(stderr, "comptoir discover: no terminal %q answers now: %v\n", name, err)
		return 1
	}
	store := identityStore{db: db, flagPin: c.terminalPin}
	id, err := readIdentity(ctx, db, c.terminalPin)
	if err != nil || !strings.EqualFold(id.Instance, t.Instance) {
		id = discovery.Identity{HTTPS: trust.https}
	}
	t.Standing = id.Judge(t)
	id = id.Confirm(t, "cli", time.Now())
	id.Instance = t.Instance
	// The name first: an identity is only stored for the chosen name.
	if err := (settingsStore{db}).Set(ctx, discovery.DefaultStoreKey, t.Instance); err != nil {
		return failed(stderr, "discover", err)
	}
	if err := store.SaveIdentity(ctx, id); err != nil {
		return failed(stderr, "discover", err)
	}
	printJSON(stdout, t)
	return 0
}

// settingsStore keeps discovery's choice in the journal's settings table.
type settingsStore struct{ db *journal.DB }

func (s settingsStore) Get(ctx context.Context, key string) (string, bool, error) {
	raw, ok, err := s.db.Setting(ctx, key)
	if err != nil || !ok {
		return "", false, err
	}
	var v string
	if err := json.Unmarshal(raw, &v); err != nil {
		// A damaged value is no choice: discovery starts over.
		return "", false, nil
	}
	return v, true, nil
}

func (s settingsStore) Set(ctx context.Context, key, value string) error {
	raw, err := json.Marshal(value)
	if err != nil {
		return err
	}
	return s.db.SetSetting(ctx, key, raw)
}

// ErrSeveralTerminals: discovery found several terminals and none was
// chosen.
var ErrSeveralTerminals = errors.New("several terminals found")

// ErrTerminalUnconfirmed: a device answers under the terminal's name with
// another identity, and staff have not confirmed it.
var ErrTerminalUnconfirmed = errors.New("the terminal is not confirmed")

// discoverTerminal starts a Tracker and waits until it uses a terminal:
// the one adopted (bound by the identity in the journal), or the only one
// found, adopted then. With waitForStaff (the kiosk), a device waiting for
// staff's confirmation is enough to start: the kiosk says the terminal is
// unavailable until staff confirm it in staff mode.
func discoverTerminal(ctx context.Context, db *journal.DB, wait time.Duration, trust terminalTrust, flagPin string, waitForStaff bool) (*discovery.Tracker, string, error) {
	tr, err := discovery.NewTracker(discovery.Config{
		Store: settingsStore{db}, Trust: identityStore{db: db, flagPin: flagPin}, Held: heldByOpenAttempts(db),
		ClientOptions: baseOptions(), Browse: announced(ctx, db, discovery.Options{HTTPS: trust.https, ClientOptions: baseOptions()}),
	})
	if err != nil {
		return nil, "", err
	}
	if err := tr.Start(ctx); err != nil {
		if errors.Is(err, errDamagedIdentity) {
			// No terminal can be believed: staff mode still starts, where
			// choosing the terminal again starts its identity afresh.
			return nil, "", fmt.Errorf("%w: %w", ErrNoTerminal, err)
		}
		return nil, "", err
	}
	deadline := time.Now().Add(wait)
	for {
		st := tr.Status()
		switch {
		case st.State == discovery.StateConnected:
			return tr, st.Instance, nil
		case st.Pending != nil && waitForStaff:
			return tr, st.Instance, nil
		case st.State == discovery.StateChoose:
			tr.Close()
			names := make([]string, 0, len(st.Candidates))
			for _, c := range st.Candidates {
				names = append(names, c.Instance)
			}
			return nil, "", fmt.Errorf("%w (%s): choose one in staff mode, or with `comptoir discover --choose`", ErrSeveralTerminals, strings.Join(names, ", "))
		case time.Now().After(deadline):
			tr.Close()
			if st.Pending != nil {
				return nil, "", fmt.Errorf("%w: %s", ErrTerminalUnconfirmed, st.LastError)
			}
			return nil, "", fmt.Errorf("%w (none found by mDNS within %s)", ErrNoTerminal, wait)
		}
		select {
		case <-ctx.Done():
			tr.Close()
			return nil, "", ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}
