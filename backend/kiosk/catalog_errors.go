package kiosk

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// CatalogError is a catalog file refused: where, which field, and why.
type CatalogError struct {
	File   string // file name, "" for the embedded menu
	Line   int    // 1-based; 0 when unknown
	Column int    // 1-based; 0 when unknown
	Field  string // path of the field: categories[0].products[2].price
	Reason string
}

// objectPos is one JSON object of the file and its keys, in order.
type objectPos struct {
	path string
	kind string // root, category, product, other
	keys []string
}

// positions maps paths ("categories[0].products[2]" for an object,
// "categories[0].products[2].price" for a key) to byte offsets, so that a
// semantic error can name its line. Only the objects of the schema
// (root, category, product, group, choice) and their keys are recorded:
// the rest (names, lists of allergens, anything unknown) is walked, never
// named, so that what is kept grows with the file, not with its depth.
type positions struct {
	objects map[string]int64
	keys    map[string]int64
	order   []*objectPos
}

// MaxCatalogDepth is how deep a catalog may nest objects and lists. The
// schema's deepest field, an option's name, is 10 levels down (root,
// categories, a category, products, a product, options, a group, choices,
// a choice, its name); deeper is no catalog, and is refused before
// anything else is read.
const MaxCatalogDepth = 16

// checkDepth finds the first '{' or '[' of data nested deeper than
// MaxCatalogDepth, outside strings: its offset, or -1. It reads each byte
// once and keeps nothing; malformed JSON is left to the decoder.
func checkDepth(data []byte) int64 {
	depth, inString, escaped := 0, false, false
	for i, c := range data {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			if depth++; depth > MaxCatalogDepth {
				return int64(i)
			}
		case c == '}' || c == ']':
			depth--
		}
	}
	return -1
}

// scanPositions walks the tokens of data, recording where every object of
// the schema and each of its keys is. It returns the decoder's syntax
// error, if any.
func scanPositions(data []byte) (*positions, error) {
	sc := &scanner{dec: json.NewDecoder(bytes.NewReader(data)),
		pos: &positions{objects: map[string]int64{}, keys: map[string]int64{}}}
	sc.dec.UseNumber()
	if err := sc.value("", "root"); err != nil {
		return nil, err
	}
	if _, err := sc.dec.Token(); err != io.EOF {
		return nil, errTrailing
	}
	return sc.pos, nil
}

// scanner is scanPositions' walk.
type scanner struct {
	dec *json.Decoder
	pos *positions
}

// The schema's objects: the kind of a key's value in an object of a kind
// (categories under the root...), and of a list's elements; any other is
// "other", walked without being recorded.
var (
	childKinds = map[[2]string]string{
		{"root", "categories"}: "categories", {"category", "products"}: "products",
		{"product", "options"}: "groups", {"group", "choices"}: "choices",
	}
	elemKinds = map[string]string{"categories": "category", "products": "product", "groups": "group", "choices": "choice"}
)

// skip walks a value no error names (and all it holds) without recording
// it.
func (sc *scanner) skip() error {
	depth := 0
	for {
		tok, err := sc.dec.Token()
		if err != nil {
			return err
		}
		if d, ok := tok.(json.Delim); ok {
			if d == '{' || d == '[' {
				depth++
			} else {
				depth--
			}
		}
		if depth == 0 {
			return nil
		}
	}
}

// value walks the value at path, of the schema's kind.
func (sc *scanner) value(path, kind string) error {
	if kind == "other" {
		return sc.skip()
	}
	tok, err := sc.dec.Token()
	if err != nil {
		return err
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return nil
	}
	switch d {
	case '{':
		err = sc.object(path, kind)
	case '[':
		err = sc.list(path, kind)
	}
	if err != nil {
		return err
	}
	_, err = sc.dec.Token() // the closing delimiter
	return err
}

// object records an object of kind at path (the offset just after '{': its
// line is the object's) and each of its keys, and walks their values.
func (sc *scanner) object(path, kind string) error {
	obj := &objectPos{path: path, kind: kind}
	sc.pos.objects[path] = sc.dec.InputOffset() - 1
	sc.pos.order = append(sc.pos.order, obj)
	for sc.dec.More() {
		kt, err := sc.dec.Token()
		if err != nil {
			return err
		}
		key, _ := kt.(string)
		kp := key
		if path != "" {
			kp = path + "." + key
		}
		sc.pos.keys[kp] = sc.dec.InputOffset() - 1
		obj.keys = append(obj.keys, key)
		child, ok := childKinds[[2]string{kind, key}]
		if !ok {
			child = "other"
		}
		if err := sc.value(kp, child); err != nil {
			return err
		}
	}
	return nil
}

// list walks the elements of a list of kind at path.
func (sc *scanner) list(path, kind string) error {
	elem, ok := elemKinds[kind]
	if !ok {
		elem = "other"
	}
	for i := 0; sc.dec.More(); i++ {
		if err := sc.value(path+"["+strconv.Itoa(i)+"]", elem); err != nil {
			return err
		}
	}
	return nil
}

var errTrailing = errors.New("content after the catalog")

// syntaxError turns a decoding error into a CatalogError with its line.
func syntaxError(name string, data []byte, err error) error {
	var (
		se *json.SyntaxError
		te *json.UnmarshalTypeError
	)
	switch {
	case errors.Is(err, errTrailing):
		return &CatalogError{File: name, Reason: "invalid JSON: content after the catalog's closing brace"}
	case errors.As(err, &se):
		line, col := lineCol(data, max(se.Offset-1, 0))
		return &CatalogError{File: name, Line: line, Column: col, Reason: "invalid JSON: " + strings.TrimPrefix(se.Error(), "json: ")}
	case errors.As(err, &te):
		line, col := lineCol(data, max(te.Offset-1, 0))
		return &CatalogError{File: name, Line: line, Column: col, Field: te.Field,
			Reason: fmt.Sprintf("expected %s, found %s", typeName(te.Type.Kind().String()), te.Value)}
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		line, col := lineCol(data, int64(len(data)))
		return &CatalogError{File: name, Line: line, Column: col, Reason: "invalid JSON: unexpected end of file"}
	}
	return &CatalogError{File: name, Reason: err.Error()}
}

func typeName(kind string) string {
	switch kind {
	case "int", "int64":
		return "a whole number"
	case "map":
		return `an object {"fr": ..., "en": ..., "es": ...}`
	case "slice":
		return "a list"
	case "bool":
		return "true or false"
	}
	return "a " + kind
}

// lineCol converts a byte offset to a 1-based line and column (in runes).
func lineCol(data []byte, off int64) (line, col int) {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	before := data[:off]
	line = bytes.Count(before, []byte("\n")) + 1
	start := bytes.LastIndexByte(before, '\n') + 1
	col = len([]rune(string(before[start:]))) + 1
	return line, col
}
