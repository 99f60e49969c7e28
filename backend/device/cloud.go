package device

import (
	"context"
	"errors"
	"fmt"

	"github.com/comptoir-pos/comptoir/backend/cloudapi"
	"github.com/comptoir-pos/comptoir/backend/localapi"
)

// CloudAPI is the part of the Cloud API client the terminal's services
// use; *cloudapi.Client satisfies it.
type CloudAPI interface {
	Print(ctx context.Context, serial, data, format string) (*cloudapi.Status, error)
	ShareReceipt(ctx context.Context, serial string, receiptTicket any, transactionID, medium string) (*cloudapi.Status, error)
	Transactions(ctx context.Context, r cloudapi.TransactionsRequest) (*cloudapi.TransactionsPage, error)
}

// Cloud is the terminal with this serial number, through the provider's
// Cloud API: the same requests as on the shop's network, carried by the
// provider to the terminal, and the company's history filtered by the
// serial number, in UTC as the terminal's own history counts. Requests
// are checked against the Local API's rules before they leave: the
// terminal applies them at the other end.
func Cloud(api CloudAPI, serial string) *CloudTerminal {
	return &CloudTerminal{api: api, serial: serial}
}

// CloudTerminal is a terminal through the Cloud API.
type CloudTerminal struct {
	api    CloudAPI
	serial string
}

func (t *CloudTerminal) Print(ctx context.Context, p Print) (Answer, error) {
	if err := (&localapi.PrintRequest{Data: p.Data, Format: string(p.Format)}).Validate(); err != nil {
		return Answer{}, localErr(err)
	}
	return cloudAnswer(t.api.Print(ctx, t.serial, p.Data, string(p.Format)))
}

func (t *CloudTerminal) ShareReceipt(ctx context.Context, s Share) (Answer, error) {
	req := &localapi.ShareReceiptRequest{ReceiptTicket: LocalTicket(s.Ticket), TransactionID: s.TransactionID, Medium: string(s.Medium)}
	if err := req.Validate(); err != nil {
		return Answer{}, localErr(err)
	}
	return cloudAnswer(t.api.ShareReceipt(ctx, t.serial, req.ReceiptTicket, req.TransactionID, req.Medium))
}

func (t *CloudTerminal) History(ctx context.Context, q HistoryQuery) (HistoryPage, error) {
	p, err := t.api.Transactions(ctx, cloudapi.TransactionsRequest{SerialNumbers: []string{t.serial}, Timezone: "UTC",
		StartDate: q.StartDate, EndDate: q.EndDate, StartTime: q.StartTime, EndTime: q.EndTime, Limit: q.Limit, Offset: q.Offset})
	if err != nil {
		if errors.Is(err, cloudapi.ErrPageOverfull) || errors.Is(err, cloudapi.ErrTooLarge) {
			return HistoryPage{}, &Error{Kind: Unsure, Err: fmt.Errorf("%w: %w", ErrHistoryPage, err)}
		}
		return HistoryPage{}, cloudErr(err)
	}
	out := HistoryPage{Entries: make([]HistoryEntry, 0, len(p.Transactions)), Total: p.Total, Limit: p.Limit, Offset: p.Offset, Raw: p.Raw}
	for _, e := range p.Transactions {
		out.Entries = append(out.Entries, HistoryEntry{Status: e.Status, TransactionID: e.TransactionID, Amount: e.Amount,
			GiftAmount: e.GiftAmount, CurrencyCode: e.CurrencyCode, Issuer: e.Issuer, Scheme: e.Scheme, Type: e.Kind(),
			CartID: e.CartID, CreatedAt: e.CreatedAt})
	}
	return out, checkPage(q, out)
}

// Ping: the Cloud API has no ping. A one-transaction history read checks
// what can be checked from here: the provider answers and accepts the key
// for this terminal. Whether the terminal itself is online shows at the
// next payment (a request to an offline terminal expires).
func (t *CloudTerminal) Ping(ctx context.Context, _ bool) (Answer, error) {
	p, err := t.api.Transactions(ctx, cloudapi.TransactionsRequest{SerialNumbers: []string{t.serial}, Limit: 1})
	if err != nil {
		return Answer{}, cloudErr(err)
	}
	return Answer{Message: "the provider's cloud answers for terminal " + t.serial, Raw: p.Raw}, nil
}

func cloudAnswer(s *cloudapi.Status, err error) (Answer, error) {
	if err != nil {
		return Answer{}, cloudErr(err)
	}
	return Answer{Message: s.Message, Raw: s.Raw}, nil
}

// cloudErr classifies a Cloud API client's error. A refusal carries the
// terminal's message when the terminal refused, which names the same
// refusals as on the shop's network.
func cloudErr(err error) error {
	var (
		ae *cloudapi.APIError
		ue *cloudapi.AuthError
	)
	switch {
	case errors.As(err, &ae):
		return &Error{Kind: Refused, Code: RefusalCode(ae.Message), Message: ae.Message, Raw: ae.Body, Err: err}
	case errors.As(err, &ue):
		return &Error{Kind: Refused, Code: CodeUnauthorized, Message: "the API key is not valid, or this terminal is not accessible with it", Raw: ue.Body, Err: err}
	}
	return wireErr(err)
}
