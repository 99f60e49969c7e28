package receipt

import (
	"strings"
	"testing"
)

func TestCheckQRURL(t *testing.T) {
	for _, ok := range []string{
		"",
		"https://receipts.example.test/r/{order}",
		"https://receipts.example.test/r?order={order}&shop=12",
		"https://receipts.example.test/#/{order}",
		"https://receipts.example.test/",
		"HTTPS://receipts.example.test/{order}/{order}",
		"https://receipts.example.test:8443/r/{order}",
	} {
		if err := CheckQRURL(ok); err != nil {
			t.Errorf("%q refused: %v", ok, err)
		}
	}
	for _, bad := range []string{
		"javascript:alert(1)",
		"JavaScript:alert(document.cookie)//https://x.test/",
		"data:text/html,<script>alert(1)</script>",
		"http://receipts.example.test/r/{order}",
		"ftp://receipts.example.test/",
		"//receipts.example.test/r/{order}",
		"receipts.example.test/r/{order}",
		"https:/r/{order}",
		"https://",
		"https://user:pass@receipts.example.test/",
		"https://receipts.example.test@evil.example/",
		"https://{order}.example.test/",
		"https://receipts.example.test/r/{total}",
		"https://receipts.example.test/r/{order",
		"https://receipts.example.test/r/ {order}",
		"https://receipts.example.test/r/\n{order}",
		"https://receipts.example.test/r/\u0085",
		"https://x.test/" + strings.Repeat("a", MaxQRURL),
	} {
		if err := CheckQRURL(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// A template the check refuses is never printed, whatever put it in the
// settings; a good one is, with the order's number.
func TestABadQRURLIsNotPrinted(t *testing.T) {
	opt := Options{Columns: 48, Locale: "fr"}
	for _, bad := range []string{"javascript:alert(1)", "http://evil.example/{order}", "https://evil.example/{amount}"} {
		r := Receipt{Merchant: merchant(), Order: order(), Payments: splitPayment()}
		r.Merchant.QRURL = bad
		text := CustomerReceiptText(r, opt)
		if strings.Contains(text, "alert") || strings.Contains(text, "evil") {
			t.Errorf("%q printed:\n%s", bad, text)
		}
		if b, err := CustomerReceipt(r, opt); err != nil || strings.Contains(string(b), "evil") || strings.Contains(string(b), "alert") {
			t.Errorf("%q in the ESC/POS receipt (%v)", bad, err)
		}
	}
	r := Receipt{Merchant: merchant(), Order: order(), Payments: splitPayment()}
	if text := CustomerReceiptText(r, opt); !strings.Contains(text, "https://receipts.example.test/r/"+r.Order.Number) {
		t.Errorf("the good QR URL is not printed:\n%s", text)
	}
}
