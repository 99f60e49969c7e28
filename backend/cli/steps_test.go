package cli

import (
	"testing"

	"github.com/comptoir-pos/comptoir/backend/terminalsim"
)

// advertiseAs has sim advertise itself over mDNS with opts until the test
// ends.
func advertiseAs(t *testing.T, sim *terminalsim.Terminal, opts terminalsim.AdvertiseOptions) {
	t.Helper()
	stop, err := sim.Advertise(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
}
