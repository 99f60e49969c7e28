package kiosk

import (
	"context"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/localapi"
)

// A receipt sent by e-mail or SMS waits for the customer, whom the
// terminal prompts for the address or number: longer than a print, which
// nobody types for.
func TestAShareWaitsForTheCustomerAtTheTerminal(t *testing.T) {
	e := newEnv(t)
	e.cart("eclair-cafe", 1)
	e.must(e.s.Pay(MethodCard))
	e.waitPhase(PhaseApproved)
	left := make(chan time.Duration, 1)
	e.printer.share = func(ctx context.Context, _ *localapi.ShareReceiptRequest) (*localapi.StatusResponse, error) {
		dl, ok := ctx.Deadline()
		if !ok {
			left <- 0
		} else {
			left <- time.Until(dl)
		}
		return &localapi.StatusResponse{Status: localapi.StatusOK}, nil
	}
	e.must(e.s.ChooseReceipt(ReceiptEmail))
	if d := <-left; d <= receiptTimeout || d > shareTimeout {
		t.Fatalf("the share may wait %s: more than a print's %s, at most %s", d, receiptTimeout, shareTimeout)
	}
}
