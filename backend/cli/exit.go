package cli

import (
	"fmt"
	"io"

	"github.com/comptoir-pos/comptoir/backend/fault"
)

// failed prints a command's failure on stderr and returns its exit code:
// the one mapping of the domain's errors to the command line. 2: the
// request cannot be done as asked (EINVALID; nothing was done), as for a
// command line that does not parse; 1: anything else that failed. The
// commands that move money have their own 3 (outcome unknown) and 4
// (approved for something else than was asked), from the attempt.
func failed(stderr io.Writer, cmd string, err error) int {
	fmt.Fprintf(stderr, "comptoir %s: %v\n", cmd, err)
	if fault.CodeOf(err) == fault.EINVALID {
		return 2
	}
	return 1
}
