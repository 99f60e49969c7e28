package journal

import (
	"context"
	"errors"
	"testing"
)

// A payment's order and its first attempt are recorded in one transaction:
// both, with the order's settings, or nothing at all.
func TestPrepareFirstAttemptRecordsBothOrNeither(t *testing.T) {
	ctx := context.Background()
	db := openMemory(t)
	newOrder := func(id, seq string) NewOrder {
		return NewOrder{
			Order: Order{ID: id, Currency: "EUR", Total: 1250, Data: []byte(`{"number":"7"}`)},
			With:  []SettingWrite{{Key: "kiosk.order_sequence", Value: []byte(seq)}},
		}
	}
	sequence := func() string {
		t.Helper()
		raw, ok, err := db.Setting(ctx, "kiosk.order_sequence")
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			return ""
		}
		return string(raw)
	}

	a, err := db.PrepareFirstAttempt(ctx, newOrder("o-1", `{"last":1}`), newAttempt(t, "o-1", "t-1"))
	if err != nil {
		t.Fatal(err)
	}
	if a.State != StatePrepared || a.OrderID != "o-1" || a.SendCount != 0 {
		t.Fatalf("attempt %+v", a)
	}
	if o, err := db.Order(ctx, "o-1"); err != nil || o.Status != OrderOpen || o.Total != 1250 || string(o.Data) != `{"number":"7"}` {
		t.Fatalf("order %+v %v", o, err)
	}
	if got := sequence(); got != `{"last":1}` {
		t.Fatalf("sequence %s", got)
	}

	// The order's id taken: refused as such, nothing written.
	_, err = db.PrepareFirstAttempt(ctx, newOrder("o-1", `{"last":2}`), newAttempt(t, "o-1", "t-2"))
	wantCode(t, err, ECONFLICT)
	if !errors.Is(err, ErrOrderExists) {
		t.Fatalf("a taken id, not said so: %v", err)
	}
	if got := sequence(); got != `{"last":1}` {
		t.Fatalf("the sequence written by a refused order: %s", got)
	}

	// The attempt refused (its terminal has one unresolved): the new order
	// and its sequence are not written either, and the refusal is not
	// taken for a taken id.
	second := newAttempt(t, "o-2", "t-1")
	_, err = db.PrepareFirstAttempt(ctx, newOrder("o-2", `{"last":2}`), second)
	wantCode(t, err, ECONFLICT)
	if errors.Is(err, ErrOrderExists) {
		t.Fatalf("a busy terminal taken for a taken id: %v", err)
	}
	if _, err := db.Order(ctx, "o-2"); err == nil {
		t.Fatal("the order of a refused attempt was written")
	}
	if _, err := db.Attempt(ctx, second.UUID); err == nil {
		t.Fatal("a refused attempt was written")
	}
	if got := sequence(); got != `{"last":1}` {
		t.Fatalf("the sequence written with a refused attempt: %s", got)
	}

	// An attempt for another order than the new one, or a bad order: refused.
	_, err = db.PrepareFirstAttempt(ctx, newOrder("o-3", `{"last":3}`), newAttempt(t, "o-4", "t-3"))
	wantCode(t, err, EINVALID)
	bad := newOrder("o-5", `{"last":5}`)
	bad.Order.Currency = "euro"
	_, err = db.PrepareFirstAttempt(ctx, bad, newAttempt(t, "o-5", "t-5"))
	wantCode(t, err, EINVALID)
	for _, id := range []string{"o-3", "o-4", "o-5"} {
		if _, err := db.Order(ctx, id); err == nil {
			t.Fatalf("order %s written by a refused call", id)
		}
	}
}
