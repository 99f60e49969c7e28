package receipt

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"image"
	"image/color"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/comptoir-pos/comptoir/backend/device"
	"github.com/comptoir-pos/comptoir/backend/escpos"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

func golden(t *testing.T, name string, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file (go test -update rewrites it)\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

func logo() image.Image {
	img := image.NewGray(image.Rect(0, 0, 120, 40))
	for i := range img.Pix {
		img.Pix[i] = 255
	}
	for y := 10; y < 30; y++ {
		for x := 10; x < 110; x++ {
			img.SetGray(x, y, color.Gray{Y: uint8(x * 2)})
		}
	}
	return img
}

func merchant() Merchant {
	return Merchant{
		Name:      "Café du Comptoir",
		Address:   []string{"12 rue de la Paix", "75002 Paris"},
		VATNumber: "FR12345678901",
		Logo:      logo(),
		Footer:    []string{"Merci de votre visite et à bientôt !"},
		QRURL:     "https://receipts.example.test/r/{order}",
	}
}

func order() Order {
	return Order{
		Number: "A42",
		Time:   time.Date(2026, 3, 14, 12, 5, 0, 0, time.UTC),
		Lines: []Line{
			{Qty: 2, Name: "Croque monsieur", UnitPrice: 650, VATRate: 1000},
			{Qty: 1, Name: "Salade de chèvre chaud aux noix et miel de lavande, vinaigrette balsamique", UnitPrice: 1190, VATRate: 1000},
			{Qty: 3, Name: "Eau minérale 50 cl", UnitPrice: 199, VATRate: 550},
			{Qty: 1, Name: "Bière pression", UnitPrice: 550, VATRate: 2000},
		},
		Currency: "EUR",
	}
}

const cardTicket = "   CARTE BANCAIRE\r\nVISA\r\nA0000000031010\r\n14/03/26 12:06\r\nCOMPTOIR PARIS\r\n75002 PARIS\r\n************4242\r\nMONTANT = 20,00 EUR\r\nDEBIT\r\nTICKET CLIENT A CONSERVER\r\n"

func splitPayment() []Part {
	return []Part{
		{Kind: KindCard, Amount: 1800, Tip: 200, Scheme: "VISA", MaskedPAN: "**** **** **** 4242",
			TransactionID: "txn_8f2c1a", ClientCardTicket: cardTicket},
		{Kind: KindCash, Amount: order().Total() - 1800},
	}
}

func decode(t *testing.T, b []byte) *escpos.Document {
	t.Helper()
	doc, err := escpos.Decode(b)
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	if len(doc.Notes) > 0 {
		t.Errorf("decoder notes: %v", doc.Notes)
	}
	return doc
}

func TestGoldenReceipts(t *testing.T) {
	r := Receipt{Merchant: merchant(), Order: order(), Payments: splitPayment()}
	for _, cols := range []int{32, 48} {
		opt := Options{Columns: cols, Locale: "fr"}
		b, err := CustomerReceipt(r, opt)
		if err != nil {
			t.Fatal(err)
		}
		c := strconv.Itoa(cols)
		golden(t, "customer_"+c+".txt", trimRender(decode(t, b).Render(cols)))
		golden(t, "customer_text_"+c+".txt", CustomerReceiptText(r, opt))
		golden(t, "share_"+c+".txt", ShareText(r, opt))
		ob, err := OrderTicket(order(), opt)
		if err != nil {
			t.Fatal(err)
		}
		golden(t, "order_ticket_"+c+".txt", trimRender(decode(t, ob).Render(cols)))
		golden(t, "order_ticket_text_"+c+".txt", OrderTicketText(order(), opt))
		for _, l := range strings.Split(CustomerReceiptText(r, opt), "\n") {
			if n := utf8.RuneCountInString(l); n > cols && !strings.HasPrefix(l, "https://") {
				t.Errorf("%d columns: line %q is %d wide", cols, l, n)
			}
		}
	}
	// The other languages and currencies, 48 columns.
	for _, tc := range []struct{ locale, currency string }{{"en", "GBP"}, {"es", "EUR"}, {"en", "CHF"},
		{"fr", "CHF"}, {"fr", "GBP"}, {"es", "CHF"}, {"es", "GBP"}} {
		o := order()
		o.Currency = tc.currency
		r := Receipt{Merchant: merchant(), Order: o, Payments: []Part{{
			Kind: KindCard, Amount: o.Total(), Scheme: "MASTERCARD", TransactionID: "txn_1"}}}
		golden(t, "customer_text_"+tc.locale+"_"+tc.currency+".txt", CustomerReceiptText(r, Options{Columns: 48, Locale: tc.locale}))
	}
}

func TestReceiptContent(t *testing.T) {
	r := Receipt{Merchant: merchant(), Order: order(), Payments: splitPayment()}
	b, err := CustomerReceipt(r, Options{Columns: 32, Locale: "fr"})
	if err != nil {
		t.Fatal(err)
	}
	doc := decode(t, b)
	text := doc.Text()
	for _, want := range []string{
		"[IMAGE 120x40]",
		"[QR https://receipts.example.test/r/A42]",
		"Paiement 1/2 - Carte     20,00 €", // split tender: two parts
		"Paiement 2/2 - Espèces   18,37 €",
		"  Pourboire               2,00 €", // the card part's tip
		"Pourboire                 2,00 €", // the tip line
		"Total payé               38,37 €",
		"  VISA **** **** **** 4242",
		"  Transaction txn_8f2c1a",
		"TICKET CLIENT A CONSERVER",
		"   CARTE BANCAIRE",                // verbatim, leading spaces kept
		"Salade de chèvre chaud   11,90 €", // wrapped long name
		"aux noix et miel de",
		"  3 x 1,99 €",
		"[PARTIAL CUT]",
	} {
		if !strings.Contains(text, want+"\n") {
			t.Errorf("receipt lacks %q:\n%s", want, text)
		}
	}
	// The total line is bold and double height.
	for _, l := range doc.Lines {
		if strings.HasPrefix(l.Text, "TOTAL") && (!l.Bold || l.Height != 2 || l.Width != 1) {
			t.Errorf("total line %+v", l)
		}
	}
}

func TestUnmaskedPANRefused(t *testing.T) {
	for pan, shown := range map[string]bool{
		"**** **** **** 4242": true,
		"497010******4242":    true,
		"4970101234564242":    false,
		"4970 1012 3456 4242": false,
	} {
		r := Receipt{Order: order(), Payments: []Part{{Kind: KindCard, Amount: 100, Scheme: "VISA", MaskedPAN: pan}}}
		got := strings.Contains(CustomerReceiptText(r, Options{}), pan)
		if got != shown {
			t.Errorf("PAN %q shown = %v, want %v", pan, got, shown)
		}
	}
}

func TestHostileText(t *testing.T) {
	o := order()
	o.Number = "7\x1b@"
	o.Lines = []Line{{Qty: 1, Name: "Burger\x1b@\x1dV\x00\nEvil\x1d(k", UnitPrice: 900, VATRate: 1000}}
	m := merchant()
	m.Name = "Shop\x1bE\x01\r\n"
	m.Address = []string{"\x1dVA\x00Street"}
	m.Footer = []string{"bye\x10\x04\x01"}
	pay := []Part{{Kind: KindCard, Amount: 900, Scheme: "VISA\x1bd\x09", TransactionID: "t\x1dV1",
		ClientCardTicket: "LINE1\x1b@\nLINE2\x1dVA\x00\n"}}
	r := Receipt{Merchant: m, Order: o, Payments: pay}
	for _, cols := range []int{32, 48} {
		b, err := CustomerReceipt(r, Options{Columns: cols, Locale: "en"})
		if err != nil {
			t.Fatal(err)
		}
		doc := decode(t, b)
		cuts := 0
		for _, l := range doc.Lines {
			if l.Marker != nil && l.Marker.Kind == escpos.MarkerCut {
				cuts++
			}
		}
		if cuts != 1 {
			t.Errorf("%d cuts, want 1 (the builder's own)", cuts)
		}
		text := doc.Text()
		for _, want := range []string{"Burger@V Evil(k", "ShopE\n", "VAStreet", "bye", "LINE1@", "LINE2VA", "  VISAd\n", "Transaction tV1"} {
			if !strings.Contains(text, want) {
				t.Errorf("%d columns: %q missing from\n%s", cols, want, text)
			}
		}
		if strings.ContainsAny(text, "\x00\x01\x04\x10\x1b\x1d\r\t") {
			t.Errorf("control characters in %q", text)
		}
		ob, err := OrderTicket(o, Options{Columns: cols})
		if err != nil {
			t.Fatal(err)
		}
		if d := decode(t, ob); d.Lines[1].Text != "7@" {
			t.Errorf("order number line %q", d.Lines[1].Text)
		}
	}
}

func TestOrderTicketBigNumber(t *testing.T) {
	for _, tc := range []struct {
		number string
		cols   int
		size   int
	}{{"42", 32, 4}, {"A-1234", 32, 4}, {"ORDER-123456", 32, 2}, {"ORDER-123456", 48, 4}, {strings.Repeat("9", 40), 32, 1}} {
		o := order()
		o.Number = tc.number
		b, err := OrderTicket(o, Options{Columns: tc.cols, Locale: "en"})
		if err != nil {
			t.Fatal(err)
		}
		doc := decode(t, b)
		l := doc.Lines[1]
		if l.Text != tc.number || l.Width != tc.size || l.Height != tc.size || !l.Bold || l.Align != escpos.AlignCenter {
			t.Errorf("%q on %d columns: %+v, want size %d", tc.number, tc.cols, l, tc.size)
		}
		if !strings.Contains(doc.Text(), "2 x Croque monsieur\n") {
			t.Errorf("items missing:\n%s", doc.Text())
		}
	}
}

func TestReceiptAndOrderTicketSayWhereTheOrderIsEaten(t *testing.T) {
	for _, tc := range []struct{ dining, locale, want string }{
		{DiningEatIn, "fr", "SUR PLACE"},
		{DiningTakeAway, "fr", "À EMPORTER"},
		{DiningTakeAway, "en", "TAKE AWAY"},
		{"", "fr", ""},
	} {
		o := order()
		o.Dining = tc.dining
		rec := CustomerReceiptText(Receipt{Order: o}, Options{Locale: tc.locale})
		b, err := OrderTicket(o, Options{Locale: tc.locale})
		if err != nil {
			t.Fatal(err)
		}
		ticket := decode(t, b).Text()
		for name, text := range map[string]string{"receipt": rec, "order ticket": ticket} {
			has := func(w string) bool { return strings.Contains(text, w+"\n") }
			if tc.want != "" && !has(tc.want) {
				t.Errorf("%s of a %q order in %s lacks %q:\n%s", name, tc.dining, tc.locale, tc.want, text)
			}
			if tc.want == "" && (has("SUR PLACE") || has("À EMPORTER")) {
				t.Errorf("%s of an order with no dining says one:\n%s", name, text)
			}
		}
	}
}

func lines(rates ...[3]int64) Order {
	var o Order
	for i, r := range rates {
		o.Lines = append(o.Lines, Line{Qty: int(r[0]), Name: fmt.Sprint("item", i), UnitPrice: r[1], VATRate: int(r[2])})
	}
	return o
}

func TestTaxBreakdown(t *testing.T) {
	pct := func(p int) *int { return &p }
	tests := []struct {
		name string
		o    Order
		want []device.Tax
	}{
		{"20 %", lines([3]int64{1, 1200, 2000}), []device.Tax{{Amount: 200, Percent: pct(20)}}},
		{"10 %", lines([3]int64{1, 1100, 1000}), []device.Tax{{Amount: 100, Percent: pct(10)}}},
		// 211 × 550 / 10550 = 10.9999 → 11; 5.5 % is not a whole percent:
		// the integer field is left out rather than rounded to 6.
		{"5.5 %", lines([3]int64{1, 211, 550}), []device.Tax{{Amount: 11}}},
		{"zero rate kept", lines([3]int64{1, 500, 0}), []device.Tax{{Amount: 0, Percent: pct(0)}}},
		// 63 × 2000 / 12000 = 10.5 exactly: half-up gives 11 (banker's would give 10).
		{"half up", lines([3]int64{1, 63, 2000}), []device.Tax{{Amount: 11, Percent: pct(20)}}},
		{"half up negative", lines([3]int64{-1, 63, 2000}), []device.Tax{{Amount: -11, Percent: pct(20)}}},
		{"2.1 %", lines([3]int64{1, 1000, 210}), []device.Tax{{Amount: 21}}},
		{"several rates, ascending", lines(
			[3]int64{2, 650, 1000}, [3]int64{1, 550, 2000}, [3]int64{3, 199, 550}, [3]int64{1, 300, 0}, [3]int64{1, 1190, 1000}),
			[]device.Tax{{Amount: 0, Percent: pct(0)}, {Amount: 31}, {Amount: 226, Percent: pct(10)}, {Amount: 92, Percent: pct(20)}}},
		{"no lines", Order{}, []device.Tax{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _ := json.Marshal(TaxBreakdown(tt.o))
			want, _ := json.Marshal(tt.want)
			if string(got) != string(want) {
				t.Errorf("got %s, want %s", got, want)
			}
			var gross int64
			for _, s := range VATSummary(tt.o) {
				if s.Net+s.Tax != s.Gross {
					t.Errorf("rate %d: net %d + tax %d != gross %d", s.Rate, s.Net, s.Tax, s.Gross)
				}
				gross += s.Gross
			}
			if gross != tt.o.Total() {
				t.Errorf("rates add to %d, order total %d", gross, tt.o.Total())
			}
		})
	}
}

// Seven lines of 1,99 € at 5.5 %: each line's VAT is 10.37 ¢ (10 ¢ rounded),
// 70 ¢ in all; on the rate's total of 13,93 € it is 72.62 ¢, 73 ¢.
func TestTaxPerRateNotPerLine(t *testing.T) {
	var o Order
	var perLine int64
	for i := range 7 {
		o.Lines = append(o.Lines, Line{Qty: 1, Name: fmt.Sprint("Eau ", i), UnitPrice: 199, VATRate: 550})
		perLine += TaxIncluded(199, 550)
	}
	got := TaxBreakdown(o)
	if len(got) != 1 || got[0].Amount != 73 || perLine != 70 {
		t.Errorf("per rate %v, per line %d; want 73 and 70", got, perLine)
	}
}

// The VAT the receipt prints is the breakdown /payment carries.
func TestPrintedTaxesMatchBreakdown(t *testing.T) {
	o := order()
	o.Lines = append(o.Lines, Line{Qty: 1, Name: "Journal", UnitPrice: 290, VATRate: 210}, Line{Qty: 1, Name: "Timbre", UnitPrice: 150, VATRate: 0})
	for _, cols := range []int{32, 48} {
		text := CustomerReceiptText(Receipt{Order: o}, Options{Columns: cols, Locale: "fr"})
		var printed int64
		rows := 0
		for _, l := range strings.Split(text, "\n") {
			f := strings.Fields(l)
			if len(f) < 4 || !strings.HasSuffix(l, f[len(f)-1]) || !strings.Contains(l, "%") {
				continue
			}
			// "5,5 %  1 234,50 ..." is not produced here: amounts are below 1 000.
			tax, err := strconv.ParseInt(strings.ReplaceAll(f[len(f)-2], ",", ""), 10, 64)
			if err != nil {
				t.Fatalf("row %q: %v", l, err)
			}
			printed += tax
			rows++
		}
		var sent int64
		bd := TaxBreakdown(o)
		for _, tx := range bd {
			sent += tx.Amount
		}
		if rows != len(bd) || printed != sent {
			t.Errorf("%d columns: printed %d rows totalling %d, breakdown %d rows totalling %d\n%s", cols, rows, printed, len(bd), sent, text)
		}
	}
}

func TestReceiptTicket(t *testing.T) {
	r := Receipt{Merchant: merchant(), Order: order()}
	opt := Options{Columns: 32, Locale: "fr"}
	rt, err := ReceiptTicket(r, device.FormatESCPOS, opt)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := escpos.DecodeHex(rt.Data)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range doc.Lines {
		if l.Marker != nil && l.Marker.Kind == escpos.MarkerCut {
			t.Error("the receiptTicket must not cut: the terminal prints its card ticket with it")
		}
	}
	js, _ := json.Marshal(device.LocalTicket(rt)) // as it goes on the wire
	if !bytes.Contains(js, []byte(`"tax_breakdown":[{"tax_amount":31},{"tax_amount":226,"tax_percentage":10},{"tax_amount":92,"tax_percentage":20}]`)) ||
		!bytes.Contains(js, []byte(`"format":"escpos"`)) {
		t.Errorf("JSON %s", js)
	}
	rt, err = ReceiptTicket(r, "", opt)
	if err != nil || rt.Format != device.FormatText || rt.Data != CustomerReceiptText(r, opt) || len(rt.TaxBreakdown) != 3 {
		t.Errorf("text ticket %+v, %v", rt, err)
	}
	if _, err := ReceiptTicket(r, "pdf", opt); err == nil {
		t.Error("unknown format accepted")
	}
	// A QR URL too long for a receipt is not printed, and the receipt
	// still is.
	r.Merchant.QRURL = "https://x.test/" + strings.Repeat("a", 3000)
	if b, err := CustomerReceipt(r, opt); err != nil || bytes.Contains(b, []byte("aaaa")) {
		t.Errorf("a QR URL too long: %v", err)
	}
}

func TestShareText(t *testing.T) {
	r := Receipt{Merchant: merchant(), Order: order(), Payments: splitPayment()}
	sh := ShareReceiptTicket(r, Options{Columns: 32, Locale: "fr"})
	if sh.Format != device.FormatText || strings.Contains(sh.Data, "TICKET CLIENT") || !strings.Contains(sh.Data, "https://receipts.example.test/r/A42") {
		t.Errorf("share ticket:\n%s", sh.Data)
	}
	o := order()
	for i := range 200 {
		o.Lines = append(o.Lines, Line{Qty: 1, Name: fmt.Sprint("Article ", i), UnitPrice: 100, VATRate: 2000})
	}
	s := ShareText(Receipt{Order: o}, Options{Columns: 32})
	if n := utf8.RuneCountInString(s); n > MaxShareLength || !strings.HasSuffix(s, "…\n") {
		t.Errorf("long share: %d characters, ends %q", n, s[len(s)-10:])
	}
}

func TestFormatter(t *testing.T) {
	tests := []struct {
		locale, cur string
		cents       int64
		want        string
	}{
		{"fr", "EUR", 1250, "12,50 €"},
		{"fr", "EUR", 123456789, "1 234 567,89 €"},
		{"fr", "EUR", -5, "-0,05 €"},
		{"fr", "CHF", 1250, "12,50 CHF"},
		{"fr", "GBP", 1250, "12,50 £"},
		{"en", "EUR", 123450, "€1,234.50"},
		{"en", "GBP", -1250, "-£12.50"},
		{"en", "CHF", 1250, "CHF 12.50"},
		{"es", "EUR", 123450, "1.234,50 €"},
		{"es", "CHF", 123450, "1.234,50 CHF"},
		{"es", "GBP", 1250, "12,50 £"},
		{"de", "", 100, "€1.00"},
	}
	for _, tt := range tests {
		if got := (Formatter{tt.locale, tt.cur}).Format(tt.cents); got != tt.want {
			t.Errorf("%s %s %d = %q, want %q", tt.locale, tt.cur, tt.cents, got, tt.want)
		}
	}
	for bp, want := range map[int]string{2000: "20 %", 550: "5,5 %", 210: "2,1 %", 0: "0 %", 255: "2,55 %", 810: "8,1 %"} {
		if got := (Formatter{Locale: "fr"}).Rate(bp); got != want {
			t.Errorf("Rate(%d) = %q, want %q", bp, got, want)
		}
	}
	if got := (Formatter{Locale: "en"}).Rate(550); got != "5.5%" {
		t.Errorf("en Rate = %q", got)
	}
	// € and £ survive the printer's code page.
	b := escpos.New(escpos.Options{Columns: 32}).Init().Line(Formatter{"fr", "EUR"}.Format(1250) + " " + Formatter{"en", "GBP"}.Format(1))
	out, _ := b.Bytes()
	doc := decode(t, out)
	if doc.Lines[0].Text != "12,50 € £0.01" {
		t.Errorf("got %q", doc.Lines[0].Text)
	}
}

// A line whose price is split between rates (a menu) counts each share at
// its rate, times the quantity; its own VATRate is not used.
func TestVATSummaryOfALineSplitBetweenRates(t *testing.T) {
	o := Order{Lines: []Line{
		{Qty: 2, Name: "Menu", UnitPrice: 1200, VATRate: 1000, Parts: []VATPart{{Rate: 550, Amount: 502}, {Rate: 1000, Amount: 698}}},
		{Qty: 1, Name: "Cola", UnitPrice: 300, VATRate: 550},
	}}
	got := VATSummary(o)
	if len(got) != 2 || got[0].Rate != 550 || got[0].Gross != 2*502+300 || got[1].Rate != 1000 || got[1].Gross != 2*698 {
		t.Fatalf("summary %+v", got)
	}
	if got[0].Gross+got[1].Gross != o.Total() {
		t.Fatalf("the VAT table does not add up to the total %d", o.Total())
	}
}

func TestLinkTicket(t *testing.T) {
	o := Order{Number: "42", Currency: "EUR"}
	until := time.Date(2026, 11, 28, 9, 30, 0, 0, time.UTC)
	link := "https://pay.example/c/abc123"
	text := LinkTicketText(o, link, 1250, until, Options{Locale: "fr", Columns: 42})
	for _, want := range []string{"Commande", "42", "12,50", "Scannez pour payer", link, "28/11/2026 09:30"} {
		if !strings.Contains(text, want) {
			t.Errorf("no %q in\n%s", want, text)
		}
	}
	b, err := LinkTicket(o, link, 1250, until, Options{Locale: "en"})
	if err != nil {
		t.Fatal(err)
	}
	doc, err := escpos.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	var qr []string
	for _, l := range doc.Lines {
		if l.Marker != nil && l.Marker.Kind == escpos.MarkerQR {
			qr = append(qr, l.Marker.Data)
		}
	}
	if len(qr) != 1 || qr[0] != link {
		t.Fatalf("QR codes %q", qr)
	}
}

// A recorded ticket's receipt carries what a French receipt needs: the
// merchant's SIRET and VAT number, the ticket's number and the till, the
// total without VAT, the software; a reprint says it is a copy; the chain
// fingerprint prints. For a merchant outside France, the French mentions
// do not print; the copy's mark and the fingerprint do.
func TestFiscalMentions(t *testing.T) {
	m := merchant()
	m.SIRET, m.Country = "123 456 789 00012", "FR"
	r := Receipt{Merchant: m, Order: order(), Payments: splitPayment(), Fiscal: &Fiscal{Ticket: 42, Till: "caisse-1", Software: "Comptoir 1.2.3", Head: "T42-9f3a1c7b22d0"}}
	text := func(r Receipt) string {
		b, err := CustomerReceipt(r, Options{Columns: 32, Locale: "fr"})
		if err != nil {
			t.Fatal(err)
		}
		return decode(t, b).Text()
	}
	original := text(r)
	for _, want := range []string{"SIRET 123 456 789 00012", "N° TVA FR12345678901", "Ticket n° 42", "Caisse caisse-1", "Total HT", "Comptoir 1.2.3", "Signature T42-9f3a1c7b22d0"} {
		if !strings.Contains(original, want) {
			t.Errorf("receipt lacks %q:\n%s", want, original)
		}
	}
	if strings.Contains(original, "DUPLICATA") {
		t.Error("the original says it is a copy")
	}
	r.Fiscal.Duplicate = 2
	if c := text(r); !strings.Contains(c, "DUPLICATA n° 2") {
		t.Errorf("the copy does not say so:\n%s", c)
	}
	for _, country := range []string{"BE", ""} {
		r.Merchant.Country = country
		other := text(r)
		for _, not := range []string{"SIRET", "Ticket n°", "Caisse", "Total HT", "Comptoir 1.2.3"} {
			if strings.Contains(other, not) {
				t.Errorf("country %q: the French mention %q printed:\n%s", country, not, other)
			}
		}
		for _, want := range []string{"DUPLICATA n° 2", "Signature T42-9f3a1c7b22d0"} {
			if !strings.Contains(other, want) {
				t.Errorf("country %q: %q not printed:\n%s", country, want, other)
			}
		}
	}
	r.Merchant.Country = "FR"
	// Without a recorded ticket, none of it.
	r.Fiscal = nil
	if plain := text(r); strings.Contains(plain, "Ticket n°") || strings.Contains(plain, "Total HT") {
		t.Errorf("mentions without a ticket:\n%s", plain)
	}
}

// A long transaction id is printed by its end (enough to find it in the
// history); a meal-voucher part is called one, not a card.
func TestReceiptPartsSayWhatTookTheMoney(t *testing.T) {
	for id, want := range map[string]string{
		"txn_8f2c1a":                           "txn_8f2c1a",
		"0c9e3f52-7b1d-4e8a-9f60-2d41c7a5b3e9": "...c7a5b3e9",
	} {
		if got := shortTxn(id); got != want {
			t.Errorf("shortTxn(%q) = %q, want %q", id, got, want)
		}
	}
	w := words("fr")
	if got := kindLabel(w, KindVoucher); got != "Titre-restaurant" {
		t.Errorf("a meal-voucher part is called %q", got)
	}
	if got := kindLabel(words("es"), KindVoucher); got != "Vale de comida" {
		t.Errorf("a meal-voucher part is called %q in Spanish", got)
	}
}
