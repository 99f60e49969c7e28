package escpos

import (
	"fmt"

	"golang.org/x/text/encoding/charmap"
)

// codePage is a character table selectable with ESC t.
type codePage struct {
	name string
	cm   *charmap.Charmap
}

// codePages maps ESC t's n to the tables of the Epson standard that
// golang.org/x/text knows.
var codePages = map[byte]codePage{
	0:  {"CP437", charmap.CodePage437},
	2:  {"CP850", charmap.CodePage850},
	3:  {"CP860", charmap.CodePage860},
	4:  {"CP863", charmap.CodePage863},
	5:  {"CP865", charmap.CodePage865},
	16: {"CP1252", charmap.Windows1252},
	17: {"CP866", charmap.CodePage866},
	18: {"CP852", charmap.CodePage852},
	19: {"CP858", charmap.CodePage858},
	40: {"ISO-8859-15", charmap.ISO8859_15},
}

// Fixed total lengths (prefix included) of the ESC commands that need nothing
// but skipping or a one-byte argument, by the byte after ESC.
var escFixed = map[byte]int{
	'@': 2, '2': 2, '<': 2, 'L': 2, 'S': 2, 'i': 2, 'm': 2, 0x0C: 2,
	' ': 3, '!': 3, '-': 3, '3': 3, '=': 3, '?': 3, 'E': 3, 'G': 3, 'J': 3, 'M': 3, 'R': 3,
	'T': 3, 'U': 3, 'V': 3, 'a': 3, 'd': 3, 'e': 3, 'r': 3, 't': 3, '{': 3, '%': 3,
	'$': 4, '\\': 4, 'c': 4,
	'p': 5,
	'W': 10,
}

func (d *decoder) esc() error {
	if err := d.need(2, "ESC"); err != nil {
		return err
	}
	c := d.b[d.pos+1]
	name := "ESC " + cmdByte(c)
	switch c {
	case '*':
		return d.escBitImage()
	case 'D':
		return d.escTabs()
	case '&':
		return d.escUserChars()
	case '(':
		return d.lengthPrefixed("ESC (", nil)
	}
	n, ok := escFixed[c]
	if !ok {
		return d.unknown(name)
	}
	if err := d.need(n, name); err != nil {
		return err
	}
	arg := byte(0)
	if n >= 3 {
		arg = d.b[d.pos+2]
	}
	d.escCommand(c, arg)
	d.pos += n
	return nil
}

// escCommand applies the fixed-length ESC commands that change what a reader
// of the receipt sees (modes, feeds, drawer and cut markers); the others are
// only skipped.
func (d *decoder) escCommand(c, arg byte) {
	switch c {
	case '@':
		if d.pending() {
			d.note("ESC @ discarded unprinted text")
			d.spans, d.run, d.col = nil, d.run[:0], 0
		}
		d.reset()
	case '!', '-', 'E', 'M':
		d.escStyle(c, arg)
	case 'a':
		// Justification takes effect only at the beginning of a line.
		if !d.pending() {
			switch arg {
			case 0, '0':
				d.align = AlignLeft
			case 1, '1':
				d.align = AlignCenter
			case 2, '2':
				d.align = AlignRight
			}
		}
	case 't':
		d.page = arg
		if p, ok := codePages[arg]; ok {
			d.cm = p.cm
		} else {
			d.cm = nil
			d.note(fmt.Sprintf("code page %d is unknown: its bytes are shown as Latin-1", arg))
		}
	case 'd':
		// Print the buffer and feed n lines: the first feed ends the
		// current line, the others leave blank lines.
		if arg == 0 {
			if d.pending() {
				d.flush()
			}
		} else {
			for range int(arg) {
				d.flush()
			}
		}
	case 'J':
		// Print and feed n dots: ends the line if there is one.
		if d.pending() {
			d.flush()
		}
	case 'p':
		d.marker(Marker{Kind: MarkerDrawer})
	case 'i', 'm':
		// The obsolete cut commands both leave the paper partly uncut.
		d.marker(Marker{Kind: MarkerCut, Partial: true})
	}
}

// escStyle is ESC !, ESC -, ESC E and ESC M: the character formatting.
func (d *decoder) escStyle(c, arg byte) {
	switch c {
	case '!':
		d.st.Font = int(arg & 1)
		d.st.Bold = arg&0x08 != 0
		d.st.Height = 1 + int(arg>>4&1)
		d.st.Width = 1 + int(arg>>5&1)
		d.st.Underline = arg&0x80 != 0
	case '-':
		switch arg {
		case 0, '0':
			d.st.Underline = false
		case 1, 2, '1', '2':
			d.st.Underline = true
		}
	case 'E':
		d.st.Bold = arg&1 != 0
	case 'M':
		switch {
		case arg <= 4:
			d.st.Font = int(arg)
		case arg >= '0' && arg <= '4':
			d.st.Font = int(arg - '0')
		}
	}
}

// escBitImage is ESC * m nL nH d1..dk: one band of a column image.
func (d *decoder) escBitImage() error {
	if err := d.need(5, "ESC *"); err != nil {
		return err
	}
	m := d.b[d.pos+2]
	cols := int(d.b[d.pos+3]) + int(d.b[d.pos+4])<<8
	var k, h int
	switch m {
	case 0, 1:
		k, h = cols, 8
	case 32, 33:
		k, h = 3*cols, 24
	default:
		return &DecodeError{Offset: d.pos, Command: "ESC *", Reason: fmt.Sprintf("unknown mode %d", m)}
	}
	if err := d.need(5+k, "ESC *"); err != nil {
		return err
	}
	d.marker(Marker{Kind: MarkerImage, Width: cols, Height: h})
	d.pos += 5 + k
	return nil
}

// escTabs is ESC D n1..nk NUL: at most 32 ascending tab positions.
func (d *decoder) escTabs() error {
	var tabs []int
	i := d.pos + 2
	for ; len(tabs) < 32; i++ {
		if i >= len(d.b) {
			return &DecodeError{Offset: d.pos, Command: "ESC D", Reason: "truncated"}
		}
		v := int(d.b[i])
		if v == 0 {
			i++
			break
		}
		if len(tabs) > 0 && v <= tabs[len(tabs)-1] {
			// Not ascending: the printer ends the list here and prints
			// what follows as data.
			break
		}
		tabs = append(tabs, v)
	}
	d.tabs = tabs
	d.pos = i
	return nil
}

// escUserChars is ESC & y c1 c2 [x d1..d(y*x)]...: user-defined characters.
func (d *decoder) escUserChars() error {
	if err := d.need(5, "ESC &"); err != nil {
		return err
	}
	y := int(d.b[d.pos+2])
	c1, c2 := int(d.b[d.pos+3]), int(d.b[d.pos+4])
	if c2 < c1 {
		return &DecodeError{Offset: d.pos, Command: "ESC &", Reason: "bad character range"}
	}
	i := d.pos + 5
	for range c2 - c1 + 1 {
		if i >= len(d.b) {
			return &DecodeError{Offset: d.pos, Command: "ESC &", Reason: "truncated"}
		}
		i += 1 + y*int(d.b[i])
		if i > len(d.b) {
			return &DecodeError{Offset: d.pos, Command: "ESC &", Reason: "truncated"}
		}
	}
	d.pos = i
	return nil
}

// lengthPrefixed consumes a "prefix fn pL pH data" command, the form of all
// of ESC (, GS ( and FS (, and hands its data (after pL pH) to handle.
func (d *decoder) lengthPrefixed(name string, handle func(fn byte, data []byte)) error {
	if err := d.need(5, name); err != nil {
		return err
	}
	fn := d.b[d.pos+2]
	name += " " + cmdByte(fn)
	k := int(d.b[d.pos+3]) + int(d.b[d.pos+4])<<8
	if err := d.need(5+k, name); err != nil {
		return err
	}
	if handle != nil {
		handle(fn, d.b[d.pos+5:d.pos+5+k])
	}
	d.pos += 5 + k
	return nil
}
