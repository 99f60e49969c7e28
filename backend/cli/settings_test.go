package cli

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/comptoir-pos/comptoir/backend/fault"
	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/settings"
	"github.com/comptoir-pos/comptoir/backend/staff"
	"github.com/comptoir-pos/comptoir/backend/staffapi"
)

// settingsRun runs `comptoir settings --data-dir dir args...` with input on
// standard input.
func settingsRun(t *testing.T, dir, input string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	stdin = strings.NewReader(input)
	defer func() { stdin = os.Stdin }()
	var out, errOut bytes.Buffer
	code = run(append([]string{"settings", "--data-dir", dir}, args...), &out, &errOut)
	return code, out.String(), errOut.String()
}

// storedKey is the key in the journal, "" when none.
func storedKey(t *testing.T, dir string) string {
	t.Helper()
	db, err := journal.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	k, _, err := (settingsStore{db}).Get(context.Background(), settingCloudKey)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// A secret given on the command line is refused, and not stored; it is
// set from standard input.
func TestASecretIsNeverTakenFromTheCommandLine(t *testing.T) {
	dir := t.TempDir()
	code, _, errOut := settingsRun(t, dir, "", "set", settingCloudKey, `"sk_argv_0123"`)
	if code != 2 || !strings.Contains(errOut, "set-secret") || strings.Contains(errOut, "sk_argv_0123") {
		t.Fatalf("a key in argv: exit %d %q", code, errOut)
	}
	if k := storedKey(t, dir); k != "" {
		t.Fatalf("the key from argv was stored: %q", k)
	}
	if code, _, errOut := settingsRun(t, dir, "", "set-secret", settingCloudKey); code != 2 || !strings.Contains(errOut, "standard input") {
		t.Fatalf("no key on stdin: exit %d %q", code, errOut)
	}
	if code, _, _ := settingsRun(t, dir, "x\n", "set-secret", settings.SettingMode); code != 2 {
		t.Fatalf("set-secret of a setting that is no secret: exit %d", code)
	}
	code, out, errOut := settingsRun(t, dir, "  sk_stdin_4567\r\n", "set-secret", settingCloudKey)
	if code != 0 || strings.Contains(out+errOut, "sk_stdin_4567") {
		t.Fatalf("set-secret: exit %d %q %q", code, out, errOut)
	}
	if k := storedKey(t, dir); k != "sk_stdin_4567" {
		t.Fatalf("stored key %q", k)
	}
	if _, out, _ := settingsRun(t, dir, "", "list"); strings.Contains(out, "sk_stdin_4567") || !strings.Contains(out, "hidden") {
		t.Fatalf("list shows the key: %s", out)
	}
}

// A new address for the key (cloud.url, ws.url) clears the saved key:
// the key goes only to the host it was entered for.
func TestANewCloudAddressClearsTheKey(t *testing.T) {
	t.Setenv(envCloudKey, "")
	dir := t.TempDir()
	if code, _, errOut := settingsRun(t, dir, "", "set", settingCloudURL, `"https://cloud-a.example.test"`); code != 0 {
		t.Fatal(errOut)
	}
	if code, _, errOut := settingsRun(t, dir, "sk_for_a\n", "set-secret", settingCloudKey); code != 0 {
		t.Fatal(errOut)
	}
	// The same address again keeps it.
	if code, _, errOut := settingsRun(t, dir, "", "set", settingCloudURL, `"https://cloud-a.example.test"`); code != 0 || strings.Contains(errOut, "cleared") {
		t.Fatalf("same address: exit %d %q", code, errOut)
	}
	if storedKey(t, dir) != "sk_for_a" {
		t.Fatal("the key was cleared for the same address")
	}
	for _, c := range []struct{ key, value string }{
		{settingCloudURL, `"https://evil.example.test"`},
		{settingWSURL, `"https://evil.example.test/v5"`},
	} {
		code, _, errOut := settingsRun(t, dir, "", "set", c.key, c.value)
		if code != 0 || !strings.Contains(errOut, "cleared") || !strings.Contains(errOut, "set-secret") {
			t.Fatalf("%s: exit %d %q", c.key, code, errOut)
		}
		if k := storedKey(t, dir); k != "" {
			t.Fatalf("%s changed, the key is still saved", c.key)
		}
		db, err := journal.Open(context.Background(), dir)
		if err != nil {
			t.Fatal(err)
		}
		_, err = cloudKey(context.Background(), db)
		db.Close()
		if err == nil || !strings.Contains(err.Error(), "set-secret") {
			t.Fatalf("%s: cloudKey after the change: %v", c.key, err)
		}
		if code, _, errOut := settingsRun(t, dir, "sk_again\n", "set-secret", settingCloudKey); code != 0 {
			t.Fatal(errOut)
		}
	}
}

// From staff mode, the saved key cannot be sent to a new cloud address:
// the key must be entered with it.
func TestStaffCannotSendTheSavedKeyToAnotherHost(t *testing.T) {
	ctx := context.Background()
	const a, evil = "https://cloud-a.example.test", "https://evil.example.test"
	c := newControl(t, &terminalLink{how: "address", url: "http://10.0.0.5:16125/localapi/v4"})
	if err := c.SetCloud(ctx, staffapi.CloudChoice{On: true, URL: a, Serial: "SN-1", Key: "sk_for_a"}); err != nil {
		t.Fatal(err)
	}
	err := c.SetCloud(ctx, staffapi.CloudChoice{On: true, URL: evil, Serial: "SN-1"})
	if fault.CodeOf(err) != staff.EINVALID || !strings.Contains(err.Error(), "key") {
		t.Fatalf("a new address with the saved key: %v", err)
	}
	if info := c.Info(ctx); info.Cloud.URL != a {
		t.Fatalf("the refused address was saved: %+v", info.Cloud)
	}
	// The same address keeps the saved key; a new one with its key is fine.
	if err := c.SetCloud(ctx, staffapi.CloudChoice{On: true, URL: a, Serial: "SN-2"}); err != nil {
		t.Fatal(err)
	}
	if err := c.SetCloud(ctx, staffapi.CloudChoice{On: true, URL: evil, Serial: "SN-1", Key: "sk_for_evil"}); err != nil {
		t.Fatal(err)
	}
	// A key saved on the PC for no address yet is not sent to the first
	// address staff type either.
	c2 := newControl(t, &terminalLink{how: "address", url: "http://10.0.0.5:16125/localapi/v4"})
	if err := (settingsStore{c2.db}).Set(ctx, settingCloudKey, "sk_from_the_pc"); err != nil {
		t.Fatal(err)
	}
	if err := c2.SetCloud(ctx, staffapi.CloudChoice{On: true, URL: evil, Serial: "SN-1"}); fault.CodeOf(err) != staff.EINVALID {
		t.Fatalf("the PC's key sent to the first address staff type: %v", err)
	}
}

// A receipt QR address that customers could be sent to is checked when it
// is set, not only when the kiosk loads it.
func TestSettingsRefuseABadQRURL(t *testing.T) {
	dir := t.TempDir()
	code, _, errOut := settingsRun(t, dir, "", "set", settings.SettingMerchant, `{"name":"Café","qrUrl":"javascript:alert(1)"}`)
	if code != 2 || !strings.Contains(errOut, "qrUrl") || !strings.Contains(errOut, "https") {
		t.Fatalf("a javascript: QR address: exit %d %q", code, errOut)
	}
	if code, _, _ := settingsRun(t, dir, "", "get", settings.SettingMerchant); code != 1 {
		t.Fatal("the refused merchant was stored")
	}
	if code, _, errOut := settingsRun(t, dir, "", "set", settings.SettingMerchant, `{"name":"Café","qrUrl":"https://r.example.test/{order}"}`); code != 0 {
		t.Fatal(errOut)
	}
}
