package testenv

import (
	"testing"

	"github.com/comptoir-pos/comptoir/backend/cloudapi"
	"github.com/comptoir-pos/comptoir/backend/cloudsim"
	"github.com/comptoir-pos/comptoir/backend/localapi"
	"github.com/comptoir-pos/comptoir/backend/terminalsim"
)

// TimeScale runs the simulators 1000 times faster than real time: the
// terminal's handover takes 1.5 ms, a 60 s window 60 ms.
const TimeScale = 0.001

// Scripted is a terminal whose customers are the test's script alone:
// its test amounts (an amount that declines by itself) are off.
var Scripted = terminalsim.Config{TimeScale: TimeScale, NoTestAmounts: true}

// Terminal starts a simulated terminal on 127.0.0.1, closed at the end of
// the test (Close may be called before), and a Local API client of it. A
// zero cfg.TimeScale is TimeScale.
func Terminal(t testing.TB, cfg terminalsim.Config) (*terminalsim.Terminal, *localapi.Client) {
	t.Helper()
	if cfg.TimeScale == 0 {
		cfg.TimeScale = TimeScale
	}
	sim, err := terminalsim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sim.Close() })
	if err := sim.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	client, err := localapi.NewClient(sim.URL())
	if err != nil {
		t.Fatal(err)
	}
	return sim, client
}

// Cloud starts a simulated provider cloud on 127.0.0.1, closed at the end
// of the test (Close may be called before), and a Cloud API client of it
// with its key. A zero cfg.TimeScale is TimeScale (its terminals' too,
// unless cfg.Terminal says).
func Cloud(t testing.TB, cfg cloudsim.Config) (*cloudsim.Cloud, *cloudapi.Client) {
	t.Helper()
	if cfg.TimeScale == 0 {
		cfg.TimeScale = TimeScale
	}
	cloud, err := cloudsim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cloud.Close() })
	if err := cloud.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	client, err := cloudapi.New(cloud.URL(), cloud.Key())
	if err != nil {
		t.Fatal(err)
	}
	return cloud, client
}
