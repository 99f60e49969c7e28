package cli

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/comptoir-pos/comptoir/backend/cloudsim"
	"github.com/comptoir-pos/comptoir/backend/internal/testenv"
)

// linkOnce runs `comptoir link` until its cart exists, cancels it, and
// returns the cart's request.
func linkOnce(t *testing.T, cloud *cloudsim.Cloud, dir string, extra ...string) map[string]json.RawMessage {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	before := len(cloud.Carts())
	var out, errOut syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- cmdLink(ctx, append([]string{"--cloud", cloud.URL(), "--data-dir", dir, "--amount", "900"}, extra...), &out, &errOut)
	}()
	testenv.Eventually(t, "the cart", func() bool {
		select {
		case code := <-done:
			t.Fatalf("exit %d: %s", code, errOut.String())
		default:
		}
		return len(cloud.Carts()) > before
	})
	cancel()
	<-done
	return cloud.Carts()[before].Request
}

// A link's features follow the specification's defaults unless told: meal
// vouchers accepted (the provider's default) without lines, refused with
// --meal-vouchers=false.
func TestLinkMealVouchersFollowTheSpecsDefault(t *testing.T) {
	cloud := linkCloud(t)
	dir := t.TempDir()
	if f := string(linkOnce(t, cloud, dir)["features"]); strings.Contains(f, `"meal_vouchers":false`) {
		t.Fatalf("without a word, meal vouchers refused: %s", f)
	}
	if f := string(linkOnce(t, cloud, dir, "--meal-vouchers=false")["features"]); !strings.Contains(f, `"meal_vouchers":false`) {
		t.Fatalf("--meal-vouchers=false: %s", f)
	}
	if f := string(linkOnce(t, cloud, dir, "--meal-vouchers")["features"]); !strings.Contains(f, `"meal_vouchers":true`) {
		t.Fatalf("--meal-vouchers: %s", f)
	}
}

// The customer's phone returns to a page that exists: the setting, else
// the merchant's receipt site, else the simulated cloud's return page; with
// none known, links are refused with the setting to set.
func TestLinkReturnURLIsAPageThatExists(t *testing.T) {
	cloud := linkCloud(t)
	dir := t.TempDir()
	ret := func(req map[string]json.RawMessage) string {
		var u string
		_ = json.Unmarshal(req["return_url_success"], &u)
		return u
	}
	page := ret(linkOnce(t, cloud, dir))
	if page != cloud.URL()+cloudsim.PathReturnPage {
		t.Fatalf("default on the simulated cloud: %q", page)
	}
	resp, err := http.Get(page + "?cartId=x&status=ok")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("the return page: %v %v", resp, err)
	}
	resp.Body.Close()
	settings := func(kv ...string) {
		var out, errOut syncBuffer
		if code := run(append([]string{"settings", "--data-dir", dir, "set"}, kv...), &out, &errOut); code != 0 {
			t.Fatal(errOut.String())
		}
	}
	settings("receipt.merchant", `{"name":"Chez Ana","qrUrl":"https://receipts.example.com/r/{order}"}`)
	if page := ret(linkOnce(t, cloud, dir)); page != "https://receipts.example.com/" {
		t.Fatalf("with the merchant's receipt site: %q", page)
	}
	settings(settingLinkReturnURL, `"https://chez-ana.example/merci"`)
	if page := ret(linkOnce(t, cloud, dir)); page != "https://chez-ana.example/merci" {
		t.Fatalf("with the setting: %q", page)
	}
	// A cloud that serves no return page, and nothing set: refused.
	other := tinyCloud(t, cloud.Key())
	var out, errOut syncBuffer
	if code := cmdLink(t.Context(), []string{"--cloud", other.URL, "--data-dir", t.TempDir(), "--amount", "900"}, &out, &errOut); code != 1 || !strings.Contains(errOut.String(), settingLinkReturnURL) {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
}
