package payment

import "testing"

// The means of payment the Webservices never refund are told by whole
// words of the scheme or issuer, letters and digits alike: a word that
// only contains one of them (CASHBACK, CUP9) is another means of payment.
func TestRuleAMeansOfPaymentIsNotRefundableByAPIOnlyByItsWholeName(t *testing.T) {
	for name, refundable := range map[string]bool{
		"AMEX": false, "amex": false, "American Express": false, "UNIONPAY-INTL": false, "cup": false, "VISA/CUP": false,
		"CASH": false, "ANCV": false, "Conecs": false,
		"CASHBACK": true, "ACUP": true, "CASHZ": true, "CUP9": true, "CUP0": true, "0CUP": true, "9CUP": true, "VISA": true,
	} {
		if got := refundableByAPI("VISA", name) == ""; got != refundable {
			t.Errorf("%q: refundable %v, want %v", name, got, refundable)
		}
	}
}
