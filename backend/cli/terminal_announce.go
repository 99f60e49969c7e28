package cli

import (
	"context"
	"regexp"
	"strings"

	"github.com/comptoir-pos/comptoir/backend/discovery"
)

// How the terminal announces itself by network service discovery is not
// shown by the specification; what its payment app is known to announce
// (a service of type _http._tcp, an instance name holding "yavin", port
// 16125) is discovery's default. Both are settings, for a terminal that
// announces itself otherwise:
//
//	comptoir settings set terminal.mdns_service '"_yavin._tcp"'
//	comptoir settings set terminal.mdns_name '"payment"'
//
// A value that is not a service type (_name._tcp or _name._udp) or a name
// of 1 to 63 characters is ignored: the default applies.
const (
	settingMDNSService = "terminal.mdns_service"
	settingMDNSName    = "terminal.mdns_name"
)

var serviceType = regexp.MustCompile(`^_[A-Za-z0-9][A-Za-z0-9-]{0,14}\._(tcp|udp)$`)

// announced is o with the service type and the instance name the
// settings in r (nil: none) give.
func announced(ctx context.Context, r settingsReader, o discovery.Options) discovery.Options {
	if r == nil {
		return o
	}
	if v, err := settingString(ctx, r, settingMDNSService); err == nil && serviceType.MatchString(v) {
		o.ServiceType = v
	}
	if v, err := settingString(ctx, r, settingMDNSName); err == nil {
		if v = strings.TrimSpace(v); v != "" && len(v) <= 63 {
			o.NameFilter = v
		}
	}
	return o
}
