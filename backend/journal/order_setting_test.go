package journal

import (
	"context"
	"testing"

	"github.com/comptoir-pos/comptoir/backend/fault"
)

// TestCreateOrderWithASetting: the order and the setting are one write;
// an order refused (a taken id) leaves the setting as it was.
func TestCreateOrderWithASetting(t *testing.T) {
	ctx := context.Background()
	db := openMemory(t)
	seq := SettingWrite{Key: "kiosk.order_sequence", Value: []byte(`{"day":"2026-11-22","last":1}`)}
	if err := db.CreateOrder(ctx, Order{ID: "o-1", Currency: "EUR", Total: 100}, seq); err != nil {
		t.Fatal(err)
	}
	if v, ok, err := db.Setting(ctx, seq.Key); err != nil || !ok || string(v) != string(seq.Value) {
		t.Fatalf("setting %s %v %v", v, ok, err)
	}
	again := SettingWrite{Key: seq.Key, Value: []byte(`{"day":"2026-11-22","last":2}`)}
	if err := db.CreateOrder(ctx, Order{ID: "o-1", Currency: "EUR", Total: 100}, again); fault.CodeOf(err) != ECONFLICT {
		t.Fatalf("a taken id: %v", err)
	}
	if v, _, _ := db.Setting(ctx, seq.Key); string(v) != string(seq.Value) {
		t.Fatalf("a refused order changed the setting: %s", v)
	}
	bad := SettingWrite{Key: seq.Key, Value: []byte(`{`)}
	if err := db.CreateOrder(ctx, Order{ID: "o-2", Currency: "EUR", Total: 100}, bad); fault.CodeOf(err) != EINVALID {
		t.Fatalf("a setting that is not JSON: %v", err)
	}
	if _, err := db.Order(ctx, "o-2"); fault.CodeOf(err) != ENOTFOUND {
		t.Fatalf("the order of a refused write exists: %v", err)
	}
}
