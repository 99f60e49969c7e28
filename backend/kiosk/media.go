package kiosk

import (
	"bytes"
	"io"
	"net/http"
	"path"
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
			p, ok := s.sized.get(key, mod)
			if !ok {
				if data, kind, sized := sizePicture(name, rs, width); sized {
					p = &sizedPicture{key: key, data: data, kind: kind, mod: mod}
					s.sized.put(p)
				} else if _, err := rs.Seek(0, io.SeekStart); err != nil {
					http.NotFound(w, r)
					return
				}
			}
			if p != nil {
				h.Set("Content-Type", p.kind)
				http.ServeContent(w, r, "", mod, bytes.NewReader(p.data))
				return
			}
		}
		http.ServeContent(w, r, path.Base(name), mod, rs)
	})
}
