package kiosk

import (
	"bufio"
	"bytes"
	"container/list"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"io"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/image/draw"
	_ "golang.org/x/image/webp" // decodes WebP pictures to size them
)

// MediaWidths are the widths a picture is served at when the UI asks for
// one (?w=): a placeholder-sized thumbnail, a tile, a large picture. A
// width between two is served at the next; above the largest, or for a
// picture no wider than asked, the file as it is.
var MediaWidths = []int{160, 320, 640, 1280}

// Limits of sizing, against a picture that would take the kiosk's memory.
//
// A picture is sized for a tile at most 1280 pixels wide (MediaWidths);
// the largest a catalog needs is a phone's photo (4032×3024: 12.2 million
// pixels), so 4096×3072 pixels are decoded at most, a quarter of the
// 40 million allowed before (a 16-bit PNG that size took 320 MiB,
// whatever its file's size). The memory a sizing takes is counted from
// the picture's header before anything is decoded (sizingCost: the
// decoded picture by its format and colour model, and the scaled copies),
// and one sizing may take maxSizingBytes; beyond either bound the picture
// is served as it is. At most maxSizing pictures are sized at once, and
// one picture at one width once at a time (the others wait for it).
const (
	maxSizedPixels = 4096 * 3072
	maxSizingBytes = 64 << 20
	maxSizing      = 2
	sizedCacheMax  = 48 << 20 // bytes of sized pictures kept in memory
	sizedQuality   = 82       // JPEG quality of a sized picture
)

// mediaWidth is the width to serve for a request's w, 0 for the file.
func mediaWidth(raw string) int {
	w, err := strconv.Atoi(raw)
	if err != nil || w <= 0 {
		return 0
	}
	for _, s := range MediaWidths {
		if w <= s {
			return s
		}
	}
	return 0
}

// sizedPicture is a picture scaled down to a width, encoded.
type sizedPicture struct {
	key  string
	data []byte
	kind string // Content-Type
	mod  time.Time
}

// sizedCache keeps the latest sized pictures, least recently used first
// out, within sizedCacheMax bytes, and runs the sizings: one at a time for
// a picture at a width, maxSizing at once in all.
type sizedCache struct {
	mu       sync.Mutex
	order    *list.List // of *sizedPicture, most recent first
	byKey    map[string]*list.Element
	size     int
	inflight map[string]*sizing // by key
	slots    chan struct{}      // one a sizing running
}

// sizing is a picture being sized, which other requests for it wait for.
type sizing struct {
	mod       time.Time
	done      chan struct{} // closed when p and ok are set
	p         *sizedPicture
	ok        bool
	abandoned bool // its request left before it began: another begins it
}

func newSizedCache() *sizedCache {
	return &sizedCache{order: list.New(), byKey: map[string]*list.Element{},
		inflight: map[string]*sizing{}, slots: make(chan struct{}, maxSizing)}
}

// sized returns the picture key of the file of date mod, from memory, or
// sized by size: once, while other requests for the same key wait for it
// (or for ctx to end), and only when fewer than maxSizing others run.
// ok is false when the picture is to be served as it is.
func (c *sizedCache) sized(ctx context.Context, key string, mod time.Time, size func() (*sizedPicture, bool)) (*sizedPicture, bool) {
	var f *sizing
	for f == nil {
		c.mu.Lock()
		if p, ok := c.getLocked(key, mod); ok {
			c.mu.Unlock()
			return p, true
		}
		other, running := c.inflight[key]
		if !running {
			f = &sizing{mod: mod, done: make(chan struct{})}
			c.inflight[key] = f
			c.mu.Unlock()
			break
		}
		c.mu.Unlock()
		select {
		case <-other.done:
		case <-ctx.Done():
			return nil, false
		}
		if !other.abandoned && other.mod.Equal(mod) {
			return other.p, other.ok
		}
	}
	finish := func(p *sizedPicture, ok, abandoned bool) {
		c.mu.Lock()
		delete(c.inflight, key)
		if ok {
			c.putLocked(p)
		}
		f.p, f.ok, f.abandoned = p, ok, abandoned
		c.mu.Unlock()
		close(f.done)
	}
	select {
	case c.slots <- struct{}{}:
	case <-ctx.Done():
		finish(nil, false, true)
		return nil, false
	}
	p, ok := size()
	<-c.slots
	finish(p, ok, false)
	return p, ok
}

func (c *sizedCache) get(key string, mod time.Time) (*sizedPicture, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.getLocked(key, mod)
}

func (c *sizedCache) getLocked(key string, mod time.Time) (*sizedPicture, bool) {
	el, ok := c.byKey[key]
	if !ok {
		return nil, false
	}
	p := el.Value.(*sizedPicture)
	if !p.mod.Equal(mod) { // the file changed since
		c.drop(el)
		return nil, false
	}
	c.order.MoveToFront(el)
	return p, true
}

func (c *sizedCache) put(p *sizedPicture) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.putLocked(p)
}

func (c *sizedCache) putLocked(p *sizedPicture) {
	if el, ok := c.byKey[p.key]; ok {
		c.drop(el)
	}
	if len(p.data) > sizedCacheMax {
		return
	}
	c.byKey[p.key] = c.order.PushFront(p)
	c.size += len(p.data)
	for c.size > sizedCacheMax {
		c.drop(c.order.Back())
	}
}

func (c *sizedCache) drop(el *list.Element) {
	p := c.order.Remove(el).(*sizedPicture)
	delete(c.byKey, p.key)
	c.size -= len(p.data)
}

// sizePicture scales a JPEG, PNG or WebP picture down to width pixels
// wide, keeping its proportions: PNG when it has transparency, else JPEG.
// ok is false when the picture is to be served as it is: an SVG, a
// picture no wider than asked, one too large to size (its header says so
// before anything is decoded), or one that does not decode (the browser
// then says what it makes of it).
func sizePicture(name string, r io.ReadSeeker, width int) (data []byte, kind string, ok bool) {
	switch strings.ToLower(path.Ext(name)) {
	case ".jpg", ".jpeg", ".png", ".webp":
	default:
		return nil, "", false
	}
	cfg, format, err := image.DecodeConfig(r)
	if err != nil || cfg.Width <= width || cfg.Height <= 0 || int64(cfg.Width)*int64(cfg.Height) > maxSizedPixels {
		return nil, "", false
	}
	if _, err := r.Seek(0, io.SeekStart); err != nil {
		return nil, "", false
	}
	if sizingCost(cfg, format, r, width) > maxSizingBytes {
		return nil, "", false
	}
	if _, err := r.Seek(0, io.SeekStart); err != nil {
		return nil, "", false
	}
	src, _, err := image.Decode(r)
	if err != nil {
		return nil, "", false
	}
	b := src.Bounds()
	dst := shrink(src, width, max(1, b.Dy()*width/b.Dx()))
	var buf bytes.Buffer
	if opaque(dst) {
		err, kind = jpeg.Encode(&buf, dst, &jpeg.Options{Quality: sizedQuality}), "image/jpeg"
	} else {
		err, kind = png.Encode(&buf, dst), "image/png"
	}
	if err != nil {
		return nil, "", false
	}
	return buf.Bytes(), kind, true
}

// shrink scales src down to w×h: halved (each pixel the mean of four)
// while that stays at least the size asked, then bilinear from less than
// twice it. A kernel scaler (CatmullRom) keeps w × the source's height ×
// 32 bytes of sums (125 MB for a phone's photo at 1280 pixels): this keeps
// only the pictures it makes, a third of the source's pixels at most.
func shrink(src image.Image, w, h int) *image.NRGBA {
	for b := src.Bounds(); b.Dx()/2 >= w && b.Dy()/2 >= h; b = src.Bounds() {
		half := image.NewNRGBA(image.Rect(0, 0, b.Dx()/2, b.Dy()/2))
		draw.ApproxBiLinear.Scale(half, half.Bounds(), src, b, draw.Src, nil)
		src = half
	}
	dst := image.NewNRGBA(image.Rect(0, 0, w, h))
	draw.ApproxBiLinear.Scale(dst, dst.Bounds(), src, src.Bounds(), draw.Src, nil)
	return dst
}

// sizingCost is the memory sizing a picture to width takes, from its
// header: the picture decoded (its bytes a pixel by colour model; a
// progressive JPEG also keeps 4 bytes a pixel for each of its colour
// components, an interlaced PNG its passes), the halvings (4/3 of a byte
// a pixel) and the sized picture. r is the file, at its start.
func sizingCost(cfg image.Config, format string, r io.Reader, width int) int64 {
	px := int64(cfg.Width) * int64(cfg.Height)
	per := int64(8) // a colour model not listed: the widest
	switch m := cfg.ColorModel; m {
	case color.GrayModel, color.AlphaModel:
		per = 1
	case color.Gray16Model, color.Alpha16Model:
		per = 2
	case color.YCbCrModel:
		per = 3 // 4:4:4; subsampled takes less
	case color.RGBAModel, color.NRGBAModel, color.CMYKModel, color.NYCbCrAModel:
		per = 4
	case color.RGBA64Model, color.NRGBA64Model:
		per = 8
	default:
		if _, ok := m.(color.Palette); ok {
			per = 1
		}
	}
	switch format {
	case "jpeg":
		if progressive, ok := jpegProgressive(r); !ok || progressive {
			per += 12
		}
	case "png":
		if interlaced, ok := pngInterlaced(r); !ok || interlaced {
			per *= 2
		}
	}
	height := max(1, int64(cfg.Height)*int64(width)/int64(cfg.Width))
	return px*per + px*4/3 + int64(width)*height*4
}

// pngInterlaced reads a PNG's header: whether its picture is interlaced
// (Adam7); ok is false when the header cannot be read.
func pngInterlaced(r io.Reader) (interlaced, ok bool) {
	var h [29]byte // signature, IHDR's length and type, its 13 bytes
	if _, err := io.ReadFull(r, h[:]); err != nil || string(h[12:16]) != "IHDR" {
		return false, false
	}
	return h[28] != 0, true
}

// jpegProgressive reads a JPEG's markers up to its frame header: whether
// it is progressive (its decoder then keeps every coefficient); ok is
// false when no frame header was found among the first markers.
func jpegProgressive(r io.Reader) (progressive, ok bool) {
	br := bufio.NewReader(r)
	var soi [2]byte
	if _, err := io.ReadFull(br, soi[:]); err != nil || soi != [2]byte{0xff, 0xd8} {
		return false, false
	}
	for range 64 {
		var m [4]byte
		if _, err := io.ReadFull(br, m[:2]); err != nil || m[0] != 0xff {
			return false, false
		}
		for m[1] == 0xff { // fill bytes
			b, err := br.ReadByte()
			if err != nil {
				return false, false
			}
			m[1] = b
		}
		switch {
		case m[1] == 0xc0 || m[1] == 0xc1: // baseline, extended sequential
			return false, true
		case m[1] >= 0xc2 && m[1] <= 0xcf && m[1] != 0xc4 && m[1] != 0xc8 && m[1] != 0xcc:
			return true, true // progressive, or a frame the decoder refuses
		case m[1] == 0x01 || (m[1] >= 0xd0 && m[1] <= 0xd8):
			continue // markers without a length
		}
		if _, err := io.ReadFull(br, m[2:]); err != nil {
			return false, false
		}
		n := int(m[2])<<8 | int(m[3])
		if n < 2 {
			return false, false
		}
		if _, err := br.Discard(n - 2); err != nil {
			return false, false
		}
	}
	return false, false
}

func opaque(m *image.NRGBA) bool {
	for i := 3; i < len(m.Pix); i += 4 {
		if m.Pix[i] != 0xff {
			return false
		}
	}
	return true
}

// sizedKey names a sized picture in the cache.
func sizedKey(name string, width int) string { return fmt.Sprintf("%d:%s", width, name) }
