package cli

import (
	"testing"

	"github.com/comptoir-pos/comptoir/backend/cloudsim"
	"github.com/comptoir-pos/comptoir/backend/terminalsim"
)

// runCloud starts a simulated provider cloud of cfg, closed when the test
// ends.
func runCloud(t *testing.T, cfg cloudsim.Config) *cloudsim.Cloud {
	t.Helper()
	cloud, err := cloudsim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := cloud.Start(""); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cloud.Close() })
	return cloud
}

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
