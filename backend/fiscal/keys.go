package fiscal

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Key files in the data directory.
const (
	PrivateKeyFile = "fiscal-key.pem"     // 0600, PKCS #8
	PublicKeyFile  = "fiscal-key.pub.pem" // PKIX, for whoever verifies
)

// LoadOrCreateKey reads the data directory's signing key, or makes one when
// there is none. A key file that exists but cannot be read is an error: a
// new key would not verify the records the old one signed.
func LoadOrCreateKey(dir string) (ed25519.PrivateKey, error) {
	path := filepath.Join(dir, PrivateKeyFile)
	raw, err := os.ReadFile(path)
	switch {
	case err == nil:
		return parsePrivate(raw, path)
	case !errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("fiscal: the signing key %s cannot be read: %w", path, err)
	}
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("fiscal: make a signing key: %w", err)
	}
	return key, storeKey(dir, key)
}

// storeKey writes the key pair's files in dir: the private key first, so
// that a public key never stands without it after a crash.
func storeKey(dir string, key ed25519.PrivateKey) error {
	raw, err := privatePEM(key)
	if err != nil {
		return err
	}
	if err := writeFile(filepath.Join(dir, PrivateKeyFile), raw, 0o600); err != nil {
		return fmt.Errorf("fiscal: store the signing key: %w", err)
	}
	if err := writeFile(filepath.Join(dir, PublicKeyFile), PublicKeyPEM(key.Public().(ed25519.PublicKey)), 0o644); err != nil {
		return fmt.Errorf("fiscal: store the public key: %w", err)
	}
	return nil
}

// privatePEM is the private key as it is kept: PKCS #8 in PEM.
func privatePEM(key ed25519.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

func parsePrivate(raw []byte, path string) (ed25519.PrivateKey, error) {
	b, _ := pem.Decode(raw)
	if b == nil || b.Type != "PRIVATE KEY" {
		return nil, fmt.Errorf("fiscal: %s is not a PEM private key: restore it from a backup (a new key would not verify the records already signed)", path)
	}
	k, err := x509.ParsePKCS8PrivateKey(b.Bytes)
	if err != nil {
		return nil, fmt.Errorf("fiscal: %s: %w", path, err)
	}
	key, ok := k.(ed25519.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("fiscal: %s is not an Ed25519 key", path)
	}
	return key, nil
}

// PublicKeyPEM is the public key in PEM (PKIX).
func PublicKeyPEM(pub ed25519.PublicKey) []byte {
	der, _ := x509.MarshalPKIXPublicKey(pub)
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
}

// ParsePublicKey reads a PEM public key.
func ParsePublicKey(raw []byte) (ed25519.PublicKey, error) {
	b, _ := pem.Decode(raw)
	if b == nil || b.Type != "PUBLIC KEY" {
		return nil, errors.New("fiscal: not a PEM public key")
	}
	k, err := x509.ParsePKIXPublicKey(b.Bytes)
	if err != nil {
		return nil, err
	}
	pub, ok := k.(ed25519.PublicKey)
	if !ok {
		return nil, errors.New("fiscal: not an Ed25519 public key")
	}
	return pub, nil
}

// Fingerprint is the SHA-256 of the public key's DER, in hex: what the
// README's verification steps compare.
func Fingerprint(pub ed25519.PublicKey) string {
	der, _ := x509.MarshalPKIXPublicKey(pub)
	sum := sha256.Sum256(der)
	return hex.EncodeToString(sum[:])
}

// ShortFingerprint is the start of the key's fingerprint, in groups of
// four hex digits: what a Z prints and a person compares (64 bits).
func ShortFingerprint(pub ed25519.PublicKey) string {
	f := Fingerprint(pub)[:16]
	return f[:4] + "-" + f[4:8] + "-" + f[8:12] + "-" + f[12:16]
}

// PublicKeyText is the public key as one base64 string (its DER, the body
// of its PEM): what a Z prints, and `comptoir verify --key` reads back.
func PublicKeyText(pub ed25519.PublicKey) string {
	der, _ := x509.MarshalPKIXPublicKey(pub)
	return base64.StdEncoding.EncodeToString(der)
}

// ParsePublicKeyText reads a public key given as PEM or as the base64 of
// its DER, as typed from a Z (spaces and line breaks ignored).
func ParsePublicKeyText(raw []byte) (ed25519.PublicKey, error) {
	if bytes.Contains(raw, []byte("-----BEGIN")) {
		return ParsePublicKey(raw)
	}
	der, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(string(raw)), ""))
	if err != nil {
		return nil, errors.New("fiscal: the key is neither PEM nor base64")
	}
	k, err := x509.ParsePKIXPublicKey(der)
	if err != nil {
		return nil, fmt.Errorf("fiscal: the key: %w", err)
	}
	pub, ok := k.(ed25519.PublicKey)
	if !ok {
		return nil, errors.New("fiscal: not an Ed25519 public key")
	}
	return pub, nil
}

// writeFile writes a file whole or not at all: a temporary file, synced,
// renamed over the name.
func writeFile(path string, data []byte, mode os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-"+filepath.Base(path))
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
