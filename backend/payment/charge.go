package payment

import (
	"encoding/json"
	"strings"

	"github.com/comptoir-pos/comptoir/backend/cloudapi"
	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/localapi"
)

// What a debit may be paid with (Request.AcceptedMedium); both the Local
// API and the Cloud API name them so.
const (
	MediumMealVouchers = localapi.MediumTypeLunchVouchersOnly
	MediumBankCards    = localapi.MediumTypeBankCardsOnly
)

// ChargeOf reads the provider's answer that the journal kept for an
// attempt (its Response) in the words of the channel that gave it, for
// receipts and staff screens: scheme, tickets, tip. ok is false when there
// is no such answer to read: a reversal, an attempt settled by staff or
// from nothing, a raw answer that is not a transaction.
func ChargeOf(a journal.Attempt) (Charge, bool) {
	if len(a.Response) == 0 || a.Kind == journal.KindReversal {
		return Charge{}, false
	}
	switch a.Channel {
	case journal.ChannelCloud:
		tx, err := cloudapi.ParseTransaction(a.Response)
		if err != nil {
			return Charge{}, false
		}
		return *cloudCharge(a, tx, strings.EqualFold(tx.Status, cloudapi.StatusOK)), true
	default:
		var tx localapi.Transaction
		if json.Unmarshal(a.Response, &tx) != nil || tx.Status == "" {
			return Charge{}, false
		}
		return *localCharge(&tx), true
	}
}
