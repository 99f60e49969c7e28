package receipt

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Formatter formats amounts in cents for a locale ("fr", "en", "es"; other
// values read as "en") and a currency ("EUR", "CHF", "GBP"; another ISO code
// is written out as a suffix or prefix).
//
//	fr, es: 1 234,50 €   12,50 CHF   12,50 £   (es groups thousands with '.')
//	en:     €1,234.50    CHF 12.50   £12.50
//
// € and £ are both in CP858, the builder's default code page.
type Formatter struct {
	Locale   string
	Currency string
}

func (f Formatter) lang() string {
	switch f.Locale {
	case "fr", "es":
		return f.Locale
	}
	return "en"
}

func (f Formatter) symbol() string {
	switch strings.ToUpper(f.Currency) {
	case "EUR", "":
		return "€"
	case "GBP":
		return "£"
	}
	return strings.ToUpper(f.Currency)
}

// Format is cents as money: Format(1250) is "12,50 €" in fr.
func (f Formatter) Format(cents int64) string {
	sign := ""
	if cents < 0 {
		sign = "-"
	}
	n := f.Number(cents)
	if cents < 0 {
		n = n[1:]
	}
	sym := f.symbol()
	if f.lang() == "en" {
		if utf8.RuneCountInString(sym) > 1 { // an ISO code: "CHF 12.50"
			return sign + sym + " " + n
		}
		return sign + sym + n
	}
	return sign + n + " " + sym
}

// Number is cents as a decimal number without currency: "1 234,50" in fr,
// "1.234,50" in es, "1,234.50" in en.
func (f Formatter) Number(cents int64) string {
	dec, group := ",", " "
	switch f.lang() {
	case "en":
		dec, group = ".", ","
	case "es":
		group = "."
	}
	neg := cents < 0
	u := uint64(cents)
	if neg {
		u = -u
	}
	units := strconv.FormatUint(u/100, 10)
	var sb strings.Builder
	if neg {
		sb.WriteByte('-')
	}
	for i, c := range units {
		if i > 0 && (len(units)-i)%3 == 0 {
			sb.WriteString(group)
		}
		sb.WriteRune(c)
	}
	sb.WriteString(dec)
	c := u % 100
	sb.WriteByte(byte('0' + c/10))
	sb.WriteByte(byte('0' + c%10))
	return sb.String()
}

// Rate is a VAT rate in basis points as a percentage: "5,5 %" in fr and es,
// "5.5%" in en; "20 %", "0 %".
func (f Formatter) Rate(bp int) string {
	s := strconv.Itoa(bp / 100)
	if frac := bp % 100; frac != 0 {
		fs := strings.TrimRight(strconv.Itoa(100 + frac)[1:], "0")
		if f.lang() == "en" {
			s += "." + fs
		} else {
			s += "," + fs
		}
	}
	if f.lang() == "en" {
		return s + "%"
	}
	return s + " %"
}

// labels are the words of the layouts, by language.
type labels struct {
	Order, Total, Tip, Paid, VAT, VATNo, Rate, Net, Gross, Payment, Txn, Card, Cash, Collect, Digital, Part string
	Voucher                                                                                                 string
	EatIn, TakeAway                                                                                         string
	ScanToPay, LinkValid, Link                                                                              string
	// A recorded ticket: its number (%d), the till, the total without
	// VAT, and a reprint's mention (%d: the reprint's number).
	Ticket, Till, TotalNet, Duplicate string
	// Signature introduces the chain fingerprint.
	Signature string
}

var dictionary = map[string]labels{
	"fr": {
		Order: "Commande", Total: "TOTAL", Tip: "Pourboire", Paid: "Total payé", VAT: "TVA", VATNo: "N° TVA",
		Rate: "Taux", Net: "HT", Gross: "TTC", Payment: "Paiement", Txn: "Transaction", Card: "Carte",
		Cash: "Espèces", Collect: "À retirer au comptoir", Digital: "Votre reçu en ligne", Part: "Paiement %d/%d",
		EatIn: "SUR PLACE", TakeAway: "À EMPORTER",
		ScanToPay: "Scannez pour payer avec votre téléphone", LinkValid: "Lien valable jusqu'au %s",
		Link: "Paiement par téléphone", Voucher: "Titre-restaurant",
		Ticket: "Ticket n° %d", Till: "Caisse", TotalNet: "Total HT", Duplicate: "DUPLICATA n° %d",
		Signature: "Signature",
	},
	"en": {
		Order: "Order", Total: "TOTAL", Tip: "Tip", Paid: "Total paid", VAT: "VAT", VATNo: "VAT no.",
		Rate: "Rate", Net: "Net", Gross: "Gross", Payment: "Payment", Txn: "Transaction", Card: "Card",
		Cash: "Cash", Collect: "Collect at the counter", Digital: "Your receipt online", Part: "Payment %d/%d",
		EatIn: "EAT IN", TakeAway: "TAKE AWAY",
		ScanToPay: "Scan to pay with your phone", LinkValid: "Link valid until %s",
		Link: "Paid by phone", Voucher: "Meal voucher",
		Ticket: "Ticket no. %d", Till: "Till", TotalNet: "Total excl. VAT", Duplicate: "DUPLICATE no. %d",
		Signature: "Signature",
	},
	"es": {
		Order: "Pedido", Total: "TOTAL", Tip: "Propina", Paid: "Total pagado", VAT: "IVA", VATNo: "NIF",
		Rate: "Tipo", Net: "Base", Gross: "Total", Payment: "Pago", Txn: "Transacción", Card: "Tarjeta",
		Cash: "Efectivo", Collect: "Recoger en el mostrador", Digital: "Su recibo en línea", Part: "Pago %d/%d",
		EatIn: "PARA TOMAR AQUÍ", TakeAway: "PARA LLEVAR",
		ScanToPay: "Escanee para pagar con su teléfono", LinkValid: "Enlace válido hasta el %s",
		Link: "Pago por teléfono", Voucher: "Vale de comida",
		Ticket: "Tique n.º %d", Till: "Caja", TotalNet: "Total sin IVA", Duplicate: "DUPLICADO n.º %d",
		Signature: "Firma",
	},
}

func words(locale string) labels {
	if l, ok := dictionary[locale]; ok {
		return l
	}
	return dictionary["en"]
}
