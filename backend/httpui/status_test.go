package httpui

import (
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/comptoir-pos/comptoir/backend/fault"
	"github.com/comptoir-pos/comptoir/backend/journal"
)

// A failure's HTTP status follows its code, wherever it was wrapped: the
// request's fault is 4xx, the machine's 5xx, and a disk that cannot take
// the write is 503, not a bare 500.
func TestStatusOfFollowsTheCode(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want int
	}{
		{&fault.ArgError{Msg: "no such call"}, http.StatusBadRequest},
		{journal.Errorf(journal.EINVALID, "bad"), http.StatusBadRequest},
		{fmt.Errorf("kiosk: record the order: %w", journal.Errorf(journal.ECONFLICT, "taken")), http.StatusConflict},
		{journal.Errorf(journal.ENOTFOUND, "no order"), http.StatusNotFound},
		{fmt.Errorf("kiosk: record the order: %w", journal.Errorf(journal.EFULL, "disk")), http.StatusServiceUnavailable},
		{journal.Errorf(journal.EREADONLY, "ro"), http.StatusServiceUnavailable},
		{journal.Errorf(journal.ELOCKED, "held"), http.StatusServiceUnavailable},
		{fault.Errorf(fault.EINTERNAL, "corrupt"), http.StatusInternalServerError},
		{errors.New("boom"), http.StatusInternalServerError},
	} {
		if got := statusOf(tt.err); got != tt.want {
			t.Errorf("statusOf(%v) = %d, want %d", tt.err, got, tt.want)
		}
	}
}
