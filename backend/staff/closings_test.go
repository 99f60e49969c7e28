package staff

import (
	"strings"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/fiscal"
	"github.com/comptoir-pos/comptoir/backend/journal"
)

// Staff list every closing, newest first, and print any of them again:
// the printed Z carries the chain and key fingerprints, the running
// counts and the perpetual total. Without a session, nothing.
func TestClosingsListedAndPrinted(t *testing.T) {
	e := newEnv(t)
	key, err := fiscal.LoadOrCreateKey(e.dir)
	if err != nil {
		t.Fatal(err)
	}
	ledger := fiscal.NewLedger(e.db, key, "caisse-1", "Comptoir test")
	e.cfg.Ledger = ledger
	e.restart()
	sid := e.unlock().ID
	if cs, err := e.st.Closings(e.ctx, sid); err != nil || len(cs) != 0 {
		t.Fatalf("before any: %+v %v", cs, err)
	}
	e.pay(e.order(1000), 1000, journal.PolicyKiosk, journal.StateApproved)
	if _, err := ledger.RecordTickets(e.ctx, nil); err != nil {
		t.Fatal(err)
	}
	today := time.Now().In(time.Local)
	for _, d := range []int{-3, -2, -1} {
		if _, err := e.st.PrintZ(e.ctx, sid, today.AddDate(0, 0, d).Format(time.DateOnly)); err != nil {
			t.Fatal(err)
		}
	}
	cs, err := e.st.Closings(e.ctx, sid)
	if err != nil || len(cs) != 3 || cs[0].Number != 3 || cs[2].Number != 1 || cs[0].Period != fiscal.PeriodDay || !strings.HasPrefix(cs[0].Fingerprint, "Z3-") {
		t.Fatalf("closings %+v %v", cs, err)
	}
	before := len(e.sim.Printed())
	c, err := e.st.PrintClosing(e.ctx, sid, 2)
	if err != nil || c.Number != 2 {
		t.Fatalf("print %+v %v", c, err)
	}
	printed := e.sim.Printed()
	if len(printed) != before+1 {
		t.Fatalf("%d printed", len(printed)-before)
	}
	text := printed[len(printed)-1].Text
	for _, want := range []string{"Closing no. 2", c.Fingerprint, fiscal.ShortFingerprint(ledger.PublicKey()), "Tickets to date", "Events to date", "Perpetual total"} {
		if !strings.Contains(text, want) {
			t.Errorf("the Z lacks %q:\n%s", want, text)
		}
	}
	_, err = e.st.PrintClosing(e.ctx, sid, 9)
	wantCode(t, err, ENOTFOUND)
	_, err = e.st.Closings(e.ctx, "nobody")
	wantCode(t, err, ESESSION)
	_, err = e.st.PrintClosing(e.ctx, "nobody", 1)
	wantCode(t, err, ESESSION)
}
