package kiosk

import (
	"bytes"
	"container/list"
	"fmt"
	"image"
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
const (
	maxSizedPixels = 40_000_000 // the largest picture decoded to be sized
	sizedCacheMax  = 48 << 20   // bytes of sized pictures kept in memory
	sizedQuality   = 82         // JPEG quality of a sized picture
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
// out, within sizedCacheMax bytes.
type sizedCache struct {
	mu    sync.Mutex
	order *list.List // of *sizedPicture, most recent first
	byKey map[string]*list.Element
	size  int
}

func newSizedCache() *sizedCache {
	return &sizedCache{order: list.New(), byKey: map[string]*list.Element{}}
}

func (c *sizedCache) get(key string, mod time.Time) (*sizedPicture, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
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
// picture no wider than asked, one too large to decode, or one that does
// not decode (the browser then says what it makes of it).
func sizePicture(name string, r io.ReadSeeker, width int) (data []byte, kind string, ok bool) {
	switch strings.ToLower(path.Ext(name)) {
	case ".jpg", ".jpeg", ".png", ".webp":
	default:
		return nil, "", false
	}
	cfg, _, err := image.DecodeConfig(r)
	if err != nil || cfg.Width <= width || cfg.Width*cfg.Height > maxSizedPixels {
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
	height := max(1, b.Dy()*width/b.Dx())
	dst := image.NewNRGBA(image.Rect(0, 0, width, height))
	draw.CatmullRom.Scale(dst, dst.Bounds(), src, b, draw.Src, nil)
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
