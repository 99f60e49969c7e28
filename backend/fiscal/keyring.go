package fiscal

import (
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/zalando/go-keyring"
)

// KeyringService is the service the signing keys are kept under in a
// system keyring; each data folder's key is the account named after its
// absolute path (dataDirAccount), as the root-owned folders are.
const KeyringService = "Comptoir fiscal key"

// SecretService names the Linux Secret Service (GNOME Keyring, KWallet),
// used for the key when the installer asks for it.
const SecretService = "the Secret Service"

// KeyringTimeout is how long a keyring is given to answer before the store
// takes it as unreachable: a keyring that waits for someone to unlock it
// must not hold an unattended kiosk's start for ever.
const KeyringTimeout = 20 * time.Second

// Keyring is a system keyring as github.com/zalando/go-keyring reaches it:
// Get answers keyring.ErrNotFound when it holds nothing under the name.
type Keyring interface {
	Get(service, account string) (string, error)
	Set(service, account, secret string) error
	Delete(service, account string) error
}

// SystemKeyring is the keyring of this system, through go-keyring: the
// Windows Credential Manager, the macOS Keychain (through the `security`
// command, the secret given on its standard input), the Secret Service on
// Linux (over D-Bus).
type SystemKeyring struct{}

func (SystemKeyring) Get(service, account string) (string, error) {
	return keyring.Get(service, account)
}

func (SystemKeyring) Set(service, account, secret string) error {
	return keyring.Set(service, account, secret)
}

func (SystemKeyring) Delete(service, account string) error {
	return keyring.Delete(service, account)
}

// SystemKeyringName names the keyring this system offers for the key by
// default ("" when it offers none: Linux, where the Secret Service is
// asked for, since a kiosk may run where none is unlocked).
func SystemKeyringName() string { return systemKeyringName }

// NewKeyringStore is the store of dataDir's key in kr (named name for
// people). The witness stays in the data folder.
func NewKeyringStore(dataDir string, kr Keyring, name string) (KeyStore, error) {
	account, err := dataDirAccount(dataDir)
	if err != nil {
		return KeyStore{}, err
	}
	return KeyStore{DataDir: dataDir, Dir: dataDir, Outside: true, Keyring: kr, KeyringName: name, Account: account}, nil
}

// errKeyringSilent is a keyring that did not answer within keyringTimeout.
var errKeyringSilent = errors.New("no answer within " + KeyringTimeout.String())

// keyringTimeout is KeyringTimeout; tests shorten it.
var keyringTimeout = KeyringTimeout

// keyringError is a keyring that did not do what it was asked (locked,
// absent, refused, silent, or it kept something else than what it was
// given): the fallback applies, not a stop.
type keyringError struct {
	op  string
	err error
}

func (e *keyringError) Error() string { return e.op + ": " + e.err.Error() }
func (e *keyringError) Unwrap() error { return e.err }

// loadKeyring reads the key from the keyring, takes over the one an older
// version left in the data folder, or makes it; a keyring that cannot be
// reached leaves the key beside the data (fallBack).
func (ks *KeyStore) loadKeyring() (ed25519.PrivateKey, error) {
	oldPath := filepath.Join(ks.DataDir, PrivateKeyFile)
	old, err := readIfThere(oldPath)
	if err != nil {
		return nil, fmt.Errorf("fiscal: the signing key %s cannot be read: %w", oldPath, err)
	}
	var prev ed25519.PrivateKey
	if old != nil {
		if prev, err = parsePrivate(old, oldPath); err != nil {
			return nil, err
		}
	}
	key, found, err := ks.keyringKey()
	var unreachable *keyringError
	switch {
	case errors.As(err, &unreachable):
		return ks.fallBack(prev, unreachable)
	case err != nil:
		return nil, err
	case found:
		if err := ks.dropOld(key, old); err != nil {
			return nil, err
		}
	case prev != nil:
		// Taken over: written, read back and compared, then removed from
		// the data folder; until it is read back, the file stays.
		if err := ks.put(prev); errors.As(err, &unreachable) {
			return ks.fallBack(prev, unreachable)
		}
		if err := ks.dropOld(prev, old); err != nil {
			return nil, err
		}
		key = prev
	default:
		if err := ks.madeBefore(ks.KeyringName); err != nil {
			return nil, err
		}
		_, key, err = ed25519.GenerateKey(rand.Reader)
		if err != nil {
			return nil, fmt.Errorf("fiscal: make a signing key: %w", err)
		}
		if err := ks.put(key); errors.As(err, &unreachable) {
			// The key made is the one kept beside the data: should the
			// keyring have kept it after all, it is the same key.
			return ks.fallBack(key, unreachable)
		}
	}
	return key, ks.keepPublicBeside(key)
}

// keyringKey is the key the keyring holds (found false: none). Something
// there that is not a key is an error, not a reason to make another: a
// new key would not verify the records the old one signed.
func (ks KeyStore) keyringKey() (ed25519.PrivateKey, bool, error) {
	var secret string
	err := ks.ask(func() (err error) {
		secret, err = ks.Keyring.Get(KeyringService, ks.Account)
		return err
	})
	if errors.Is(err, keyring.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, &keyringError{"read", err}
	}
	key, err := parsePrivate([]byte(secret), ks.KeyringName+" (account "+ks.Account+")")
	if err != nil {
		return nil, false, err
	}
	return key, true, nil
}

// ask runs a keyring call, giving it keyringTimeout to answer. A call that
// does not answer is left to finish on its own.
func (ks KeyStore) ask(call func() error) error {
	done := make(chan error, 1)
	go func() { done <- call() }()
	t := time.NewTimer(keyringTimeout)
	defer t.Stop()
	select {
	case err := <-done:
		return err
	case <-t.C:
		return errKeyringSilent
	}
}

// put writes key to the keyring and reads it back: a keyring that keeps
// something else has not kept the key.
func (ks KeyStore) put(key ed25519.PrivateKey) error {
	secret, err := privatePEM(key)
	if err != nil {
		return err
	}
	if err := ks.ask(func() error { return ks.Keyring.Set(KeyringService, ks.Account, string(secret)) }); err != nil {
		return &keyringError{"write", err}
	}
	back, found, err := ks.keyringKey()
	switch {
	case err != nil:
		return &keyringError{"read back", err}
	case !found || !back.Equal(key):
		return &keyringError{"read back", errors.New("it did not keep the key written")}
	}
	return nil
}

// fallBack keeps key beside the data when the keyring cannot be reached,
// and says so in ks.Warning: the key given (the one already there, or the
// one just made), else a new one, unless one was made before (then the
// keyring holds it, and a new key would not verify what it signed).
func (ks *KeyStore) fallBack(key ed25519.PrivateKey, why *keyringError) (ed25519.PrivateKey, error) {
	if key == nil {
		if err := ks.madeBefore(ks.DataDir); err != nil {
			return nil, fmt.Errorf("fiscal: %s cannot be reached (%v) and may hold the signing key: %w", ks.KeyringName, why, err)
		}
		var err error
		if key, err = LoadOrCreateKey(ks.DataDir); err != nil {
			return nil, err
		}
	} else if _, err := os.Stat(filepath.Join(ks.DataDir, PrivateKeyFile)); errors.Is(err, fs.ErrNotExist) {
		if err := storeKey(ks.DataDir, key); err != nil {
			return nil, err
		}
	}
	ks.Outside = false
	ks.Warning = fmt.Sprintf("%s cannot be reached (%v): the signing key is kept beside the data, in %s (the fallback: whoever can read the data folder can read the key); it moves to %s at a start that reaches it", ks.KeyringName, why, ks.DataDir, ks.KeyringName)
	return key, ks.keepPublicBeside(key)
}
