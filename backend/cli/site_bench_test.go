package cli

import (
	"context"
	"encoding/json"
	"io"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/internal/testenv"
	"github.com/comptoir-pos/comptoir/backend/kiosk"
	"github.com/comptoir-pos/comptoir/backend/payment"
	"github.com/comptoir-pos/comptoir/backend/terminalsim"
)

// BenchmarkPayWithTheSite: a kiosk's payment (start to approved, on the
// simulated terminal) with its restaurant's site up, and with the site's
// address dead: the payment never waits for the site, so both are alike.
func BenchmarkPayWithTheSite(b *testing.B) {
	for _, tc := range []struct {
		name string
		up   bool
	}{{"site-up", true}, {"site-down", false}} {
		b.Run(tc.name, func(b *testing.B) {
			siteAddr := testenv.FreeAddr(b)
			if tc.up {
				role, err := startSiteRole(context.Background(), commonFlags{dataDir: b.TempDir()}, siteAddr, warnLogger(io.Discard))
				if err != nil {
					b.Fatal(err)
				}
				defer role.close()
			}
			sim, _ := testenv.Terminal(b, terminalsim.Config{TimeScale: 0.0001})
			defer sim.Close()
			dir := b.TempDir()
			configure(b, dir, map[string]any{"kiosk.number_prefix": "A"}, nil)
			stack, err := startKiosk(context.Background(), commonFlags{terminal: sim.URL(), dataDir: dir, site: "nats://" + siteAddr},
				payment.DefaultLimits, kiosk.NewRelay(nil), warnLogger(io.Discard))
			if err != nil {
				b.Fatal(err)
			}
			defer stack.Close()
			if r, err := stack.Staff.Call(context.Background(), "SetPIN", []json.RawMessage{json.RawMessage(`"4829"`)}); err != nil || !r.OK {
				b.Fatalf("SetPIN: %v", err)
			}
			b.ResetTimer()
			for range b.N {
				benchPay(b, stack)
			}
		})
	}
}

func benchPay(b *testing.B, stack *Stack) {
	wait := func(p kiosk.Phase) {
		for deadline := time.Now().Add(30 * time.Second); stack.Svc.Checkout().Phase != p; time.Sleep(100 * time.Microsecond) {
			if time.Now().After(deadline) {
				b.Fatalf("never %s: %+v", p, stack.Svc.Checkout())
			}
		}
	}
	wait(kiosk.PhaseWelcome)
	stack.Svc.Start("en")
	stack.Svc.ChooseDining(kiosk.DiningEatIn)
	stack.Svc.AddItem("croissant", 1)
	stack.Svc.Pay(kiosk.MethodCard)
	wait(kiosk.PhaseApproved)
	stack.Svc.Finish()
}
