package kiosk

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/internal/testenv"
	"github.com/comptoir-pos/comptoir/backend/journal"
)

// picture encodes a w×h picture: opaque as a JPEG, or with a transparent
// corner as a PNG.
func picture(t *testing.T, w, h int, transparent bool) []byte {
	t.Helper()
	m := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			m.Set(x, y, color.NRGBA{uint8(x), uint8(y), 120, 255})
		}
	}
	var buf bytes.Buffer
	var err error
	if transparent {
		m.Set(0, 0, color.NRGBA{})
		err = png.Encode(&buf, m)
	} else {
		err = jpeg.Encode(&buf, m, nil)
	}
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestPicturesAreServedAtTheWidthAsked(t *testing.T) {
	files := map[string][]byte{
		"photo.jpg": picture(t, 2000, 1000, false),
		"logo.png":  picture(t, 900, 300, true),
		"small.png": picture(t, 100, 100, true),
		"fake.png":  []byte("\x89PNG\r\n\x1a\n not really"),
	}
	var dir string
	e := newEnv(t, withCatalog(`{"categories": [{"id": "c", "name": {"fr": "C"}, "products": [
	  {"id": "p", "name": {"fr": "P"}, "price": 100, "vatRate": 550, "image": "photo.jpg"}]}]}`),
		withSetup(func(d string, _ *journal.DB) {
			dir = d
			for name, b := range files {
				if err := os.WriteFile(filepath.Join(d, name), b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}))
	h := e.s.Media()
	size := func(path string, wantKind string) image.Config {
		t.Helper()
		w := get(t, h, path)
		if w.Code != http.StatusOK || w.Header().Get("Content-Type") != wantKind {
			t.Fatalf("%s: %d %s", path, w.Code, w.Header().Get("Content-Type"))
		}
		cfg, _, err := image.DecodeConfig(bytes.NewReader(w.Body.Bytes()))
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		return cfg
	}
	// 500 is served at the next width, 640, in proportion.
	if c := size("/media/photo.jpg?w=500", "image/jpeg"); c.Width != 640 || c.Height != 320 {
		t.Fatalf("sized photo %dx%d", c.Width, c.Height)
	}
	// A picture with transparency stays a PNG.
	if c := size("/media/logo.png?w=300", "image/png"); c.Width != 320 || c.Height != 106 {
		t.Fatalf("sized logo %dx%d", c.Width, c.Height)
	}
	// The file as it is: no width, a width above the largest, a picture no
	// wider than asked, one that does not decode.
	for _, path := range []string{"/media/photo.jpg", "/media/photo.jpg?w=5000", "/media/photo.jpg?w=x", "/media/small.png?w=160", "/media/fake.png?w=160"} {
		w := get(t, h, path)
		name := path[len("/media/"):]
		if i := bytes.IndexByte([]byte(name), '?'); i >= 0 {
			name = name[:i]
		}
		if w.Code != http.StatusOK || !bytes.Equal(w.Body.Bytes(), files[name]) {
			t.Errorf("%s: %d, %d bytes, want the file's %d", path, w.Code, w.Body.Len(), len(files[name]))
		}
	}
	// Sized once, then from memory, until the file changes.
	if len(e.s.sized.byKey) != 2 {
		t.Fatalf("%d sized pictures kept, want 2", len(e.s.sized.byKey))
	}
	first := get(t, h, "/media/photo.jpg?w=640").Body.Bytes()
	if again := get(t, h, "/media/photo.jpg?w=640").Body.Bytes(); !bytes.Equal(first, again) || len(e.s.sized.byKey) != 2 {
		t.Fatal("the sized picture was not kept")
	}
	if err := os.WriteFile(filepath.Join(dir, "photo.jpg"), picture(t, 1000, 1000, false), 0o644); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Minute)
	if err := os.Chtimes(filepath.Join(dir, "photo.jpg"), later, later); err != nil {
		t.Fatal(err)
	}
	if c := size("/media/photo.jpg?w=640", "image/jpeg"); c.Width != 640 || c.Height != 640 {
		t.Fatalf("a changed picture served from memory: %dx%d", c.Width, c.Height)
	}
}

func TestTheSizedCacheKeepsWithinItsBytes(t *testing.T) {
	c := newSizedCache()
	chunk := make([]byte, sizedCacheMax/3+1)
	now := time.Now()
	for _, k := range []string{"a", "b", "c"} {
		c.put(&sizedPicture{key: k, data: chunk, mod: now})
	}
	if _, ok := c.get("a", now); ok || c.size > sizedCacheMax || len(c.byKey) != 2 {
		t.Fatalf("size %d, %d kept, the oldest kept", c.size, len(c.byKey))
	}
	if _, ok := c.get("c", now); !ok {
		t.Fatal("the newest was dropped")
	}
}

// withHeader is a small picture (a PNG or a JPEG) whose header says it is
// w×h: what decoding it would cost is in its header, not in its bytes.
func withHeader(t *testing.T, format string, w, h int, deep, progressive bool) []byte {
	t.Helper()
	var buf bytes.Buffer
	switch format {
	case "png":
		var m image.Image = image.NewNRGBA(image.Rect(0, 0, 1, 1))
		if deep {
			m = image.NewNRGBA64(image.Rect(0, 0, 1, 1))
		}
		if err := png.Encode(&buf, m); err != nil {
			t.Fatal(err)
		}
		b := buf.Bytes()
		binary.BigEndian.PutUint32(b[16:], uint32(w))
		binary.BigEndian.PutUint32(b[20:], uint32(h))
		binary.BigEndian.PutUint32(b[29:], crc32.ChecksumIEEE(b[12:29]))
		return b
	default:
		if err := jpeg.Encode(&buf, image.NewRGBA(image.Rect(0, 0, 8, 8)), nil); err != nil {
			t.Fatal(err)
		}
		b := buf.Bytes()
		i := bytes.Index(b, []byte{0xff, 0xc0})
		if progressive {
			b[i+1] = 0xc2
		}
		binary.BigEndian.PutUint16(b[i+5:], uint16(h))
		binary.BigEndian.PutUint16(b[i+7:], uint16(w))
		return b
	}
}

// A picture is sized only when what decoding and scaling it take, read
// from its header, is within bounds: a few hundred bytes saying 6000×6600
// pixels of 16 bits (320 MiB decoded), or 12 million pixels of 16 bits, or
// a progressive JPEG of 12 million pixels (whose decoder keeps every
// coefficient), are served as they are, nothing decoded. A phone's photo
// is sized at every width.
func TestAPictureTooCostlyToSizeIsNotDecoded(t *testing.T) {
	for _, c := range []struct {
		name, file string
		w, h       int
		data       []byte
	}{
		{"a 16-bit PNG of 40 million pixels", "p.png", 6000, 6600, withHeader(t, "png", 6000, 6600, true, false)},
		{"a 16-bit PNG of 12 million pixels", "p.png", 4000, 3000, withHeader(t, "png", 4000, 3000, true, false)},
		{"a PNG past the pixels a tile needs", "p.png", 5000, 4000, withHeader(t, "png", 5000, 4000, false, false)},
		{"a progressive JPEG of 12 million pixels", "p.jpg", 4000, 3000, withHeader(t, "jpeg", 4000, 3000, false, true)},
	} {
		if cfg, _, err := image.DecodeConfig(bytes.NewReader(c.data)); err != nil || cfg.Width != c.w || cfg.Height != c.h {
			t.Fatalf("%s: its header reads %+v, %v", c.name, cfg, err)
		}
		var ok bool
		n := allocated(func() { _, _, ok = sizePicture(c.file, bytes.NewReader(c.data), 160) })
		if ok || n > 1<<20 {
			t.Errorf("%s (%d bytes): sized %v, %d KiB allocated", c.name, len(c.data), ok, n>>10)
		}
	}
	photo := image.Config{ColorModel: color.YCbCrModel, Width: 4032, Height: 3024}
	for _, w := range MediaWidths {
		if cost := sizingCost(photo, "jpeg", bytes.NewReader(withHeader(t, "jpeg", 4032, 3024, false, false)), w); cost > maxSizingBytes {
			t.Errorf("a phone's photo at %d pixels: %d MiB, over the bound", w, cost>>20)
		}
	}
	if cost := sizingCost(photo, "jpeg", bytes.NewReader(withHeader(t, "jpeg", 4032, 3024, false, true)), 160); cost <= maxSizingBytes {
		t.Errorf("a progressive photo the size of a phone's: %d MiB, within the bound", cost>>20)
	}
}

// One picture at one width is sized once at a time: the other requests
// for it wait and take the same result (or leave when their request
// does); and at most maxSizing pictures are sized at once.
func TestAPictureIsSizedOnceAtATime(t *testing.T) {
	c := newSizedCache()
	now := time.Now()
	var calls, running, most atomic.Int32
	release := make(chan struct{})
	size := func(key string) func() (*sizedPicture, bool) {
		return func() (*sizedPicture, bool) {
			calls.Add(1)
			n := running.Add(1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
			<-release
			running.Add(-1)
			return &sizedPicture{key: key, data: []byte(key), mod: now}, true
		}
	}
	var wg sync.WaitGroup
	same := make([]*sizedPicture, 8)
	for i := range same {
		wg.Go(func() { same[i], _ = c.sized(t.Context(), "640:a.jpg", now, size("640:a.jpg")) })
	}
	for i := range 4 {
		key := fmt.Sprintf("640:%d.jpg", i)
		wg.Go(func() { c.sized(t.Context(), key, now, size(key)) })
	}
	testenv.Eventually(t, "sizings under way", func() bool { return running.Load() >= maxSizing })
	// A request that leaves does not wait for the sizing.
	gone, cancel := context.WithCancel(t.Context())
	cancel()
	if p, ok := c.sized(gone, "640:a.jpg", now, size("640:a.jpg")); ok || p != nil {
		t.Fatal("a request gone still got a picture")
	}
	close(release)
	wg.Wait()
	if n := calls.Load(); n != 5 {
		t.Fatalf("%d sizings for 5 pictures", n)
	}
	if m := most.Load(); m > maxSizing {
		t.Fatalf("%d sizings at once, at most %d", m, maxSizing)
	}
	for _, p := range same {
		if p == nil || p != same[0] {
			t.Fatalf("the requests for one picture got %v", same)
		}
	}
	if p, ok := c.get("640:a.jpg", now); !ok || p != same[0] {
		t.Fatal("the sized picture was not kept")
	}
}

// A sizing whose request left before it could begin is begun by the next
// request for it.
func TestASizingLeftBeforeItBeganIsTakenOver(t *testing.T) {
	c := newSizedCache()
	now := time.Now()
	release := make(chan struct{})
	for range maxSizing {
		c.slots <- struct{}{} // every slot taken
	}
	first, leave := context.WithCancel(t.Context())
	done := make(chan bool)
	go func() { _, ok := c.sized(first, "k", now, nil); done <- ok }()
	testenv.Eventually(t, "the first request waits for a slot", func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.inflight["k"] != nil
	})
	second := make(chan bool)
	go func() {
		_, ok := c.sized(t.Context(), "k", now, func() (*sizedPicture, bool) {
			return &sizedPicture{key: "k", mod: now}, true
		})
		second <- ok
	}()
	leave()
	if <-done {
		t.Fatal("the request that left got a picture")
	}
	go func() { <-release; <-c.slots }()
	close(release)
	if !<-second {
		t.Fatal("the second request did not size the picture")
	}
}
