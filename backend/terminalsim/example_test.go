package terminalsim_test

import (
	"context"
	"fmt"

	"github.com/comptoir-pos/comptoir/backend/localapi"
	"github.com/comptoir-pos/comptoir/backend/terminalsim"
)

// A test drives the customer: the payment waits on the banking screen until
// the test presents the card.
func Example() {
	sim, err := terminalsim.New(terminalsim.Config{TimeScale: 0.001})
	if err != nil {
		panic(err)
	}
	if err := sim.Start("127.0.0.1:0"); err != nil {
		panic(err)
	}
	defer sim.Close()
	client, _ := localapi.NewClient(sim.URL())
	ctx := context.Background()

	sim.Script(terminalsim.Hold())
	req := &localapi.PaymentRequest{Amount: 1250, IdempotentUUID: "0190f5a4-7c1e-7000-8000-000000000001", EnableGiftScreen: localapi.Bool(false)}
	done := make(chan *localapi.Transaction)
	go func() {
		tx, err := client.Payment(ctx, req)
		if err != nil {
			panic(err)
		}
		done <- tx
	}()
	if err := sim.WaitPhase(ctx, req.IdempotentUUID, terminalsim.PhaseBanking); err != nil {
		panic(err)
	}
	_ = sim.PresentCard()
	tx := <-done
	fmt.Println(tx.Status, tx.Amount, tx.CurrencyCode)
	fmt.Println(len(sim.ChargesFor(req.IdempotentUUID)), "charge")
	// Output:
	// ok 1250 EUR
	// 1 charge
}
