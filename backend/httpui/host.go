package httpui

import (
	"net"
	"net/http"
	"slices"
	"strings"
)

// loopbackHosts are the Host values of a browser on the PC itself. Exact
// strings: another spelling of a loopback address ("[::ffff:7f00:1]",
// "127.1", "2130706433") is no browser's and is refused.
var loopbackHosts = []string{"localhost", "127.0.0.1", "::1"}

// hostAllowed says whether a request's Host header names this server: a
// loopback name, a configured one (Options.AllowedHosts), or, on the LAN,
// the very address the connection arrived at. Any other name may be a
// DNS-rebound one, and any other literal is refused too.
func (s *server) hostAllowed(r *http.Request) bool {
	host, ok := hostName(r.Host)
	if !ok {
		return false
	}
	if slices.ContainsFunc(loopbackHosts, func(h string) bool { return strings.EqualFold(h, host) }) ||
		slices.ContainsFunc(s.opt.AllowedHosts, func(h string) bool { return strings.EqualFold(h, host) }) {
		return true
	}
	// A LAN browser that typed the PC's address: the address must be the
	// one this connection was made to (so it is the PC's own), written the
	// canonical way.
	if s.opt.Pairing == nil {
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

// hostName is the host of a Host header, without its port or the brackets
// of an IPv6 literal; false when it is empty or malformed.
func hostName(hostport string) (string, bool) {
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

// fromLoopback says whether the request's connection comes from this PC.
func fromLoopback(r *http.Request) bool {
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
