package staff

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/comptoir-pos/comptoir/backend/settings"
)

// Staff cannot put a javascript: or foreign-scheme address, or an unknown
// placeholder, on customer receipts; an https one with {order} is taken.
func TestSettingsRefuseABadQRURL(t *testing.T) {
	e := newEnv(t)
	s := e.unlock()
	for _, bad := range []string{"javascript:alert(1)", "http://receipts.example.test/{order}", "https://receipts.example.test/{amount}", "https://{order}.example.test/"} {
		v, _ := json.Marshal(settings.MerchantSetting{Name: "Café", QRURL: bad})
		se := wantCode(t, e.st.SaveSetting(e.ctx, s.ID, settings.SettingMerchant, v), EINVALID)
		if !strings.Contains(se.Message, "qrUrl") {
			t.Fatalf("%q: message %q", bad, se.Message)
		}
	}
	if _, ok, _ := e.db.Setting(e.ctx, settings.SettingMerchant); ok {
		t.Fatal("a refused merchant was stored")
	}
	good, _ := json.Marshal(settings.MerchantSetting{Name: "Café", QRURL: "https://receipts.example.test/r/{order}"})
	if err := e.st.SaveSetting(e.ctx, s.ID, settings.SettingMerchant, good); err != nil {
		t.Fatal(err)
	}
}
