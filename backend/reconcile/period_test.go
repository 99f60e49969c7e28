package reconcile

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/cloudapi"
)

// The provider's list of the day is asked by whole days, never by times
// (whether the provider reads startTime and endTime as one period or as a
// time of day on every day is not shown), and kept by createdAt: a
// payment just after the kiosk's midnight is in, one of the day before
// is not.
func TestTheProvidersListOfTheDayIsAskedByWholeDays(t *testing.T) {
	start := time.Date(2026, 11, 24, 0, 0, 0, 0, paris)
	from, to := start.Add(-Margin), start.AddDate(0, 0, 1).Add(Margin)
	at := func(id string, c time.Time) map[string]any {
		return map[string]any{"transactionId": id, "status": "ok", "type": "debit", "amount": 100, "createdAt": c.UTC().Format(time.RFC3339)}
	}
	var asked []cloudapi.BatchRequest
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var q cloudapi.BatchRequest
		_ = json.NewDecoder(r.Body).Decode(&q)
		asked = append(asked, q)
		list := []map[string]any{at("next day", to.Add(time.Minute)), at("after midnight", start.Add(5*time.Minute)),
			at("before midnight", start.Add(-5*time.Minute)), at("day before", from.Add(-time.Minute))}
		json.NewEncoder(w).Encode(map[string]any{"total": len(list), "limit": q.Limit, "offset": 0, "transactions": list})
	}))
	defer srv.Close()
	ws, err := cloudapi.NewWebservices(srv.URL, "sk_test")
	if err != nil {
		t.Fatal(err)
	}
	got, err := FromWebservices(ws, func() time.Time { return to.Add(time.Hour) })(context.Background(), from, to)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, e := range got {
		ids = append(ids, e.TransactionID)
	}
	if fmt.Sprint(ids) != "[after midnight before midnight]" {
		t.Fatalf("kept %v", ids)
	}
	q := asked[0]
	if q.StartTime != "" || q.EndTime != "" || q.StartDate != "2026-11-23" || q.EndDate != "2026-11-26" {
		t.Fatalf("asked %s %s to %s %s, want whole days around the day", q.StartDate, q.StartTime, q.EndDate, q.EndTime)
	}
}
