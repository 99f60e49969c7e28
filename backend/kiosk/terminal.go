package kiosk

import (
	"context"
	"time"

	"github.com/comptoir-pos/comptoir/backend/discovery"
	"github.com/comptoir-pos/comptoir/backend/localapi"
)

// TerminalStatus is what the kiosk needs to know about the terminal.
type TerminalStatus struct {
	State   TerminalState
	Name    string // mDNS instance name, or the address
	Address string // Local API base URL
	Since   time.Time
	Error   string // the last error, for staff
}

// TerminalSource tells the terminal's status. It is asked often: it must
// answer from memory, never from the network.
type TerminalSource interface {
	TerminalStatus() TerminalStatus
}

// TerminalFunc adapts a function to a TerminalSource.
type TerminalFunc func() TerminalStatus

func (f TerminalFunc) TerminalStatus() TerminalStatus { return f() }

// FixedTerminal is a terminal at a fixed address (--terminal, --demo): always
// connected as far as the kiosk knows; an unreachable terminal shows as a
// failed payment, not charged.
func FixedTerminal(name, address string) TerminalSource {
	return TerminalFunc(func() TerminalStatus {
		return TerminalStatus{State: TerminalConnected, Name: name, Address: address}
	})
}

// TrackerStatus follows a discovery.Tracker (or anything with its Status).
func TrackerStatus(t interface{ Status() discovery.Status }) TerminalSource {
	return TerminalFunc(func() TerminalStatus { return FromDiscovery(t.Status()) })
}

// FromDiscovery converts a discovery status.
func FromDiscovery(s discovery.Status) TerminalStatus {
	st := TerminalStatus{Name: s.Instance, Address: s.Address, Since: s.Since, Error: s.LastError}
	switch s.State {
	case discovery.StateConnected, discovery.StateManual:
		st.State = TerminalConnected
	case discovery.StateUnreachable:
		st.State = TerminalUnreachable
	case discovery.StateChoose:
		st.State = TerminalChoose
	case discovery.StateSearching:
		st.State = TerminalSearching
	default:
		st.State = TerminalNone
	}
	if st.Name == "" {
		st.Name = s.Address
	}
	return st
}

// Printer is the terminal's printer and receipt sharing; *localapi.Client
// satisfies it.
type Printer interface {
	Print(ctx context.Context, req *localapi.PrintRequest) (*localapi.StatusResponse, error)
	ShareReceipt(ctx context.Context, req *localapi.ShareReceiptRequest) (*localapi.StatusResponse, error)
}

// PrinterAt is a Printer on the terminal at the address baseURL returns at
// each call: for a discovery.Tracker, whose address may change (pass
// tracker.BaseURL). An empty address fails without sending anything.
func PrinterAt(baseURL func() string, opts ...localapi.Option) Printer {
	return &printerAt{baseURL: baseURL, opts: opts}
}

type printerAt struct {
	baseURL func() string
	opts    []localapi.Option
}

func (p *printerAt) client(endpoint string) (*localapi.Client, error) {
	u := p.baseURL()
	if u == "" {
		return nil, &localapi.TransportError{Endpoint: endpoint, Err: discovery.ErrNoTerminal}
	}
	return localapi.NewClient(u, p.opts...)
}

func (p *printerAt) Print(ctx context.Context, req *localapi.PrintRequest) (*localapi.StatusResponse, error) {
	c, err := p.client("/print")
	if err != nil {
		return nil, err
	}
	return c.Print(ctx, req)
}

func (p *printerAt) ShareReceipt(ctx context.Context, req *localapi.ShareReceiptRequest) (*localapi.StatusResponse, error) {
	c, err := p.client("/share-receipt")
	if err != nil {
		return nil, err
	}
	return c.ShareReceipt(ctx, req)
}
