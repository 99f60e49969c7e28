package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/receipt"
	"github.com/comptoir-pos/comptoir/backend/settings"
)

const settingsUsage = "usage: comptoir settings [list | get KEY | set KEY JSON | set-secret KEY (the value on standard input)]"

// cmdSettings reads and writes the settings kept in the journal. Values are
// JSON; the kiosk checks each when it loads it and falls back to the default,
// with a warning, when one does not fit. A secret (the cloud's API key) is
// never taken from the command line, which other users of the machine can
// see: set-secret reads it from standard input.
func cmdSettings(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var common commonFlags
	fs := newFlagSet("settings", stderr, &common)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	rest := fs.Args()
	if len(rest) == 0 {
		rest = []string{"list"}
	}
	fail := func(code int, err error) int {
		fmt.Fprintln(stderr, "comptoir settings:", err)
		return code
	}
	// Refused before anything is opened: the secret is already on the
	// command line, so say how to give it instead.
	if rest[0] == "set" && len(rest) == 3 && slices.Contains(secretSettings, rest[1]) {
		return fail(2, fmt.Errorf("%s is a secret: it is not taken from the command line, which other users of this PC can see (ps) and the shell keeps (history); nothing was saved. Give it on standard input: `comptoir settings set-secret %s`, or set %s", rest[1], rest[1], envCloudKey))
	}
	var value string
	switch {
	case rest[0] == "list" && len(rest) == 1, rest[0] == "get" && len(rest) == 2:
	case rest[0] == "set" && len(rest) == 3:
		if !json.Valid([]byte(rest[2])) {
			fmt.Fprintf(stderr, "comptoir settings: %s is not JSON (a string needs quotes: '\"fr\"')\n", rest[2])
			return 2
		}
		if err := checkSetting(rest[1], json.RawMessage(rest[2])); err != nil {
			return fail(2, err)
		}
	case rest[0] == "set-secret" && len(rest) == 2:
		if !slices.Contains(secretSettings, rest[1]) {
			return fail(2, fmt.Errorf("%s is not a secret: comptoir settings set %s JSON", rest[1], rest[1]))
		}
		v, err := readSecret(rest[1], stderr)
		if err != nil {
			return fail(2, err)
		}
		value = v
	default:
		fmt.Fprintln(stderr, settingsUsage)
		return 2
	}
	db, _, err := common.openJournal(ctx)
	if err != nil {
		return fail(1, err)
	}
	defer db.Close()
	switch rest[0] {
	case "list":
		err = listSettings(ctx, db, stdout, stderr)
	case "get":
		var v json.RawMessage
		var ok bool
		v, ok, err = db.Setting(ctx, rest[1])
		if err == nil && !ok {
			fmt.Fprintf(stderr, "comptoir settings: %s is not set (the default applies)\n", rest[1])
			return 1
		}
		if err == nil {
			fmt.Fprintln(stdout, string(redactSetting(rest[1], v)))
		}
	case "set":
		err = setSetting(ctx, db, rest[1], json.RawMessage(rest[2]), stderr)
	case "set-secret":
		if err = (settingsStore{db}).Set(ctx, rest[1], value); err == nil {
			fmt.Fprintf(stdout, "%s is set (it is never shown).\n", rest[1])
		}
	}
	if err != nil {
		return fail(1, err)
	}
	return 0
}

func listSettings(ctx context.Context, db *journal.DB, stdout, stderr io.Writer) error {
	all, err := db.Settings(ctx)
	if err != nil {
		return err
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
	return nil
}

// setSetting stores one value. A new address for the cloud's key
// (cloud.url, ws.url) clears the saved key first: the key goes only to the
// host it was entered for, and is entered again for another.
func setSetting(ctx context.Context, db *journal.DB, key string, value json.RawMessage, stderr io.Writer) error {
	if slices.Contains(keyAddressSettings, key) {
		cleared, err := clearKeyForNewAddress(ctx, db, key, value)
		if err != nil {
			return err
		}
		if cleared {
			fmt.Fprintf(stderr, "comptoir settings: %s changed, so the saved %s is cleared: it is sent only to the address it was entered for. Enter it again: comptoir settings set-secret %s\n",
				key, settingCloudKey, settingCloudKey)
		}
	}
	return db.SetSetting(ctx, key, value)
}

// clearKeyForNewAddress clears the saved key when the address setting key
// is about to take another value; true when a key was cleared.
func clearKeyForNewAddress(ctx context.Context, db *journal.DB, key string, value json.RawMessage) (bool, error) {
	store := settingsStore{db}
	k, _, err := store.Get(ctx, settingCloudKey)
	if err != nil || strings.TrimSpace(k) == "" {
		return false, err
	}
	old, _, err := store.Get(ctx, key)
	if err != nil {
		return false, err
	}
	var next string
	if json.Unmarshal(value, &next) == nil && strings.TrimSpace(next) == strings.TrimSpace(old) {
		return false, nil
	}
	return true, store.Set(ctx, settingCloudKey, "")
}

// checkSetting refuses, before it is stored, a value whose harm would come
// before the kiosk's own check: a receipt QR code's address (printed for
// customers to scan).
func checkSetting(key string, value json.RawMessage) error {
	if key != settings.SettingMerchant {
		return nil
	}
	var m settings.MerchantSetting
	if json.Unmarshal(value, &m) != nil {
		return nil // the kiosk says so, and keeps its default
	}
	if err := receipt.CheckQRURL(m.QRURL); err != nil {
		return fmt.Errorf("%s: qrUrl: %w; nothing was saved", key, err)
	}
	return nil
}

// readSecret reads a secret's value: the first line of standard input.
func readSecret(key string, stderr io.Writer) (string, error) {
	if f, ok := stdin.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			fmt.Fprintf(stderr, "Type the value of %s, then Enter:\n", key)
		}
	}
	line, err := bufio.NewReader(io.LimitReader(stdin, 64<<10)).ReadString('\n')
	v := strings.TrimSpace(line)
	if v == "" {
		if err != nil && err != io.EOF {
			return "", fmt.Errorf("%s: standard input: %w", key, err)
		}
		return "", fmt.Errorf("no value for %s on standard input (echo \"$KEY\" | comptoir settings set-secret %s); nothing was saved", key, key)
	}
	return v, nil
}
