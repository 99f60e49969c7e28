package kiosk

import (
	"strings"
	"testing"

	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/settings"
)

// A kiosk with a prefix numbers its orders B1, B2... (ids ...-B001): the
// number is on the screen, in the journal's order (which the kitchen
// reads) and on the order ticket.
func TestNumberPrefix(t *testing.T) {
	e := newEnv(t, withSetup(func(_ string, db *journal.DB) {
		if err := db.SetSetting(t.Context(), settings.SettingNumberPrefix, []byte(`"B"`)); err != nil {
			t.Fatal(err)
		}
	}))
	e.cart("croissant", 1)
	v := e.must(e.s.Pay(MethodCard))
	if v.OrderNumber != "B1" || !strings.HasSuffix(v.OrderID, "-B001") {
		t.Fatalf("number %q id %q", v.OrderNumber, v.OrderID)
	}
	e.waitPhase(PhaseApproved)
	if o := e.order(v.OrderID); !strings.Contains(string(o.Data), `"number":"B1"`) {
		t.Fatalf("journal order %s", o.Data)
	}
	e.waitFor("order ticket", func(CheckoutView) bool { return len(e.printedFrom("print")) == 1 })
	if tk := e.printedFrom("print")[0]; !strings.Contains(tk.Text, "B1") {
		t.Fatalf("order ticket %q", tk.Text)
	}
}
