// Package escpos reads ESC/POS printer byte streams back into text.
//
// The decoder exists for previews and tests: the simulated terminal logs what
// it was asked to print, and a UI can render a receipt before it is sent. It
// is not a printer emulator: it keeps what a reader of the receipt would see
// (lines of text, their alignment, emphasis and size, and markers standing for
// barcodes, QR codes, images and cuts) and drops the rest.
//
// Every command the decoder knows is consumed with its exact length, so an
// unfamiliar but well-formed stream never shifts the decoding of what
// follows. A command the decoder does not know, or one cut short by the end of
// the data, stops decoding with a *DecodeError naming its offset, rather than
// guessing and printing garbage.
package escpos

import (
	"encoding/hex"
	"fmt"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/encoding/charmap"
)

// DecodeError is a command the decoder cannot consume: unknown, or cut short
// by the end of the data. Decoding stops there.
type DecodeError struct {
	Offset  int    // offset of the command's first byte
	Command string // for example "GS ( k"
	Reason  string
}

func (e *DecodeError) Error() string {
	return fmt.Sprintf("escpos: offset %d: %s: %s", e.Offset, e.Command, e.Reason)
}

// DecodeHex decodes ESC/POS bytes given as a hexadecimal string, the form the
// terminal's /print takes. Whitespace between digits is tolerated.
func DecodeHex(s string) (*Document, error) {
	s = strings.Map(func(r rune) rune {
		switch r {
		case ' ', '\t', '\r', '\n':
			return -1
		}
		return r
	}, s)
	b, err := hex.DecodeString(s)
	if err != nil {
		return &Document{}, fmt.Errorf("escpos: bad hex data: %w", err)
	}
	return Decode(b)
}

type decoder struct {
	b   []byte
	pos int
	doc *Document

	align Align
	st    Style
	page  byte
	cm    *charmap.Charmap // nil: an unknown page, bytes read as Latin-1
	tabs  []int

	// The line being built.
	spans []Span
	run   []rune
	runSt Style
	col   int

	symbols map[byte][]byte // stored 2-D symbol data, by cn
	graphic *Marker         // raster graphics stored by GS ( L fn 112, printed by fn 50
	noted   map[string]bool
}

// Decode turns ESC/POS bytes into lines of text and markers. On error the
// returned Document still holds everything decoded before the failing
// command.
func Decode(b []byte) (*Document, error) {
	d := &decoder{b: b, doc: &Document{}}
	d.reset()
	err := d.decode()
	if d.pending() {
		d.flush()
		if err == nil {
			d.note("text at the end of the data without a line feed")
		}
	}
	if err != nil {
		return d.doc, err
	}
	return d.doc, nil
}

// reset is ESC @: modes back to their power-on values.
func (d *decoder) reset() {
	d.align = AlignLeft
	d.st = Style{Width: 1, Height: 1}
	d.page = 0
	d.cm = charmap.CodePage437
	d.tabs = defaultTabs()
	d.symbols = nil
	d.graphic = nil
}

func defaultTabs() []int {
	t := make([]int, 32)
	for i := range t {
		t[i] = 8 * (i + 1)
	}
	return t
}

func (d *decoder) note(s string) {
	if d.noted == nil {
		d.noted = map[string]bool{}
	}
	if !d.noted[s] {
		d.noted[s] = true
		d.doc.Notes = append(d.doc.Notes, s)
	}
}

// need reports an error unless n bytes from the current position exist.
func (d *decoder) need(n int, cmd string) error {
	if n < 0 || d.pos+n > len(d.b) || d.pos+n < d.pos {
		return &DecodeError{Offset: d.pos, Command: cmd, Reason: "truncated"}
	}
	return nil
}

func (d *decoder) unknown(cmd string) error {
	return &DecodeError{Offset: d.pos, Command: cmd, Reason: "unknown command"}
}

func (d *decoder) decode() error {
	for d.pos < len(d.b) {
		c := d.b[d.pos]
		var err error
		switch c {
		case 0x1B:
			err = d.esc()
		case 0x1D:
			err = d.gs()
		case 0x1C:
			err = d.fs()
		case 0x10:
			err = d.dle()
		case '\n':
			d.flush()
			d.pos++
		case '\t':
			d.tab()
			d.pos++
		default:
			if c < 0x20 {
				// CR without auto line feed, FF and CAN in standard mode,
				// and undefined controls: printers ignore them.
				d.pos++
				continue
			}
			d.char(c)
			d.pos++
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (d *decoder) pending() bool { return len(d.spans) > 0 || len(d.run) > 0 || d.col > 0 }

func (d *decoder) char(c byte) {
	r := rune(c)
	if d.cm != nil {
		r = d.cm.DecodeByte(c)
	}
	d.put(r)
}

func (d *decoder) put(r rune) {
	if len(d.run) > 0 && d.runSt != d.st {
		d.endRun()
	}
	if len(d.run) == 0 {
		d.runSt = d.st
	}
	d.run = append(d.run, r)
	d.col++
}

func (d *decoder) endRun() {
	if len(d.run) > 0 {
		d.spans = append(d.spans, Span{Text: string(d.run), Style: d.runSt})
		d.run = d.run[:0]
	}
}

func (d *decoder) tab() {
	for _, t := range d.tabs {
		if t > d.col {
			for d.col < t {
				d.put(' ')
			}
			return
		}
	}
	// No tab position beyond the cursor: the printer ignores HT.
}

// flush prints the line buffer and feeds one line, as LF does.
func (d *decoder) flush() {
	d.endRun()
	l := Line{Align: d.align, Style: d.st}
	if len(d.spans) > 0 {
		l.Style = d.spans[0].Style
		var sb strings.Builder
		for _, s := range d.spans {
			sb.WriteString(s.Text)
		}
		l.Text = sb.String()
		l.Spans = d.spans
	}
	d.doc.Lines = append(d.doc.Lines, l)
	d.spans = nil
	d.col = 0
}

// marker prints what is in the line buffer, then the marker on a line of its
// own.
func (d *decoder) marker(m Marker) {
	if d.pending() {
		d.flush()
	}
	d.doc.Lines = append(d.doc.Lines, Line{Text: m.String(), Align: d.align, Style: d.st, Marker: &m})
}

func cmdByte(c byte) string {
	switch c {
	case 0x04:
		return "EOT"
	case 0x05:
		return "ENQ"
	case 0x0C:
		return "FF"
	case 0x14:
		return "DC4"
	}
	if c > 0x20 && c < 0x7F {
		return string(rune(c))
	}
	return fmt.Sprintf("0x%02X", c)
}

// bytesText reads symbol data: UTF-8 when it is valid UTF-8, else Latin-1.
func bytesText(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	r := make([]rune, len(b))
	for i, c := range b {
		r[i] = rune(c)
	}
	return string(r)
}
