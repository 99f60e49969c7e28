package kiosk

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/comptoir-pos/comptoir/backend/fault"
	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/orders"
	"github.com/comptoir-pos/comptoir/backend/settings"
)

// settingOrderSequence is the daily order number: {"day":"2026-11-22","last":41}.
const settingOrderSequence = "kiosk.order_sequence"

// maxOrderNumberTries bounds the search for a free order id when the
// stored sequence is behind the journal (restored settings, clock moved).
const maxOrderNumberTries = 1000

// orderSequence is the stored daily order number.
type orderSequence struct {
	Day  string `json:"day"`
	Last int    `json:"last"`
}

// nextOrder numbers ord with the next free number of the day: "42", id
// "20261122-042" (a taken id moves to the next number), or with the
// kiosk's prefix "A42", id "20261122-A042". It writes nothing: the order
// and the sequence it moves are recorded together, with the payment's first
// attempt (payment.Request.NewOrder).
func (s *Service) nextOrder(ctx context.Context, ord *order) (n journal.NewOrder, number string, err error) {
	prefix := s.Settings().NumberPrefix
	s.seqMu.Lock()
	defer s.seqMu.Unlock()
	now := ord.created.Local()
	day := now.Format("2006-01-02")
	var seq orderSequence
	if raw, ok, err := s.cfg.Journal.Setting(ctx, settingOrderSequence); err != nil {
		return n, "", err
	} else if ok {
		if err := json.Unmarshal(raw, &seq); err != nil {
			s.log.Warn(settings.WarningMessage, "key", settingOrderSequence, "err", err)
		}
	}
	if seq.Day != day || seq.Last < 0 {
		seq = orderSequence{Day: day}
	}
	lines := make([]LineView, 0, len(ord.lines))
	for _, l := range ord.lines {
		lines = append(lines, l.LineView)
	}
	for range maxOrderNumberTries {
		seq.Last++
		number = prefix + strconv.Itoa(seq.Last)
		id := fmt.Sprintf("%s-%s%03d", now.Format("20060102"), prefix, seq.Last)
		if _, err := s.cfg.Journal.Order(ctx, id); err == nil {
			continue
		} else if fault.CodeOf(err) != fault.ENOTFOUND {
			return n, "", err
		}
		data, err := json.Marshal(orders.Data{Number: number, Language: ord.language, Method: string(ord.method), Dining: string(ord.dining), Lines: lines})
		if err != nil {
			return n, "", err
		}
		raw, _ := json.Marshal(seq)
		return journal.NewOrder{
			Order: journal.Order{ID: id, Currency: ord.currency, Total: ord.total, Data: data, CreatedAt: ord.created},
			With:  []journal.SettingWrite{{Key: settingOrderSequence, Value: raw}},
		}, number, nil
	}
	return n, "", fmt.Errorf("no free order number today after %d tries", maxOrderNumberTries)
}
