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

// Align is the justification of a line.
type Align uint8

// Justifications set by ESC a.
const (
	AlignLeft Align = iota
	AlignCenter
	AlignRight
)

func (a Align) String() string {
	switch a {
	case AlignCenter:
		return "center"
	case AlignRight:
		return "right"
	default:
		return "left"
	}
}

// MarshalText makes an Align read as "left", "center" or "right" in JSON.
func (a Align) MarshalText() ([]byte, error) { return []byte(a.String()), nil }

// UnmarshalText is the inverse of MarshalText.
func (a *Align) UnmarshalText(b []byte) error {
	switch string(b) {
	case "left", "":
		*a = AlignLeft
	case "center":
		*a = AlignCenter
	case "right":
		*a = AlignRight
	default:
		return fmt.Errorf("escpos: unknown alignment %q", b)
	}
	return nil
}

// MarkerKind says what a marker line stands for.
type MarkerKind string

// Kinds of marker lines.
const (
	MarkerQR      MarkerKind = "qr"      // a QR code; Data is its content
	Marker2D      MarkerKind = "2d"      // another 2-D symbol (PDF417, ...); Symbology names it
	MarkerBarcode MarkerKind = "barcode" // a 1-D barcode; Symbology and Data
	MarkerImage   MarkerKind = "image"   // a raster or bit image; Width x Height dots when known
	MarkerCut     MarkerKind = "cut"     // a paper cut; Partial for a partial cut
	MarkerDrawer  MarkerKind = "drawer"  // a cash drawer kick
)

// Marker is something printed that is not text.
type Marker struct {
	Kind      MarkerKind `json:"kind"`
	Symbology string     `json:"symbology,omitempty"` // CODE128, EAN13, QR, PDF417...
	Data      string     `json:"data,omitempty"`
	Width     int        `json:"width,omitempty"`  // dots
	Height    int        `json:"height,omitempty"` // dots
	Partial   bool       `json:"partial,omitempty"`
}

// String is the marker as a line of text: "[QR <data>]",
// "[BARCODE CODE128 <data>]", "[IMAGE 384x120]", "[CUT]", "[PARTIAL CUT]".
func (m Marker) String() string {
	switch m.Kind {
	case MarkerQR:
		return "[QR " + m.Data + "]"
	case Marker2D:
		return "[" + m.Symbology + " " + m.Data + "]"
	case MarkerBarcode:
		return "[BARCODE " + m.Symbology + " " + m.Data + "]"
	case MarkerImage:
		if m.Width > 0 || m.Height > 0 {
			return fmt.Sprintf("[IMAGE %dx%d]", m.Width, m.Height)
		}
		if m.Data != "" {
			return "[IMAGE " + m.Data + "]"
		}
		return "[IMAGE]"
	case MarkerCut:
		if m.Partial {
			return "[PARTIAL CUT]"
		}
		return "[CUT]"
	case MarkerDrawer:
		return "[DRAWER]"
	}
	return "[" + strings.ToUpper(string(m.Kind)) + "]"
}

// Style is the character formatting of a run of text.
type Style struct {
	Bold      bool `json:"bold,omitempty"`
	Underline bool `json:"underline,omitempty"`
	Width     int  `json:"width"`  // 1..8, character width multiplier
	Height    int  `json:"height"` // 1..8, character height multiplier
	Font      int  `json:"font,omitempty"`
}

// Span is a run of text of one style within a line.
type Span struct {
	Text string `json:"text"`
	Style
}

// Line is one printed line. Its Style is the style of its first character
// (or, for an empty line, the style in force when it was fed); Spans details
// the style changes within the line. A marker line has Text set to the
// marker's String and no Spans.
type Line struct {
	Text  string `json:"text"`
	Align Align  `json:"align"`
	Style
	Spans  []Span  `json:"spans,omitempty"`
	Marker *Marker `json:"marker,omitempty"`
}

// Document is a decoded print job.
type Document struct {
	Lines []Line `json:"lines"`
	// Notes reports what the decoder could not render faithfully but did not
	// stop for: an unknown code page, text discarded by ESC @, text left
	// without a final line feed.
	Notes []string `json:"notes,omitempty"`
}

// Text renders the document as plain text, one line per line, markers
// included.
func (d *Document) Text() string {
	var sb strings.Builder
	for _, l := range d.Lines {
		sb.WriteString(l.Text)
		sb.WriteByte('\n')
	}
	return sb.String()
}

// Render renders the document as plain text on a paper cols characters wide,
// honouring alignment and character width multipliers (a double-width
// character takes two columns; its text is not repeated).
func (d *Document) Render(cols int) string {
	var sb strings.Builder
	for _, l := range d.Lines {
		w := 0
		if len(l.Spans) == 0 {
			w = utf8.RuneCountInString(l.Text) * max(l.Width, 1)
		}
		for _, s := range l.Spans {
			w += utf8.RuneCountInString(s.Text) * max(s.Width, 1)
		}
		pad := 0
		switch l.Align {
		case AlignCenter:
			pad = (cols - w) / 2
		case AlignRight:
			pad = cols - w
		}
		if pad > 0 {
			sb.WriteString(strings.Repeat(" ", pad))
		}
		sb.WriteString(l.Text)
		sb.WriteByte('\n')
	}
	return sb.String()
}

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

// Fixed total lengths (prefix included) of the commands that need nothing but
// skipping or a one-byte argument, by the byte after the prefix.
var (
	escFixed = map[byte]int{
		'@': 2, '2': 2, '<': 2, 'L': 2, 'S': 2, 'i': 2, 'm': 2, 0x0C: 2,
		' ': 3, '!': 3, '-': 3, '3': 3, '=': 3, '?': 3, 'E': 3, 'G': 3, 'J': 3, 'M': 3, 'R': 3,
		'T': 3, 'U': 3, 'V': 3, 'a': 3, 'd': 3, 'e': 3, 'r': 3, 't': 3, '{': 3, '%': 3,
		'$': 4, '\\': 4, 'c': 4,
		'p': 5,
		'W': 10,
	}
	gsFixed = map[byte]int{
		':': 2,
		'!': 3, 'B': 3, 'H': 3, 'I': 3, 'T': 3, 'a': 3, 'b': 3, 'f': 3, 'h': 3, 'r': 3, 'w': 3, '/': 3,
		'$': 4, 'L': 4, 'P': 4, 'W': 4, '\\': 4,
		'^': 5,
	}
	fsFixed = map[byte]int{
		'&': 2, '.': 2,
		'!': 3, '-': 3, 'C': 3, 'W': 3,
		'S': 4, 'p': 4,
		'2': 76, // FS 2 c1 c2 + 72 bytes of a 24x24 user-defined Kanji
	}
)

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
	switch c {
	case '@':
		if d.pending() {
			d.note("ESC @ discarded unprinted text")
			d.spans, d.run, d.col = nil, d.run[:0], 0
		}
		d.reset()
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
	d.pos += n
	return nil
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
