package cli

import (
	"context"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"
	"time"
)

var testUI = fstest.MapFS{"index.html": {Data: []byte("<!doctype html><title>Comptoir</title>")}}

// Browser mode listens on loopback unless --allow-lan says otherwise: an
// address on the LAN without it is refused before anything starts, and
// the message names the flag.
func TestServeStaysOnLoopbackUnlessAllowed(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", ":0", "[::]:0", "192.0.2.2:0", "kiosk.example.test:0"} {
		s := startServe(t, "--demo", "--addr", addr, "--data-dir", t.TempDir())
		select {
		case <-s.exited:
			if s.code != 2 || !strings.Contains(s.errOut.String(), "--allow-lan") {
				t.Errorf("--addr %s: exit %d %q", addr, s.code, s.errOut.String())
			}
		case <-time.After(30 * time.Second):
			t.Errorf("--addr %s without --allow-lan: still serving (%s)", addr, s.out.String())
		}
	}
	for _, addr := range []string{"127.0.0.1:8080", "localhost:8080", "[::1]:8080", "127.0.0.2:8080"} {
		if _, err := servedHosts(addr, false, ""); err != nil {
			t.Errorf("loopback %s refused: %v", addr, err)
		}
	}
	if hosts, err := servedHosts("0.0.0.0:8080", true, "kiosk.lan, caisse"); err != nil || strings.Join(hosts, ",") != "kiosk.lan,caisse" {
		t.Errorf("--allow-lan --host: %v %v", hosts, err)
	}
	if hosts, err := servedHosts("192.0.2.2:8080", true, ""); err != nil || strings.Join(hosts, ",") != "192.0.2.2" {
		t.Errorf("--allow-lan on one address: %v %v", hosts, err)
	}
	if _, err := servedHosts("0.0.0.0:8080", true, "kiosk.lan:8080"); err == nil {
		t.Error("a --host with a port was accepted")
	}
}

// serving is `comptoir serve` running in this process.
type serving struct {
	out, errOut syncBuffer
	cancel      context.CancelFunc
	exited      chan struct{}
	code        int
}

func startServe(t *testing.T, args ...string) *serving {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s := &serving{cancel: cancel, exited: make(chan struct{})}
	go func() {
		defer close(s.exited)
		s.code = cmdServe(ctx, testUI, args, &s.out, &s.errOut)
	}()
	t.Cleanup(func() { s.stop() })
	return s
}

// stop ends it and returns its exit code.
func (s *serving) stop() int {
	s.cancel()
	<-s.exited
	return s.code
}

// waitFor waits until re matches what w holds, and returns its first group.
func (s *serving) waitFor(t *testing.T, w *syncBuffer, re *regexp.Regexp) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if m := re.FindStringSubmatch(w.String()); m != nil {
			return m[1]
		}
		select {
		case <-s.exited:
			t.Fatalf("serve exited with %d before %s: %s", s.code, re, s.errOut.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("never saw %s", re)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

var codeLine = regexp.MustCompile(`Pairing code for a browser on the LAN: ([A-Z0-9]{4}-[A-Z0-9]{4}-[A-Z0-9]{4})`)

// With --allow-lan the pairing code is shown on stderr, never in the log
// file; the Host check takes --host; a code pairs one browser and the next
// is shown.
func TestServeOnTheLANShowsAPairingCode(t *testing.T) {
	dir := t.TempDir()
	s := startServe(t, "--demo", "--addr", "127.0.0.1:0", "--allow-lan", "--host", "kiosk.lan", "--data-dir", dir)
	base := s.waitFor(t, &s.out, regexp.MustCompile(`Comptoir at (http://\S+)/ `))
	first := s.waitFor(t, &s.errOut, codeLine)

	get := func(host string) int {
		req, _ := http.NewRequest(http.MethodGet, base+"/", nil)
		req.Host = host
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := get("kiosk.lan:8080"); code != http.StatusOK {
		t.Fatalf("the --host name: %d", code)
	}
	if code := get("[::ffff:7f00:1]"); code != http.StatusForbidden {
		t.Fatalf("an IPv4-mapped literal: %d", code)
	}
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noRedirect.PostForm(base+"/pair", url.Values{"code": {first}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || len(resp.Cookies()) != 1 {
		t.Fatalf("pairing with the code shown: %d", resp.StatusCode)
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(codeLine.FindAllStringSubmatch(s.errOut.String(), -1)) < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("no new code after a pairing: %s", s.errOut.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	st, err := os.Stat(filepath.Join(dir, pairingKeyFile))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("the pairing key file: %v %v", st, err)
	}
	if code := s.stop(); code != 0 {
		t.Fatalf("exit %d: %s", code, s.errOut.String())
	}
	logs, err := os.ReadFile(filepath.Join(dir, "logs", "comptoir.log"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range codeLine.FindAllStringSubmatch(s.errOut.String(), -1) {
		if strings.Contains(string(logs), m[1]) || strings.Contains(string(logs), strings.ReplaceAll(m[1], "-", "")) {
			t.Fatalf("the pairing code %s is in the log file", m[1])
		}
	}
}
