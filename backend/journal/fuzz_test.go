package journal

import (
	"bytes"
	"context"
	"testing"

	"github.com/google/uuid"

	"github.com/comptoir-pos/comptoir/backend/fault"
)

// FuzzRequestBody: whatever body the journal accepts, it gives back byte for
// byte (it is what a resend sends); whatever it refuses is EINVALID and
// leaves nothing behind.
func FuzzRequestBody(f *testing.F) {
	for _, seed := range []string{
		`{"amount":100,"idempotentUuid":"%s","cartId":"o1"}`, `{"amount":100}`, `{}`, `[]`, `"x"`, `null`,
		`{"amount":100,"note":"caf\u00e9 \ud83d\ude00"}`, "{\"amount\":100,\"raw\":\"\xff\xfe\"}", `{"amount":1e2}`,
		`{"amount":100,"cartId":"other"}`, ` {"amount" : 100 } `, `{"amount":100}{"amount":100}`,
	} {
		f.Add([]byte(seed))
	}
	ctx := context.Background()
	db, err := OpenMemory(ctx)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { db.Close() })
	if err := db.CreateOrder(ctx, Order{ID: "o1", Currency: "EUR", Total: 100}); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		id := uuid.Must(uuid.NewV7()).String()
		body = bytes.ReplaceAll(body, []byte("%s"), []byte(id))
		a, err := db.PrepareAttempt(ctx, Attempt{UUID: id, OrderID: "o1", Kind: KindDebit, Amount: 100,
			Policy: PolicyKiosk, Terminal: "t", RequestBody: body})
		if err != nil {
			if fault.CodeOf(err) != EINVALID {
				t.Fatalf("body %q: %v", body, err)
			}
			if _, err := db.Attempt(ctx, id); fault.CodeOf(err) != ENOTFOUND {
				t.Fatalf("a refused attempt left a row: %v", err)
			}
			return
		}
		if !bytes.Equal(a.RequestBody, body) {
			t.Fatalf("stored %q, given %q", a.RequestBody, body)
		}
		back, err := db.Attempt(ctx, id)
		if err != nil || !bytes.Equal(back.RequestBody, body) {
			t.Fatalf("read back %q (%v), given %q", back.RequestBody, err, body)
		}
		if _, err := db.Transition(ctx, id, StatePrepared, StateFailed, TransitionInfo{Note: "fuzz"}); err != nil {
			t.Fatal(err)
		}
	})
}
