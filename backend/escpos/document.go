package escpos

import (
	"fmt"
	"strings"
	"unicode/utf8"
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
