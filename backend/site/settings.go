package site

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// Keys of the site's settings in the journal (JSON values).
const (
	SettingRestaurant = "site.restaurant" // "local": the restaurant's token in the subjects
	SettingKiosk      = "site.kiosk"      // this kiosk's token; default its number prefix, else "main"
	SettingURL        = "site.url"        // the restaurant's site to join; "" keeps a site of its own
	SettingListen     = "site.listen"     // where this kiosk's own site answers others; "" this process only
	SettingTLSCert    = "site.tls_cert"   // the site's certificate (PEM file), to listen on the LAN
	SettingTLSKey     = "site.tls_key"    // its key (PEM file)
	SettingTLSCA      = "site.tls_ca"     // the certificate a kiosk trusts for the site it joins
	SettingOff        = "site.off"        // true: no site at all (the outbox waits)
	SettingHubURL     = "site.hub_url"    // head office, joined as a leaf node: tls://host:7422
	SettingHubCA      = "site.hub_ca"     // the certificate trusted for head office

	SettingStations  = "kitchen.stations"     // {"grill":["burgers"],"bar":["drinks"]}
	SettingWarnAfter = "kitchen.warn_seconds" // 300
	SettingLateAfter = "kitchen.late_seconds" // 600
	SettingReadyFor  = "board.ready_seconds"  // 600
	SettingChime     = "board.chime"          // false
	SettingKitchenLn = "kitchen.language"     // "fr"
	SettingPrefix    = "kiosk.number_prefix"  // read for the kiosk's default token
	SecretFile       = "site-secret"          // the site's token, in the data folder (0600)
	HubSecretFile    = "hub-credentials.json" // {"user":"r1","password":"..."}, in the data folder (0600)
	DefaultRest      = "local"
	defaultKioskName = "main"
)

// Settings are the site's settings, read from the journal's.
type Settings struct {
	Restaurant, Kiosk, URL, Listen string
	TLSCert, TLSKey, TLSCA         string
	Off                            bool
	HubURL, HubCA                  string
	Stations                       map[string][]string
	WarnAfter, LateAfter, ReadyFor time.Duration
	Chime                          bool
	Language                       string
	// KioskNamed: the kiosk's token comes from site.kiosk or its number
	// prefix, not the default.
	KioskNamed bool
}

// LoadSettings reads the site's settings from all (the journal's
// settings); a value that does not parse is an error naming its key,
// and its default applies.
func LoadSettings(all map[string]json.RawMessage) (Settings, error) {
	s := Settings{Restaurant: DefaultRest, Kiosk: defaultKioskName, Language: "fr"}
	var errs []error
	read := func(key string, into any) {
		if raw, ok := all[key]; ok {
			if err := json.Unmarshal(raw, into); err != nil {
				errs = append(errs, fmt.Errorf("setting %s: %w", key, err))
			}
		}
	}
	var prefix string
	read(SettingPrefix, &prefix)
	if ValidToken(prefix) {
		s.Kiosk, s.KioskNamed = prefix, true
	}
	if _, ok := all[SettingKiosk]; ok {
		s.KioskNamed = true
	}
	for key, into := range map[string]*string{
		SettingRestaurant: &s.Restaurant, SettingKiosk: &s.Kiosk, SettingURL: &s.URL, SettingListen: &s.Listen,
		SettingTLSCert: &s.TLSCert, SettingTLSKey: &s.TLSKey, SettingTLSCA: &s.TLSCA, SettingHubURL: &s.HubURL,
		SettingHubCA: &s.HubCA, SettingKitchenLn: &s.Language,
	} {
		read(key, into)
	}
	read(SettingOff, &s.Off)
	read(SettingChime, &s.Chime)
	read(SettingStations, &s.Stations)
	for key, into := range map[string]*time.Duration{SettingWarnAfter: &s.WarnAfter, SettingLateAfter: &s.LateAfter, SettingReadyFor: &s.ReadyFor} {
		var secs int
		read(key, &secs)
		if secs < 0 || secs > 24*3600 {
			errs = append(errs, fmt.Errorf("setting %s: between 0 and 86400 seconds", key))
			continue
		}
		*into = time.Duration(secs) * time.Second
	}
	if !ValidToken(s.Restaurant) {
		errs = append(errs, fmt.Errorf("setting %s %q: letters, digits, '-' and '_' only", SettingRestaurant, s.Restaurant))
		s.Restaurant = DefaultRest
	}
	if !ValidToken(s.Kiosk) {
		errs = append(errs, fmt.Errorf("setting %s %q: letters, digits, '-' and '_' only", SettingKiosk, s.Kiosk))
		s.Kiosk = defaultKioskName
	}
	return s, errors.Join(errs...)
}

// ReadSecret reads a secret file of the data folder: "" when there is
// none. A file others may read is refused: the secret would not be one.
func ReadSecret(dir, name string) (string, error) {
	p := filepath.Join(dir, name)
	st, err := os.Stat(p)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	if runtime.GOOS != "windows" && st.Mode().Perm()&0o077 != 0 {
		return "", fmt.Errorf("%s: readable by others (mode %v): chmod 600 it", p, st.Mode().Perm())
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}

// ServerTLS loads a certificate and its key; nil, nil when neither is set.
func ServerTLS(certFile, keyFile string) (*tls.Config, error) {
	if certFile == "" && keyFile == "" {
		return nil, nil
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("site certificate: %w", err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}

// ClientTLS trusts the certificates of caFile only; nil, nil when unset.
func ClientTLS(caFile string) (*tls.Config, error) {
	if caFile == "" {
		return nil, nil
	}
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("site certificate to trust: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("site certificate to trust: %s holds no PEM certificate", caFile)
	}
	return &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}, nil
}
