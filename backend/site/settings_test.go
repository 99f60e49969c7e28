package site

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// The site's settings: defaults, the kiosk named by its number prefix, a
// bad value refused by name with its default kept.
func TestLoadSettings(t *testing.T) {
	s, err := LoadSettings(nil)
	if err != nil || s.Restaurant != "local" || s.Kiosk != "main" || s.KioskNamed || s.URL != "" {
		t.Fatalf("defaults %+v %v", s, err)
	}
	all := map[string]json.RawMessage{
		SettingPrefix: json.RawMessage(`"B"`), SettingRestaurant: json.RawMessage(`"paris 11"`),
		SettingWarnAfter: json.RawMessage(`120`), SettingStations: json.RawMessage(`{"grill":["burgers"]}`),
	}
	s, err = LoadSettings(all)
	if err == nil || s.Restaurant != "local" || s.Kiosk != "B" || !s.KioskNamed || s.WarnAfter != 2*time.Minute || len(s.Stations["grill"]) != 1 {
		t.Fatalf("%+v %v", s, err)
	}
}

// A secret file others can read is refused: it would be no secret.
func TestReadSecretPrivateOnly(t *testing.T) {
	dir := t.TempDir()
	if v, err := ReadSecret(dir, SecretFile); v != "" || err != nil {
		t.Fatalf("no file: %q %v", v, err)
	}
	p := filepath.Join(dir, SecretFile)
	if err := os.WriteFile(p, []byte("tok\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadSecret(dir, SecretFile); err == nil {
		t.Fatal("a world-readable secret was taken")
	}
	if err := os.Chmod(p, 0o600); err != nil {
		t.Fatal(err)
	}
	if v, err := ReadSecret(dir, SecretFile); v != "tok" || err != nil {
		t.Fatalf("%q %v", v, err)
	}
}
