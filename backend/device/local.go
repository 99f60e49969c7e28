package device

import (
	"context"
	"errors"
	"fmt"

	"github.com/comptoir-pos/comptoir/backend/localapi"
)

// LocalAPI is the part of the Local API client the terminal's services
// use; *localapi.Client satisfies it.
type LocalAPI interface {
	localapi.Transactor
	Print(ctx context.Context, req *localapi.PrintRequest) (*localapi.StatusResponse, error)
	ShareReceipt(ctx context.Context, req *localapi.ShareReceiptRequest) (*localapi.StatusResponse, error)
	Ping(ctx context.Context, showMessage bool) (*localapi.PingResponse, error)
}

// ErrNoAddress is the cause of a NotSent error when no terminal address is
// known (discovery has not found one yet).
var ErrNoAddress = errors.New("no terminal address is known")

// Local is the terminal on the shop's network, through its Local API.
type Local struct {
	client func() (LocalAPI, error)
}

// LocalClient is the terminal behind this client.
func LocalClient(c LocalAPI) *Local {
	return &Local{client: func() (LocalAPI, error) { return c, nil }}
}

// LocalAt is the terminal at the address baseURL returns at each call: for
// a terminal found by discovery, whose address may change. An empty
// address fails as NotSent, with nothing sent.
func LocalAt(baseURL func() string, opts ...localapi.Option) *Local {
	return &Local{client: func() (LocalAPI, error) {
		u := baseURL()
		if u == "" {
			return nil, &Error{Kind: NotSent, Err: ErrNoAddress}
		}
		c, err := localapi.NewClient(u, opts...)
		if err != nil {
			return nil, &Error{Kind: NotSent, Err: err}
		}
		return c, nil
	}}
}

// LocalHistory reads a Local API terminal's history.
func LocalHistory(t localapi.Transactor) Historian { return localHistory{t} }

type localHistory struct{ t localapi.Transactor }

func (h localHistory) History(ctx context.Context, q HistoryQuery) (HistoryPage, error) {
	l, err := h.t.Transactions(ctx, &localapi.TransactionsRequest{StartDate: q.StartDate, EndDate: q.EndDate,
		StartTime: q.StartTime, EndTime: q.EndTime, Limit: q.Limit, Offset: q.Offset})
	if err != nil {
		if errors.Is(err, localapi.ErrPageOverfull) || errors.Is(err, localapi.ErrTooLarge) {
			return HistoryPage{}, &Error{Kind: Unsure, Err: fmt.Errorf("%w: %w", ErrHistoryPage, err)}
		}
		return HistoryPage{}, localErr(err)
	}
	p := HistoryPage{Entries: make([]HistoryEntry, 0, len(l.Transactions)), Total: l.Total, Limit: l.Limit, Offset: l.Offset, Raw: l.Raw}
	for _, e := range l.Transactions {
		p.Entries = append(p.Entries, HistoryEntry{Status: e.Status, TransactionID: e.TransactionID, Amount: e.Amount,
			GiftAmount: e.GiftAmount, CurrencyCode: e.CurrencyCode, Issuer: e.Issuer, Scheme: e.Scheme, Type: e.Type,
			CartID: e.CartID, Reference: e.Reference, CreatedAt: e.CreatedAt})
	}
	return p, checkPage(q, p)
}

func (l *Local) Print(ctx context.Context, p Print) (Answer, error) {
	c, err := l.client()
	if err != nil {
		return Answer{}, err
	}
	r, err := c.Print(ctx, &localapi.PrintRequest{Data: p.Data, Format: string(p.Format)})
	return localAnswer(r, err)
}

func (l *Local) ShareReceipt(ctx context.Context, s Share) (Answer, error) {
	c, err := l.client()
	if err != nil {
		return Answer{}, err
	}
	r, err := c.ShareReceipt(ctx, &localapi.ShareReceiptRequest{ReceiptTicket: LocalTicket(s.Ticket), TransactionID: s.TransactionID, Medium: string(s.Medium)})
	return localAnswer(r, err)
}

func (l *Local) History(ctx context.Context, q HistoryQuery) (HistoryPage, error) {
	c, err := l.client()
	if err != nil {
		return HistoryPage{}, err
	}
	return localHistory{c}.History(ctx, q)
}

func (l *Local) Ping(ctx context.Context, greet bool) (Answer, error) {
	c, err := l.client()
	if err != nil {
		return Answer{}, err
	}
	r, err := c.Ping(ctx, greet)
	if err != nil {
		return Answer{}, localErr(err)
	}
	return Answer{Message: r.Message, Raw: r.Raw}, nil
}

func localAnswer(r *localapi.StatusResponse, err error) (Answer, error) {
	if err != nil {
		return Answer{}, localErr(err)
	}
	return Answer{Message: r.Message, Raw: r.Raw}, nil
}

// localErr classifies a Local API client's error.
func localErr(err error) error {
	var (
		ae *localapi.APIError
		ve *localapi.ValidationError
	)
	switch {
	case errors.As(err, &ae):
		return &Error{Kind: Refused, Code: localCode(ae.Code), Message: ae.Message, Raw: ae.Raw, Err: err}
	case errors.As(err, &ve):
		return &Error{Kind: Invalid, Message: ve.Field + " " + ve.Reason, Err: err}
	}
	return wireErr(err)
}

// localCode is a Local API refusal in this package's words: the Local
// API's own code, CodeOther for a message no specification lists.
func localCode(c localapi.Code) Code {
	if c == localapi.CodeUnknown || c == localapi.CodeUnspecified || c == "" {
		return CodeOther
	}
	return c
}

// RefusalCode names a terminal's refusal from its message: the words of
// the Local API's specification, which the Cloud API passes on.
func RefusalCode(message string) Code {
	c, _ := localapi.Classify(message)
	return localCode(c)
}

// LocalTicket is a receipt ticket in the Local API's words (the Cloud
// API's payment and share-receipt bodies use the same).
func LocalTicket(t *ReceiptTicket) *localapi.ReceiptTicket {
	if t == nil {
		return nil
	}
	out := &localapi.ReceiptTicket{Data: t.Data, Format: string(t.Format)}
	for _, x := range t.TaxBreakdown {
		out.TaxBreakdown = append(out.TaxBreakdown, localapi.Tax{TaxAmount: x.Amount, TaxPercentage: x.Percent})
	}
	return out
}

// LocalCustomer is a customer in the Local API's words.
func LocalCustomer(c *Customer) *localapi.Customer {
	if c == nil {
		return nil
	}
	return &localapi.Customer{FirstName: c.FirstName, LastName: c.LastName, Email: c.Email, Phone: c.Phone, BirthDate: c.BirthDate}
}
