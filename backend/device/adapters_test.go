package device_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/cloudapi"
	"github.com/comptoir-pos/comptoir/backend/cloudsim"
	"github.com/comptoir-pos/comptoir/backend/device"
	"github.com/comptoir-pos/comptoir/backend/internal/testenv"
	"github.com/comptoir-pos/comptoir/backend/localapi"
	"github.com/comptoir-pos/comptoir/backend/terminalsim"
)

// channel is one terminal behind one adapter, with its simulator, and a
// way to make a payment of amount cents that the history then lists.
type channel struct {
	name string
	dev  device.Terminal
	sim  *terminalsim.Terminal
	pay  func(t *testing.T, amount int64) string // the transaction id the history shows
	// fault makes the history misbehave; served is what it has answered.
	fault  func(t *testing.T, extra int, endless bool, pad int)
	served func() (pages int, bytes int64)
}

func channels(t *testing.T) []channel {
	t.Helper()
	ctx := t.Context()
	sim, lc := testenv.Terminal(t, testenv.Scripted)
	local := channel{name: "local", dev: device.LocalAt(sim.URL), sim: sim, pay: func(t *testing.T, amount int64) string {
		tx, err := lc.Payment(ctx, &localapi.PaymentRequest{Amount: amount, IdempotentUUID: "local-" + t.Name()})
		if err != nil || tx.Status != localapi.StatusOK {
			t.Fatalf("payment: %+v %v", tx, err)
		}
		return tx.TransactionID
	}}
	local.fault = func(t *testing.T, extra int, endless bool, pad int) {
		if err := sim.SetHistoryFault(terminalsim.HistoryFault{Extra: extra, Endless: endless, Pad: pad}); err != nil {
			t.Fatal(err)
		}
	}
	local.served = func() (int, int64) { s := sim.HistoryServed(); return s.Pages, s.Bytes }

	const serial = "SN-DEVICE"
	cloud, cc := testenv.Cloud(t, cloudsim.Config{Key: "sk_device", Serials: []string{serial}, Terminal: testenv.Scripted})
	csim, _ := cloud.Terminal(serial)
	remote := channel{name: "cloud", dev: device.Cloud(cc, serial), sim: csim, pay: func(t *testing.T, amount int64) string {
		body, _ := json.Marshal(map[string]any{"serialNumber": serial, "amount": amount, "idempotentUuid": "cloud-" + t.Name()})
		ack, err := cc.Payment(ctx, body)
		if err != nil {
			t.Fatalf("payment: %v", err)
		}
		for {
			tx, err := cc.Transaction(ctx, ack.TransactionID)
			if err == nil && tx.Status == "ok" {
				return ack.TransactionID
			}
			if ctx.Err() != nil {
				t.Fatalf("the cloud payment never ended: %+v %v", tx, err)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}}
	remote.fault = func(t *testing.T, extra int, endless bool, pad int) {
		if err := cloud.SetListFault(cloudsim.ListFault{Extra: extra, Endless: endless, Pad: pad}); err != nil {
			t.Fatal(err)
		}
	}
	remote.served = func() (int, int64) { s := cloud.ListServed(); return s.Pages, s.Bytes }
	return []channel{local, remote}
}

// Both channels carry the same requests to the terminal and give the
// same answers in the same words: what the kiosk and staff mode branch on
// does not depend on how the terminal is reached.
func TestEveryChannelSpeaksTheSameWords(t *testing.T) {
	for _, ch := range channels(t) {
		t.Run(ch.name, func(t *testing.T) {
			ctx := t.Context()
			if _, err := ch.dev.Print(ctx, device.Print{Data: "Merci", Format: device.FormatText}); err != nil {
				t.Fatalf("print: %v", err)
			}
			if p := ch.sim.Printed(); len(p) != 1 || !strings.Contains(p[0].Text, "Merci") {
				t.Fatalf("printed %+v", p)
			}

			// A refusal of the terminal's is named, on either channel.
			_, err := ch.dev.ShareReceipt(ctx, device.Share{Ticket: &device.ReceiptTicket{Data: "Merci", Format: device.FormatText}, TransactionID: "nope", Medium: device.ShareEmail})
			var de *device.Error
			if !errors.As(err, &de) || de.Kind != device.Refused || de.Code != device.CodeShareTransactionID || de.Message == "" || len(de.Raw) == 0 {
				t.Fatalf("share of an unknown transaction: %#v", err)
			}

			// A request the terminal would refuse never leaves.
			_, err = ch.dev.Print(ctx, device.Print{Data: "zz", Format: device.FormatESCPOS})
			if device.KindOf(err) != device.Invalid || len(ch.sim.Printed()) != 1 {
				t.Fatalf("invalid print: %v", err)
			}

			id := ch.pay(t, 1250)
			entries, err := device.ReadHistory(ctx, ch.dev, time.Now().Add(-time.Hour), time.Time{}, 0, 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			if len(entries) != 1 || entries[0].TransactionID != id || entries[0].Amount != 1250 || entries[0].Type != device.HistoryDebit || entries[0].Status != device.StatusOK {
				t.Fatalf("history %+v, want the payment %s", entries, id)
			}
			if at, err := entries[0].Created(); err != nil || time.Since(at).Abs() > time.Hour {
				t.Fatalf("createdAt %q: %v %v", entries[0].CreatedAt, at, err)
			}
			if _, err := ch.dev.ShareReceipt(ctx, device.Share{Ticket: &device.ReceiptTicket{Data: "Merci", Format: device.FormatText}, TransactionID: id, Medium: device.ShareSMS}); err != nil {
				t.Fatalf("share: %v", err)
			}
			if _, err := ch.dev.Ping(ctx, false); err != nil {
				t.Fatalf("ping: %v", err)
			}
		})
	}
}

// A request that cannot have reached the terminal says so; one the
// provider refuses for the key says that.
func TestFailuresSayWhatTheTerminalDid(t *testing.T) {
	ctx := t.Context()
	_, err := device.LocalAt(func() string { return "" }).Ping(ctx, false)
	if device.KindOf(err) != device.NotSent || !errors.Is(err, device.ErrNoAddress) {
		t.Fatalf("no address: %v", err)
	}

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String() + localapi.BasePath
	l.Close()
	if _, err := device.LocalAt(func() string { return closed }).Print(ctx, device.Print{Data: "x", Format: device.FormatText}); device.KindOf(err) != device.NotSent {
		t.Fatalf("closed port: %v (%s)", err, device.KindOf(err))
	}

	cloud, _ := testenv.Cloud(t, cloudsim.Config{Key: "sk_right", Serials: []string{"SN-1"}, TimeScale: 1})
	cc, err := cloudapi.New(cloud.URL(), "sk_wrong")
	if err != nil {
		t.Fatal(err)
	}
	_, err = device.Cloud(cc, "SN-1").Ping(ctx, false)
	if device.KindOf(err) != device.Refused || device.CodeOf(err) != device.CodeUnauthorized {
		t.Fatalf("wrong key: %v (%s %s)", err, device.KindOf(err), device.CodeOf(err))
	}

	// Not this package's error: the outcome is left open.
	if device.KindOf(context.DeadlineExceeded) != device.Unsure || device.KindOf(nil) != 0 {
		t.Fatal("KindOf of a foreign error or nil")
	}
}

// A terminal (or a provider) whose history page lists more than the limit
// asked is not believed, on either channel: one page or a whole period.
func TestAHistoryPageOverTheLimitIsRefused(t *testing.T) {
	for _, ch := range channels(t) {
		t.Run(ch.name, func(t *testing.T) {
			ctx := t.Context()
			ch.pay(t, 1250)
			// The true entry and 5 made-up ones, for a limit of 5.
			ch.fault(t, 5, false, 0)
			_, err := ch.dev.History(ctx, device.HistoryQuery{Limit: 5})
			if !errors.Is(err, device.ErrHistoryPage) {
				t.Fatalf("6 entries for a limit of 5: %v", err)
			}
			if _, err := device.ReadHistory(ctx, ch.dev, time.Now().Add(-time.Hour), time.Time{}, 3, 5*time.Second); !errors.Is(err, device.ErrHistoryPage) {
				t.Fatalf("ReadHistory: %v", err)
			}
			ch.fault(t, 0, false, 0)
			if entries, err := device.ReadHistory(ctx, ch.dev, time.Now().Add(-time.Hour), time.Time{}, 0, 5*time.Second); err != nil || len(entries) != 1 {
				t.Fatalf("the fault lifted: %d entries, %v", len(entries), err)
			}
		})
	}
}

// A history that never ends stops at the documented ceiling with
// ErrHistoryTooLong: the pages asked, and so the entries and the bytes
// read, stay within it.
func TestAnEndlessHistoryStopsAtTheCeiling(t *testing.T) {
	for _, ch := range channels(t) {
		t.Run(ch.name, func(t *testing.T) {
			ch.fault(t, 0, true, 0)
			before, _ := ch.served()
			_, err := device.ReadHistory(t.Context(), ch.dev, time.Now().Add(-time.Hour), time.Time{}, 0, 30*time.Second)
			if !errors.Is(err, device.ErrHistoryTooLong) {
				t.Fatalf("endless history: %v", err)
			}
			pages, _ := ch.served()
			// Full pages of 200: the entries' ceiling is passed on the page
			// after MaxHistoryEntries/200.
			if n := pages - before; n > device.MaxHistoryEntries/device.MaxHistoryPage+1 {
				t.Fatalf("%d pages read of an endless history", n)
			}
		})
	}
}
