package discovery

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/internal/testenv"
)

func TestUnescape(t *testing.T) {
	for in, want := range map[string]string{
		`Yavin\ SIM-7E57`:      "Yavin SIM-7E57",
		`plain`:                "plain",
		`a\.b`:                 "a.b",
		`caf\195\169\ Yavin`:   "café Yavin",
		`back\\slash`:          `back\slash`,
		`trailing\`:            `trailing\`,
		`\999`:                 "999",
		`Yavin\ \(Caisse\ 2\)`: "Yavin (Caisse 2)",
	} {
		if got := unescape(in); got != want {
			t.Errorf("unescape(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestMatches(t *testing.T) {
	o := Options{}.withDefaults()
	for _, c := range []struct {
		name string
		port int
		want bool
	}{
		{"Yavin SIM-7E57", 8080, true},
		{"YAVIN-123", 80, true},
		{"Caisse yavin", 80, true},
		{"Kitchen display", 16125, true},
		{"Office printer", 631, false},
		{"", 0, false},
	} {
		if got := o.matches(c.name, c.port); got != c.want {
			t.Errorf("matches(%q, %d) = %v", c.name, c.port, got)
		}
	}
	o.Port = -1
	if o.matches("Kitchen display", 16125) {
		t.Error("a negative Port still matches by port")
	}
}

func TestBrowseOnLoopback(t *testing.T) {
	needMulticast(t)
	u := tag()
	sim := newSim(t, "Yavin SIM "+u)
	advertiseSim(t, sim)
	simPort := sim.Addr().(*net.TCPAddr).Port

	// Port 16125 keeps an instance whatever its name; a dead port leaves
	// it unconfirmed; neither name nor port: dropped.
	advertise(t, "Kitchen "+u, DefaultPort)
	ghostPort := testenv.FreePort(t)
	advertise(t, "yAvIn Ghost "+u, ghostPort)
	advertise(t, "Office Printer "+u, testenv.FreePort(t))
	// A path= in the TXT record moves the Local API; the fake pinger
	// answers for that URL only and pings everything else for real.
	customPort := testenv.FreePort(t)
	advertise(t, "Yavin Custom "+u, customPort, "path=/custom/v4")
	customURL := fmt.Sprintf("http://127.0.0.1:%d/custom/v4", customPort)

	var mu sync.Mutex
	var pinged []string
	opts := loOptions(t, "yavin")
	opts.Port = DefaultPort
	opts.Window = 2 * time.Second
	opts.Pinger = func(ctx context.Context, baseURL, pin string) error {
		mu.Lock()
		pinged = append(pinged, baseURL)
		mu.Unlock()
		if baseURL == customURL {
			return nil
		}
		return pingWith(nil)(ctx, baseURL, pin)
	}
	all, err := Browse(ctxFor(t, 15*time.Second), opts)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Terminal{}
	for _, term := range all {
		if strings.HasSuffix(term.Instance, u) {
			got[term.Instance] = term
		}
	}
	t.Logf("found %d instances of this test in %d", len(got), len(all))

	s, ok := got["Yavin SIM "+u]
	switch {
	case !ok:
		t.Fatalf("simulator not found: %+v", all)
	case !s.Confirmed || !s.Ping.OK || s.Ping.Error != "":
		t.Errorf("simulator not confirmed: %+v", s)
	case s.BaseURL != sim.URL():
		t.Errorf("base URL %q, want %q", s.BaseURL, sim.URL())
	case s.Port != simPort || !slices.Equal(s.Addrs, []string{"127.0.0.1"}) || !strings.HasSuffix(s.Host, ".local"):
		t.Errorf("simulator entry %+v", s)
	case !slices.Contains(s.TXT, "path=/localapi/v4") || s.FoundAfter <= 0 || s.FoundAfter > opts.Window:
		t.Errorf("simulator entry %+v", s)
	}
	if k, ok := got["Kitchen "+u]; !ok || k.Port != DefaultPort {
		t.Errorf("an instance on port 16125 was dropped: %+v", k)
	}
	if g, ok := got["yAvIn Ghost "+u]; !ok {
		t.Error("a yavin instance with nothing listening was not reported")
	} else if g.Confirmed || g.Ping.OK || g.Ping.Error == "" || g.BaseURL != fmt.Sprintf("http://127.0.0.1:%d/localapi/v4", ghostPort) {
		t.Errorf("ghost: %+v", g)
	}
	if _, ok := got["Office Printer "+u]; ok {
		t.Error("an instance matching neither name nor port was kept")
	}
	if c, ok := got["Yavin Custom "+u]; !ok || !c.Confirmed || c.BaseURL != customURL {
		t.Errorf("TXT path not used or fake ping ignored: %+v", c)
	}
	for _, term := range Confirmed(all) {
		if !term.Confirmed {
			t.Errorf("Confirmed kept %+v", term)
		}
	}
	if i := slices.IndexFunc(all, func(t Terminal) bool { return !t.Confirmed }); i >= 0 && slices.ContainsFunc(all[i:], func(t Terminal) bool { return t.Confirmed }) {
		t.Error("confirmed terminals are not listed first")
	}

	// What `comptoir discover` prints.
	raw, err := json.Marshal(all)
	if err != nil {
		t.Fatal(err)
	}
	var printed []map[string]any
	if err := json.Unmarshal(raw, &printed); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"instance", "host", "addresses", "port", "txt", "baseUrl", "confirmed", "ping", "foundAfterMs"} {
		if _, ok := printed[0][key]; !ok {
			t.Errorf("JSON has no %q: %s", key, raw)
		}
	}
}

func TestBrowseNothing(t *testing.T) {
	needMulticast(t)
	opts := loOptions(t, "nothing-called-this-"+tag())
	opts.Window = 500 * time.Millisecond
	ts, err := Browse(ctxFor(t, 10*time.Second), opts)
	if err != nil || ts == nil || len(ts) != 0 {
		t.Errorf("Browse = %v, %v; want [] and no error", ts, err)
	}
	if raw, _ := json.Marshal(ts); string(raw) != "[]" {
		t.Errorf("prints %s", raw)
	}
}

func TestBrowseEndsWithContext(t *testing.T) {
	opts := loOptions(t, "x")
	opts.Window = time.Minute
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() { _, err := Browse(ctx, opts); done <- err }()
	select {
	case err := <-done:
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("err %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Browse did not end with its context")
	}
}

func TestResolve(t *testing.T) {
	needMulticast(t)
	u := tag()
	name := "Yavin SIM " + u
	sim := newSim(t, name)
	advertiseSim(t, sim)
	advertise(t, "Yavin Other "+u, testenv.FreePort(t))
	opts := loOptions(t, "yavin")

	// The name is matched unescaped and without case.
	got, err := Resolve(ctxFor(t, 10*time.Second), strings.ToLower(name), opts)
	if err != nil {
		t.Fatal(err)
	}
	if got.Instance != name || got.BaseURL != sim.URL() || !got.Confirmed {
		t.Errorf("resolved %+v", got)
	}

	_, err = Resolve(ctxFor(t, 10*time.Second), "Yavin Other "+u, opts)
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "Yavin Other") {
		t.Errorf("an instance that does not answer its ping: %v", err)
	}
	_, err = Resolve(ctxFor(t, 10*time.Second), "Yavin Nobody "+u, opts)
	if !errors.Is(err, ErrNotFound) {
		t.Errorf("an unknown instance: %v", err)
	}
}

func TestInterfacesByName(t *testing.T) {
	lo := testenv.Loopback(t)
	got, err := InterfacesByName([]string{" " + lo.Name + " ", ""})
	if err != nil || len(got) != 1 || got[0].Index != lo.Index {
		t.Errorf("InterfacesByName(%q) = %v, %v", lo.Name, got, err)
	}
	if got, err := InterfacesByName(nil); got != nil || err != nil {
		t.Errorf("no names: %v, %v", got, err)
	}
	if _, err := InterfacesByName([]string{"no-such-if0"}); err == nil {
		t.Error("an unknown interface was accepted")
	}
	for _, ifi := range DefaultInterfaces() {
		if ifi.Flags&net.FlagLoopback != 0 || ifi.Flags&net.FlagMulticast == 0 {
			t.Errorf("default interface %v", ifi)
		}
	}
}
