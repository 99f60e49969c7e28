package httpui

import (
	"net/http"

	"github.com/comptoir-pos/comptoir/backend/internal/webguard"
)

// hostAllowed says whether a request's Host header names this server: a
// loopback name, a configured one (Options.AllowedHosts), or, on the LAN
// (with pairing), the very address the connection arrived at
// (webguard.Hosts).
func (s *server) hostAllowed(r *http.Request) bool {
	return webguard.Hosts{Names: s.opt.AllowedHosts, LAN: s.opt.Pairing != nil}.Allowed(r)
}
