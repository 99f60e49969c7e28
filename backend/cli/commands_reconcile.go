package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/comptoir-pos/comptoir/backend/cloudapi"
	"github.com/comptoir-pos/comptoir/backend/device"
	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/reconcile"
)

// settingWSURL is the Webservices base URL; default: the cloud's followed
// by /v5.
const settingWSURL = "ws.url"

// exitNeedsStaff is the exit code of a reconciliation that found
// something for staff (0: nothing; 1: it could not be made).
const exitNeedsStaff = 3

func cmdReconcile(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var common commonFlags
	fs := newFlagSet("reconcile", stderr, &common)
	date := fs.String("date", "", "the day, yyyy-MM-dd in the kiosk's time zone (default: yesterday)")
	wsURL := fs.String("ws", "", "the Webservices base URL (default: the "+settingWSURL+" setting, else the cloud's URL followed by /v5)")
	serials := fs.String("serials", "", "this kiosk's terminals' serial numbers, comma-separated (default: the cloud terminal's; none: every terminal of the company)")
	tz := fs.String("tz", "", "the kiosk's time zone (default: the system's)")
	noTerminal := fs.Bool("no-terminal", false, "do not read the terminal's history")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	fail := func(err error) int { fmt.Fprintln(stderr, "comptoir reconcile:", err); return 1 }
	loc, day, ok := reconcileDay(*tz, *date, stderr)
	if !ok {
		return 2
	}
	db, _, err := common.openJournal(ctx)
	if err != nil {
		return fail(err)
	}
	defer db.Close()
	if err := cloudFromSettings(ctx, &common, db); err != nil {
		return fail(err)
	}
	cfg := reconcile.Config{Location: loc, Serials: reconcileSerials(*serials, common.serial)}
	src, why, closeSources := reconcileSources(ctx, common, db, *wsURL, *noTerminal)
	defer closeSources()
	if src.Provider == nil && src.Terminal == nil {
		return fail(fmt.Errorf("%w (%s)", reconcile.ErrNoSource, strings.Join(why, "; ")))
	}
	for _, w := range why {
		fmt.Fprintln(stderr, "comptoir reconcile: not read:", w)
	}
	rep, err := reconcile.Day(ctx, db, src, day, cfg)
	if err != nil {
		return fail(err)
	}
	printJSON(stdout, rep)
	if rep.NeedsStaff {
		return exitNeedsStaff
	}
	return 0
}

// reconcileDay reads --tz and --date: the kiosk's time zone and the day,
// yesterday there by default. ok is false, said on stderr, when either is
// bad.
func reconcileDay(tz, date string, stderr io.Writer) (loc *time.Location, day string, ok bool) {
	loc = time.Local
	if tz != "" {
		l, err := time.LoadLocation(tz)
		if err != nil {
			fmt.Fprintln(stderr, "comptoir reconcile: --tz:", err)
			return nil, "", false
		}
		loc = l
	}
	day = date
	if day == "" {
		day = time.Now().In(loc).AddDate(0, 0, -1).Format(time.DateOnly)
	}
	if _, err := time.ParseInLocation(time.DateOnly, day, loc); err != nil {
		fmt.Fprintf(stderr, "comptoir reconcile: --date %q is not yyyy-MM-dd\n", day)
		return nil, "", false
	}
	return loc, day, true
}

// reconcileSerials are the serial numbers --serials lists, else the cloud
// terminal's, else none (every terminal of the company).
func reconcileSerials(list, cloudSerial string) []string {
	var serials []string
	for s := range strings.SplitSeq(list, ",") {
		if s = strings.TrimSpace(s); s != "" {
			serials = append(serials, s)
		}
	}
	if len(serials) == 0 && cloudSerial != "" {
		serials = []string{cloudSerial}
	}
	return serials
}

// reconcileSources opens what the day is compared with: the provider's
// Webservices and, unless noTerminal, the terminal's history. why says
// what could not be opened; closeSources is to be called when done.
func reconcileSources(ctx context.Context, common commonFlags, db *journal.DB, wsURL string, noTerminal bool) (src reconcile.Sources, why []string, closeSources func()) {
	closeSources = func() {}
	ws, err := openWebservices(ctx, common, db, wsURL)
	switch {
	case err != nil:
		why = append(why, "the provider's Webservices: "+err.Error())
	default:
		src.Provider = reconcile.FromWebservices(ws, time.Now)
	}
	if !noTerminal {
		closeTerm, hist, err := openHistory(ctx, common, db)
		if err != nil {
			why = append(why, "the terminal's history: "+err.Error())
		} else {
			closeSources = closeTerm
			src.Terminal = func(ctx context.Context, from, to time.Time) ([]device.HistoryEntry, error) {
				return device.ReadHistory(ctx, hist, from, to, 0, 30*time.Second)
			}
		}
	}
	return src, why, closeSources
}

// openWebservices is the provider's Webservices client: its URL given,
// else the setting's, else the cloud's followed by /v5; the company's key.
func openWebservices(ctx context.Context, c commonFlags, db *journal.DB, url string) (*cloudapi.Webservices, error) {
	if url == "" {
		url, _, _ = (settingsStore{db}).Get(ctx, settingWSURL)
	}
	if url == "" {
		cloud := c.cloudURL
		if cloud == "" {
			cloud, _, _ = (settingsStore{db}).Get(ctx, settingCloudURL)
		}
		if strings.TrimSpace(cloud) == "" {
			return nil, errors.New("not set up (--ws URL, the " + settingWSURL + " setting, or the cloud's URL)")
		}
		url = cloudapi.DefaultWebservicesURL(cloud)
	}
	key, err := cloudKey(ctx, db)
	if err != nil {
		return nil, err
	}
	return cloudapi.NewWebservices(url, key)
}

// openHistory is the terminal this kiosk uses, to read its history.
func openHistory(ctx context.Context, c commonFlags, db *journal.DB) (func(), device.Historian, error) {
	if c.cloudURL != "" && c.serial != "" {
		key, err := cloudKey(ctx, db)
		if err != nil {
			return nil, nil, err
		}
		client, err := cloudapi.New(c.cloudURL, key)
		if err != nil {
			return nil, nil, err
		}
		return func() {}, device.Cloud(client, c.serial), nil
	}
	link, err := openTerminal(ctx, c, db, false)
	if err != nil {
		return nil, nil, err
	}
	stop := link.stop
	if stop == nil {
		stop = func() {}
	}
	return stop, link.device, nil
}
