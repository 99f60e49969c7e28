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
	choose := fs.String("choose", "", "remember this instance (by name) as the terminal to use, when several answer")
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
	opts := discovery.Options{Window: *timeout, Interfaces: ifs, AcceptSimulated: *sims}
	if *choose != "" {
		return chooseTerminal(ctx, common, *choose, opts, stdout, stderr)
	}
	found, err := discovery.Browse(ctx, opts)
	printJSON(stdout, found)
	if err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintln(stderr, "comptoir discover:", err)
		return 1
	}
	return 0
}

// chooseTerminal remembers an instance name in the journal's settings, where
// the kiosk's discovery looks first. The name is checked against what
// answers now, so a typo is not remembered.
func chooseTerminal(ctx context.Context, c commonFlags, name string, opts discovery.Options, stdout, stderr io.Writer) int {
	dir, err := c.resolveDataDir()
	if err != nil {
		fmt.Fprintln(stderr, "comptoir discover:", err)
		return 1
	}
	db, err := journal.Open(ctx, dir)
	if err != nil {
		fmt.Fprintln(stderr, "comptoir discover:", err)
		return 1
	}
	defer db.Close()
	t, err := discovery.Resolve(ctx, name, opts)
	if err != nil {
		fmt.Fprintf(stderr, "comptoir discover: no terminal %q answers now: %v\n", name, err)
		return 1
	}
	if err := (settingsStore{db}).Set(ctx, discovery.DefaultStoreKey, t.Instance); err != nil {
		fmt.Fprintln(stderr, "comptoir discover:", err)
		return 1
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

// discoverTerminal starts a Tracker and waits until it uses a terminal:
// the one remembered in the journal, or the only one found.
func discoverTerminal(ctx context.Context, db *journal.DB, wait time.Duration, trust terminalTrust) (*discovery.Tracker, string, error) {
	tr, err := discovery.NewTracker(discovery.Config{Store: settingsStore{db}, ClientOptions: trust.options(),
		Browse: discovery.Options{HTTPS: trust.https, ClientOptions: trust.options()}})
	if err != nil {
		return nil, "", err
	}
	if err := tr.Start(ctx); err != nil {
		return nil, "", err
	}
	deadline := time.Now().Add(wait)
	for {
		st := tr.Status()
		switch {
		case st.State == discovery.StateConnected:
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
