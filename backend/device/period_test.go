package device

import (
	"testing"
	"time"
)

// HistoryDays asks the days ReadHistory asks the terminal for the same
// period, open or closed: whole days widened for any time zone, the end
// the day after; InHistoryPeriod keeps what ReadHistory keeps.
func TestHistoryDaysAreTheDaysReadHistoryAsks(t *testing.T) {
	from := time.Date(2026, 11, 24, 23, 55, 0, 0, time.FixedZone("CET", 3600))
	for _, to := range []time.Time{{}, from.Add(10 * time.Minute), from.AddDate(0, 0, 3)} {
		p := &pagedHistory{}
		if _, err := ReadHistory(t.Context(), p, from, to, 0, 0); err != nil {
			t.Fatal(err)
		}
		start, end := HistoryDays(from, to)
		if q := p.asked[0]; q.StartDate != start || q.EndDate != end || q.StartTime != "" || q.EndTime != "" {
			t.Errorf("to %s: ReadHistory asked %+v, HistoryDays %s to %s", to, q, start, end)
		}
	}
	from = from.Add(776 * time.Millisecond) // a time written to the second is in from's second
	to := from.Add(10 * time.Minute)
	for _, tc := range []struct {
		created string
		want    bool
	}{
		{from.UTC().Format(time.RFC3339), true},
		{from.UTC().Format(time.RFC3339Nano), true},
		{from.Add(-time.Second).UTC().Format(time.RFC3339), false},
		{from.Add(-time.Millisecond).UTC().Format(time.RFC3339Nano), true},
		{to.Add(-time.Second).Format("2006-01-02T15:04:05Z0700"), true},
		{to.Add(time.Second).UTC().Format(time.RFC3339), false},
		{to.UTC().Format(time.RFC3339Nano), false},
		{"yesterday", true},
	} {
		if got := InHistoryPeriod(tc.created, from, to); got != tc.want {
			t.Errorf("%s in [%s, %s): %v", tc.created, from, to, got)
		}
	}
	if !InHistoryPeriod(from.AddDate(1, 0, 0).Format(time.RFC3339), from, time.Time{}) {
		t.Error("an open period ends")
	}
}

// A createdAt is read in every common shape of ISO 8601: a T or a space,
// an offset with or without its colon or its minutes, seconds with or
// without a fraction or none; no zone is UTC.
func TestACreatedAtIsReadInEveryCommonShape(t *testing.T) {
	want := time.Date(2026, 11, 24, 8, 30, 0, 0, time.UTC)
	for _, s := range []string{
		"2026-11-24T08:30:00Z", "2026-11-24T10:30:00+02:00", "2026-11-24T10:30:00.000+0200", "2026-11-24T10:30:00+02",
		"2026-11-24 08:30:00", "2026-11-24 10:30:00+02:00", "2026-11-24 10:30:00 +02:00", "2026-11-24 10:30:00+02",
		"2026-11-24T10:30+02:00", "2026-11-24T08:30Z", "2026-11-24 08:30", "2026-11-24T08:30", " 2026-11-24T08:30:00Z ",
	} {
		if got, err := ParseCreatedAt(s); err != nil || !got.Equal(want) || got.Location() != time.UTC {
			t.Errorf("%q: %v %v", s, got, err)
		}
	}
	for _, s := range []string{"", "yesterday", "24/11/2026 08:30", "2026-11-24"} {
		if got, err := ParseCreatedAt(s); err == nil {
			t.Errorf("%q read as %v", s, got)
		}
	}
	if !InHistoryPeriod("2026-11-24 10:30:00+02", want, want.Add(time.Minute)) || InHistoryPeriod("2026-11-24 10:29+02", want, want.Add(time.Minute)) {
		t.Error("InHistoryPeriod does not read every shape")
	}
}
