package escpos

import "fmt"

// Fixed total lengths (prefix included) of the FS commands that need nothing
// but skipping or a one-byte argument, by the byte after FS.
var fsFixed = map[byte]int{
	'&': 2, '.': 2,
	'!': 3, '-': 3, 'C': 3, 'W': 3,
	'S': 4, 'p': 4,
	'2': 76, // FS 2 c1 c2 + 72 bytes of a 24x24 user-defined Kanji
}

func (d *decoder) fs() error {
	if err := d.need(2, "FS"); err != nil {
		return err
	}
	c := d.b[d.pos+1]
	name := "FS " + cmdByte(c)
	switch c {
	case '(':
		return d.lengthPrefixed("FS (", nil)
	case 'q':
		return d.fsNVImages()
	}
	n, ok := fsFixed[c]
	if !ok {
		return d.unknown(name)
	}
	if err := d.need(n, name); err != nil {
		return err
	}
	if c == 'p' {
		d.marker(Marker{Kind: MarkerImage, Data: fmt.Sprintf("NV %d", d.b[d.pos+2])})
	}
	d.pos += n
	return nil
}

// fsNVImages is FS q n [xL xH yL yH d1..dk]1..n: define NV bit images, each of
// (xL+xH*256)*(yL+yH*256)*8 bytes.
func (d *decoder) fsNVImages() error {
	if err := d.need(3, "FS q"); err != nil {
		return err
	}
	i := d.pos + 3
	for range int(d.b[d.pos+2]) {
		if i+4 > len(d.b) {
			return &DecodeError{Offset: d.pos, Command: "FS q", Reason: "truncated"}
		}
		x := int64(d.b[i]) + int64(d.b[i+1])<<8
		y := int64(d.b[i+2]) + int64(d.b[i+3])<<8
		if x*y*8 > int64(len(d.b)-i-4) {
			return &DecodeError{Offset: d.pos, Command: "FS q", Reason: "truncated"}
		}
		i += 4 + int(x*y*8)
	}
	d.pos = i
	return nil
}

func (d *decoder) dle() error {
	if err := d.need(2, "DLE"); err != nil {
		return err
	}
	c := d.b[d.pos+1]
	var n int
	switch c {
	case 0x04, 0x05: // DLE EOT n, DLE ENQ n: real-time status and requests
		n = 3
	case 0x14: // DLE DC4 fn ...
		if err := d.need(3, "DLE DC4"); err != nil {
			return err
		}
		switch fn := d.b[d.pos+2]; fn {
		case 1, 2:
			n = 5
		case 7:
			n = 4
		case 8:
			n = 10
		default:
			return d.unknown(fmt.Sprintf("DLE DC4 %d", fn))
		}
	default:
		return d.unknown("DLE " + cmdByte(c))
	}
	if err := d.need(n, "DLE "+cmdByte(c)); err != nil {
		return err
	}
	d.pos += n
	return nil
}

// cmdByte names a command byte: the character when printable, else its hex.
