package cli

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/comptoir-pos/comptoir/backend/internal/testenv"
	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/receipt"
	"github.com/comptoir-pos/comptoir/backend/terminalsim"
)

// The currency comes from the configuration and goes all the way: a
// kiosk in EUR, CHF or GBP, whose terminal settles in that currency, takes
// an order in it, journals the terminal's approval as agreeing, and prints
// the receipt in it, in each language, never in euros unless it is euros.
func TestReceiptsInTheConfiguredCurrencyInEveryLanguage(t *testing.T) {
	for _, cur := range []string{"EUR", "CHF", "GBP"} {
		sim, _ := testenv.Terminal(t, terminalsim.Config{CurrencyCode: cur})
		for _, lang := range []string{"fr", "en", "es"} {
			dir := t.TempDir()
			var out, errOut bytes.Buffer
			for _, kv := range [][2]string{{"kiosk.currency", `"` + cur + `"`}, {"kiosk.default_language", `"` + lang + `"`}} {
				if code := run([]string{"settings", "--data-dir", dir, "set", kv[0], kv[1]}, &out, &errOut); code != 0 {
					t.Fatal(errOut.String())
				}
			}
			out.Reset()
			if code := run([]string{"pay", "--terminal", sim.URL(), "--data-dir", dir, "--amount", "123456", "--order", "C1"}, &out, &errOut); code != 0 {
				t.Fatalf("%s %s: pay exit %d %s %s", cur, lang, code, out.String(), errOut.String())
			}
			var res payResult
			if err := json.Unmarshal(out.Bytes(), &res); err != nil || res.Flag != "" || !res.OrderPaid {
				t.Fatalf("%s %s: %s", cur, lang, out.String())
			}
			db := openJournal(t, dir)
			ord, err := db.Order(t.Context(), "C1")
			if err != nil || ord.Currency != cur || ord.Status != journal.OrderPaid {
				t.Fatalf("%s %s: order %+v (%v)", cur, lang, ord, err)
			}
			db.Close()
			out.Reset()
			if code := run([]string{"receipt", "--data-dir", dir, "--order", "C1"}, &out, &errOut); code != 0 {
				t.Fatalf("%s %s: receipt exit %d %s", cur, lang, code, errOut.String())
			}
			want := receipt.Formatter{Locale: lang, Currency: cur}.Format(123456)
			if !strings.Contains(out.String(), want) || (cur != "EUR" && strings.Contains(out.String(), "€")) {
				t.Fatalf("%s %s: the receipt lacks %q:\n%s", cur, lang, want, out.String())
			}
		}
	}
}
