package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"

	"github.com/comptoir-pos/comptoir/backend/journal"
)

// cmdSettings reads and writes the settings kept in the journal. Values are
// JSON; the kiosk checks each when it loads it and falls back to the default,
// with a warning, when one does not fit.
func cmdSettings(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var common commonFlags
	fs := newFlagSet("settings", stderr, &common)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	rest := fs.Args()
	usageErr := func() int {
		fmt.Fprintln(stderr, "usage: comptoir settings [list | get KEY | set KEY JSON]")
		return 2
	}
	if len(rest) == 0 {
		rest = []string{"list"}
	}
	dir, err := common.resolveDataDir()
	if err != nil {
		fmt.Fprintln(stderr, "comptoir settings:", err)
		return 1
	}
	db, err := journal.Open(ctx, dir)
	if err != nil {
		fmt.Fprintln(stderr, "comptoir settings:", err)
		return 1
	}
	defer db.Close()
	switch {
	case rest[0] == "list" && len(rest) == 1:
		all, err := db.Settings(ctx)
		if err != nil {
			fmt.Fprintln(stderr, "comptoir settings:", err)
			return 1
		}
		// A damaged value is shown as a string, and said: the list must
		// still print so that the value can be seen and set again.
		keys := make([]string, 0, len(all))
		for k := range all {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			all[k] = redactSetting(k, all[k])
			if !json.Valid(all[k]) {
				fmt.Fprintf(stderr, "comptoir settings: %s is not valid JSON (shown as a string; the default applies until it is set again)\n", k)
				all[k], _ = json.Marshal(string(all[k]))
			}
		}
		printJSON(stdout, all)
	case rest[0] == "get" && len(rest) == 2:
		v, ok, err := db.Setting(ctx, rest[1])
		if err != nil {
			fmt.Fprintln(stderr, "comptoir settings:", err)
			return 1
		}
		if !ok {
			fmt.Fprintf(stderr, "comptoir settings: %s is not set (the default applies)\n", rest[1])
			return 1
		}
		fmt.Fprintln(stdout, string(redactSetting(rest[1], v)))
	case rest[0] == "set" && len(rest) == 3:
		if !json.Valid([]byte(rest[2])) {
			fmt.Fprintf(stderr, "comptoir settings: %s is not JSON (a string needs quotes: '\"fr\"')\n", rest[2])
			return 2
		}
		if err := db.SetSetting(ctx, rest[1], json.RawMessage(rest[2])); err != nil {
			fmt.Fprintln(stderr, "comptoir settings:", err)
			return 1
		}
	default:
		return usageErr()
	}
	return 0
}
