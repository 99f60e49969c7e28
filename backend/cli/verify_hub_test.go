package cli

import (
	"bytes"
	"strings"
	"testing"
)

// `comptoir verify --hub` takes exactly what names one archive at head
// office and the restaurant's key: anything else is refused before any
// request, with what is missing.
func TestVerifyAtHubNeedsItsFlags(t *testing.T) {
	const key = "MCowBQYDK2VwAyEAGb9ECWmEzf6FQbrBZ9w7lshQhqowtrbLDFw4rXAxZuE="
	ok := []string{"verify", "--hub", "http://127.0.0.1:1", "--restaurant", "r1", "--kiosk", "A", "--period", "2026-10"}
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"no key", ok, "needs --key"},
		{"no hub", []string{"verify", "--restaurant", "r1", "--kiosk", "A", "--period", "2026-10", "--key", key}, "go with --hub"},
		{"a bad month", append(append([]string{}, ok[:7]...), "--period", "2026-1", "--key", key), "the month, yyyy-MM"},
		{"no kiosk", append([]string{"verify", "--hub", "http://127.0.0.1:1", "--restaurant", "r1", "--period", "2026-10"}, "--key", key), "--restaurant and --kiosk"},
		{"not a page", append(append([]string{"verify", "--hub", "nats://127.0.0.1:1"}, ok[3:]...), "--key", key), "head office's page"},
		{"a file too", append(append(append([]string{}, ok...), "--key", key), "archive.jsonl"), "no archive file"},
	} {
		var out, errOut bytes.Buffer
		if code := run(c.args, &out, &errOut); code != 2 || !strings.Contains(errOut.String(), c.want) {
			t.Errorf("%s: exit %d, %q", c.name, code, errOut.String())
		}
	}
	// Head office unreachable: exit 1, said.
	var out, errOut bytes.Buffer
	if code := run(append(append([]string{}, ok...), "--key", key), &out, &errOut); code != 1 || !strings.Contains(errOut.String(), "head office") {
		t.Errorf("head office down: exit %d, %q", code, errOut.String())
	}
}
