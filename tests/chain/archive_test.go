package chain

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// A kiosk's monthly archive reaches head office by itself, and
// `comptoir verify --hub` checks it there with the key the kiosk exported
// at installation; an archive altered at the restaurant and sent again is
// kept beside the first, and refused (the line named); another key is
// refused.
func TestArchiveVerifiedAtHeadOffice(t *testing.T) {
	if testing.Short() {
		t.Skip("runs head office, a site and a kiosk as processes")
	}
	hub := startHub(t)
	r1 := startSite(t, hub, "r1")
	sim := startTerminal(t)
	k := startKiosk(t, r1, "A", sim.URL())
	eventually(t, "the kiosk ready", time.Minute, k.ready)
	if _, err := k.pay(0); err != nil {
		t.Fatal(err)
	}
	k.proc.stop(t)

	var key struct{ Base64 string }
	if err := json.Unmarshal([]byte(comptoir(t, "fiscal", "key", "--data-dir", k.dir)), &key); err != nil || key.Base64 == "" {
		t.Fatalf("fiscal key: %v", err)
	}
	period := time.Now().Format("2006-01")
	var made struct{ Path string }
	if err := json.Unmarshal([]byte(comptoir(t, "archive", "--data-dir", k.dir, "--period", period)), &made); err != nil || made.Path == "" {
		t.Fatalf("archive: %v", err)
	}
	k.proc.restart(t)
	versionsAt := func(n int) func() error {
		return func() error {
			var list []struct{ Kiosk, Period, SHA256 string }
			err := getJSON("http://"+hub.webAddr+"/api/fiscal?restaurant=r1", &list)
			if err == nil && len(list) != n {
				err = fmt.Errorf("%d versions kept: %+v", len(list), list)
			}
			return err
		}
	}
	eventually(t, "the archive at head office", time.Minute, versionsAt(1))
	verify := func(key string) (int, string, string) {
		cmd := exec.Command(bin, "verify", "--hub", "http://"+hub.webAddr, "--restaurant", "r1", "--kiosk", "A", "--period", period, "--key", key)
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return code, out.String(), errOut.String()
	}
	if code, out, msg := verify(key.Base64); code != 0 || !strings.Contains(out, `"keyGiven": true`) {
		t.Fatalf("verify at head office: exit %d\n%s\n%s", code, out, msg)
	}

	// Another kiosk's key: refused.
	other := t.TempDir()
	var otherKey struct{ Base64 string }
	_ = json.Unmarshal([]byte(comptoir(t, "fiscal", "key", "--data-dir", other)), &otherKey)
	if code, _, msg := verify(otherKey.Base64); code != 1 || !strings.Contains(msg, "another key") {
		t.Fatalf("with another key: exit %d %s", code, msg)
	}

	// Altered at the restaurant and sent again: both copies kept, the
	// altered one refused with its line.
	k.proc.stop(t)
	tamper(t, made.Path)
	k.proc.restart(t)
	eventually(t, "the altered copy at head office", time.Minute, versionsAt(2))
	code, out, msg := verify(key.Base64)
	if code != 1 || !strings.Contains(msg, "line 2:") || !strings.Contains(out, `"ok": true`) || !strings.Contains(out, `"ok": false`) {
		t.Fatalf("the altered archive: exit %d\n%s\n%s", code, out, msg)
	}
}

// tamper changes a digit in the first record's payload, as someone with
// a text editor would.
func tamper(t *testing.T, path string) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitN(raw, []byte("\n"), 3)
	at := bytes.Index(lines[1], []byte(`"payload":`))
	if len(lines) < 3 || at < 0 {
		t.Fatalf("the archive has no record to alter:\n%s", raw)
	}
	for i := at; i < len(lines[1]); i++ {
		if c := lines[1][i]; c >= '0' && c <= '9' {
			lines[1][i] = '0' + (c-'0'+1)%10
			break
		}
	}
	if err := os.WriteFile(path, bytes.Join(lines, []byte("\n")), 0o600); err != nil {
		t.Fatal(err)
	}
}
