package cli

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/staff"
)

// The command line maps a failure once: a request that cannot be done as
// asked exits 2, like a command line that does not parse, whichever
// layer said so; anything else exits 1; the message is on stderr.
func TestFailedMapsTheCodeToTheExitCode(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want int
	}{
		{&staff.Error{Code: staff.EINVALID, Message: "Choose a terminal by its name."}, 2},
		{fmt.Errorf("open: %w", journal.Errorf(journal.EINVALID, "data directory %q", "x")), 2},
		{journal.Errorf(journal.ELOCKED, "held by pid 7"), 1},
		{&staff.Error{Code: staff.EPINDAMAGED, Message: "The stored PIN cannot be checked."}, 1},
		{errors.New("no route to host"), 1},
	} {
		var stderr bytes.Buffer
		if got := failed(&stderr, "pin", tt.err); got != tt.want {
			t.Errorf("failed(%v) = %d, want %d", tt.err, got, tt.want)
		}
		if !strings.HasPrefix(stderr.String(), "comptoir pin: ") || !strings.Contains(stderr.String(), tt.err.Error()) {
			t.Errorf("stderr %q for %v", stderr.String(), tt.err)
		}
	}
}
