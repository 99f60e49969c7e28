package fiscal

import (
	"bytes"
	"crypto/ed25519"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zalando/go-keyring"
)

// The keyring stores are tested with go-keyring's memory keyring, through
// the same calls the Windows Credential Manager and the macOS Keychain get.

const testKeyring = "the test keyring"

func keyringStore(t *testing.T, data string, kr Keyring) *KeyStore {
	t.Helper()
	ks, err := NewKeyringStore(data, kr, testKeyring)
	if err != nil {
		t.Fatal(err)
	}
	return &ks
}

// inKeyring is the key the memory keyring holds for data's store.
func inKeyring(t *testing.T, ks *KeyStore) ed25519.PrivateKey {
	t.Helper()
	secret, err := keyring.Get(KeyringService, ks.Account)
	if err != nil {
		t.Fatalf("the keyring: %v", err)
	}
	key, err := parsePrivate([]byte(secret), "keyring")
	if err != nil {
		t.Fatal(err)
	}
	return key
}

func fileThere(t *testing.T, path string) bool {
	t.Helper()
	_, err := os.Stat(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	return err == nil
}

// The key is made once, in the keyring and not in the data folder; the
// public key is written beside the data; later starts read the same key.
// A keyring that lost the key is an error, never a new key.
func TestKeyringStoreMakesTheKeyOnce(t *testing.T) {
	data, key, ks := madeInKeyring(t)
	if !inKeyring(t, ks).Equal(key) {
		t.Fatal("the keyring does not hold the key made")
	}
	if fileThere(t, filepath.Join(data, PrivateKeyFile)) {
		t.Fatal("the signing key is in the data folder")
	}
	if pub, err := ks.PublicKey(); err != nil || !pub.Equal(key.Public()) {
		t.Fatalf("the public key beside the data: %v", err)
	}
	account, _ := dataDirAccount(data)
	if ks.Account != account || !ks.Outside || ks.Warning != "" || !strings.Contains(ks.Where(), testKeyring) || !strings.Contains(ks.Where(), account) {
		t.Fatalf("where: %q (%+v)", ks.Where(), ks)
	}
	if again, err := keyringStore(t, data, SystemKeyring{}).Load(); err != nil || !again.Equal(key) {
		t.Fatalf("read again: %v", err)
	}
	// Another data folder has a key of its own.
	if other, err := keyringStore(t, t.TempDir(), SystemKeyring{}).Load(); err != nil || other.Equal(key) {
		t.Fatalf("another data folder: %v", err)
	}
	if err := keyring.Delete(KeyringService, account); err != nil {
		t.Fatal(err)
	}
	pubBefore, _ := os.ReadFile(filepath.Join(data, PublicKeyFile))
	if _, err := keyringStore(t, data, SystemKeyring{}).Load(); err == nil || !strings.Contains(err.Error(), "says one was made") {
		t.Fatalf("the key gone from the keyring: %v", err)
	}
	if _, err := keyring.Get(KeyringService, account); !errors.Is(err, keyring.ErrNotFound) {
		t.Fatalf("a new key was made: %v", err)
	}
	if pub, _ := os.ReadFile(filepath.Join(data, PublicKeyFile)); !bytes.Equal(pub, pubBefore) {
		t.Fatal("the public key beside the data changed")
	}
}

// A key an older version left in the data folder is taken over: written
// to the keyring, read back, then removed from the data folder.
func TestKeyringStoreTakesOverTheDataFoldersKey(t *testing.T) {
	keyring.MockInit()
	data, old, ks := olderKeyLoaded(t, SystemKeyring{})
	if !inKeyring(t, ks).Equal(old) {
		t.Fatal("the keyring does not hold the data folder's key")
	}
	if fileThere(t, filepath.Join(data, PrivateKeyFile)) {
		t.Fatal("the signing key is still in the data folder")
	}
	if ks.Warning != "" || !ks.Outside {
		t.Fatalf("%+v", ks)
	}
	// The same key left behind (a stop between the write and the removal)
	// is removed at the next start.
	raw, _ := privatePEM(old)
	if err := os.WriteFile(filepath.Join(data, PrivateKeyFile), raw, 0o600); err != nil {
		t.Fatal(err)
	}
	if again, err := keyringStore(t, data, SystemKeyring{}).Load(); err != nil || !again.Equal(old) {
		t.Fatalf("again: %v", err)
	}
	if fileThere(t, filepath.Join(data, PrivateKeyFile)) {
		t.Fatal("the copy left behind is still in the data folder")
	}
}

// madeInKeyring is a new data folder whose key was just made, in a fresh
// system keyring.
func madeInKeyring(t *testing.T) (data string, key ed25519.PrivateKey, ks *KeyStore) {
	t.Helper()
	keyring.MockInit()
	data = t.TempDir()
	ks = keyringStore(t, data, SystemKeyring{})
	key, err := ks.Load()
	if err != nil {
		t.Fatal(err)
	}
	return data, key, ks
}

// olderKeyLoaded is a data folder holding the key an older version left
// there, loaded through kr: the key loaded is that one, wherever kr kept it.
func olderKeyLoaded(t *testing.T, kr Keyring) (data string, old ed25519.PrivateKey, ks *KeyStore) {
	t.Helper()
	data = t.TempDir()
	old, err := LoadOrCreateKey(data)
	if err != nil {
		t.Fatal(err)
	}
	ks = keyringStore(t, data, kr)
	if key, err := ks.Load(); err != nil || !key.Equal(old) {
		t.Fatalf("loading the data folder's key: %v", err)
	}
	return data, old, ks
}

// forgetful is a keyring that answers every write and keeps another key:
// the key read back is not the one written.
type forgetful struct{ other string }

func (f forgetful) Get(service, account string) (string, error) {
	if f.other == "" {
		return "", keyring.ErrNotFound
	}
	return f.other, nil
}
func (forgetful) Set(service, account, secret string) error { return nil }
func (forgetful) Delete(service, account string) error      { return nil }

// The key is removed from the data folder only once the keyring gave it
// back: a keyring that did not keep it leaves it there (the fallback).
func TestKeyringStoreKeepsTheFileUntilReadBack(t *testing.T) {
	data, _, ks := olderKeyLoaded(t, forgetful{})
	if !fileThere(t, filepath.Join(data, PrivateKeyFile)) {
		t.Fatal("the key was removed from the data folder although the keyring did not keep it")
	}
	if ks.Outside || !strings.Contains(ks.Warning, "did not keep") {
		t.Fatalf("warning %q", ks.Warning)
	}
}

// Two different keys, one in the keyring and one in the data folder, are
// an error: both stay where they are.
func TestKeyringStoreRefusesTwoKeys(t *testing.T) {
	data, key, ks := madeInKeyring(t)
	anotherKey(t, data)
	if _, err := keyringStore(t, data, SystemKeyring{}).Load(); err == nil || !strings.Contains(err.Error(), "differ") {
		t.Fatalf("two keys: %v", err)
	}
	if !inKeyring(t, ks).Equal(key) || !fileThere(t, filepath.Join(data, PrivateKeyFile)) {
		t.Fatal("a key was dropped")
	}
	// Something in the keyring that is not a key is not replaced either.
	if err := keyring.Set(KeyringService, ks.Account, "garbage"); err != nil {
		t.Fatal(err)
	}
	if _, err := keyringStore(t, t.TempDir(), SystemKeyring{}).Load(); err != nil {
		t.Fatal(err) // another folder's account: untouched
	}
	os.Remove(filepath.Join(data, PrivateKeyFile))
	if _, err := keyringStore(t, data, SystemKeyring{}).Load(); err == nil || !strings.Contains(err.Error(), "not a PEM private key") {
		t.Fatalf("a damaged key: %v", err)
	}
}

// silent is a keyring that never answers (waiting for someone to unlock
// it).
type silent struct{}

func (silent) Get(service, account string) (string, error) { select {} }
func (silent) Set(service, account, secret string) error   { select {} }
func (silent) Delete(service, account string) error        { select {} }

// A keyring that cannot be reached leaves the key beside the data, said in
// the warning and by Where; the key moves to the keyring at the first
// start that reaches it. When the data folder says a key was made but has
// none, the keyring may hold it: no new key.
func TestKeyringUnreachableFallsBackBesideTheData(t *testing.T) {
	keyring.MockInitWithError(errors.New("the keychain is locked"))
	data := t.TempDir()
	ks := keyringStore(t, data, SystemKeyring{})
	key, err := ks.Load()
	if err != nil {
		t.Fatal(err)
	}
	if ks.Outside || !strings.Contains(ks.Warning, "the keychain is locked") || !strings.Contains(ks.Warning, "beside the data") ||
		!strings.Contains(ks.Where(), "fallback") || !strings.Contains(ks.Where(), testKeyring) {
		t.Fatalf("warning %q, where %q", ks.Warning, ks.Where())
	}
	if old, err := LoadOrCreateKey(data); err != nil || !old.Equal(key) {
		t.Fatalf("the key beside the data: %v", err)
	}
	if again, err := keyringStore(t, data, SystemKeyring{}).Load(); err != nil || !again.Equal(key) {
		t.Fatalf("still unreachable: %v", err)
	}

	keyring.MockInit() // reached again
	ks = keyringStore(t, data, SystemKeyring{})
	if moved, err := ks.Load(); err != nil || !moved.Equal(key) || ks.Warning != "" {
		t.Fatalf("moved: %v %q", err, ks.Warning)
	}
	if !inKeyring(t, ks).Equal(key) || fileThere(t, filepath.Join(data, PrivateKeyFile)) {
		t.Fatal("the key did not move to the keyring")
	}

	keyring.MockInitWithError(errors.New("the keychain is locked"))
	if _, err := keyringStore(t, data, SystemKeyring{}).Load(); err == nil || !strings.Contains(err.Error(), "may hold the signing key") {
		t.Fatalf("a new key beside the data: %v", err)
	}
	if fileThere(t, filepath.Join(data, PrivateKeyFile)) {
		t.Fatal("a new key was made")
	}

	defer func(d time.Duration) { keyringTimeout = d }(keyringTimeout)
	keyringTimeout = time.Millisecond
	quiet := keyringStore(t, t.TempDir(), silent{})
	if _, err := quiet.Load(); err != nil || !strings.Contains(quiet.Warning, "no answer") {
		t.Fatalf("a keyring that does not answer: %v %q", err, quiet.Warning)
	}
}

// The file stores make the key once too: a public key beside the data
// without its private key says one was made and is kept elsewhere.
func TestFileStoresMakeTheKeyOnce(t *testing.T) {
	data, root := t.TempDir(), t.TempDir()
	outside, err := NewKeyStore(data, root)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := outside.Load(); err != nil {
		t.Fatal(err)
	}
	beside, _ := NewKeyStore(data, "")
	if _, err := beside.Load(); err == nil || !strings.Contains(err.Error(), "says one was made") {
		t.Fatalf("beside the data: %v", err)
	}
	if err := os.RemoveAll(outside.Dir); err != nil {
		t.Fatal(err)
	}
	if _, err := outside.Load(); err == nil || !strings.Contains(err.Error(), "says one was made") {
		t.Fatalf("the folder emptied: %v", err)
	}
	if fileThere(t, filepath.Join(data, PrivateKeyFile)) || fileThere(t, filepath.Join(outside.Dir, PrivateKeyFile)) {
		t.Fatal("a new key was made")
	}
}

// anotherKey writes another private key into the data folder data.
func anotherKey(t *testing.T, data string) {
	t.Helper()
	other := t.TempDir()
	if _, err := LoadOrCreateKey(other); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(filepath.Join(other, PrivateKeyFile))
	if err := os.WriteFile(filepath.Join(data, PrivateKeyFile), raw, 0o600); err != nil {
		t.Fatal(err)
	}
}
