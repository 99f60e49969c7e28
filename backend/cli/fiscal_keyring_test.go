package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/comptoir-pos/comptoir/backend/fiscal"
	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/zalando/go-keyring"
)

type keyReport struct {
	Base64, KeyStore, Keyring, Where, Witness, Warning string
	Outside                                            bool
}

func fiscalKey(t *testing.T, dir string) (int, keyReport, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run([]string{"fiscal", "key", "--data-dir", dir}, &out, &errOut)
	var r keyReport
	if code == 0 {
		if err := json.Unmarshal(out.Bytes(), &r); err != nil {
			t.Fatalf("%v: %s", err, out.String())
		}
	}
	return code, r, errOut.String()
}

// Asked for, the Secret Service keeps the key (go-keyring's memory keyring
// stands for it here): `comptoir fiscal key` says so, the key is not in
// the data folder, the witness stays there. A keyring that cannot be
// reached leaves the key beside the data, and the command says it.
func TestFiscalKeyInTheAskedKeyring(t *testing.T) {
	t.Setenv("COMPTOIR_FISCAL_KEYS", "")
	t.Setenv(keyringEnv, "secret-service")
	keyring.MockInit()
	dir := t.TempDir()
	code, r, msg := fiscalKey(t, dir)
	if code != 0 || r.Keyring != fiscal.SecretService || !r.Outside || r.KeyStore != "" || r.Warning != "" ||
		!strings.Contains(msg, "kept in "+fiscal.SecretService) {
		t.Fatalf("exit %d %+v %s", code, r, msg)
	}
	if _, err := os.Stat(filepath.Join(dir, fiscal.PrivateKeyFile)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the signing key is in the data folder: %v", err)
	}
	if r.Witness != filepath.Join(dir, fiscal.WitnessFile) {
		t.Fatalf("witness %s", r.Witness)
	}
	ks, err := keyStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	secret, err := keyring.Get(fiscal.KeyringService, ks.Account)
	if err != nil || !strings.Contains(secret, "PRIVATE KEY") {
		t.Fatalf("the keyring: %v", err)
	}
	if code, again, _ := fiscalKey(t, dir); code != 0 || again.Base64 != r.Base64 {
		t.Fatalf("again: exit %d, %s then %s", code, r.Base64, again.Base64)
	}

	keyring.MockInitWithError(errors.New("no session bus"))
	other := t.TempDir()
	code, r, msg = fiscalKey(t, other)
	if code != 0 || r.Outside || r.Keyring != "" || r.KeyStore != other || !strings.Contains(r.Warning, "no session bus") ||
		!strings.Contains(msg, "comptoir: fiscal: "+fiscal.SecretService+" cannot be reached") || !strings.Contains(msg, "fallback") {
		t.Fatalf("unreachable: exit %d %+v %s", code, r, msg)
	}
	if _, err := os.Stat(filepath.Join(other, fiscal.PrivateKeyFile)); err != nil {
		t.Fatalf("the fallback key: %v", err)
	}
	// The first folder's key is in the keyring: no new one beside the data.
	if code, _, msg := fiscalKey(t, dir); code != 1 || !strings.Contains(msg, "may hold the signing key") {
		t.Fatalf("a second key: exit %d %s", code, msg)
	}
	// The kiosk gets the warning, for its log and staff mode.
	db, err := journal.Open(t.Context(), other)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if l, note, err := openLedger(t.Context(), &payments{dir: other, db: db}); err != nil || l == nil || note != r.Warning {
		t.Fatalf("the kiosk's ledger: %v, warning %q", err, note)
	}
}

// A keyring that cannot be asked for is a clear error, before anything is
// made.
func TestFiscalKeyringSettingIsChecked(t *testing.T) {
	t.Setenv(keyringEnv, "kwallet")
	dir := t.TempDir()
	code, _, msg := fiscalKey(t, dir)
	if code != 1 || !strings.Contains(msg, keyringEnv+`="kwallet"`) {
		t.Fatalf("exit %d %s", code, msg)
	}
	if _, err := os.Stat(filepath.Join(dir, fiscal.PublicKeyFile)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a key was made: %v", err)
	}
}
