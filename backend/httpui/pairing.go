package httpui

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"mime"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Pairing is what lets a browser on the LAN use browser mode: it proves
// once that its user saw a code shown on the PC (comptoir serve's standard
// error), and gets a cookie that the server alone can sign. A browser on
// the PC itself needs none.
//
// A code pairs one browser: after each pairing a new one is drawn and
// shown. The cookie is HttpOnly and SameSite=Strict (no page of another
// site can send it), signed with a key kept in the data folder (a paired
// browser stays paired across restarts), valid PairingLifetime after it
// was last renewed (once a day, as it is used). Replacing the key unpairs
// every browser at once.
type Pairing struct {
	key    []byte
	now    func() time.Time
	onCode func(code string)

	mu   sync.Mutex
	code string // normalized: no dash
}

// PairingConfig configures NewPairing.
type PairingConfig struct {
	// KeyFile keeps the key that signs the cookies. Created when missing;
	// one that is not a key is replaced (every browser pairs again), and
	// said through Logger.
	KeyFile string
	// Reset replaces the key: every paired browser must pair again.
	Reset bool
	// OnCode is told each new pairing code: at once, and after each
	// pairing. It shows it on the PC (a terminal, never a log file: the
	// code is a secret until it is used).
	OnCode func(code string)
	Logger *slog.Logger     // nil: discard
	Now    func() time.Time // nil: time.Now
}

const (
	// PairingLifetime is how long a paired browser that is not used stays
	// paired.
	PairingLifetime = 90 * 24 * time.Hour
	// pairingRenew: a cookie older than this is renewed when it is used.
	pairingRenew = 24 * time.Hour
	// pairingCookie is the cookie's name.
	pairingCookie = "comptoir_paired"
	// codeAlphabet has 32 symbols, none easily mistaken for another (no I,
	// O, 0, 1): a code of codeLength symbols holds 60 random bits, too many
	// to guess over a network.
	codeAlphabet = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
	codeLength   = 12
	keyLength    = 32
	// pairingMAC separates this MAC from any other use of the key.
	pairingMAC = "comptoir browser pairing v1\x00"
)

// NewPairing reads (or creates) the key and draws the first code, which it
// hands to OnCode.
func NewPairing(cfg PairingConfig) (*Pairing, error) {
	if cfg.KeyFile == "" {
		return nil, errors.New("pairing: no key file")
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	key, err := readKey(cfg.KeyFile)
	switch {
	case cfg.Reset || errors.Is(err, os.ErrNotExist):
		key, err = writeKey(cfg.KeyFile)
	case err != nil:
		log.Warn("the browser pairing key is damaged: a new one is made, browsers on the LAN pair again", "file", cfg.KeyFile, "err", err)
		key, err = writeKey(cfg.KeyFile)
	}
	if err != nil {
		return nil, fmt.Errorf("pairing: %w", err)
	}
	p := &Pairing{key: key, now: cfg.Now, onCode: cfg.OnCode}
	if p.now == nil {
		p.now = time.Now
	}
	if p.onCode == nil {
		p.onCode = func(string) {}
	}
	p.mu.Lock()
	p.code = newCode()
	code := p.code
	p.mu.Unlock()
	p.onCode(FormatCode(code))
	return p, nil
}

func readKey(file string) ([]byte, error) {
	raw, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	key, err := hex.DecodeString(strings.TrimSpace(string(raw)))
	if err != nil || len(key) != keyLength {
		return nil, fmt.Errorf("not a key of %d bytes in hexadecimal", keyLength)
	}
	return key, nil
}

// writeKey makes a new key and stores it, readable by its owner only,
// replacing the file in one step.
func writeKey(file string) ([]byte, error) {
	key := make([]byte, keyLength)
	_, _ = rand.Read(key)
	tmp, err := os.CreateTemp(filepath.Dir(file), ".pairing-key-*")
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return nil, err
	}
	if _, err := tmp.WriteString(hex.EncodeToString(key) + "\n"); err != nil {
		tmp.Close()
		return nil, err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return nil, err
	}
	if err := tmp.Close(); err != nil {
		return nil, err
	}
	return key, os.Rename(tmp.Name(), file)
}

func newCode() string {
	b := make([]byte, codeLength)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = codeAlphabet[b[i]%byte(len(codeAlphabet))] // 256 is a multiple of 32: uniform
	}
	return string(b)
}

// FormatCode writes a code in groups of four, as it is shown.
func FormatCode(code string) string {
	var parts []string
	for len(code) > 4 {
		parts = append(parts, code[:4])
		code = code[4:]
	}
	return strings.Join(append(parts, code), "-")
}

// normalizeCode reads a code as typed: case, spaces and dashes ignored.
func normalizeCode(s string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case ' ', '-', '\t':
			return -1
		}
		if r >= 'a' && r <= 'z' {
			return r - 'a' + 'A'
		}
		return r
	}, s)
}

// redeem pairs a browser with code: true when it is the current code, which
// is then spent and a new one drawn and shown.
func (p *Pairing) redeem(code string) bool {
	code = normalizeCode(code)
	p.mu.Lock()
	if len(code) != codeLength || subtle.ConstantTimeCompare([]byte(code), []byte(p.code)) != 1 {
		p.mu.Unlock()
		return false
	}
	p.code = newCode()
	next := p.code
	p.mu.Unlock()
	p.onCode(FormatCode(next))
	return true
}

// cookie is a new pairing cookie: a random id and its time of issue,
// signed.
func (p *Pairing) cookie() *http.Cookie {
	raw := make([]byte, 16, 16+8+sha256.Size)
	_, _ = rand.Read(raw)
	raw = binary.BigEndian.AppendUint64(raw, uint64(p.now().Unix()))
	raw = append(raw, p.mac(raw)...)
	return &http.Cookie{
		Name: pairingCookie, Value: base64.RawURLEncoding.EncodeToString(raw), Path: "/",
		MaxAge: int(PairingLifetime / time.Second), HttpOnly: true, SameSite: http.SameSiteStrictMode,
	}
}

func (p *Pairing) mac(msg []byte) []byte {
	m := hmac.New(sha256.New, p.key)
	m.Write([]byte(pairingMAC))
	m.Write(msg)
	return m.Sum(nil)
}

// paired says whether the request carries a valid pairing cookie, and
// whether that cookie is due for renewal.
func (p *Pairing) paired(r *http.Request) (ok, renew bool) {
	for _, c := range r.CookiesNamed(pairingCookie) {
		raw, err := base64.RawURLEncoding.Strict().DecodeString(c.Value)
		if err != nil || len(raw) != 16+8+sha256.Size {
			continue
		}
		msg, sum := raw[:16+8], raw[16+8:]
		if !hmac.Equal(sum, p.mac(msg)) {
			continue
		}
		issued := time.Unix(int64(binary.BigEndian.Uint64(msg[16:])), 0)
		age := p.now().Sub(issued)
		if age < -time.Hour || age > PairingLifetime {
			continue
		}
		return true, age > pairingRenew
	}
	return false, false
}

// maxPairBody bounds the pairing form.
const maxPairBody = 1 << 10

// pair serves /pair: the form (GET), and the code (POST, or GET with
// ?code=, for a kiosk browser opened on the pairing URL).
func (s *server) pair(w http.ResponseWriter, r *http.Request) {
	p := s.opt.Pairing
	w.Header().Set("Cache-Control", "no-store")
	var code string
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		code = r.URL.Query().Get("code")
		if code == "" {
			pairPage(w, http.StatusOK, "")
			return
		}
	case http.MethodPost:
		mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
		r.Body = http.MaxBytesReader(w, r.Body, maxPairBody)
		if mt != "application/x-www-form-urlencoded" || r.ParseForm() != nil {
			pairPage(w, http.StatusBadRequest, "The form could not be read.")
			return
		}
		code = r.PostForm.Get("code")
	default:
		w.Header().Set("Allow", "GET, HEAD, POST")
		pairPage(w, http.StatusMethodNotAllowed, "")
		return
	}
	if !p.redeem(code) {
		s.log.Warn("browser pairing refused: wrong code", "remote", r.RemoteAddr)
		pairPage(w, http.StatusForbidden, "This is not the code shown on the PC. A code pairs one browser: after each pairing the PC shows a new one.")
		return
	}
	s.log.Info("browser paired", "remote", r.RemoteAddr, "userAgent", r.UserAgent())
	http.SetCookie(w, p.cookie())
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

var pairTemplate = template.Must(template.New("pair").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Comptoir: pair this browser</title></head>
<body><main>
<h1>Pair this browser with the kiosk</h1>
<p>This browser is not on the kiosk's PC. Enter the pairing code that <code>comptoir serve</code> shows on the PC.</p>
{{if .}}<p role="alert"><strong>{{.}}</strong></p>{{end}}
<form method="post" action="/pair">
<label>Pairing code <input name="code" autocomplete="off" autocapitalize="characters" spellcheck="false" required autofocus></label>
<button type="submit">Pair</button>
</form>
</main></body></html>
`))

func pairPage(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
	_ = pairTemplate.Execute(w, msg)
}
