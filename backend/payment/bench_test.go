package payment

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/cloudapi"
	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/localapi"
	"github.com/comptoir-pos/comptoir/backend/terminalsim"
)

// The orchestrator's own cost per payment: the order with its attempt, send
// commit, outcome commit, order status (four fsynced transactions), plus
// the HTTP exchange with a simulated terminal that answers at once
// (TimeScale 1e-9: its 1.5 s handover and customer delays become
// nanoseconds). Method: go test -run '^$' -bench Pay ./backend/payment/,
// journal in a temp dir on the machine's disk; ns/op is one whole payment.
func BenchmarkPaySimulator(b *testing.B) {
	// The windows stay far longer than the customer's delay, or the two
	// nanosecond timers would race.
	_, client := runSim(b, terminalsim.Config{TimeScale: 1e-9, NoTestAmounts: true,
		Timings: terminalsim.Timings{Screens: 10000 * time.Hour, CardRead: 10000 * time.Hour}})
	benchPay(b, client)
}

// The same without HTTP: a terminal that approves in-process, so what is
// left is the journal and the state machine.
func BenchmarkPayInstantTerminal(b *testing.B) {
	benchPay(b, &fakeTerminal{payment: func(ctx context.Context, body []byte) (*localapi.Transaction, error) {
		var req localapi.PaymentRequest
		json.Unmarshal(body, &req)
		return &localapi.Transaction{Status: localapi.StatusOK, TransactionID: "T", Amount: req.Amount,
			IdempotentUUID: req.IdempotentUUID, Raw: body}, nil
	}})
}

func benchPay(b *testing.B, term Terminal) {
	benchPayChannel(b, Local(term, nil, time.Second))
}

func benchPayChannel(b *testing.B, ch Channel) {
	ctx := context.Background()
	db, err := journal.Open(ctx, b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	o, err := New(Config{Journal: db, Channel: ch, TerminalID: "bench", Limits: testLimits})
	if err != nil {
		b.Fatal(err)
	}
	defer o.Close()
	if _, err := o.Recover(ctx); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		id := fmt.Sprintf("b%07d", i)
		v, err := o.Pay(ctx, Request{OrderID: id, Amount: 500, Policy: journal.PolicyKiosk,
			NewOrder: &journal.NewOrder{Order: journal.Order{ID: id, Currency: "EUR", Total: 500}}})
		if err != nil || v.State != journal.StateApproved {
			b.Fatalf("%+v %v", v, err)
		}
	}
}

// The cloud channel's own cost per payment, beyond the poll interval:
// the same four fsynced transactions plus the acknowledgement's provider
// id journaled, the v5 payment and one poll over HTTP (loopback) through
// the real client, against a fake cloud whose first poll answers the
// outcome; the poll interval is 1 ms. Compare with
// BenchmarkPayInstantTerminal for the channel's share. An idle kiosk
// polls nothing: polls run only while an attempt is out.
func BenchmarkPayCloud(b *testing.B) {
	f := &fakeCloud{t: b, key: "sk_bench", outcome: cloudapi.StatusOK}
	srv := httptest.NewServer(f)
	defer srv.Close()
	client, err := cloudapi.New(srv.URL, f.key)
	if err != nil {
		b.Fatal(err)
	}
	benchPayChannel(b, Cloud(client, "SN-1", nil, time.Millisecond))
}
