// Package webguard holds the checks every HTTP server of Comptoir that a
// browser reaches makes before it believes a request: that the Host header
// names this server (a DNS-rebound name does not), that the request comes
// from this PC's own pages (its Origin and Sec-Fetch-Site), and that a POST
// is application/json (which no HTML form can send, and no other site's
// script can send without a preflight these servers never grant). Browser
// mode (backend/httpui), its kitchen API (backend/kitchen) and head
// office's page (backend/hub) use them, so that the rules are written once.
package webguard

import (
	"mime"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// loopbackHosts are the Host values of a browser on the PC itself. Exact
// strings: another spelling of a loopback address ("[::ffff:7f00:1]",
// "127.1", "2130706433") is no browser's and is refused.
var loopbackHosts = []string{"localhost", "127.0.0.1", "::1"}

// Hosts are the names a server answers to besides the loopback ones.
type Hosts struct {
	// Names are host names or addresses browsers use for this server (the
	// listen address's host, a name given on the command line).
	Names []string
	// LAN: a browser on another machine may name the server by the very
	// address its connection reached.
	LAN bool
}

// Allowed says whether a request's Host header names this server: a
// loopback name, one of Names, or, with LAN, the address the connection
// arrived at, written the canonical way. Any other name may be a
// DNS-rebound one, and any other literal is refused too.
func (h Hosts) Allowed(r *http.Request) bool {
	host, ok := HostName(r.Host)
	if !ok {
		return false
	}
	same := func(n string) bool { return strings.EqualFold(n, host) }
	if slices.ContainsFunc(loopbackHosts, same) || slices.ContainsFunc(h.Names, same) {
		return true
	}
	if !h.LAN {
		return false
	}
	ip := net.ParseIP(host)
	local, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if ip == nil || ip.String() != host || local == nil {
		return false
	}
	la, ok := local.(*net.TCPAddr)
	return ok && la.IP.Equal(ip) && (ip.To4() == nil) == (la.IP.To4() == nil)
}

// HostName is the host of a Host header, without its port or the brackets
// of an IPv6 literal; false when it is empty or malformed.
func HostName(hostport string) (string, bool) {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	} else if strings.HasPrefix(hostport, "[") && strings.HasSuffix(hostport, "]") {
		host = hostport[1 : len(hostport)-1]
	} else if strings.Contains(hostport, ":") {
		return "", false // an IPv6 literal without brackets, or a bad port
	}
	if host == "" || strings.ContainsAny(host, "[]%/ ") {
		return "", false
	}
	return host, true
}

// ServedName is the name a listen address ("host:port") gives browsers,
// to add to Hosts.Names: its host, unless it has none or is a wildcard.
func ServedName(addr string) (string, bool) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil || host == "" {
		return "", false
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		return "", false
	}
	return host, true
}

// CrossSite says whether a request comes from another site's page: an
// Origin other than this server's, or Sec-Fetch-Site: cross-site.
func CrossSite(r *http.Request) bool {
	if o := r.Header.Get("Origin"); o != "" && !SameOrigin(o, r) {
		return true
	}
	return r.Header.Get("Sec-Fetch-Site") == "cross-site"
}

// SameOrigin says whether origin is this server's, as the request reached
// it (scheme and Host).
func SameOrigin(origin string, r *http.Request) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return u.Scheme == scheme && strings.EqualFold(u.Host, r.Host)
}

// IsJSON says whether a request's body is declared application/json
// (parameters such as charset allowed).
func IsJSON(r *http.Request) bool {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return err == nil && mt == "application/json"
}

// FromLoopback says whether the request's connection comes from this PC.
func FromLoopback(r *http.Request) bool {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// IsLoopback says whether a listen address ("host:port") stays on this PC:
// localhost or a loopback IP literal. An empty host ("":8080), a wildcard
// (0.0.0.0, ::) or any other name listens on the LAN.
func IsLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
