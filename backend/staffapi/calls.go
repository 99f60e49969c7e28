package staffapi

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/comptoir-pos/comptoir/backend/device"
	"github.com/comptoir-pos/comptoir/backend/fault"
	"github.com/comptoir-pos/comptoir/backend/staff"
)

// call is one entry of the table: its argument count (and how many more
// it may take at the end) and its function.
type call struct {
	n, opt int
	f      func(ctx context.Context, a *API, args []json.RawMessage) (any, error)
}

// calls is every staff call, by name. Explicit, not reflected: a method of
// staff.Staff is not reachable from the UI until it is listed here.
var calls = map[string]call{
	"Gate": c0(func(ctx context.Context, a *API) (any, error) { return a.gate(ctx) }),
	// The PIN pad's calls take the gesture that opened it last, optional
	// (none: the customer screen's corner): see API.origin.
	"SetPIN": withGesture(func(ctx context.Context, a *API, o staff.Origin, pin string) (any, error) {
		return a.setPIN(ctx, o, pin)
	}),
	"Unlock": withGesture(func(ctx context.Context, a *API, o staff.Origin, pin string) (any, error) {
		return a.cfg.Staff.UnlockFrom(ctx, o, pin)
	}),
	"ClearLockout": withGesture(func(ctx context.Context, a *API, o staff.Origin, code string) (any, error) {
		return nil, a.cfg.Staff.ClearLockout(ctx, o, code)
	}),
	"Touch": c1(func(_ context.Context, a *API, sid string) (any, error) { return a.cfg.Staff.Touch(sid) }),
	"Lock": c1(func(ctx context.Context, a *API, sid string) (any, error) {
		a.cfg.Staff.Lock(ctx, sid)
		return nil, nil
	}),
	"ChangePIN": c3(func(ctx context.Context, a *API, sid, current, next string) (any, error) {
		return nil, a.cfg.Staff.ChangePIN(ctx, sid, current, next)
	}),
	"About": c1(func(_ context.Context, a *API, sid string) (any, error) { return a.about(sid) }),
	"Terminal": c2(func(ctx context.Context, a *API, sid string, greet bool) (any, error) {
		return a.terminal(ctx, sid, greet)
	}),
	"ChooseTerminal": c2(func(ctx context.Context, a *API, sid, instance string) (any, error) {
		return a.choose(ctx, sid, instance, false)
	}),
	"TerminalCertificate": c2(func(ctx context.Context, a *API, sid, address string) (any, error) {
		return a.certificate(ctx, sid, address)
	}),
	"SetCloud": c2(func(ctx context.Context, a *API, sid string, c CloudChoice) (any, error) {
		return a.setCloud(ctx, sid, c)
	}),
	"PinTerminalCertificate": c2(func(ctx context.Context, a *API, sid, fingerprint string) (any, error) {
		return a.pin(ctx, sid, fingerprint)
	}),
	"SetTerminalAddress": c2(func(ctx context.Context, a *API, sid, address string) (any, error) {
		return a.choose(ctx, sid, address, true)
	}),
	"ConfirmTerminalDevice": c3(func(ctx context.Context, a *API, sid, address, certificate string) (any, error) {
		return a.device(ctx, sid, address, certificate, true)
	}),
	"RefuseTerminalDevice": c3(func(ctx context.Context, a *API, sid, address, certificate string) (any, error) {
		return a.device(ctx, sid, address, certificate, false)
	}),
	"Attempts": c2(func(ctx context.Context, a *API, sid string, f staff.Filter) (any, error) {
		return a.cfg.Staff.Attempts(ctx, sid, f)
	}),
	"History": c2(func(ctx context.Context, a *API, sid string, f staff.HistoryFilter) (any, error) {
		return a.cfg.Staff.History(ctx, sid, f)
	}),
	"Compare": c2(func(ctx context.Context, a *API, sid, day string) (any, error) {
		return a.cfg.Staff.Compare(ctx, sid, day)
	}),
	"Reverse": c2(func(ctx context.Context, a *API, sid, uuid string) (any, error) {
		return a.cfg.Staff.Reverse(ctx, sid, uuid)
	}),
	"ReverseTransaction": c2(func(ctx context.Context, a *API, sid, transactionID string) (any, error) {
		return a.cfg.Staff.ReverseTransaction(ctx, sid, transactionID)
	}),
	"Refund": c3(func(ctx context.Context, a *API, sid, orderID string, amount int64) (any, error) {
		return a.cfg.Staff.Refund(ctx, sid, orderID, amount)
	}),
	"SendLink": c2(func(ctx context.Context, a *API, sid string, r staff.LinkRequest) (any, error) {
		return a.cfg.Staff.SendLink(ctx, sid, r)
	}),
	"CancelLink": c2(func(ctx context.Context, a *API, sid, uuid string) (any, error) {
		return a.cfg.Staff.CancelLink(ctx, sid, uuid)
	}),
	"CaptureLink": c2(func(ctx context.Context, a *API, sid, uuid string) (any, error) {
		return a.cfg.Staff.CaptureLink(ctx, sid, uuid)
	}),
	"RefundByAPI": c3(func(ctx context.Context, a *API, sid, uuid string, amount int64) (any, error) {
		return a.cfg.Staff.RefundByAPI(ctx, sid, uuid, amount)
	}),
	"RefundTransactionByAPI": c2(func(ctx context.Context, a *API, sid, transactionID string) (any, error) {
		return a.cfg.Staff.RefundTransactionByAPI(ctx, sid, transactionID)
	}),
	"Reconcile": c2(func(ctx context.Context, a *API, sid, day string) (any, error) {
		return a.cfg.Staff.Reconcile(ctx, sid, day)
	}),
	"Reprint": c2(func(ctx context.Context, a *API, sid, uuid string) (any, error) {
		return nil, a.cfg.Staff.Reprint(ctx, sid, uuid)
	}),
	"Share": c3(func(ctx context.Context, a *API, sid, uuid string, medium device.Medium) (any, error) {
		return nil, a.cfg.Staff.Share(ctx, sid, uuid, medium)
	}),
	"ResolveUnknown": c2(func(ctx context.Context, a *API, sid, uuid string) (any, error) {
		return a.cfg.Staff.ResolveUnknown(ctx, sid, uuid)
	}),
	"ConfirmUnknown": c3(func(ctx context.Context, a *API, sid, uuid string, d staff.Decision) (any, error) {
		return a.cfg.Staff.ConfirmUnknown(ctx, sid, uuid, d)
	}),
	"AcceptOrder": c3(func(ctx context.Context, a *API, sid, uuid, note string) (any, error) {
		return a.cfg.Staff.AcceptOrder(ctx, sid, uuid, note)
	}),
	"Settings": c1(func(ctx context.Context, a *API, sid string) (any, error) { return a.cfg.Staff.Settings(ctx, sid) }),
	"SaveSetting": c3(func(ctx context.Context, a *API, sid, key string, value json.RawMessage) (any, error) {
		return a.saveSetting(ctx, sid, key, value)
	}),
	"ReloadCatalog": c1(func(ctx context.Context, a *API, sid string) (any, error) { return a.reloadCatalog(ctx, sid) }),
	"Report": c2(func(ctx context.Context, a *API, sid, day string) (any, error) {
		return a.report(ctx, sid, day)
	}),
	"ReportCSV": c2(func(ctx context.Context, a *API, sid, day string) (any, error) {
		return a.reportCSV(ctx, sid, day)
	}),
	"PrintZ": c2(func(ctx context.Context, a *API, sid, day string) (any, error) {
		return a.cfg.Staff.PrintZ(ctx, sid, day)
	}),
	"Closings": c1(func(ctx context.Context, a *API, sid string) (any, error) {
		return a.cfg.Staff.Closings(ctx, sid)
	}),
	"PrintClosing": c2(func(ctx context.Context, a *API, sid string, number int64) (any, error) {
		return a.cfg.Staff.PrintClosing(ctx, sid, number)
	}),
	"PrintReport": c2(func(ctx context.Context, a *API, sid, day string) (any, error) {
		return a.printReport(ctx, sid, day)
	}),
	"Audit": c2(func(ctx context.Context, a *API, sid string, limit int) (any, error) {
		return a.cfg.Staff.Audit(ctx, sid, limit)
	}),
	"CloseCheckout": c1(func(ctx context.Context, a *API, sid string) (any, error) { return a.closeCheckout(ctx, sid) }),
	"Quit":          c1(func(ctx context.Context, a *API, sid string) (any, error) { return a.quit(ctx, sid) }),
	"Restart":       c1(func(ctx context.Context, a *API, sid string) (any, error) { return a.restart(ctx, sid) }),
}

// decode reads the arguments into out, in order.
func decode(args []json.RawMessage, out ...any) error {
	for i, p := range out {
		if err := json.Unmarshal(args[i], p); err != nil {
			return &fault.ArgError{Msg: fmt.Sprintf("argument %d: expected %s: %v", i+1, reflect.TypeOf(p).Elem(), err)}
		}
	}
	return nil
}

// withGesture is a PIN pad call: a string, and the gesture that opened
// the pad, optional.
func withGesture(f func(context.Context, *API, staff.Origin, string) (any, error)) call {
	return call{1, 1, func(ctx context.Context, a *API, args []json.RawMessage) (any, error) {
		var x string
		var g Gesture
		if err := decode(args, &x); err != nil {
			return nil, err
		}
		if len(args) > 1 {
			if err := json.Unmarshal(args[1], &g); err != nil {
				return nil, &fault.ArgError{Msg: fmt.Sprintf("argument 2: expected a gesture: %v", err)}
			}
		}
		return f(ctx, a, a.origin(g), x)
	}}
}

func c0(f func(context.Context, *API) (any, error)) call {
	return call{0, 0, func(ctx context.Context, a *API, _ []json.RawMessage) (any, error) { return f(ctx, a) }}
}

func c1[A any](f func(context.Context, *API, A) (any, error)) call {
	return call{1, 0, func(ctx context.Context, a *API, args []json.RawMessage) (any, error) {
		var x A
		if err := decode(args, &x); err != nil {
			return nil, err
		}
		return f(ctx, a, x)
	}}
}

func c2[A, B any](f func(context.Context, *API, A, B) (any, error)) call {
	return call{2, 0, func(ctx context.Context, a *API, args []json.RawMessage) (any, error) {
		var (
			x A
			y B
		)
		if err := decode(args, &x, &y); err != nil {
			return nil, err
		}
		return f(ctx, a, x, y)
	}}
}

func c3[A, B, C any](f func(context.Context, *API, A, B, C) (any, error)) call {
	return call{3, 0, func(ctx context.Context, a *API, args []json.RawMessage) (any, error) {
		var (
			x A
			y B
			z C
		)
		if err := decode(args, &x, &y, &z); err != nil {
			return nil, err
		}
		return f(ctx, a, x, y, z)
	}}
}
