package device

import (
	"strings"
	"time"

	"github.com/comptoir-pos/comptoir/backend/localapi"
)

// HistoryDays are the dates (yyyy-MM-dd) to ask a list for the
// transactions created in [from, to), as ReadHistory asks the terminal's:
// whole days, in UTC, widened by the widest time-zone offset, the end the
// day after (to zero: no end). Whether a provider reads startTime and
// endTime as the ends of one period or as a time of day on every day is
// not shown, and a wrong guess hides transactions near midnight; whole
// days mean the same either way, and InHistoryPeriod then keeps what is
// in the period. An end date read as inclusive only asks one day more.
func HistoryDays(from, to time.Time) (startDate, endDate string) {
	startDate = from.UTC().Add(-historyZoneSlack).Format(time.DateOnly)
	if !to.IsZero() {
		endDate = to.UTC().Add(historyZoneSlack).AddDate(0, 0, 1).Format(time.DateOnly)
	}
	return startDate, endDate
}

// InHistoryPeriod reports whether a transaction created at createdAt (ISO
// 8601: ParseCreatedAt) is in [from, to)
// (to zero: no end). A time is often written to the second: the period
// starts at from's second, so that a transaction made in it, written
// without its fraction, is not taken for an earlier one. One whose time
// cannot be read is in: the caller decides what a transaction of unknown
// time means, and dropping it would read as "no such transaction".
func InHistoryPeriod(createdAt string, from, to time.Time) bool {
	c, err := ParseCreatedAt(createdAt)
	return err != nil || !c.Before(from.Truncate(time.Second)) && (to.IsZero() || c.Before(to))
}

// createdAtLayouts are the other shapes of ISO 8601 (and of its common
// relatives) a provider may write a createdAt in, beside those
// HistoryEntry.Created reads: a space for the T, an offset of hours alone
// (+02), no seconds; no zone is UTC.
var createdAtLayouts = func() []string {
	var out []string
	for _, sep := range []string{"T", " "} {
		for _, clock := range []string{"15:04:05.999999999", "15:04"} {
			for _, zone := range []string{"Z07:00", "Z0700", "Z07", " Z07:00", ""} {
				out = append(out, "2006-01-02"+sep+clock+zone)
			}
		}
	}
	return out
}()

// ParseCreatedAt reads a listed transaction's createdAt, in UTC: every
// shape the Local API's entries are read in, and the other common shapes of ISO
// 8601 (createdAtLayouts), so that a transaction is not taken for one of
// unknown time for the way its time is written.
func ParseCreatedAt(s string) (time.Time, error) {
	t, err := localapi.HistoryEntry{CreatedAt: s}.Created()
	if err == nil {
		return t, nil
	}
	s = strings.TrimSpace(s)
	for _, layout := range createdAtLayouts {
		if t, perr := time.Parse(layout, s); perr == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, err
}
