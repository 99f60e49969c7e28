package kiosk

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strings"
)

// Media serves the catalog's pictures under MediaPrefix, for the desktop
// window's asset server and browser mode alike. A picture that is not
// there is a 404 (the UI then draws its placeholder); the browser keeps
// pictures for an hour and revalidates them by date. With ?w= a JPEG, PNG
// or WebP picture wider than asked is scaled down to one of MediaWidths
// (kept in memory, so a tile costs its size, not the photo's, once).
func (s *Service) Media() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		name, ok := strings.CutPrefix(r.URL.Path, MediaPrefix)
		s.mu.Lock()
		c := s.catalog
		s.mu.Unlock()
		if !ok || c == nil {
			http.NotFound(w, r)
			return
		}
		f, err := c.Media(name)
		if err != nil {
			http.NotFound(w, r)
			return
		}
		defer f.Close()
		st, err := f.Stat()
		rs, seekable := f.(io.ReadSeeker)
		if err != nil || st.IsDir() || !seekable {
			http.NotFound(w, r)
			return
		}
		h := w.Header()
		h.Set("Cache-Control", "public, max-age=3600")
		h.Set("X-Content-Type-Options", "nosniff")
		if strings.EqualFold(path.Ext(name), ".svg") {
			// An SVG is a document: opened alone it runs nothing.
			h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; sandbox")
		}
		mod := st.ModTime()
		if mod.IsZero() {
			mod = s.started // embedded files have no date
		}
		if width := mediaWidth(r.URL.Query().Get("w")); width > 0 {
			key := sizedKey(name, width)
			p, ok := s.sized.sized(r.Context(), key, mod, func() (*sizedPicture, bool) {
				data, kind, sized := sizePicture(name, rs, width)
				return &sizedPicture{key: key, data: data, kind: kind, mod: mod}, sized
			})
			if ok {
				h.Set("Content-Type", p.kind)
				http.ServeContent(w, r, "", mod, bytes.NewReader(p.data))
				return
			}
			if _, err := rs.Seek(0, io.SeekStart); err != nil {
				http.NotFound(w, r)
				return
			}
		}
		http.ServeContent(w, r, path.Base(name), mod, rs)
	})
}

// MediaPrefix is the URL path under which the UI loads the catalog's
// pictures (ProductView.Image).
const MediaPrefix = "/media/"

// imageTypes are the picture formats a catalog may use.
var imageTypes = []string{".jpg", ".jpeg", ".png", ".webp", ".svg"}

// checkImage says what is wrong with a picture's path in the catalog, "".
func checkImage(p string) string {
	switch {
	case p == "":
		return ""
	case strings.Contains(p, "://") || strings.HasPrefix(p, "/") || strings.Contains(p, `\`):
		return fmt.Sprintf("%q must be a file beside catalog.json, such as images/croissant.jpg (no URL, no absolute path)", p)
	case !fs.ValidPath(p) || path.Clean(p) != p:
		return fmt.Sprintf("%q is not a clean relative path (no .., no //)", p)
	case !slices.Contains(imageTypes, strings.ToLower(path.Ext(p))):
		return fmt.Sprintf("%q: a picture is JPEG, PNG, WebP or SVG", p)
	}
	return ""
}

// imageURL is the URL the UI loads a catalog picture from.
func imageURL(p string) string {
	if p == "" {
		return ""
	}
	parts := strings.Split(p, "/")
	for i, s := range parts {
		parts[i] = url.PathEscape(s)
	}
	return MediaPrefix + strings.Join(parts, "/")
}

// Media opens a picture of the catalog by its path (the URL path after
// MediaPrefix): only a picture type, never outside the catalog's folder.
func (c *Catalog) Media(name string) (fs.File, error) {
	if c.media == nil || checkImage(name) != "" || name == "" {
		return nil, fs.ErrNotExist
	}
	return c.media.Open(name)
}
