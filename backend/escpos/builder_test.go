package escpos

import (
	"bytes"
	"encoding/hex"
	"errors"
	"flag"
	"image"
	"image/color"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/text/encoding/charmap"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// golden compares got with testdata/name, or writes it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (go test -update rewrites it)\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

// hexDump is bytes as 16 hex bytes a line, for reviewable golden files.
func hexDump(b []byte) []byte {
	var sb strings.Builder
	for i := 0; i < len(b); i += 16 {
		sb.WriteString(hex.EncodeToString(b[i:min(i+16, len(b))]))
		sb.WriteByte('\n')
	}
	return []byte(sb.String())
}

func mustBytes(t *testing.T, b *Builder) []byte {
	t.Helper()
	out, err := b.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func mustDecode(t *testing.T, b *Builder) *Document {
	t.Helper()
	doc, err := Decode(mustBytes(t, b))
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	if len(doc.Notes) > 0 {
		t.Errorf("decoder notes: %v", doc.Notes)
	}
	return doc
}

func lineTexts(d *Document) []string {
	out := make([]string, len(d.Lines))
	for i, l := range d.Lines {
		out[i] = l.Text
	}
	return out
}

// testLogo is a 200x60 horizontal grey ramp with a black frame.
func testLogo() image.Image {
	img := image.NewGray(image.Rect(0, 0, 200, 60))
	for y := range 60 {
		for x := range 200 {
			v := uint8(x * 255 / 199)
			if x < 3 || y < 3 || x > 196 || y > 56 {
				v = 0
			}
			img.SetGray(x, y, color.Gray{Y: v})
		}
	}
	return img
}

func sampleJob(cols int) *Builder {
	b := New(Options{Columns: cols})
	b.Init().
		Align(AlignCenter).Image(testLogo()).
		Bold(true).Size(2, 2).Line("Café Comptoir").Normal().
		Line("12 rue de la Paix").
		Align(AlignLeft).Rule('-').
		TwoColumns("Croque monsieur au jambon de pays et comté affiné", "13,50 €").
		Underline(true).Line("underlined").Underline(false).
		Font(1).Line("font B").Font(0).
		Size(2, 1).TwoColumns("TOTAL", "19,50 €").Size(1, 1).
		Feed(1).
		Align(AlignCenter).QR("https://example.test/r/42", QROptions{}).
		Code128("AB-{42}").
		EAN13("400638133393").
		Align(AlignLeft).PartialCut()
	return b
}

func TestBuilderGolden(t *testing.T) {
	for _, cols := range []int{Columns58mm, Columns80mm} {
		b := sampleJob(cols)
		out := mustBytes(t, b)
		name := "sample_" + itoa(cols)
		golden(t, name+".hex", hexDump(out))
		doc := mustDecode(t, b)
		golden(t, name+".txt", []byte(doc.Render(cols)))
		h, err := b.Hex()
		if err != nil || h != hex.EncodeToString(out) {
			t.Errorf("Hex() = %q, %v", h, err)
		}
	}
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var d []byte
	for ; n > 0; n /= 10 {
		d = append([]byte{byte('0' + n%10)}, d...)
	}
	return string(d)
}

func TestRoundTrip(t *testing.T) {
	b := New(Options{Columns: 32})
	b.Init().
		Align(AlignCenter).Bold(true).Line("Bold centre €").Bold(false).
		Align(AlignRight).Underline(true).Line("right under").Underline(false).
		Align(AlignLeft).Size(2, 3).Line("big").Size(1, 1).
		Font(1).Line("small").Font(0).
		QR("https://example.test/r/42?x=1&y=é", QROptions{Size: 8, Level: QRLevelQ}).
		Code128("ORDER-{7}").
		EAN13("4006381333931").
		ImageWidth(testLogo(), 100).
		Image(image.NewGray(image.Rect(0, 0, 1000, 500))).
		Feed(2).
		Cut().PartialCut()
	doc := mustDecode(t, b)
	want := []struct {
		text      string
		align     Align
		bold, und bool
		w, h      int
		font      int
	}{
		{"Bold centre €", AlignCenter, true, false, 1, 1, 0},
		{"right under", AlignRight, false, true, 1, 1, 0},
		{"big", AlignLeft, false, false, 2, 3, 0},
		{"small", AlignLeft, false, false, 1, 1, 1},
		{"[QR https://example.test/r/42?x=1&y=é]", AlignLeft, false, false, 1, 1, 0},
		{"[BARCODE CODE128 ORDER-{7}]", AlignLeft, false, false, 1, 1, 0},
		{"[BARCODE EAN13 4006381333931]", AlignLeft, false, false, 1, 1, 0},
		{"[IMAGE 104x30]", AlignLeft, false, false, 1, 1, 0},
		{"[IMAGE 384x192]", AlignLeft, false, false, 1, 1, 0},
		{"", AlignLeft, false, false, 1, 1, 0},
		{"", AlignLeft, false, false, 1, 1, 0},
		{"[CUT]", AlignLeft, false, false, 1, 1, 0},
		{"[PARTIAL CUT]", AlignLeft, false, false, 1, 1, 0},
	}
	if len(doc.Lines) != len(want) {
		t.Fatalf("got %d lines %q, want %d", len(doc.Lines), lineTexts(doc), len(want))
	}
	for i, w := range want {
		l := doc.Lines[i]
		if l.Text != w.text || l.Align != w.align || l.Bold != w.bold || l.Underline != w.und ||
			l.Width != w.w || l.Height != w.h || l.Font != w.font {
			t.Errorf("line %d = %+v, want %+v", i, l, w)
		}
	}
	if m := doc.Lines[4].Marker; m == nil || m.Kind != MarkerQR {
		t.Errorf("QR marker = %+v", m)
	}
}

func TestCodePageEncoding(t *testing.T) {
	b := New(Options{Columns: 32}).Init().Line("12,50 € £3 ñ Ünïcødé 中文 ☃")
	doc := mustDecode(t, b)
	if got, want := doc.Lines[0].Text, "12,50 € £3 ñ Ünïcødé ?? ?"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	out := mustBytes(t, b)
	if !bytes.Contains(out, []byte{0x1B, 't', 19}) || !bytes.Contains(out, []byte{0xD5}) {
		t.Errorf("no ESC t 19 or no euro 0xD5 in % x", out)
	}
	// Another page, selected mid-job.
	b = New(Options{Columns: 32, CodePage: CP1252}).Init().Line("€").SetCodePage(CP437).Line("€é")
	if got := lineTexts(mustDecode(t, b)); strings.Join(got, "|") != "€|?é" {
		t.Errorf("got %q", got)
	}
}

func TestStickyError(t *testing.T) {
	b := New(Options{Columns: 32}).Init().Line("before")
	b.QR(strings.Repeat("x", 2332), QROptions{}) // M holds 2331
	if !errors.Is(b.Err(), ErrQRTooLong) {
		t.Fatalf("err = %v", b.Err())
	}
	n := len(b.buf)
	b.Line("after").Cut().EAN13("123")
	if len(b.buf) != n {
		t.Error("calls after the error wrote bytes")
	}
	if !errors.Is(b.Err(), ErrQRTooLong) {
		t.Errorf("first error not kept: %v", b.Err())
	}
	if out, err := b.Bytes(); out != nil || err == nil {
		t.Error("Bytes succeeded after an error")
	}
	if h, err := b.Hex(); h != "" || err == nil {
		t.Error("Hex succeeded after an error")
	}
	// The level's capacity is accepted.
	if err := New(Options{}).QR(strings.Repeat("x", 2953), QROptions{Level: QRLevelL}).Err(); err != nil {
		t.Error(err)
	}
}

func TestBuilderErrors(t *testing.T) {
	tests := []struct {
		name string
		f    func(*Builder)
		want error
	}{
		{"EAN13 bad check digit", func(b *Builder) { b.EAN13("4006381333932") }, ErrBadBarcode},
		{"EAN13 letters", func(b *Builder) { b.EAN13("40063813339a") }, ErrBadBarcode},
		{"EAN13 short", func(b *Builder) { b.EAN13("1234") }, ErrBadBarcode},
		{"CODE128 control", func(b *Builder) { b.Code128("A\x1bB") }, ErrBadBarcode},
		{"CODE128 non-ASCII", func(b *Builder) { b.Code128("café") }, ErrBadBarcode},
		{"CODE128 empty", func(b *Builder) { b.Code128("") }, ErrBadBarcode},
		{"QR empty", func(b *Builder) { b.QR("", QROptions{}) }, ErrBadArgument},
		{"QR size", func(b *Builder) { b.QR("x", QROptions{Size: 17}) }, ErrBadArgument},
		{"size 9", func(b *Builder) { b.Size(9, 1) }, ErrBadArgument},
		{"font 2", func(b *Builder) { b.Font(2) }, ErrBadArgument},
		{"feed 256", func(b *Builder) { b.Feed(256) }, ErrBadArgument},
		{"nil image", func(b *Builder) { b.Image(nil) }, ErrBadImage},
		{"empty image", func(b *Builder) { b.Image(image.NewGray(image.Rect(0, 0, 0, 0))) }, ErrBadImage},
		{"tall image", func(b *Builder) { b.Image(image.NewGray(image.Rect(0, 0, 8, 5000))) }, ErrBadImage},
		{"code page", func(b *Builder) { b.SetCodePage(99) }, ErrUnknownCodePg},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := New(Options{Columns: 32}).Init()
			tt.f(b)
			if !errors.Is(b.Err(), tt.want) {
				t.Errorf("err = %v, want %v", b.Err(), tt.want)
			}
		})
	}
	if err := New(Options{Columns: 3}).Err(); !errors.Is(err, ErrBadArgument) {
		t.Errorf("3 columns: %v", err)
	}
}

func TestEAN13CheckDigit(t *testing.T) {
	for in, want := range map[string]string{
		"400638133393":  "4006381333931",
		"4006381333931": "4006381333931",
		"590123412345":  "5901234123457",
		"000000000000":  "0000000000000",
	} {
		if got, err := EAN13CheckDigit(in); got != want || err != nil {
			t.Errorf("EAN13CheckDigit(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

func TestImageDither(t *testing.T) {
	// Black is all ones, white all zeros, 50 % grey about half.
	for _, tc := range []struct {
		v        uint8
		min, max float64
	}{{0, 1, 1}, {255, 0, 0}, {128, 0.4, 0.6}} {
		img := image.NewGray(image.Rect(0, 0, 64, 64))
		for i := range img.Pix {
			img.Pix[i] = tc.v
		}
		out := mustBytes(t, New(Options{Columns: 32}).Image(img))
		data := out[8:]
		if len(data) != 8*64 {
			t.Fatalf("data len %d", len(data))
		}
		ones := 0
		for _, c := range data {
			for ; c != 0; c &= c - 1 {
				ones++
			}
		}
		if f := float64(ones) / (64 * 64); f < tc.min || f > tc.max {
			t.Errorf("grey %d: black fraction %.2f", tc.v, f)
		}
	}
	// A transparent image prints white.
	out := mustBytes(t, New(Options{Columns: 32}).Image(image.NewNRGBA(image.Rect(0, 0, 16, 4))))
	if !bytes.Equal(out[8:], make([]byte, 8)) {
		t.Errorf("transparent image: % x", out[8:])
	}
	// Scaled to the paper: 576 dots on 80 mm.
	doc := mustDecode(t, New(Options{Columns: 48}).Image(image.NewGray(image.Rect(0, 0, 1152, 100))))
	if got := doc.Lines[0].Text; got != "[IMAGE 576x50]" {
		t.Errorf("got %s", got)
	}
}

func TestWrapAndColumns(t *testing.T) {
	if got := Wrap("the quick brown fox jumps", 10); strings.Join(got, "|") != "the quick|brown fox|jumps" {
		t.Errorf("Wrap = %q", got)
	}
	if got := Wrap("abcdefghijklmnop xy", 6); strings.Join(got, "|") != "abcdef|ghijkl|mnop|xy" {
		t.Errorf("Wrap long word = %q", got)
	}
	if got := Wrap("", 6); len(got) != 1 || got[0] != "" {
		t.Errorf("Wrap empty = %q", got)
	}
	if got := Columns("Tea", "2,50 €", 16); got[0] != "Tea       2,50 €" {
		t.Errorf("Columns = %q", got)
	}
	got := Columns("Croque monsieur au comté", "13,50 €", 20)
	if strings.Join(got, "|") != "Croque       13,50 €|monsieur au|comté" {
		t.Errorf("Columns wrapped = %q", got)
	}
	for _, l := range got {
		if utf8.RuneCountInString(l) > 20 {
			t.Errorf("line %q wider than 20", l)
		}
	}
	if got := Columns("Tea", "a very long right hand text", 16); strings.Join(got, "|") != "Tea|a very long|right hand text" {
		t.Errorf("Columns long right = %q", got)
	}
	// Double width halves the columns.
	b := New(Options{Columns: 32}).Init().Size(2, 2)
	if b.Cols() != 16 {
		t.Errorf("Cols at double width = %d", b.Cols())
	}
	b.TwoColumns("TOTAL", "19,50 €").Rule('=')
	doc := mustDecode(t, b)
	if doc.Lines[0].Text != "TOTAL    19,50 €" || doc.Lines[1].Text != strings.Repeat("=", 16) {
		t.Errorf("double width lines = %q", lineTexts(doc))
	}
	if got := doc.Render(32); strings.Split(got, "\n")[0] != "TOTAL    19,50 €" {
		t.Errorf("render = %q", got)
	}
	if c := New(Options{Columns: 48}).Font(1).Cols(); c != 64 {
		t.Errorf("font B on 80 mm: %d columns", c)
	}
}

func TestSanitize(t *testing.T) {
	for in, want := range map[string]string{
		"plain":             "plain",
		"a\x1b@b":           "a@b",
		"a\nb\r\nc\td":      "a b  c d",
		"\x1dV\x00cut":      "Vcut",
		"del\x7f c1\u0085x": "del c1x",
		"bad\xffutf8":       "bad\ufffdutf8",
	} {
		if got := Sanitize(in); got != want {
			t.Errorf("Sanitize(%q) = %q, want %q", in, got, want)
		}
	}
}

// expectedText is what a line of caller text s must decode to: controls
// replaced or removed as Sanitize documents, characters the page lacks
// printed as '?'.
func expectedText(s string, cm *charmap.Charmap) string {
	var sb strings.Builder
	for _, r := range s {
		switch {
		case r == '\t' || r == '\n' || r == '\r' || r == '\v' || r == '\f':
			sb.WriteByte(' ')
		case r < 0x20 || (r >= 0x7F && r <= 0x9F):
		default:
			c, ok := cm.EncodeRune(r)
			if !ok || r == utf8.RuneError {
				sb.WriteByte('?')
			} else {
				sb.WriteRune(cm.DecodeByte(c))
			}
		}
	}
	return sb.String()
}

func sortedRunes(s string) string {
	r := []rune(s)
	slices.Sort(r)
	return string(r)
}

func spaceFields(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ' ' })
}

func FuzzCallerText(f *testing.F) {
	for _, s := range []string{"", "Café", "\x1b@\x1dV\x00", "a\nb", "\x10\x04\x01", "€\x7f\u0085", "{B\x1d(k", "\xff\xfe"} {
		f.Add(s, s)
	}
	f.Fuzz(func(t *testing.T, s, r string) {
		b := New(Options{Columns: 32}).Init().Bold(true).Line(s).Bold(false).Text(s).LF().TwoColumns(s, r)
		out := mustBytes(t, b)
		doc, err := Decode(out)
		if err != nil {
			t.Fatalf("decode: %v", err)
		}
		want := expectedText(s, charmap.CodePage858)
		lines := lineTexts(doc)
		if len(lines) < 2 || lines[0] != want || lines[1] != want {
			t.Fatalf("caller text %q decoded as %q, want %q twice", s, lines, want)
		}
		// TwoColumns keeps every word, on lines no wider than the paper.
		var words []string
		for _, l := range lines[2:] {
			if n := utf8.RuneCountInString(l); n > 32 {
				t.Fatalf("line %q is %d wide", l, n)
			}
			words = append(words, spaceFields(l)...)
		}
		wantWords := append(spaceFields(expectedText(s, charmap.CodePage858)), spaceFields(expectedText(r, charmap.CodePage858))...)
		if sortedRunes(strings.Join(words, "")) != sortedRunes(strings.Join(wantWords, "")) {
			t.Fatalf("TwoColumns(%q, %q) = %q", s, r, lines[2:])
		}
		for _, l := range doc.Lines {
			if l.Marker != nil {
				t.Fatalf("caller text made a marker: %v", l.Marker)
			}
		}
		// Outside the builder's own commands no byte is a control: the
		// text between them is all printable.
		// After Init the builder wrote only ESC E n and LF.
		body := out[len(mustBytes(t, New(Options{Columns: 32}).Init())):]
		for i := 0; i < len(body); i++ {
			switch c := body[i]; {
			case c == 0x1B && i+2 < len(body) && body[i+1] == 'E':
				i += 2
			case c == '\n':
			case c < 0x20 || c == 0x7F:
				t.Fatalf("control byte 0x%02X at %d in % x", c, i, body)
			}
		}
	})
}
