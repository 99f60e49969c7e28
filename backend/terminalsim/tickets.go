package terminalsim

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/comptoir-pos/comptoir/backend/localapi"
)

// card is a test card. Only the last four digits exist: tickets and logs
// never carry a full card number.
type card struct {
	name        string
	last4       string
	scheme      string
	issuer      string
	application string // paymentApplication
	aid         string
	voucher     bool  // a meal voucher rather than a bank card
	cap         int64 // largest total accepted, 0 for none
}

var cards = map[string]card{
	"visa":       {"visa", "4242", "VISA", "SIM BANK", "EMV_CONTACTLESS", "A0000000031010", false, 0},
	"mastercard": {"mastercard", "4444", "MASTERCARD", "SIM BANK", "EMV_CONTACTLESS", "A0000000041010", false, 0},
	"cb":         {"cb", "1118", "CB", "SIM BANQUE", "EMV_CONTACT", "A0000000421010", false, 0},
	"amex":       {"amex", "0005", "AMEX", "AMERICAN EXPRESS", "AMEX", "A000000025010801", false, 0},
	"conecs":     {"conecs", "7001", "CONECS", "SIM TITRES", "CONECS_CONTACTLESS", "A0000006480101", true, 2500},
}

// pickCard returns the card the customer presents: the behaviour's, or one
// that the accepted medium type allows.
func pickCard(b Behaviour, medium string) card {
	if c, ok := cards[b.Card]; ok {
		return c
	}
	if medium == localapi.MediumTypeLunchVouchersOnly {
		return cards["conecs"]
	}
	return cards["visa"]
}

// declines reports why a card cannot pay a debit, or "" when it can: an
// excluded medium, or a total over the card's cap (never split).
func (c card) declines(medium string, total int64) string {
	switch {
	case medium == localapi.MediumTypeLunchVouchersOnly && !c.voucher:
		return "bank card excluded (lunch_vouchers_only)"
	case medium == localapi.MediumTypeBankCardsOnly && c.voucher:
		return "meal voucher excluded (bank_cards_only)"
	case c.cap > 0 && total > c.cap:
		return fmt.Sprintf("total %d over the card's cap %d", total, c.cap)
	}
	return ""
}

func (c card) masked() string { return "**** **** **** " + c.last4 }

// token is stable per card, as a real card token is.
func (c card) token(serial string) string {
	h := sha256.Sum256([]byte(serial + "/" + c.name + "/" + c.last4))
	return "ctok_" + hex.EncodeToString(h[:12])
}

// money formats cents as "12.34 EUR".
func money(cents int64, currency string) string {
	sign := ""
	if cents < 0 {
		sign, cents = "-", -cents
	}
	return fmt.Sprintf("%s%d.%02d %s", sign, cents/100, cents%100, currency)
}

// ticket writes a card ticket, 32 columns wide like a terminal's printer.
func (t *Terminal) ticket(copyName string, tx *localapi.Transaction, c card, at time.Time) string {
	var sb strings.Builder
	line := func(format string, a ...any) { fmt.Fprintf(&sb, format+"\n", a...) }
	pair := func(k, v string) {
		pad := 32 - len(k) - len(v)
		if pad < 1 {
			pad = 1
		}
		line("%s%s%s", k, strings.Repeat(" ", pad), v)
	}
	line("%s", t.cfg.MerchantName)
	line("SIMULATED TERMINAL %s", t.cfg.Serial)
	line("NO REAL PAYMENT")
	line("%s", at.UTC().Format("02/01/2006 15:04:05 UTC"))
	line("%s", c.scheme)
	line("%s", c.aid)
	line("%s", c.masked())
	line("%s", strings.ToUpper(tx.TransactionType))
	if tx.TransactionID != "" {
		line("TRANSACTION %s", tx.TransactionID)
	}
	pair("AMOUNT", money(tx.Amount, tx.CurrencyCode))
	if tx.GiftAmount > 0 {
		pair("TIP", money(tx.GiftAmount, tx.CurrencyCode))
		pair("TOTAL", money(tx.Amount+tx.GiftAmount, tx.CurrencyCode))
	}
	if tx.Status == localapi.StatusOK {
		line("APPROVED")
	} else {
		line("DECLINED")
	}
	line("%s", copyName)
	return sb.String()
}
