package escpos

import (
	"bytes"
	"testing"
)

// Every builder command against the bytes of the Epson "ESC/POS Command
// Reference" (the TM-series Application Programming Guide; section names
// in the comments), so a slip in a constant cannot hide behind a decoder
// written by the same hands.
func TestCommandBytesMatchTheReference(t *testing.T) {
	for _, tc := range []struct {
		name string
		b    *Builder
		want []byte
	}{
		// ESC @ "Initialize printer"; ESC t n "Select character code table", n=19: PC858 (Euro).
		{"init", New(Options{}).Init(), []byte{0x1B, 0x40, 0x1B, 0x74, 19}},
		// ESC a n "Select justification", n=1: centering.
		{"align", New(Options{}).Align(AlignCenter), []byte{0x1B, 0x61, 0x01}},
		// ESC E n "Turn emphasized mode on/off".
		{"bold", New(Options{}).Bold(true), []byte{0x1B, 0x45, 0x01}},
		// ESC - n "Turn underline mode on/off", n=1: 1-dot.
		{"underline", New(Options{}).Underline(true), []byte{0x1B, 0x2D, 0x01}},
		// GS ! n "Select character size": bits 4-6 width, 0-2 height, minus one.
		{"size", New(Options{}).Size(2, 2), []byte{0x1D, 0x21, 0x11}},
		// ESC M n "Select character font", n=1: font B.
		{"font", New(Options{}).Font(1), []byte{0x1B, 0x4D, 0x01}},
		// ESC d n "Print and feed n lines".
		{"feed", New(Options{}).Feed(3), []byte{0x1B, 0x64, 0x03}},
		// LF "Print and line feed".
		{"line feed", New(Options{}).LF(), []byte{0x0A}},
		// GS V m n "Select cut mode and cut paper", function B: m=65 full, 66 partial (feed n=0).
		{"cut", New(Options{}).Cut(), []byte{0x1D, 0x56, 0x41, 0x00}},
		{"partial cut", New(Options{}).PartialCut(), []byte{0x1D, 0x56, 0x42, 0x00}},
		// GS ( k, cn=49 (QR Code): fn 65 select the model (n1=50: model 2), fn 67 module size,
		// fn 69 error correction (n=49: M), fn 80 store the data (m=48), fn 81 print it (m=48).
		{"qr", New(Options{}).QR("AB", QROptions{}), []byte{
			0x1D, 0x28, 0x6B, 0x04, 0x00, 0x31, 0x41, 0x32, 0x00,
			0x1D, 0x28, 0x6B, 0x03, 0x00, 0x31, 0x43, 0x06,
			0x1D, 0x28, 0x6B, 0x03, 0x00, 0x31, 0x45, 0x31,
			0x1D, 0x28, 0x6B, 0x05, 0x00, 0x31, 0x50, 0x30, 'A', 'B',
			0x1D, 0x28, 0x6B, 0x03, 0x00, 0x31, 0x51, 0x30,
		}},
		// GS h "Set bar code height", GS w "Set bar code width", GS H "Select print position of HRI
		// characters" (2: below); GS k m=73 "Print bar code" CODE128, data led by code set {B.
		{"code128", New(Options{}).Code128("AB1"), []byte{
			0x1D, 0x68, 0x50, 0x1D, 0x77, 0x02, 0x1D, 0x48, 0x02,
			0x1D, 0x6B, 0x49, 0x05, '{', 'B', 'A', 'B', '1',
		}},
		// GS k m=67 "Print bar code" JAN13 (EAN13), n=13 digits, check digit computed.
		{"ean13", New(Options{}).EAN13("400638133393"), append([]byte{
			0x1D, 0x68, 0x50, 0x1D, 0x77, 0x02, 0x1D, 0x48, 0x02,
			0x1D, 0x6B, 0x43, 0x0D,
		}, []byte("4006381333931")...)},
	} {
		got, err := tc.b.Bytes()
		if err != nil || !bytes.Equal(got, tc.want) {
			t.Errorf("%s: % X (%v), want % X", tc.name, got, err, tc.want)
		}
	}
}

// A product named with ESC, GS and NUL prints as harmless text: none of its
// bytes reaches the printer as a command.
func TestHostileNameIsHarmless(t *testing.T) {
	out, err := New(Options{}).Line("Café\x1b@\x1dV\x00A crème").Bytes()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []byte{0x1B, 0x1D, 0x00} {
		if bytes.IndexByte(out, c) >= 0 {
			t.Errorf("byte %#x reached the printer: % X", c, out)
		}
	}
	// é is 0x82 in PC858, è 0x8A.
	if !bytes.Contains(out, []byte{'C', 'a', 'f', 0x82}) || !bytes.Contains(out, []byte{'c', 'r', 0x8A, 'm', 'e'}) {
		t.Errorf("accents not in PC858: % X", out)
	}
}
