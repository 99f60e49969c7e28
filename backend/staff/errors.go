package staff

import (
	"errors"

	"github.com/comptoir-pos/comptoir/backend/device"
	"github.com/comptoir-pos/comptoir/backend/fault"
	"github.com/comptoir-pos/comptoir/backend/receipt"
)

// Error codes: staff mode's own, beside fault's (EINVALID, ENOTFOUND,
// EINTERNAL). Callers branch on the code; the message is a sentence for
// the member of staff in front of the kiosk.
const (
	ELOCKEDOUT = "ELOCKED_OUT" // too many wrong PINs: wait RetryAfter
	EWRONGPIN  = "EWRONG_PIN"  // the PIN is not the staff PIN
	ENOPIN     = "ENOPIN"      // no PIN set yet (first run)
	EPINSET    = "EPIN_SET"    // a PIN is already set: SetPIN is for the first run only
	// EPINDAMAGED: the stored PIN record cannot be checked safely (damaged,
	// or parameters out of range): `comptoir pin` on the PC sets a new one.
	EPINDAMAGED = "EPIN_DAMAGED"
	ESESSION    = "ESESSION"      // no such session, or it expired or was locked
	EINVALID    = fault.EINVALID  // the request cannot be done as asked; nothing was done
	ENOTFOUND   = fault.ENOTFOUND // no such attempt, order or transaction
	ETERMINAL   = "ETERMINAL"     // the terminal refused, or could not be reached before anything was sent
	EUNKNOWN    = "EUNKNOWN"      // the request may have reached the terminal: check its history
	EINTERNAL   = fault.EINTERNAL // the journal or something else failed
)

// Error is the staff service's error: the domain's one error type, its
// message a sentence for staff (fault.Error.From is empty).
type Error = fault.Error

func errorf(code, format string, args ...any) *Error {
	return fault.Errorf(code, format, args...)
}

// journalErr words a journal error for staff; an error already worded for
// staff passes as it is.
func journalErr(err error, what string) error {
	if err == nil {
		return nil
	}
	if e := fault.As(err); e != nil && e.From == "" {
		return err
	}
	switch fault.CodeOf(err) {
	case fault.ENOTFOUND:
		return &Error{Code: ENOTFOUND, Message: what + ": " + fault.MessageOf(err) + ".", Err: err}
	case fault.ECONFLICT, fault.EINVALID:
		return &Error{Code: EINVALID, Message: what + ": " + fault.MessageOf(err) + ".", Err: err}
	}
	return &Error{Code: EINTERNAL, Message: what + ": the journal could not be read or written (" + fault.MessageOf(err) + ").", Err: err}
}

// reversalRefusals are the sentences for the reversals the terminal
// refuses, by the Local API's code.
var reversalRefusals = map[device.Code]string{
	device.CodeReversalNotFound:    "The terminal does not know this transaction: it was not made on this terminal, so it cannot be reversed here. Nothing was reversed.",
	device.CodeReversalAmount:      "The terminal refused the reversal: the amount does not match the original payment (amount plus tip). Nothing was reversed.",
	device.CodeReversalAlready:     "This payment has already been reversed: the customer was already reimbursed. Nothing more was done.",
	device.CodeReversalNotEligible: "The terminal cannot reverse this payment: it is more than 16 hours old by the terminal's clock, or it is not an approved card payment. Make a refund instead.",
	device.CodeReversalNoGateway:   "The terminal found no payment network to handle the reversal. Nothing was reversed: try again later, or make a refund.",
	device.CodeReversalUnexpected:  "The terminal had an unexpected error. Nothing was reversed: try again in a moment.",
	device.CodeReversalIDMandatory: "The terminal needs the transaction's id to reverse it, and none was sent. Nothing was reversed.",
}

// ReversalMessage is the sentence for a reversal the terminal refused.
func ReversalMessage(code device.Code) string {
	if m, ok := reversalRefusals[code]; ok {
		return m
	}
	return "The terminal refused the reversal. Nothing was reversed."
}

// receiptMessage is the sentence for a print or share the terminal refused
// (backend/receipt words each refusal for staff and for the customer).
func receiptMessage(code device.Code) string { return receipt.RefusalOf(code).Staff }

// terminalErr classifies an error of a call that changes nothing of value
// (print, share, history, ping): refused, or not reached.
func terminalErr(err error, refused func(device.Code) string, what string) error {
	var de *device.Error
	if errors.As(err, &de) {
		switch de.Kind {
		case device.Refused:
			if de.Code == device.CodeUnauthorized {
				return &Error{Code: ETERMINAL, Message: what + ": the provider's cloud refused the API key for this terminal. Check the key and the serial number in the terminal's settings.",
					TerminalCode: string(de.Code), TerminalMessage: de.Message, Err: err}
			}
			return &Error{Code: ETERMINAL, Message: refused(de.Code), TerminalCode: string(de.Code), TerminalMessage: de.Message, Err: err}
		case device.Invalid:
			return &Error{Code: EINVALID, Message: what + ": the request is not valid (" + de.Message + "). Nothing was sent.", Err: err}
		}
	}
	return &Error{Code: ETERMINAL, Message: what + ": the terminal could not be reached or did not answer properly. Check that it is on and connected.", Err: err}
}
