package payment

import (
	"strings"
	"testing"

	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/terminalsim"
)

// The journal keeps each channel's own answer; ChargeOf reads it in that
// channel's words, so that a receipt shows the terminal's customer ticket
// whichever way the payment went (the cloud names it clientTicket, the
// Local API clientCardTicket).
func TestChargeOfReadsEachChannelsAnswer(t *testing.T) {
	eachChannel(t, testLimits, func(t *testing.T, e *env) {
		e.recover()
		v := e.wait(e.kiosk("C1", 1250))
		if v.State != journal.StateApproved {
			t.Fatalf("view %+v", v)
		}
		att, err := e.db.Attempt(e.ctx, v.UUID)
		if err != nil {
			t.Fatal(err)
		}
		c, ok := ChargeOf(att)
		if !ok || !c.Approved || c.TransactionID != att.TransactionID || c.Amount != 1250 || c.Scheme == "" {
			t.Fatalf("charge %+v, ok %v, from %s", c, ok, att.Response)
		}
		if !strings.Contains(c.ClientTicket, "CUSTOMER COPY") || !strings.Contains(c.MerchantTicket, "MERCHANT COPY") {
			t.Fatalf("tickets %q / %q, from %s", c.ClientTicket, c.MerchantTicket, att.Response)
		}

		e.sim.Script(terminalsim.Decline())
		v = e.wait(e.kiosk("C2", 700))
		att, err = e.db.Attempt(e.ctx, v.UUID)
		if err != nil {
			t.Fatal(err)
		}
		if c, ok := ChargeOf(att); v.State != journal.StateDeclined || !ok || c.Approved {
			t.Fatalf("declined: view %+v, charge %+v, ok %v", v, c, ok)
		}
		att.Response = []byte("<html>proxy error</html>")
		if _, ok := ChargeOf(att); ok {
			t.Fatal("an answer that is not a transaction was read as one")
		}
	})
}
