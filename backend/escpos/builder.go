package escpos

import (
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/encoding/charmap"
)

// Paper widths in columns of font A (12 dots a column).
const (
	Columns58mm = 32 // 384 dots
	Columns80mm = 48 // 576 dots
)

// CodePage is a character table the builder selects with ESC t and encodes
// caller text to. The zero value is CP858 (CP850 with the euro sign at 0xD5).
type CodePage int

// Code pages the builder can encode to.
const (
	CP858 CodePage = iota
	CP437
	CP850
	CP1252
	ISO8859_15
)

type pageInfo struct {
	n  byte // ESC t n
	cm *charmap.Charmap
}

var builderPages = map[CodePage]pageInfo{
	CP858:      {19, charmap.CodePage858},
	CP437:      {0, charmap.CodePage437},
	CP850:      {2, charmap.CodePage850},
	CP1252:     {16, charmap.Windows1252},
	ISO8859_15: {40, charmap.ISO8859_15},
}

// Options configure a Builder.
type Options struct {
	// Columns is the paper width in columns of font A: 32 (58 mm) or 48
	// (80 mm). Zero means 48.
	Columns int
	// CodePage is the table text is encoded to. The zero value is CP858.
	CodePage CodePage
}

// QRLevel is a QR code error correction level.
type QRLevel byte

// QR error correction levels, with the byte GS ( k fn 69 takes.
const (
	QRLevelM QRLevel = 49 // the zero value of QROptions means M
	QRLevelL QRLevel = 48
	QRLevelQ QRLevel = 50
	QRLevelH QRLevel = 51
)

// QROptions tune a QR code. The zero value is model 2, module size 6,
// error correction M.
type QROptions struct {
	Model int     // 1 or 2; 0 means 2
	Size  int     // module size in dots, 1..16; 0 means 6
	Level QRLevel // 0 means M
}

// Maximum data length of a QR code in byte mode (version 40), by level.
var qrCapacity = map[QRLevel]int{QRLevelL: 2953, QRLevelM: 2331, QRLevelQ: 1663, QRLevelH: 1273}

// Errors the builder keeps.
var (
	ErrQRTooLong     = errors.New("escpos: QR data too long for its error correction level")
	ErrBadBarcode    = errors.New("escpos: bad barcode data")
	ErrBadImage      = errors.New("escpos: bad image")
	ErrBadArgument   = errors.New("escpos: bad argument")
	ErrUnknownCodePg = errors.New("escpos: unknown code page")
)

// Builder writes an ESC/POS byte stream. Its methods return the builder so
// calls chain. The first error is kept (sticky): every later call is a no-op
// and Bytes and Hex report it.
//
// Caller text (Text, Line, Wrapped, TwoColumns, Rule's rune) never injects a
// control byte: it goes through Sanitize, then is encoded to the code page,
// a character the code page lacks becoming '?'. Only the builder's own
// commands put bytes below 0x20 or 0x7F in the output.
type Builder struct {
	buf     []byte
	err     error
	cols    int
	page    CodePage
	cm      *charmap.Charmap
	wMul    int // current character width multiplier
	fontB   bool
	pending bool // text written since the last line feed
}

// New returns a builder for the paper and code page of opts. It writes
// nothing: start a job with Init.
func New(opts Options) *Builder {
	b := &Builder{cols: opts.Columns, page: opts.CodePage, wMul: 1}
	if b.cols == 0 {
		b.cols = Columns80mm
	}
	if b.cols < 8 || b.cols > 255 {
		b.err = fmt.Errorf("%w: %d columns", ErrBadArgument, opts.Columns)
	}
	p, ok := builderPages[opts.CodePage]
	if !ok {
		b.err = fmt.Errorf("%w: %d", ErrUnknownCodePg, opts.CodePage)
		p = builderPages[CP858]
	}
	b.cm = p.cm
	return b
}

// Err is the sticky error, nil if none.
func (b *Builder) Err() error { return b.err }

// Bytes is the stream written so far, or the first error.
func (b *Builder) Bytes() ([]byte, error) {
	if b.err != nil {
		return nil, b.err
	}
	return append([]byte(nil), b.buf...), nil
}

// Hex is the stream as the hexadecimal string /print and receiptTicket take.
func (b *Builder) Hex() (string, error) {
	out, err := b.Bytes()
	if err != nil {
		return "", err
	}
	return hex.EncodeToString(out), nil
}

// Columns is the paper width in columns of font A.
func (b *Builder) Columns() int { return b.cols }

// Dots is the printable width in dots: 12 per column (384 on 58 mm, 576 on
// 80 mm).
func (b *Builder) Dots() int { return b.cols * 12 }

// Cols is the number of characters a line holds in the current font and
// width multiplier: font B is 9 dots wide instead of 12, a double-width
// character takes two columns.
func (b *Builder) Cols() int {
	c := b.cols
	if b.fontB {
		c = b.cols * 12 / 9
	}
	return max(c/max(b.wMul, 1), 1)
}

func (b *Builder) fail(err error) *Builder {
	if b.err == nil {
		b.err = err
	}
	return b
}

func (b *Builder) raw(p ...byte) *Builder {
	if b.err == nil {
		b.buf = append(b.buf, p...)
	}
	return b
}

// Init writes ESC @ (printer modes back to their defaults) and selects the
// builder's code page.
func (b *Builder) Init() *Builder {
	if b.err != nil {
		return b
	}
	b.wMul, b.fontB, b.pending = 1, false, false
	b.raw(0x1B, '@')
	return b.raw(0x1B, 't', builderPages[b.page].n)
}

// SetCodePage selects another code page (ESC t) for the text that follows.
func (b *Builder) SetCodePage(cp CodePage) *Builder {
	if b.err != nil {
		return b
	}
	p, ok := builderPages[cp]
	if !ok {
		return b.fail(fmt.Errorf("%w: %d", ErrUnknownCodePg, cp))
	}
	b.page, b.cm = cp, p.cm
	return b.raw(0x1B, 't', p.n)
}

// Align sets the justification (ESC a). Printers apply it only at the
// beginning of a line: call it before the line's text.
func (b *Builder) Align(a Align) *Builder {
	if a > AlignRight {
		return b.fail(fmt.Errorf("%w: alignment %d", ErrBadArgument, a))
	}
	return b.raw(0x1B, 'a', byte(a))
}

// Bold turns emphasis on or off (ESC E).
func (b *Builder) Bold(on bool) *Builder { return b.raw(0x1B, 'E', boolByte(on)) }

// Underline turns underlining on or off (ESC -, one dot).
func (b *Builder) Underline(on bool) *Builder { return b.raw(0x1B, '-', boolByte(on)) }

// Size sets the character width and height multipliers, 1..8 (GS !).
func (b *Builder) Size(w, h int) *Builder {
	if w < 1 || w > 8 || h < 1 || h > 8 {
		return b.fail(fmt.Errorf("%w: size %dx%d", ErrBadArgument, w, h))
	}
	if b.err == nil {
		b.wMul = w
	}
	return b.raw(0x1D, '!', byte((w-1)<<4|(h-1)))
}

// Normal is Size(1, 1), Bold(false) and Underline(false).
func (b *Builder) Normal() *Builder { return b.Size(1, 1).Bold(false).Underline(false) }

// Font selects font A (0) or font B (1) (ESC M).
func (b *Builder) Font(n int) *Builder {
	if n != 0 && n != 1 {
		return b.fail(fmt.Errorf("%w: font %d", ErrBadArgument, n))
	}
	if b.err == nil {
		b.fontB = n == 1
	}
	return b.raw(0x1B, 'M', byte(n))
}

// LF prints the line and feeds one line.
func (b *Builder) LF() *Builder {
	if b.err == nil {
		b.pending = false
	}
	return b.raw('\n')
}

// Feed prints the line buffer and feeds n lines (ESC d n), 0..255.
func (b *Builder) Feed(n int) *Builder {
	if n < 0 || n > 255 {
		return b.fail(fmt.Errorf("%w: feed %d", ErrBadArgument, n))
	}
	if b.err == nil {
		b.pending = false
	}
	return b.raw(0x1B, 'd', byte(n))
}

// Text writes caller text, sanitised and encoded, without a line feed.
func (b *Builder) Text(s string) *Builder {
	if b.err != nil {
		return b
	}
	enc := b.encode(Sanitize(s))
	if len(enc) > 0 {
		b.pending = true
	}
	return b.raw(enc...)
}

// Line writes caller text and a line feed. The text is not wrapped: the
// printer wraps what is longer than the paper.
func (b *Builder) Line(s string) *Builder { return b.Text(s).LF() }

// Wrapped writes caller text word-wrapped to Cols(), one line each.
func (b *Builder) Wrapped(s string) *Builder {
	for _, l := range Wrap(s, b.Cols()) {
		b.Line(l)
	}
	return b
}

// TwoColumns writes left and right on one line, right flush with the
// paper's edge, in the current width multiplier. A left text too long to
// share the line is word-wrapped, right standing on its first line; a right
// text too long for that goes on a line of its own after the left text.
func (b *Builder) TwoColumns(left, right string) *Builder {
	for _, l := range Columns(left, right, b.Cols()) {
		b.Line(l)
	}
	return b
}

// Rule writes a horizontal rule of r across the paper at the current width
// multiplier, then a line feed.
func (b *Builder) Rule(r rune) *Builder {
	s := Sanitize(string(r))
	if s == "" || s == " " {
		s = "-"
	}
	return b.Line(strings.Repeat(s, b.Cols()))
}

// QR prints a native QR code (GS ( k): model, module size, error
// correction level, store the data, print. Data longer than the level's
// capacity is an error.
func (b *Builder) QR(data string, o QROptions) *Builder {
	if b.err != nil {
		return b
	}
	model, size, level := o.Model, o.Size, o.Level
	if model == 0 {
		model = 2
	}
	if size == 0 {
		size = 6
	}
	if level == 0 {
		level = QRLevelM
	}
	capacity, ok := qrCapacity[level]
	switch {
	case model != 1 && model != 2, size < 1 || size > 16, !ok:
		return b.fail(fmt.Errorf("%w: QR model %d size %d level %d", ErrBadArgument, model, size, level))
	case data == "":
		return b.fail(fmt.Errorf("%w: empty QR data", ErrBadArgument))
	case len(data) > capacity:
		return b.fail(fmt.Errorf("%w: %d bytes, at most %d", ErrQRTooLong, len(data), capacity))
	}
	b.endLine()
	b.raw(0x1D, '(', 'k', 4, 0, 49, 65, byte(48+model), 0)
	b.raw(0x1D, '(', 'k', 3, 0, 49, 67, byte(size))
	b.raw(0x1D, '(', 'k', 3, 0, 49, 69, byte(level))
	k := len(data) + 3
	b.raw(0x1D, '(', 'k', byte(k), byte(k>>8), 49, 80, 48)
	b.raw([]byte(data)...)
	return b.raw(0x1D, '(', 'k', 3, 0, 49, 81, 48)
}

// barcodeSetup writes height (dots), module width and HRI below.
func (b *Builder) barcodeSetup() {
	b.endLine()
	b.raw(0x1D, 'h', 80)
	b.raw(0x1D, 'w', 2)
	b.raw(0x1D, 'H', 2)
}

// Code128 prints a CODE128 barcode (code set B) of printable ASCII data,
// human-readable text below.
func (b *Builder) Code128(data string) *Builder {
	if b.err != nil {
		return b
	}
	if data == "" {
		return b.fail(fmt.Errorf("%w: empty CODE128 data", ErrBadBarcode))
	}
	enc := []byte{'{', 'B'}
	for i := 0; i < len(data); i++ {
		c := data[i]
		if c < 0x20 || c > 0x7E {
			return b.fail(fmt.Errorf("%w: CODE128 byte 0x%02X", ErrBadBarcode, c))
		}
		enc = append(enc, c)
		if c == '{' {
			enc = append(enc, '{')
		}
	}
	if len(enc) > 255 {
		return b.fail(fmt.Errorf("%w: CODE128 data too long", ErrBadBarcode))
	}
	b.barcodeSetup()
	b.raw(0x1D, 'k', 73, byte(len(enc)))
	return b.raw(enc...)
}

// EAN13 prints an EAN-13 barcode. data is 12 digits (the check digit is
// computed) or 13 digits whose last is a correct check digit.
func (b *Builder) EAN13(data string) *Builder {
	if b.err != nil {
		return b
	}
	full, err := EAN13CheckDigit(data)
	if err != nil {
		return b.fail(err)
	}
	b.barcodeSetup()
	b.raw(0x1D, 'k', 67, 13)
	return b.raw([]byte(full)...)
}

// EAN13CheckDigit validates data (12 digits, or 13 with a correct check
// digit) and returns the 13 digits.
func EAN13CheckDigit(data string) (string, error) {
	if len(data) != 12 && len(data) != 13 {
		return "", fmt.Errorf("%w: EAN-13 needs 12 or 13 digits, got %d characters", ErrBadBarcode, len(data))
	}
	sum := 0
	for i := 0; i < len(data); i++ {
		if data[i] < '0' || data[i] > '9' {
			return "", fmt.Errorf("%w: EAN-13 character %q", ErrBadBarcode, data[i])
		}
		if i < 12 {
			d := int(data[i] - '0')
			if i%2 == 1 {
				d *= 3
			}
			sum += d
		}
	}
	check := byte('0' + (10-sum%10)%10)
	if len(data) == 13 && data[12] != check {
		return "", fmt.Errorf("%w: EAN-13 check digit %c, want %c", ErrBadBarcode, data[12], check)
	}
	return data[:12] + string(check), nil
}

// Cut feeds to the cutter and cuts the paper fully (GS V 65 0).
func (b *Builder) Cut() *Builder { b.endLine(); return b.raw(0x1D, 'V', 65, 0) }

// PartialCut feeds to the cutter and cuts leaving a hinge (GS V 66 0).
func (b *Builder) PartialCut() *Builder { b.endLine(); return b.raw(0x1D, 'V', 66, 0) }

// endLine ends a line of text left without a line feed, so a symbol or a
// cut does not swallow it.
func (b *Builder) endLine() {
	if b.err == nil && b.pending {
		b.LF()
	}
}

func boolByte(on bool) byte {
	if on {
		return 1
	}
	return 0
}

// encode turns sanitised text into code page bytes; a rune the page lacks,
// or one that would encode to a control byte, becomes '?'.
func (b *Builder) encode(s string) []byte {
	out := make([]byte, 0, len(s))
	for _, r := range s {
		c, ok := b.cm.EncodeRune(r)
		if !ok || r == utf8.RuneError || c < 0x20 || c == 0x7F {
			c = '?'
		}
		out = append(out, c)
	}
	return out
}

// Sanitize makes caller text safe to print: tab, line feed, carriage
// return, vertical tab and form feed become a space; every other C0
// control (U+0000..U+001F), DEL (U+007F) and C1 control (U+0080..U+009F)
// is removed; invalid UTF-8 becomes U+FFFD (printed as '?').
func Sanitize(s string) string {
	clean := true
	for _, r := range s {
		if isControl(r) || r == utf8.RuneError {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var sb strings.Builder
	for _, r := range s {
		switch {
		case r == '\t' || r == '\n' || r == '\r' || r == '\v' || r == '\f':
			sb.WriteByte(' ')
		case isControl(r):
		default:
			sb.WriteRune(r)
		}
	}
	return sb.String()
}

func isControl(r rune) bool { return r < 0x20 || (r >= 0x7F && r <= 0x9F) }

// Wrap breaks sanitised text into lines of at most width characters,
// at spaces where it can (only U+0020 breaks: a no-break space does not);
// a word longer than width is cut. Runs of spaces collapse, but leading
// spaces indent the first line. Empty text gives one empty line.
func Wrap(s string, width int) []string {
	width = max(width, 1)
	s = Sanitize(s)
	words := strings.FieldsFunc(s, func(r rune) bool { return r == ' ' })
	// Leading spaces indent the first line.
	if ind := len(s) - len(strings.TrimLeft(s, " ")); ind > 0 && len(words) > 0 {
		words[0] = s[:ind] + words[0]
	}
	var lines []string
	var cur []rune
	for _, w := range words {
		wr := []rune(w)
		for len(wr) > 0 {
			switch {
			case len(cur) == 0 && len(wr) <= width:
				cur, wr = append(cur, wr...), nil
			case len(cur) > 0 && len(cur)+1+len(wr) <= width:
				cur = append(append(cur, ' '), wr...)
				wr = nil
			case len(cur) > 0:
				lines = append(lines, string(cur))
				cur = nil
			default: // a word longer than the line
				lines = append(lines, string(wr[:width]))
				wr = wr[width:]
			}
		}
	}
	if len(cur) > 0 || len(lines) == 0 {
		lines = append(lines, string(cur))
	}
	return lines
}

// Columns lays out left and right on lines of width characters, right
// flush with the edge: "name ... price". Left is wrapped when it does not
// fit beside right (at least one space between them), right standing on
// the first line; when right leaves left fewer than width/3 characters, left
// is wrapped to the full width and right goes on a line of its own.
func Columns(left, right string, width int) []string {
	width = max(width, 1)
	right = strings.Trim(Sanitize(right), " ")
	rw := utf8.RuneCountInString(right)
	if rw == 0 {
		return Wrap(left, width)
	}
	avail := width - rw - 1
	if avail < width/3 || avail < 1 {
		lines := Wrap(left, width)
		if rw > width {
			return append(lines, Wrap(right, width)...)
		}
		return append(lines, strings.Repeat(" ", width-rw)+right)
	}
	lines := Wrap(left, avail)
	first := lines[0]
	lines[0] = first + strings.Repeat(" ", width-utf8.RuneCountInString(first)-rw) + right
	return lines
}
