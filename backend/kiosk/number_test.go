package kiosk

import (
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

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

// The order number restarts at 1 each day: the stored sequence goes on
// within its day only; a negative or damaged one starts the day again, the
// damaged one with a warning. What is stored next is the number given.
func TestTheOrderNumberRestartsEachDay(t *testing.T) {
	created := time.Date(2026, 11, 27, 12, 0, 0, 0, time.Local)
	for _, tc := range []struct {
		name, stored, number string
		warned               bool
	}{
		{"nothing stored", "", "1", false},
		{"the same day", `{"day":"2026-11-27","last":41}`, "42", false},
		{"the day before", `{"day":"2026-11-26","last":41}`, "1", false},
		{"a negative number", `{"day":"2026-11-27","last":-5}`, "1", false},
		{"damaged", `{"day":7,"last":"x"}`, "1", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			logs := &logLines{}
			e := newEnv(t, withLogger(slog.New(logs)), withSetup(func(_ string, db *journal.DB) {
				if tc.stored == "" {
					return
				}
				if err := db.SetSetting(t.Context(), settingOrderSequence, []byte(tc.stored)); err != nil {
					t.Fatal(err)
				}
			}))
			n, number, err := e.s.nextOrder(e.ctx, &order{total: 130, currency: "EUR", created: created})
			if err != nil || number != tc.number || n.Order.ID != "20261127-"+fmt.Sprintf("%03s", tc.number) {
				t.Fatalf("numbered %q id %q: %v", number, n.Order.ID, err)
			}
			if want := `{"day":"2026-11-27","last":` + tc.number + `}`; len(n.With) != 1 || string(n.With[0].Value) != want {
				t.Fatalf("sequence to store %+v, want %s", n.With, want)
			}
			if warned := logs.has(settingOrderSequence); warned != tc.warned {
				t.Fatalf("warned %v, want %v: %q", warned, tc.warned, logs.lines)
			}
		})
	}
}
