package kiosk

import (
	"bytes"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

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
