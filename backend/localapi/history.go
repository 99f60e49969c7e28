package localapi

import "context"

// Transactor reads a terminal's history; *Client satisfies it, and so do
// the wrappers that follow a terminal across addresses. backend/device
// reads whole periods through it.
type Transactor interface {
	Transactions(ctx context.Context, req *TransactionsRequest) (*TransactionList, error)
}
