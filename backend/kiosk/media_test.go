package kiosk

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/comptoir-pos/comptoir/backend/journal"
)

func get(t *testing.T, h http.Handler, path string) *httptest.ResponseRecorder {
	t.Helper()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
	return w
}

func TestTheDemoMenuHasAPictureForEveryProduct(t *testing.T) {
	e := newEnv(t)
	h := e.s.Media()
	for _, cat := range e.s.Catalog().Categories {
		if w := get(t, h, cat.Image); !strings.HasPrefix(cat.Image, MediaPrefix) || w.Code != http.StatusOK || !strings.Contains(w.Body.String(), "<svg") {
			t.Errorf("category %s: image %q: %d", cat.ID, cat.Image, w.Code)
		}
		for _, p := range cat.Products {
			if !strings.HasPrefix(p.Image, MediaPrefix) {
				t.Errorf("%s: image %q", p.ID, p.Image)
				continue
			}
			w := get(t, h, p.Image)
			if w.Code != http.StatusOK || w.Header().Get("Content-Type") != "image/svg+xml" || !strings.Contains(w.Body.String(), "<svg") {
				t.Errorf("%s: %d %s", p.Image, w.Code, w.Header().Get("Content-Type"))
			}
			if cc, csp := w.Header().Get("Cache-Control"), w.Header().Get("Content-Security-Policy"); !strings.Contains(cc, "max-age") || !strings.Contains(csp, "sandbox") {
				t.Errorf("%s: cache %q, policy %q", p.Image, cc, csp)
			}
		}
	}
}

func TestPicturesComeFromTheCatalogFolderOnly(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\n fake")
	e := newEnv(t, withCatalog(`{"categories": [{"id": "c", "name": {"fr": "C"}, "products": [
	  {"id": "p", "name": {"fr": "P"}, "price": 100, "vatRate": 550, "image": "images/p one.png"},
	  {"id": "q", "name": {"fr": "Q"}, "price": 100, "vatRate": 550, "image": "images/missing.jpg"}]}]}`),
		withSetup(func(dir string, _ *journal.DB) {
			if err := os.MkdirAll(filepath.Join(dir, "images"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "images", "p one.png"), png, 0o644); err != nil {
				t.Fatal(err)
			}
		}))
	p, _ := e.s.catalog.Product("p")
	if p.Image != "/media/images/p%20one.png" {
		t.Fatalf("image URL %q", p.Image)
	}
	h := e.s.Media()
	if w := get(t, h, p.Image); w.Code != http.StatusOK || w.Body.String() != string(png) || w.Header().Get("Content-Type") != "image/png" {
		t.Fatalf("the picture: %d %q", w.Code, w.Header().Get("Content-Type"))
	}
	for _, path := range []string{
		"/media/images/missing.jpg", // named, not there: the UI draws its placeholder
		"/media/" + CatalogFile,     // not a picture
		"/media/comptoir.db",
		"/media/../images/p%20one.png",
		"/media/images/../../etc/passwd.png",
		"/media/",
	} {
		if w := get(t, h, path); w.Code != http.StatusNotFound {
			t.Errorf("%s: %d, want 404", path, w.Code)
		}
	}
}

func TestACatalogPictureIsAFileBesideIt(t *testing.T) {
	for _, bad := range []string{"https://example.com/x.jpg", "/srv/x.jpg", "../x.jpg", "images//x.jpg", "x.gif", `images\x.jpg`} {
		_, err := ParseCatalog("catalog.json", []byte(`{"categories": [{"id": "c", "name": {"fr": "C"}, "products": [
		  {"id": "p", "name": {"fr": "P"}, "price": 100, "vatRate": 550, "image": "`+strings.ReplaceAll(bad, `\`, `\\`)+`"}]}]}`))
		if err == nil || !strings.Contains(err.Error(), "image") {
			t.Errorf("%q: %v", bad, err)
		}
		_, err = ParseCatalog("catalog.json", []byte(`{"categories": [{"id": "c", "name": {"fr": "C"}, "image": "`+strings.ReplaceAll(bad, `\`, `\\`)+`", "products": [
		  {"id": "p", "name": {"fr": "P"}, "price": 100, "vatRate": 550}]}]}`))
		if err == nil || !strings.Contains(err.Error(), "categories[0]") || !strings.Contains(err.Error(), "image") {
			t.Errorf("category image %q: %v", bad, err)
		}
	}
}
