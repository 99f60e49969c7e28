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
// are kept: a folder outside the data folder when the system offers one,
// else the data folder itself (the documented fallback).
type KeyStore struct {
	DataDir string
	Dir     string
	// Outside says that Dir is not the data folder: a copy of the data
	// folder, or whoever can write it, does not hold the signing key.
	Outside bool
}

// NewKeyStore is the store of dataDir's key: in a folder of its own under
// root (named after the data folder's absolute path), or beside the data
// when root is empty.
func NewKeyStore(dataDir, root string) (KeyStore, error) {
	if root == "" {
		return KeyStore{DataDir: dataDir, Dir: dataDir}, nil
	}
	abs, err := filepath.Abs(dataDir)
	if err != nil {
		return KeyStore{}, err
	}
	sum := sha256.Sum256([]byte(abs))
	return KeyStore{DataDir: dataDir, Dir: filepath.Join(root, hex.EncodeToString(sum[:8])), Outside: true}, nil
}

// Where says where the key is, for people.
func (ks KeyStore) Where() string {
	if ks.Outside {
		return "outside the data folder, in " + ks.Dir
	}
	return "beside the data, in " + ks.Dir + " (fallback: whoever can write the data folder can read the key)"
}

// Load reads the signing key, or makes it the first time. A store outside
// the data folder takes over a key an older version left in the data
// folder: written there, read back, then removed from the data folder.
// Two different keys are an error, never a choice.
func (ks KeyStore) Load() (ed25519.PrivateKey, error) {
	if !ks.Outside {
		return LoadOrCreateKey(ks.Dir)
	}
	if err := os.MkdirAll(ks.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("fiscal: the key folder: %w", err)
	}
	if err := os.Chmod(ks.Dir, 0o700); err != nil {
		return nil, err
	}
	oldPath := filepath.Join(ks.DataDir, PrivateKeyFile)
	old, oldErr := os.ReadFile(oldPath)
	if oldErr != nil && !errors.Is(oldErr, fs.ErrNotExist) {
		return nil, fmt.Errorf("fiscal: the signing key %s cannot be read: %w", oldPath, oldErr)
	}
	_, err := os.Stat(filepath.Join(ks.Dir, PrivateKeyFile))
	switch {
	case err == nil:
	case !errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("fiscal: the signing key in %s cannot be read: %w", ks.Dir, err)
	case oldErr == nil:
		if err := writeFile(filepath.Join(ks.Dir, PrivateKeyFile), old, 0o600); err != nil {
			return nil, fmt.Errorf("fiscal: move the signing key out of the data folder: %w", err)
		}
	}
	key, err := LoadOrCreateKey(ks.Dir)
	if err != nil {
		return nil, err
	}
	if oldErr == nil {
		prev, err := parsePrivate(old, oldPath)
		if err != nil {
			return nil, err
		}
		if !prev.Equal(key) {
			return nil, fmt.Errorf("fiscal: %s and the key in %s differ: keep both and find which one signed the records (comptoir verify --key)", oldPath, ks.Dir)
		}
		if err := os.Remove(oldPath); err != nil {
			return nil, fmt.Errorf("fiscal: the signing key is still in the data folder: %w", err)
		}
	}
	// The public key stays beside the data, for whoever verifies there.
	pubPath := filepath.Join(ks.DataDir, PublicKeyFile)
	if _, err := os.Stat(pubPath); errors.Is(err, fs.ErrNotExist) {
		if err := writeFile(pubPath, PublicKeyPEM(key.Public().(ed25519.PublicKey)), 0o644); err != nil {
			return nil, err
		}
	}
	return key, nil
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
