package device

import "time"

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
// 8601, as either API writes it: HistoryEntry.Created) is in [from, to)
// (to zero: no end). A time is often written to the second: the period
// starts at from's second, so that a transaction made in it, written
// without its fraction, is not taken for an earlier one. One whose time
// cannot be read is in: the caller decides what a transaction of unknown
// time means, and dropping it would read as "no such transaction".
func InHistoryPeriod(createdAt string, from, to time.Time) bool {
	c, err := HistoryEntry{CreatedAt: createdAt}.Created()
	return err != nil || !c.Before(from.Truncate(time.Second)) && (to.IsZero() || c.Before(to))
}
