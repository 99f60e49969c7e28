package escpos

import (
	"fmt"
	"strings"
)

// Names of the 2-D symbols of GS ( k, by cn.
var symbols2D = map[byte]string{
	48: "PDF417", 49: "QR", 50: "MAXICODE", 51: "GS1 DATABAR", 52: "COMPOSITE", 53: "AZTEC", 54: "DATAMATRIX",
}

// Names of the barcode systems of GS k, by m (form A 0..6, form B 65..79).
var barcodes = map[byte]string{
	0: "UPC-A", 1: "UPC-E", 2: "EAN13", 3: "EAN8", 4: "CODE39", 5: "ITF", 6: "CODABAR",
	65: "UPC-A", 66: "UPC-E", 67: "EAN13", 68: "EAN8", 69: "CODE39", 70: "ITF", 71: "CODABAR",
	72: "CODE93", 73: "CODE128", 74: "GS1-128", 75: "GS1 DATABAR OMNIDIRECTIONAL",
	76: "GS1 DATABAR TRUNCATED", 77: "GS1 DATABAR LIMITED", 78: "GS1 DATABAR EXPANDED", 79: "CODE128 AUTO",
}

// Fixed total lengths (prefix included) of the GS commands that need nothing
// but skipping or a one-byte argument, by the byte after GS.
var gsFixed = map[byte]int{
	':': 2,
	'!': 3, 'B': 3, 'H': 3, 'I': 3, 'T': 3, 'a': 3, 'b': 3, 'f': 3, 'h': 3, 'r': 3, 'w': 3, '/': 3,
	'$': 4, 'L': 4, 'P': 4, 'W': 4, '\\': 4,
	'^': 5,
}

func (d *decoder) gs() error {
	if err := d.need(2, "GS"); err != nil {
		return err
	}
	c := d.b[d.pos+1]
	name := "GS " + cmdByte(c)
	switch c {
	case '(':
		return d.lengthPrefixed("GS (", d.gsParen)
	case '8':
		return d.gs8()
	case 'V':
		return d.gsCut()
	case 'k':
		return d.gsBarcode()
	case 'v':
		return d.gsRaster()
	case '*':
		if err := d.need(4, name); err != nil {
			return err
		}
		k := int(d.b[d.pos+2]) * int(d.b[d.pos+3]) * 8
		if err := d.need(4+k, name); err != nil {
			return err
		}
		d.pos += 4 + k
		return nil
	}
	n, ok := gsFixed[c]
	if !ok {
		return d.unknown(name)
	}
	if err := d.need(n, name); err != nil {
		return err
	}
	switch c {
	case '!':
		arg := d.b[d.pos+2]
		d.st.Width = 1 + int(arg>>4&7)
		d.st.Height = 1 + int(arg&7)
	case '/':
		d.marker(Marker{Kind: MarkerImage, Data: "downloaded"})
	}
	d.pos += n
	return nil
}

// gsParen handles the GS ( functions that print something: 2-D symbols
// (GS ( k) and graphics (GS ( L).
func (d *decoder) gsParen(fn byte, data []byte) {
	switch fn {
	case 'k':
		if len(data) < 2 {
			return
		}
		cn, f := data[0], data[1]
		switch f {
		case 80: // store: cn 80 m d1..dk
			if len(data) >= 3 {
				if d.symbols == nil {
					d.symbols = map[byte][]byte{}
				}
				d.symbols[cn] = append([]byte(nil), data[3:]...)
			}
		case 81: // print the stored symbol
			name, ok := symbols2D[cn]
			if !ok {
				name = fmt.Sprintf("2D-%d", cn)
			}
			m := Marker{Kind: Marker2D, Symbology: name, Data: bytesText(d.symbols[cn])}
			if cn == 49 {
				m.Kind = MarkerQR
			}
			d.marker(m)
		}
	case 'L':
		d.graphics(data)
	}
}

// graphics interprets the data of GS ( L / GS 8 L: m fn params.
func (d *decoder) graphics(data []byte) {
	if len(data) < 2 {
		return
	}
	switch data[1] {
	case 112: // store raster graphics: a bx by c xL xH yL yH d...
		if len(data) >= 10 {
			w := int(data[6]) + int(data[7])<<8
			h := int(data[8]) + int(data[9])<<8
			d.graphic = &Marker{Kind: MarkerImage, Width: w, Height: h}
		}
	case 50, 2: // print the stored graphics
		m := Marker{Kind: MarkerImage}
		if d.graphic != nil {
			m = *d.graphic
		}
		d.marker(m)
		d.graphic = nil
	}
}

// gs8 is GS 8 L p1 p2 p3 p4 m fn ...: graphics with a 4-byte length.
func (d *decoder) gs8() error {
	if err := d.need(7, "GS 8"); err != nil {
		return err
	}
	if d.b[d.pos+2] != 'L' {
		return d.unknown("GS 8 " + cmdByte(d.b[d.pos+2]))
	}
	var k uint64
	for i := 3; i >= 0; i-- {
		k = k<<8 | uint64(d.b[d.pos+3+i])
	}
	if k > uint64(len(d.b)) {
		return &DecodeError{Offset: d.pos, Command: "GS 8 L", Reason: "truncated"}
	}
	if err := d.need(7+int(k), "GS 8 L"); err != nil {
		return err
	}
	d.graphics(d.b[d.pos+7 : d.pos+7+int(k)])
	d.pos += 7 + int(k)
	return nil
}

// gsCut is GS V m [n].
func (d *decoder) gsCut() error {
	if err := d.need(3, "GS V"); err != nil {
		return err
	}
	var n int
	var partial bool
	switch m := d.b[d.pos+2]; m {
	case 0, '0':
		n = 3
	case 1, '1':
		n, partial = 3, true
	case 65, 97, 103:
		n = 4
	case 66, 98, 104:
		n, partial = 4, true
	default:
		return &DecodeError{Offset: d.pos, Command: "GS V", Reason: fmt.Sprintf("unknown mode %d", m)}
	}
	if err := d.need(n, "GS V"); err != nil {
		return err
	}
	d.marker(Marker{Kind: MarkerCut, Partial: partial})
	d.pos += n
	return nil
}

// gsBarcode is GS k in its two forms: m d1..dk NUL (m 0..6) and m n d1..dn
// (m 65..79).
func (d *decoder) gsBarcode() error {
	if err := d.need(3, "GS k"); err != nil {
		return err
	}
	m := d.b[d.pos+2]
	name, ok := barcodes[m]
	if !ok {
		return &DecodeError{Offset: d.pos, Command: "GS k", Reason: fmt.Sprintf("unknown barcode system %d", m)}
	}
	var data []byte
	var end int
	if m <= 6 {
		i := d.pos + 3
		for i < len(d.b) && d.b[i] != 0 {
			i++
		}
		if i >= len(d.b) {
			return &DecodeError{Offset: d.pos, Command: "GS k", Reason: "truncated (no NUL)"}
		}
		data, end = d.b[d.pos+3:i], i+1
	} else {
		if err := d.need(4, "GS k"); err != nil {
			return err
		}
		n := int(d.b[d.pos+3])
		if err := d.need(4+n, "GS k"); err != nil {
			return err
		}
		data, end = d.b[d.pos+4:d.pos+4+n], d.pos+4+n
	}
	text := bytesText(data)
	if m == 73 || m == 74 {
		text = code128Text(data)
		if m == 74 {
			name = "GS1-128"
		} else {
			name = "CODE128"
		}
	}
	d.marker(Marker{Kind: MarkerBarcode, Symbology: name, Data: text})
	d.pos = end
	return nil
}

// code128Text reads CODE128 data written with the code set prefixes of
// GS k: "{A", "{B", "{C" select a set, "{{" is a brace, "{1".."{4" and
// "{S" are function and shift characters, omitted here. In set C each
// byte is a pair of digits.
func code128Text(data []byte) string {
	var sb strings.Builder
	set := byte('B')
	for i := 0; i < len(data); i++ {
		c := data[i]
		if c == '{' && i+1 < len(data) {
			switch nx := data[i+1]; nx {
			case 'A', 'B', 'C':
				set = nx
				i++
				continue
			case '{':
				sb.WriteByte('{')
				i++
				continue
			case '1', '2', '3', '4', 'S':
				i++
				continue
			}
		}
		if set == 'C' && c <= 99 {
			fmt.Fprintf(&sb, "%02d", c)
			continue
		}
		sb.WriteRune(rune(c))
	}
	return sb.String()
}

// gsRaster is GS v 0 m xL xH yL yH d1..dk with k = (xL+xH*256)*(yL+yH*256).
func (d *decoder) gsRaster() error {
	if err := d.need(8, "GS v"); err != nil {
		return err
	}
	if d.b[d.pos+2] != '0' {
		return d.unknown("GS v " + cmdByte(d.b[d.pos+2]))
	}
	x := int(d.b[d.pos+4]) + int(d.b[d.pos+5])<<8
	y := int(d.b[d.pos+6]) + int(d.b[d.pos+7])<<8
	// Up to 65535² bytes: compare in 64 bits so no platform overflows.
	if int64(x)*int64(y) > int64(len(d.b)-d.pos-8) {
		return &DecodeError{Offset: d.pos, Command: "GS v 0", Reason: "truncated"}
	}
	k := x * y
	d.marker(Marker{Kind: MarkerImage, Width: 8 * x, Height: y})
	d.pos += 8 + k
	return nil
}
