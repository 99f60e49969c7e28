package receipt

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"unicode"
)

// QRPlaceholderOrder in a Merchant's QRURL is replaced by the order's
// number, path-escaped. It is the only placeholder.
const QRPlaceholderOrder = "{order}"

// MaxQRURL bounds a QRURL template, in bytes: a receipt's QR code stays
// small enough to scan from a till roll.
const MaxQRURL = 512

// CheckQRURL says what is wrong with a QRURL template, nil when it may be
// printed: empty (no QR code), or an absolute https URL with a host, no
// user name or password, no space or control character, and no other
// placeholder than QRPlaceholderOrder, which may stand in the path, the
// query or the fragment only. Customers scan what is printed: a javascript:
// or http: address, or one whose host depends on the order, is refused.
func CheckQRURL(tmpl string) error {
	if tmpl == "" {
		return nil
	}
	if len(tmpl) > MaxQRURL {
		return fmt.Errorf("longer than %d bytes", MaxQRURL)
	}
	if strings.IndexFunc(tmpl, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0 {
		return errors.New("it holds a space or a control character")
	}
	// The placeholder stands for a path segment: check the URL with one
	// in its place.
	const sample = "A42"
	u, err := url.Parse(strings.ReplaceAll(tmpl, QRPlaceholderOrder, sample))
	switch {
	case err != nil:
		return fmt.Errorf("not a URL: %v", err)
	case u.Scheme != "https":
		return errors.New("it must start with https://")
	case u.Host == "" || u.Opaque != "":
		return errors.New("it has no host")
	case u.User != nil:
		return errors.New("it must not hold a user name or password")
	case strings.ContainsAny(strings.ReplaceAll(tmpl, QRPlaceholderOrder, ""), "{}"):
		return fmt.Errorf("the only placeholder is %s", QRPlaceholderOrder)
	}
	if h, err := url.Parse(strings.ReplaceAll(tmpl, QRPlaceholderOrder, "B")); err != nil || h.Host != u.Host {
		return fmt.Errorf("%s may stand in the path, the query or the fragment, not in the host", QRPlaceholderOrder)
	}
	return nil
}
