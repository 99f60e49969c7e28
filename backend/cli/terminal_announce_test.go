package cli

import (
	"bytes"
	"encoding/json"
	"net"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/grandcat/zeroconf"

	"github.com/comptoir-pos/comptoir/backend/discovery"
	"github.com/comptoir-pos/comptoir/backend/internal/testenv"
)

// A terminal that announces itself under another service type and name
// than the payment app's known ones is found once the settings name them;
// without them it is not (the specification does not show either).
func TestDiscoverFindsATerminalAnnouncedOtherwiseByItsSettings(t *testing.T) {
	sim := startSim(t)
	u, err := url.Parse(sim.URL())
	if err != nil {
		t.Fatal(err)
	}
	port, _ := strconv.Atoi(u.Port())
	lo := testenv.Loopback(t)
	instance := "Counter-" + strconv.Itoa(port)
	srv, err := zeroconf.RegisterProxy(instance, "_payterm._tcp", discovery.DefaultDomain, port, "payterm-"+strconv.Itoa(port),
		[]string{"127.0.0.1"}, nil, []net.Interface{lo})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)

	dir := t.TempDir()
	discover := func() []string {
		t.Helper()
		var out, errOut bytes.Buffer
		if code := run([]string{"discover", "--data-dir", dir, "--iface", lo.Name, "--timeout", "2s"}, &out, &errOut); code != 0 {
			t.Fatalf("discover: exit %d %s", code, errOut.String())
		}
		var found []struct {
			Instance  string `json:"instance"`
			Confirmed bool   `json:"confirmed"`
		}
		if err := json.Unmarshal(out.Bytes(), &found); err != nil {
			t.Fatalf("%v: %s", err, out.String())
		}
		var names []string
		for _, f := range found {
			if f.Confirmed {
				names = append(names, f.Instance)
			}
		}
		return names
	}
	set := func(key, value string) {
		t.Helper()
		var errOut bytes.Buffer
		if code := run([]string{"settings", "--data-dir", dir, "set", key, value}, &bytes.Buffer{}, &errOut); code != 0 {
			t.Fatalf("settings set %s: exit %d %s", key, code, errOut.String())
		}
	}
	set("kiosk.idle_seconds", "60") // a journal, without the two settings
	if names := discover(); len(names) != 0 {
		t.Fatalf("found %v under the defaults", names)
	}
	set(settingMDNSService, `"_payterm._tcp"`)
	set(settingMDNSName, `"counter"`)
	if names := discover(); strings.Join(names, ",") != instance {
		t.Fatalf("found %v, want %s", names, instance)
	}
}

// A setting that is not a service type, or an empty name, leaves the
// default in force.
func TestAnnouncedIgnoresValuesThatCannotBe(t *testing.T) {
	db := testenv.Journal(t, t.TempDir())
	ctx := t.Context()
	for key, raw := range map[string]string{settingMDNSService: `"http"`, settingMDNSName: `"  "`} {
		if err := db.SetSetting(ctx, key, json.RawMessage(raw)); err != nil {
			t.Fatal(err)
		}
	}
	o := announced(ctx, db, discovery.Options{})
	if o.ServiceType != "" || o.NameFilter != "" {
		t.Fatalf("options %+v: a damaged setting replaced the default", o)
	}
	for key, raw := range map[string]string{settingMDNSService: `"_x-y._udp"`, settingMDNSName: `"Till 2"`} {
		if err := db.SetSetting(ctx, key, json.RawMessage(raw)); err != nil {
			t.Fatal(err)
		}
	}
	if o := announced(ctx, db, discovery.Options{}); o.ServiceType != "_x-y._udp" || o.NameFilter != "Till 2" {
		t.Fatalf("options %+v", o)
	}
}
