package fiscal

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/comptoir-pos/comptoir/backend/journal"
)

// ProtectedKeyRoot is where a process running as root on Linux keeps the
// signing keys, one folder per data directory, outside the data folder
// and readable by root only.
const ProtectedKeyRoot = "/var/lib/comptoir/fiscal-keys"

// WitnessFile is where the store keeps the last head of each chain.
const WitnessFile = "fiscal-heads.json"

// KeyStore is where the signing key and the witness of the chains' heads
// are kept: the system's keyring or a folder outside the data folder when
// the system offers one, else the data folder itself (the documented
// fallback).
type KeyStore struct {
	DataDir string
	// Dir holds the witness and, unless a keyring holds it, the signing
	// key.
	Dir string
	// Outside says that the signing key is not in the data folder: a copy
	// of the data folder, or whoever can write it, does not hold it.
	Outside bool
	// Keyring, when set, holds the signing key under KeyringService and
	// Account; the witness stays in Dir, the data folder.
	Keyring     Keyring
	KeyringName string // for people: "the macOS Keychain"
	Account     string
	// Warning, after Load, says why the key is beside the data although
	// the system offers a keyring ("" when it is where it should be).
	Warning string
}

// NewKeyStore is the store of dataDir's key: in a folder of its own under
// root (named after the data folder's absolute path), or beside the data
// when root is empty.
func NewKeyStore(dataDir, root string) (KeyStore, error) {
	if root == "" {
		return KeyStore{DataDir: dataDir, Dir: dataDir}, nil
	}
	account, err := dataDirAccount(dataDir)
	if err != nil {
		return KeyStore{}, err
	}
	return KeyStore{DataDir: dataDir, Dir: filepath.Join(root, account), Outside: true}, nil
}

// dataDirAccount names a data folder's key outside it: the first 16 hex
// digits of the SHA-256 of its absolute path.
func dataDirAccount(dataDir string) (string, error) {
	abs, err := filepath.Abs(dataDir)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(abs))
	return hex.EncodeToString(sum[:8]), nil
}

// Where says where the key is, for people.
func (ks KeyStore) Where() string {
	switch {
	case ks.Keyring != nil && ks.Outside:
		return "in " + ks.KeyringName + " (service \"" + KeyringService + "\", account " + ks.Account + ")"
	case ks.Outside:
		return "outside the data folder, in " + ks.Dir
	case ks.Warning != "":
		return "beside the data, in " + ks.Dir + " (fallback: " + ks.KeyringName + " could not be reached; whoever can read the data folder can read the key)"
	}
	return "beside the data, in " + ks.Dir + " (fallback: whoever can read the data folder can read the key)"
}

// Load reads the signing key, or makes it the first time (and only then:
// a public key beside the data says one was made, and Load will not make
// another). A store outside the data folder takes over a key an older
// version left in the data folder: written there, read back, then removed
// from the data folder. Two different keys are an error, never a choice.
// A keyring that cannot be reached leaves the key beside the data, with
// ks.Warning saying so. The caller holds the data folder's journal open
// (its lock): two processes never make a key for one folder at once.
func (ks *KeyStore) Load() (ed25519.PrivateKey, error) {
	switch {
	case ks.Keyring != nil:
		return ks.loadKeyring()
	case !ks.Outside:
		return ks.loadBeside()
	}
	if err := os.MkdirAll(ks.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("fiscal: the key folder: %w", err)
	}
	if err := os.Chmod(ks.Dir, 0o700); err != nil {
		return nil, err
	}
	oldPath := filepath.Join(ks.DataDir, PrivateKeyFile)
	old, err := readIfThere(oldPath)
	if err != nil {
		return nil, fmt.Errorf("fiscal: the signing key %s cannot be read: %w", oldPath, err)
	}
	_, err = os.Stat(filepath.Join(ks.Dir, PrivateKeyFile))
	switch {
	case err == nil:
	case !errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("fiscal: the signing key in %s cannot be read: %w", ks.Dir, err)
	case old != nil:
		if err := writeFile(filepath.Join(ks.Dir, PrivateKeyFile), old, 0o600); err != nil {
			return nil, fmt.Errorf("fiscal: move the signing key out of the data folder: %w", err)
		}
	default:
		if err := ks.madeBefore(ks.Dir); err != nil {
			return nil, err
		}
	}
	key, err := LoadOrCreateKey(ks.Dir)
	if err != nil {
		return nil, err
	}
	if err := ks.dropOld(key, old); err != nil {
		return nil, err
	}
	return key, ks.keepPublicBeside(key)
}

// loadBeside is the fallback: the key file in the data folder.
func (ks *KeyStore) loadBeside() (ed25519.PrivateKey, error) {
	_, err := os.Stat(filepath.Join(ks.Dir, PrivateKeyFile))
	if errors.Is(err, fs.ErrNotExist) {
		if err := ks.madeBefore(ks.Dir); err != nil {
			return nil, err
		}
	}
	return LoadOrCreateKey(ks.Dir)
}

// madeBefore is an error when the data folder has a public key but the
// store found no private key: the key was made, and is kept somewhere
// this store does not reach (another key store, a keyring, a backup). A
// new key would not verify the records the old one signed.
func (ks KeyStore) madeBefore(where string) error {
	pubPath := filepath.Join(ks.DataDir, PublicKeyFile)
	if _, err := os.Stat(pubPath); errors.Is(err, fs.ErrNotExist) {
		return nil
	} else if err != nil {
		return fmt.Errorf("fiscal: the public key %s cannot be read: %w", pubPath, err)
	}
	return fmt.Errorf("fiscal: the signing key is not in %s, but %s says one was made: restore the signing key (from where it was kept, or a backup), or remove %s to start a new key (the records already signed then verify only with the old public key)", where, pubPath, pubPath)
}

// dropOld removes the copy of key an older version left in the data
// folder (old, as read there; nil when there was none). A different key
// there is an error: which one signed the records is for people to find.
func (ks KeyStore) dropOld(key ed25519.PrivateKey, old []byte) error {
	if old == nil {
		return nil
	}
	oldPath := filepath.Join(ks.DataDir, PrivateKeyFile)
	prev, err := parsePrivate(old, oldPath)
	if err != nil {
		return err
	}
	if !prev.Equal(key) {
		return fmt.Errorf("fiscal: %s and the key %s differ: keep both and find which one signed the records (comptoir verify --key)", oldPath, ks.Where())
	}
	if err := os.Remove(oldPath); err != nil {
		return fmt.Errorf("fiscal: the signing key is still in the data folder: %w", err)
	}
	return nil
}

// keepPublicBeside writes the public key beside the data when it is not
// there, for whoever verifies there.
func (ks KeyStore) keepPublicBeside(key ed25519.PrivateKey) error {
	pubPath := filepath.Join(ks.DataDir, PublicKeyFile)
	if _, err := os.Stat(pubPath); errors.Is(err, fs.ErrNotExist) {
		return writeFile(pubPath, PublicKeyPEM(key.Public().(ed25519.PublicKey)), 0o644)
	}
	return nil
}

// readIfThere reads a file, nil when there is none.
func readIfThere(path string) ([]byte, error) {
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return raw, err
}

// PublicKey is the store's public key, read from its file (the key found
// beside the data: it proves consistency, not origin).
func (ks KeyStore) PublicKey() (ed25519.PublicKey, error) {
	for _, dir := range []string{ks.Dir, ks.DataDir} {
		raw, err := os.ReadFile(filepath.Join(dir, PublicKeyFile))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		return ParsePublicKey(raw)
	}
	return nil, fmt.Errorf("fiscal: no public key in %s", ks.Dir)
}

// WitnessPath is the store's witness file.
func (ks KeyStore) WitnessPath() string { return filepath.Join(ks.Dir, WitnessFile) }

// witness keeps, in a file beside the key, the last record of each chain
// the ledger wrote: a record removed from a chain's end, the very last one
// included, leaves the witness pointing at a record that is not there.
// Written after the record commits: after a crash it may be one behind,
// never ahead.
type witness struct {
	mu    sync.Mutex
	path  string
	heads map[string]WitnessHead
}

// WitnessHead is a chain's last record as the witness saw it.
type WitnessHead struct {
	Seq    int64  `json:"seq"`
	Digest string `json:"digest"` // SHA-256 of its signature, hex
}

// ReadWitness reads a witness file (ok false: there is none).
func ReadWitness(path string) (map[string]WitnessHead, bool, error) {
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	heads := map[string]WitnessHead{}
	if err := json.Unmarshal(raw, &heads); err != nil {
		return nil, false, fmt.Errorf("fiscal: the witness %s is damaged: %w", path, err)
	}
	return heads, true, nil
}

// KeepWitness makes the ledger keep its witness in path.
func (l *Ledger) KeepWitness(path string) error {
	heads, _, err := ReadWitness(path)
	if err != nil {
		return err
	}
	if heads == nil {
		heads = map[string]WitnessHead{}
	}
	l.witness = &witness{path: path, heads: heads}
	return nil
}

// saw writes r as its chain's head.
func (w *witness) saw(r journal.FiscalRecord) error {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.heads[r.Kind].Seq >= r.Seq {
		return nil
	}
	w.heads[r.Kind] = WitnessHead{Seq: r.Seq, Digest: sigDigest(r.Sig)}
	raw, _ := json.Marshal(w.heads)
	return writeFile(w.path, raw, 0o600)
}
