package settings

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/comptoir-pos/comptoir/backend/journal"
)

// A merchant whose qrUrl is not an https address with the documented
// placeholder keeps its name and address on receipts, loses the QR code,
// and the kiosk says why in its log.
func TestABadQRURLIsDroppedWithAWarning(t *testing.T) {
	ctx := context.Background()
	for _, bad := range []string{"javascript:alert(1)", "http://receipts.example.test/{order}", "https://receipts.example.test/{total}"} {
		db, err := journal.OpenMemory(ctx)
		if err != nil {
			t.Fatal(err)
		}
		raw := `{"name":"Boulangerie Test","address":["1 rue de la Paix"],"qrUrl":"` + bad + `"}`
		if err := db.SetSetting(ctx, SettingMerchant, []byte(raw)); err != nil {
			t.Fatal(err)
		}
		var log bytes.Buffer
		st, err := LoadSettings(ctx, db, slog.New(slog.NewJSONHandler(&log, nil)))
		db.Close()
		if err != nil {
			t.Fatal(err)
		}
		if st.Merchant.QRURL != "" || st.Merchant.Name != "Boulangerie Test" {
			t.Fatalf("%q: merchant %+v", bad, st.Merchant)
		}
		if !strings.Contains(log.String(), `"key":"`+SettingMerchant+`"`) || !strings.Contains(log.String(), "qrUrl") {
			t.Fatalf("%q: no warning: %s", bad, log.String())
		}
	}
}
