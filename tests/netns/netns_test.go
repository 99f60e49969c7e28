// Package netns runs discovery across two network namespaces joined by a veth
// pair: the simulated terminal advertises itself in one, `comptoir discover`
// and `comptoir pay` find and use it from the other, as a kiosk and a
// terminal do on a shop's LAN. Nothing leaves the machine: the namespaces
// and their addresses (10.213.7.0/24) exist only for the test. It needs root
// and `ip` (iproute2); elsewhere it is skipped, saying why.
package netns

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func ip(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
		t.Fatalf("ip %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

func TestDiscoveryAcrossNamespaces(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and makes network namespaces")
	}
	if os.Geteuid() != 0 {
		t.Skip("network namespaces need root")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("no `ip` command (iproute2)")
	}
	tag := fmt.Sprintf("%04x", rand.IntN(0xffff))
	term, kiosk := "cpt-term-"+tag, "cpt-kiosk-"+tag
	if out, err := exec.Command("ip", "netns", "add", term).CombinedOutput(); err != nil {
		t.Skipf("this machine does not allow network namespaces: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("ip", "netns", "del", term).Run() })
	ip(t, "netns", "add", kiosk)
	t.Cleanup(func() { exec.Command("ip", "netns", "del", kiosk).Run() })
	ip(t, "link", "add", "vt"+tag, "type", "veth", "peer", "name", "vk"+tag)
	ip(t, "link", "set", "vt"+tag, "netns", term)
	ip(t, "link", "set", "vk"+tag, "netns", kiosk)
	for _, c := range [][]string{
		{"netns", "exec", term, "ip", "addr", "add", "10.213.7.1/24", "dev", "vt" + tag},
		{"netns", "exec", term, "ip", "link", "set", "vt" + tag, "up"},
		{"netns", "exec", term, "ip", "link", "set", "lo", "up"},
		{"netns", "exec", kiosk, "ip", "addr", "add", "10.213.7.2/24", "dev", "vk" + tag},
		{"netns", "exec", kiosk, "ip", "link", "set", "vk" + tag, "up"},
		{"netns", "exec", kiosk, "ip", "link", "set", "lo", "up"},
	} {
		ip(t, c...)
	}

	bin := filepath.Join(t.TempDir(), "comptoir")
	if out, err := exec.Command("go", "build", "-o", bin, "../..").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	sim := exec.CommandContext(ctx, "ip", "netns", "exec", term, bin, "simulator", "--addr", "10.213.7.1:16125", "--mdns", "--timescale", "0.01")
	stdout, _ := sim.StdoutPipe()
	if err := sim.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sim.Process.Kill(); sim.Wait() })
	if !bufio.NewScanner(stdout).Scan() {
		t.Fatal("the simulator did not start")
	}

	// The kiosk's side: discover (simulators are ignored unless asked for).
	var found []struct {
		Instance  string `json:"instance"`
		BaseURL   string `json:"baseUrl"`
		Confirmed bool   `json:"confirmed"`
	}
	deadline := time.Now().Add(20 * time.Second)
	for len(found) == 0 || !found[0].Confirmed {
		if time.Now().After(deadline) {
			t.Fatalf("the terminal in the other namespace was not found: %+v", found)
		}
		out, err := exec.CommandContext(ctx, "ip", "netns", "exec", kiosk, bin, "discover", "--simulators", "--timeout", "2s").Output()
		if err != nil {
			t.Fatalf("discover: %v", err)
		}
		found = nil
		json.Unmarshal(out, &found)
	}
	if found[0].BaseURL != "http://10.213.7.1:16125/localapi/v4" || !strings.Contains(strings.ToLower(found[0].Instance), "yavin") {
		t.Fatalf("found %+v", found)
	}

	// And a payment over that link, through the journal.
	data := t.TempDir()
	var out bytes.Buffer
	pay := exec.CommandContext(ctx, "ip", "netns", "exec", kiosk, bin, "pay", "--terminal", found[0].BaseURL, "--data-dir", data, "--amount", "1200")
	pay.Stdout = &out
	if err := pay.Run(); err != nil {
		t.Fatalf("pay: %v %s", err, out.String())
	}
	if !strings.Contains(out.String(), `"approved"`) {
		t.Fatalf("pay printed %s", out.String())
	}
}
