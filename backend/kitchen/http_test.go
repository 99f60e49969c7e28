package kitchen

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/comptoir-pos/comptoir/backend/internal/testenv"
)

// A bump is a POST of application/json, like browser mode's other calls:
// a plain HTML form on any page (text/plain, a form's encodings) cannot
// send one, and a cross-origin script cannot without a preflight that is
// never granted. Nothing is bumped by a request refused.
func TestBumpIsJSONOnly(t *testing.T) {
	r := newRig(t)
	k := r.kitchen()
	pay(t, r.db, "o1", "A1")
	testenv.Eventually(t, "the ticket", func() bool { return len(k.Orders("").Orders) == 1 })
	h := Handler(k)
	bump := `{"key":"A/o1","line":-1,"action":"ready","station":"grill"}`
	post := func(contentType string) int {
		req := httptest.NewRequest(http.MethodPost, "/api/kitchen/bump", strings.NewReader(bump))
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		return w.Code
	}
	for _, ct := range []string{"", "text/plain", "text/plain; charset=utf-8", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/jsonp"} {
		if code := post(ct); code != http.StatusUnsupportedMediaType {
			t.Errorf("a bump sent as %q: %d, want 415", ct, code)
		}
	}
	if o := k.Orders("grill"); len(o.Orders) != 1 || len(o.Recent) != 0 {
		t.Fatalf("bumped by a refused request: %+v", o)
	}
	if code := post("application/json; charset=utf-8"); code != http.StatusOK {
		t.Fatalf("a bump as application/json: %d", code)
	}
	if o := k.Orders("grill"); len(o.Orders) != 0 || len(o.Recent) != 1 {
		t.Fatalf("not bumped: %+v", o)
	}
}
