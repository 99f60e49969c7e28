package escpos

import (
	"bytes"
	"encoding/hex"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// Byte builders for readable test cases.
func esc(b ...byte) []byte { return append([]byte{0x1B}, b...) }
func gs(b ...byte) []byte  { return append([]byte{0x1D}, b...) }
func cat(parts ...any) []byte {
	var out []byte
	for _, p := range parts {
		switch v := p.(type) {
		case string:
			out = append(out, v...)
		case []byte:
			out = append(out, v...)
		case byte:
			out = append(out, v)
		case int:
			out = append(out, byte(v))
		default:
			panic("cat: unsupported part")
		}
	}
	return out
}

// qr builds the GS ( k sequence a builder would send for a QR code.
func qr(data string) []byte {
	k := len(data) + 3
	return cat(
		gs('(', 'k', 4, 0, 49, 65, 50, 0), // model 2
		gs('(', 'k', 3, 0, 49, 67, 6),     // module size
		gs('(', 'k', 3, 0, 49, 69, 49),    // error correction M
		gs('(', 'k', byte(k), byte(k>>8), 49, 80, 48), data,
		gs('(', 'k', 3, 0, 49, 81, 48),
	)
}

func texts(d *Document) []string {
	out := make([]string, len(d.Lines))
	for i, l := range d.Lines {
		out[i] = l.Text
	}
	return out
}

func TestDecodeText(t *testing.T) {
	tests := []struct {
		name string
		in   []byte
		want []string
	}{
		{"plain lines", cat("hello\nworld\n"), []string{"hello", "world"}},
		{"empty line", cat("a\n\nb\n"), []string{"a", "", "b"}},
		{"CR ignored", cat("a\r\nb\r\n"), []string{"a", "b"}},
		{"init then text", cat(esc('@'), "x\n"), []string{"x"}},
		{"feed n lines", cat("a", esc('d', 3), "b\n"), []string{"a", "", "", "b"}},
		{"feed 0 prints without feeding", cat("a", esc('d', 0), esc('d', 0), "b\n"), []string{"a", "b"}},
		{"tab to 8", cat("ab\tc\n"), []string{"ab      c"}},
		{"custom tabs", cat(esc('D', 4, 10, 0), "a\tb\tc\n"), []string{"a   b     c"}},
		{"tab without stop ignored", cat(esc('D', 0), "a\tb\n"), []string{"ab"}},
		{"CP437 default", cat("caf", 0x82, "\n"), []string{"café"}},
		{"CP850", cat(esc('t', 2), 0xD5, "\n"), []string{"ı"}},
		{"CP858 euro", cat(esc('t', 19), 0xD5, " 12\n"), []string{"€ 12"}},
		{"CP1252 euro", cat(esc('t', 16), 0x80, "\n"), []string{"€"}},
		{"ISO-8859-15 euro", cat(esc('t', 40), 0xA4, "\n"), []string{"€"}},
		{"unknown page kept as Latin-1", cat(esc('t', 99), 0xE9, "\n"), []string{"é"}},
		{"ESC @ resets code page", cat(esc('t', 16), esc('@'), 0x82, "\n"), []string{"é"}},
		{"QR", cat(esc('a', 1), qr("https://example.test/r/42"), "\n"), []string{"[QR https://example.test/r/42]", ""}},
		{"QR flushes pending text", cat("before", qr("x")), []string{"before", "[QR x]"}},
		{"PDF417", cat(gs('(', 'k', 6, 0, 48, 80, 48, 'a', 'b', 'c'), gs('(', 'k', 3, 0, 48, 81, 48)), []string{"[PDF417 abc]"}},
		{"CODE128 form B", cat(gs('k', 73, 6, '{', 'B', 'A', 'B', '-', '1')), []string{"[BARCODE CODE128 AB-1]"}},
		{"CODE128 set C", cat(gs('k', 73, 5, '{', 'C', 12, 34, 5)), []string{"[BARCODE CODE128 123405]"}},
		{"CODE128 brace", cat(gs('k', 73, 5, '{', 'B', 'a', '{', '{')), []string{"[BARCODE CODE128 a{]"}},
		{"EAN13 form A", cat(gs('k', 2), "4006381333931", 0), []string{"[BARCODE EAN13 4006381333931]"}},
		{"EAN13 form B", cat(gs('k', 67, 13), "4006381333931"), []string{"[BARCODE EAN13 4006381333931]"}},
		{"barcode setup commands skipped", cat(gs('h', 80), gs('w', 2), gs('H', 2), gs('f', 0), gs('k', 69, 3), "ABC"), []string{"[BARCODE CODE39 ABC]"}},
		{"raster image skipped exactly", cat(gs('v', '0', 0, 2, 0, 3, 0), bytes.Repeat([]byte{0x0A}, 6), "after\n"), []string{"[IMAGE 16x3]", "after"}},
		{"raster image 256 bytes wide", cat(gs('v', '0', 0, 0, 1, 1, 0), make([]byte, 256), "z\n"), []string{"[IMAGE 2048x1]", "z"}},
		{"bit image band", cat(esc('*', 33, 2, 0), make([]byte, 6), "\n"), []string{"[IMAGE 2x24]", ""}},
		{"graphics GS ( L", cat(gs('(', 'L', 12, 0, 48, 112, 48, 1, 1, 49, 8, 0, 2, 0, 0xFF, 0xFF), gs('(', 'L', 2, 0, 48, 50)), []string{"[IMAGE 8x2]"}},
		{"graphics GS 8 L", cat(gs('8', 'L', 12, 0, 0, 0, 48, 112, 48, 1, 1, 49, 8, 0, 2, 0, 0xFF, 0xFF), gs('(', 'L', 2, 0, 48, 50)), []string{"[IMAGE 8x2]"}},
		{"full cut", cat("a\n", gs('V', 0)), []string{"a", "[CUT]"}},
		{"full cut 48", cat(gs('V', '0')), []string{"[CUT]"}},
		{"partial cut with feed", cat(gs('V', 66, 3)), []string{"[PARTIAL CUT]"}},
		{"partial cut 49", cat(gs('V', '1')), []string{"[PARTIAL CUT]"}},
		{"legacy partial cut", cat(esc('m'), esc('i')), []string{"[PARTIAL CUT]", "[PARTIAL CUT]"}},
		{"drawer kick", cat(esc('p', 0, 25, 250)), []string{"[DRAWER]"}},
		{"known commands skipped", cat(esc('3', 30), esc('2'), esc(' ', 1), esc('R', 1), gs('L', 0, 0), gs('W', 0, 2), esc('$', 10, 0), "x\n"), []string{"x"}},
		{"ESC ( generic skipped", cat(esc('(', 'A', 4, 0, 48, 55, 3, 10), "x\n"), []string{"x"}},
		{"real-time status skipped", cat([]byte{0x10, 0x04, 1}, []byte{0x10, 0x14, 1, 0, 1}, "x\n"), []string{"x"}},
		{"user chars skipped", cat(esc('&', 3, 65, 66, 2, 1, 2, 3, 4, 5, 6, 1, 7, 8, 9), "x\n"), []string{"x"}},
		{"FS kanji off skipped", cat([]byte{0x1C, '.'}, "x\n"), []string{"x"}},
		{"NV image print", cat([]byte{0x1C, 'p', 1, 0}), []string{"[IMAGE NV 1]"}},
		{"define NV images skipped", cat([]byte{0x1C, 'q', 1, 1, 0, 1, 0}, make([]byte, 8), "x\n"), []string{"x"}},
		{"unterminated last line kept", cat("tail"), []string{"tail"}},
		{"align mid-line ignored", cat("ab", esc('a', 2), "c\n", "d\n"), []string{"abc", "d"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := Decode(tt.in)
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if got := texts(d); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("lines = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestDecodeAttributes(t *testing.T) {
	in := cat(
		esc('@'),
		esc('a', 1), esc('E', 1), gs('!', 0x11), "TITLE\n",
		esc('a', 0), esc('E', 0), gs('!', 0), "plain ", esc('-', 1), "under", esc('-', 0), "\n",
		esc('!', 0x38), "big\n",
		esc('!', 0), esc('M', 1), "small\n",
		esc('a', '2'), "right\n",
	)
	d, err := Decode(in)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		text   string
		align  Align
		bold   bool
		w, h   int
		font   int
		nspans int
	}{
		{"TITLE", AlignCenter, true, 2, 2, 0, 1},
		{"plain under", AlignLeft, false, 1, 1, 0, 2},
		{"big", AlignLeft, true, 2, 2, 0, 1},
		{"small", AlignLeft, false, 1, 1, 1, 1},
		{"right", AlignRight, false, 1, 1, 1, 1},
	}
	if len(d.Lines) != len(want) {
		t.Fatalf("got %d lines %q", len(d.Lines), texts(d))
	}
	for i, w := range want {
		l := d.Lines[i]
		if l.Text != w.text || l.Align != w.align || l.Bold != w.bold || l.Width != w.w || l.Height != w.h || l.Font != w.font || len(l.Spans) != w.nspans {
			t.Errorf("line %d = %+v, want %+v", i, l, w)
		}
	}
	if sp := d.Lines[1].Spans; sp[0].Underline || !sp[1].Underline || sp[1].Text != "under" {
		t.Errorf("underline spans = %+v", sp)
	}
	if got := d.Render(20); !strings.Contains(got, "     TITLE\n") || !strings.Contains(got, "               right\n") {
		t.Errorf("Render:\n%s", got)
	}
}

func TestDecodeMarkers(t *testing.T) {
	d, err := Decode(cat(qr("DATA"), gs('k', 73, 4, '{', 'B', 'x', 'y'), gs('v', '0', 0, 1, 0, 1, 0, 0xFF), gs('V', 1)))
	if err != nil {
		t.Fatal(err)
	}
	want := []Marker{
		{Kind: MarkerQR, Symbology: "QR", Data: "DATA"},
		{Kind: MarkerBarcode, Symbology: "CODE128", Data: "xy"},
		{Kind: MarkerImage, Width: 8, Height: 1},
		{Kind: MarkerCut, Partial: true},
	}
	for i, w := range want {
		if m := d.Lines[i].Marker; m == nil || *m != w {
			t.Errorf("marker %d = %+v, want %+v", i, m, w)
		}
	}
	if got, want := d.Text(), "[QR DATA]\n[BARCODE CODE128 xy]\n[IMAGE 8x1]\n[PARTIAL CUT]\n"; got != want {
		t.Errorf("Text = %q, want %q", got, want)
	}
}

func TestDecodeNotes(t *testing.T) {
	d, err := Decode(cat(esc('t', 7), "a\n", esc('t', 7), "pending", esc('@'), "b"))
	if err != nil {
		t.Fatal(err)
	}
	joined := strings.Join(d.Notes, "|")
	for _, w := range []string{"code page 7", "ESC @ discarded", "without a line feed"} {
		if !strings.Contains(joined, w) {
			t.Errorf("notes %q lack %q", d.Notes, w)
		}
	}
	if strings.Count(joined, "code page 7") != 1 {
		t.Errorf("notes repeat: %q", d.Notes)
	}
	if got := texts(d); !reflect.DeepEqual(got, []string{"a", "b"}) {
		t.Errorf("lines = %q", got)
	}
}

func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		name   string
		in     []byte
		offset int
		cmd    string
		lines  []string // decoded before the error
	}{
		{"lone ESC", cat("ok\n", 0x1B), 3, "ESC", []string{"ok"}},
		{"unknown ESC", cat("ok\n", esc('Z', 1)), 3, "ESC Z", []string{"ok"}},
		{"unknown GS", cat(gs('Y', 1)), 0, "GS Y", nil},
		{"truncated ESC E", cat("a", esc('E')), 1, "ESC E", []string{"a"}},
		{"truncated GS ( k", cat(gs('(', 'k', 10, 0, 49, 80, 48, 'a')), 0, "GS ( k", nil},
		{"truncated raster", cat("x\n", gs('v', '0', 0, 2, 0, 2, 0, 1, 2, 3)), 2, "GS v 0", []string{"x"}},
		{"huge raster", cat(gs('v', '0', 0, 0xFF, 0xFF, 0xFF, 0xFF)), 0, "GS v 0", nil},
		{"barcode without NUL", cat(gs('k', 2, '1', '2')), 0, "GS k", nil},
		{"barcode form B truncated", cat(gs('k', 73, 10, '{', 'B')), 0, "GS k", nil},
		{"unknown barcode system", cat(gs('k', 20, 1, 'a')), 0, "GS k", nil},
		{"unknown cut mode", cat(gs('V', 7)), 0, "GS V", nil},
		{"truncated cut with feed", cat(gs('V', 65)), 0, "GS V", nil},
		{"truncated tabs", cat(esc('D', 4, 8)), 0, "ESC D", nil},
		{"bad bit image mode", cat(esc('*', 7, 1, 0, 0)), 0, "ESC *", nil},
		{"truncated GS 8 L", cat(gs('8', 'L', 0xFF, 0xFF, 0xFF, 0x7F, 48)), 0, "GS 8 L", nil},
		{"unknown DLE", cat([]byte{0x10, 'x'}), 0, "DLE x", nil},
		{"truncated NV images", cat([]byte{0x1C, 'q', 1, 0xFF, 0xFF, 0xFF, 0xFF}), 0, "FS q", nil},
		{"truncated user chars", cat(esc('&', 3, 65, 70, 2, 1)), 0, "ESC &", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := Decode(tt.in)
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("err = %v, want a *DecodeError", err)
			}
			if de.Offset != tt.offset || de.Command != tt.cmd {
				t.Errorf("error at %d %q, want %d %q (%v)", de.Offset, de.Command, tt.offset, tt.cmd, err)
			}
			if !strings.Contains(err.Error(), "offset") {
				t.Errorf("message %q does not name the offset", err)
			}
			if d == nil {
				t.Fatal("no partial document")
			}
			if got := texts(d); len(got)+len(tt.lines) > 0 && !reflect.DeepEqual(got, tt.lines) {
				t.Errorf("partial lines = %q, want %q", got, tt.lines)
			}
		})
	}
}

func TestDecodeHex(t *testing.T) {
	raw := cat(esc('@'), "Total 12.50\n", gs('V', 0))
	d, err := DecodeHex(hex.EncodeToString(raw))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := d.Text(), "Total 12.50\n[CUT]\n"; got != want {
		t.Errorf("Text = %q, want %q", got, want)
	}
	// Upper case and whitespace are tolerated.
	if d2, err := DecodeHex(" " + strings.ToUpper(hex.EncodeToString(raw)) + "\n"); err != nil || d2.Text() != d.Text() {
		t.Errorf("DecodeHex(upper) = %v, %v", d2, err)
	}
	for _, bad := range []string{"1", "zz", "1b4"} {
		if _, err := DecodeHex(bad); err == nil {
			t.Errorf("DecodeHex(%q) accepted", bad)
		}
	}
}

func FuzzDecode(f *testing.F) {
	seeds := [][]byte{
		nil,
		[]byte("hello\n"),
		cat(esc('@'), esc('a', 1), esc('E', 1), gs('!', 0x11), "T\n", qr("q"), gs('V', 0)),
		cat(gs('k', 73, 4, '{', 'C', 1, 2), gs('k', 2, '1', 0)),
		cat(gs('v', '0', 0, 1, 0, 1, 0, 0)),
		cat(gs('(', 'L', 12, 0, 48, 112, 48, 1, 1, 49, 8, 0, 2, 0, 0, 0), gs('8', 'L', 2, 0, 0, 0, 48, 50)),
		cat(esc('D', 1, 2, 3, 0), "\t\t\n", esc('t', 19), 0xD5),
		cat(esc('*', 33, 1, 0, 1, 2, 3), esc('&', 3, 65, 65, 1, 1, 2, 3)),
		cat([]byte{0x1C, 'q', 1, 1, 0, 1, 0}, make([]byte, 8)),
		cat([]byte{0x10, 0x14, 8, 1, 3, 20, 1, 6, 2, 8}),
	}
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		// Decode a view whose capacity ends with its length, inside a larger
		// buffer of sentinel bytes: reading past the end panics, and the
		// result must equal that of a private copy.
		buf := make([]byte, len(b)+64)
		copy(buf, b)
		for i := len(b); i < len(buf); i++ {
			buf[i] = 0x1D
		}
		view := buf[:len(b):len(b)]
		d, err := Decode(view)
		if d == nil {
			t.Fatal("nil document")
		}
		if err != nil {
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("error %v is not a *DecodeError", err)
			}
			if de.Offset < 0 || de.Offset >= len(b) {
				t.Fatalf("error offset %d outside [0,%d)", de.Offset, len(b))
			}
		}
		// ESC d 255 is the most lines three bytes can make.
		if len(d.Lines) > 85*len(b)+1 {
			t.Fatalf("%d lines from %d bytes", len(d.Lines), len(b))
		}
		_ = d.Text()
		_ = d.Render(42)
		d2, err2 := DecodeHex(hex.EncodeToString(append([]byte(nil), b...)))
		if (err == nil) != (err2 == nil) || !reflect.DeepEqual(d.Lines, d2.Lines) {
			t.Fatalf("decoding depends on bytes past the end or is not deterministic")
		}
	})
}
