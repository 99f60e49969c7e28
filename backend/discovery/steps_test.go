package discovery

import (
	"testing"

	"github.com/comptoir-pos/comptoir/backend/terminalsim"
)

// onLoopback starts a simulated terminal, serving HTTPS when tls, under a
// new name ("Yavin SIM " and a tag) and advertises it on the loopback
// interface; the test is skipped where mDNS does not work there. It
// returns the tag, the name and the terminal.
func onLoopback(t *testing.T, tls bool) (string, string, *terminalsim.Terminal) {
	t.Helper()
	needMulticast(t)
	u := tag()
	name := "Yavin SIM " + u
	var sim *terminalsim.Terminal
	if tls {
		sim = newTLSSim(t, name, nil)
	} else {
		sim = newSim(t, name)
	}
	advertiseSim(t, sim)
	return u, name, sim
}
