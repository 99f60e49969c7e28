package payment

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/cloudapi"
	"github.com/comptoir-pos/comptoir/backend/journal"
)

// A link's options left unset take their documented defaults, and those
// set are kept: how often its cart is read, its life and the margin past
// it, and the shop's name its customer sees (Comptoir when none).
func TestRuleALinksOptionsLeftUnsetTakeTheirDefaults(t *testing.T) {
	policy, err := DefaultLimits.Policy(journal.PolicyKiosk)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name       string
		opts       LinkOptions
		poll, life time.Duration
		margin     time.Duration
		brand      string
	}{
		{"unset", LinkOptions{}, 3 * time.Second, LinkLifetime, time.Hour, "Comptoir"},
		{"blank name", LinkOptions{BrandName: "  "}, 3 * time.Second, LinkLifetime, time.Hour, "Comptoir"},
		{"set", LinkOptions{PollEvery: time.Second, Lifetime: 10 * time.Minute, Margin: 30 * time.Minute, BrandName: "Chez Paul"},
			time.Second, 10 * time.Minute, 30 * time.Minute, "Chez Paul"},
	} {
		tc.opts.ReturnURL, tc.opts.Currency = "https://shop.example/", "EUR"
		ch := Link(nil, tc.opts)
		r := ch.Rules()
		if r.PollEvery != tc.poll || r.Lifetime != tc.life || r.LifetimeMargin != tc.margin {
			t.Fatalf("%s: rules %+v", tc.name, r)
		}
		body, err := ch.Body(NewAttempt{UUID: "01a20000-0000-7000-8000-000000000001", Policy: policy,
			Request: Request{OrderID: "K1", Amount: 1250, Policy: journal.PolicyKiosk}})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		var req struct {
			Vendor struct {
				BrandName string `json:"brand_name"`
			} `json:"vendor"`
		}
		if err := json.Unmarshal(body, &req); err != nil || req.Vendor.BrandName != tc.brand {
			t.Fatalf("%s: brand %q in %s (%v)", tc.name, req.Vendor.BrandName, body, err)
		}
	}
}

// An attempt that never learnt its link's address is named by the
// cart's; one that did keeps it.
func TestRuleALinkAttemptKeepsTheAddressItLearnt(t *testing.T) {
	c := Link(nil, LinkOptions{}).(*linkChannel)
	cart := &cloudapi.Cart{Status: "pending", PaymentLink: "https://pay.example/L2"}
	if a := c.cartAnswer(journal.Attempt{}, cart); a.ProviderID != "https://pay.example/L2" {
		t.Fatalf("an attempt without its link's address: %q", a.ProviderID)
	}
	if a := c.cartAnswer(journal.Attempt{ProviderID: "https://pay.example/L1"}, cart); a.ProviderID != "https://pay.example/L1" {
		t.Fatalf("an attempt with its link's address: %q", a.ProviderID)
	}
}
