package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/comptoir-pos/comptoir/backend/journal"
)

// settingCardRetention is how many days card details (card tokens, card
// tickets) are kept; unset: journal.DefaultCardRetention.
const settingCardRetention = "privacy.card_retention_days"

// minCardRetention keeps a misconfigured retention from purging the card
// tickets of today's receipts.
const minCardRetention = 7 * 24 * time.Hour

// cardRetention reads the retention setting; a value that does not fit
// falls back to the default, with a warning.
func cardRetention(ctx context.Context, db *journal.DB, log *slog.Logger) time.Duration {
	raw, ok, err := db.Setting(ctx, settingCardRetention)
	if err != nil || !ok {
		return journal.DefaultCardRetention
	}
	var days int
	if json.Unmarshal(raw, &days) != nil || time.Duration(days)*24*time.Hour < minCardRetention || days > 3650 {
		log.Warn("setting ignored: want a number of days between 7 and 3650", "key", settingCardRetention, "value", string(raw))
		return journal.DefaultCardRetention
	}
	return time.Duration(days) * 24 * time.Hour
}

// purgeCards removes the card details older than the retention period.
func purgeCards(ctx context.Context, db *journal.DB, keep time.Duration, now time.Time) (int64, time.Time, error) {
	before := now.Add(-keep)
	n, err := db.PurgeCardDetails(ctx, before)
	return n, before, err
}

// runCardPurge purges card details now, then every day, until ctx ends.
func runCardPurge(ctx context.Context, db *journal.DB, log *slog.Logger) {
	for {
		n, before, err := purgeCards(ctx, db, cardRetention(ctx, db, log), time.Now())
		switch {
		case err != nil && ctx.Err() == nil:
			log.Error("card details not purged", "err", err)
		case n > 0:
			log.Info("card details purged", "records", n, "before", before.UTC().Format(time.RFC3339))
		}
		t := time.NewTimer(24 * time.Hour)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

func cmdPurge(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var common commonFlags
	fs := newFlagSet("purge", stderr, &common)
	keepDays := fs.Int("keep-days", 0, "keep this many days of card details (default: the "+settingCardRetention+" setting, else 395)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	db, _, err := common.openJournal(ctx)
	if err != nil {
		return failed(stderr, "purge", err)
	}
	defer db.Close()
	keep := cardRetention(ctx, db, warnLogger(stderr))
	if *keepDays != 0 {
		keep = time.Duration(*keepDays) * 24 * time.Hour
		if keep < minCardRetention {
			fmt.Fprintln(stderr, "comptoir purge: --keep-days must be at least 7")
			return 2
		}
	}
	n, before, err := purgeCards(ctx, db, keep, time.Now())
	if err != nil {
		return failed(stderr, "purge", err)
	}
	printJSON(stdout, struct {
		Purged int64     `json:"purged"`
		Before time.Time `json:"before"`
	}{n, before.UTC()})
	return 0
}
