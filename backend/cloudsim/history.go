package cloudsim

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/comptoir-pos/comptoir/backend/terminalsim"
)

// historyRequest is the v4 transactions form's filter.
type historyRequest struct {
	SerialNumbers []string `json:"serialNumbers"`
	Timezone      string   `json:"timezone"`
	StartDate     string   `json:"startDate"`
	EndDate       string   `json:"endDate"`
	StartTime     string   `json:"startTime"`
	EndTime       string   `json:"endTime"`
	Limit         *int     `json:"limit"`
	Offset        int      `json:"offset"`
}

// limit is the page size asked (20 by default), and whether it and the
// offset are within the specification's bounds.
func (h historyRequest) limit() (int, bool) {
	limit := 20
	if h.Limit != nil {
		limit = *h.Limit
	}
	return limit, limit >= 1 && limit <= 200 && h.Offset >= 0
}

// window is the request's [from, to) in absolute time. The v4 form's
// endDate is exclusive.
func (h historyRequest) window(now time.Time) (from, to time.Time, err error) {
	loc := time.UTC
	if h.Timezone != "" {
		if loc, err = time.LoadLocation(h.Timezone); err != nil {
			//lint:ignore ST1005 the words the provider answers
			return from, to, errors.New("Parameter 'timezone' is invalid")
		}
	}
	at := func(date, clock, field string) (time.Time, error) {
		if clock == "" {
			clock = "00:00:00"
		}
		t, err := time.ParseInLocation("2006-01-02 15:04:05", date+" "+clock, loc)
		if err != nil {
			//lint:ignore ST1005 the words the provider answers
			return t, fmt.Errorf("Parameter '%s' is invalid (yyyy-MM-dd and HH:mm:ss, no timezone)", field)
		}
		return t, nil
	}
	from, to = now.Add(-terminalsim.HistoryWindow), now.Add(time.Second)
	if h.StartDate != "" {
		if from, err = at(h.StartDate, h.StartTime, "startDate"); err != nil {
			return
		}
	}
	if h.EndDate != "" {
		if to, err = at(h.EndDate, h.EndTime, "endDate"); err != nil {
			return
		}
	}
	return from, to, nil
}

// handleTransactions is the v4 history: the company's transactions that
// reached a terminal (an expired action did not), most recent first, one
// page.
func (c *Cloud) handleTransactions(w http.ResponseWriter, r *http.Request) {
	var h historyRequest
	if !decode(w, r, &h) {
		return
	}
	limit, ok := h.limit()
	if !ok {
		ko(w, http.StatusBadRequest, "Parameter 'limit' must be 1 to 200 and 'offset' positive")
		return
	}
	from, to, err := h.window(c.cfg.Now())
	if err != nil {
		ko(w, http.StatusBadRequest, err.Error())
		return
	}
	c.mu.Lock()
	withIDs := !c.faults.historyWithoutIDs
	c.syncLocked()
	c.mu.Unlock()
	c.writePage(w, h.Offset, limit, withIDs, func(t *txn) bool {
		return t.hidden == 0 && (len(h.SerialNumbers) == 0 || slices.Contains(h.SerialNumbers, t.SerialNumber)) &&
			!t.CreatedAt.Before(from) && t.CreatedAt.Before(to)
	})
}

// writePage answers one page of the company's transactions that keep
// holds, most recent first (an expired action is none: it never reached
// a terminal).
func (c *Cloud) writePage(w http.ResponseWriter, offset, limit int, withIDs bool, keep func(*txn) bool) {
	c.mu.Lock()
	var all []historyEntry
	for i := len(c.order) - 1; i >= 0; i-- {
		if t := c.order[i]; t.Status != StatusExpired && keep(t) {
			all = append(all, t.entry(withIDs))
		}
	}
	fault := c.faults.list
	c.mu.Unlock()
	page := []historyEntry{}
	if offset < len(all) {
		page = all[offset:min(len(all), offset+limit)]
	}
	total := len(all)
	if fault != (ListFault{}) {
		page, total = applyListFault(fault, page, offset, limit, total, c.cfg.Now().UTC().Format(time.RFC3339))
	}
	body, err := json.Marshal(map[string]any{"total": total, "limit": limit, "offset": offset, "count": len(page), "transactions": page})
	if err != nil {
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	c.mu.Lock()
	c.faults.served.Pages++
	c.faults.served.Bytes += int64(len(body))
	c.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body)
}
