package localapi

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// The terminal's error messages, verbatim from the specification. The
// simulator answers with these; the client recognises them (tolerating
// differences of case and spacing around colons) as typed codes.
const (
	MsgPrintDataMissing        = "Parameter 'data' is missing or empty"
	MsgPrintWrongFormat        = "Wrong parameter 'format'"
	MsgShareTransactionID      = "Parameter 'transactionId' is missing or invalid"
	MsgShareReceiptTicket      = "Parameter 'receiptTicket' is missing or invalid"
	MsgShareMedium             = "Parameter 'medium' is missing or invalid"
	MsgShareBadRequest         = "Error: bad request"
	MsgReversalIDMandatory     = "Error : Transaction ID is mandatory"
	msgReversalNotFoundPrefix  = "Error : Transaction not found for ID: "
	MsgReversalAmountMismatch  = "Error : Amount mismatch"
	MsgReversalAlreadyReversed = "Error : Transaction has already been reversed"
	MsgReversalNotReversible   = "Error : Cannot reverse this Transaction or time window expired"
	MsgReversalNoGateway       = "Error : No suitable gateway found to handle reversal"
	MsgReversalUnexpected      = "Error : An unexpected error occurred. Please try again later."
	MsgAbortNotPossible        = "Abort not possible"
	MsgNothingToAbort          = "Nothing to abort"
	MsgAbortNotAllowed         = "Abort is not allowed"
	msgAbortInternalPrefix     = "Error while responding to local API: "
	msgBusyPrefix              = "A transaction with the given idempotentUuid "
	msgBusySuffix              = " is already in progress"
)

// ReversalNotFoundMessage is the message for an unknown transaction id.
func ReversalNotFoundMessage(id string) string { return msgReversalNotFoundPrefix + id }

// AbortInternalMessage is the message of an internal error of /abort.
func AbortInternalMessage(cause string) string { return msgAbortInternalPrefix + cause }

// BusyMessage is the message of a payment or an abort refused because another
// payment is in progress; the uuid is wrapped in backticks.
func BusyMessage(uuid string) string { return msgBusyPrefix + "`" + uuid + "`" + msgBusySuffix }

// Code names an application error the specification defines.
type Code string

const (
	CodeUnknown             Code = "unknown" // a message the specification does not list
	CodeBusy                Code = "busy"    // another payment is in progress
	CodeNothingToAbort      Code = "nothing_to_abort"
	CodeAbortNotPossible    Code = "abort_not_possible"
	CodeAbortNotAllowed     Code = "abort_not_allowed"
	CodeAbortInternal       Code = "abort_internal"
	CodePrintDataMissing    Code = "print_data_missing"
	CodePrintWrongFormat    Code = "print_wrong_format"
	CodeShareTransactionID  Code = "share_transaction_id"
	CodeShareReceiptTicket  Code = "share_receipt_ticket"
	CodeShareMedium         Code = "share_medium"
	CodeShareBadRequest     Code = "share_bad_request"
	CodeReversalIDMandatory Code = "reversal_id_mandatory"
	CodeReversalNotFound    Code = "reversal_not_found"
	CodeReversalAmount      Code = "reversal_amount_mismatch"
	CodeReversalAlready     Code = "reversal_already_reversed"
	CodeReversalNotEligible Code = "reversal_not_eligible"
	CodeReversalNoGateway   Code = "reversal_no_gateway"
	CodeReversalUnexpected  Code = "reversal_unexpected"
	CodeUnspecified         Code = "unspecified" // ko with no message where one is expected
)

var (
	exactMessages = map[string]Code{}
	busyPattern   = regexp.MustCompile("^a transaction with the given idempotentuuid\\s*`?([^`\\s]*)`?\\s*is already in progress")
	notFoundArg   = regexp.MustCompile(`(?i)for\s+id\s*:\s*(.*)$`)
)

func init() {
	for msg, code := range map[string]Code{
		MsgPrintDataMissing:        CodePrintDataMissing,
		MsgPrintWrongFormat:        CodePrintWrongFormat,
		MsgShareTransactionID:      CodeShareTransactionID,
		MsgShareReceiptTicket:      CodeShareReceiptTicket,
		MsgShareMedium:             CodeShareMedium,
		MsgShareBadRequest:         CodeShareBadRequest,
		MsgReversalIDMandatory:     CodeReversalIDMandatory,
		MsgReversalAmountMismatch:  CodeReversalAmount,
		MsgReversalAlreadyReversed: CodeReversalAlready,
		MsgReversalNotReversible:   CodeReversalNotEligible,
		MsgReversalNoGateway:       CodeReversalNoGateway,
		MsgReversalUnexpected:      CodeReversalUnexpected,
		MsgAbortNotPossible:        CodeAbortNotPossible,
		MsgNothingToAbort:          CodeNothingToAbort,
		MsgAbortNotAllowed:         CodeAbortNotAllowed,
	} {
		exactMessages[normalize(msg)] = code
	}
}

// normalize folds the variations seen between terminal versions: case,
// runs of spaces, the space before a colon and a trailing full stop.
func normalize(s string) string {
	s = strings.ToLower(strings.Join(strings.Fields(s), " "))
	s = strings.ReplaceAll(s, " :", ":")
	return strings.TrimSuffix(s, ".")
}

// Classify returns the code of an application error message and, for the
// messages that carry one, its argument (the busy uuid, the unknown
// transaction id, the internal cause).
func Classify(message string) (Code, string) {
	n := normalize(message)
	if code, ok := exactMessages[n]; ok {
		return code, ""
	}
	if m := busyPattern.FindStringSubmatch(n); m != nil {
		// Take the uuid from the original text: normalising lowered its case.
		if i := strings.IndexByte(message, '`'); i >= 0 {
			if j := strings.IndexByte(message[i+1:], '`'); j >= 0 {
				return CodeBusy, message[i+1 : i+1+j]
			}
		}
		return CodeBusy, m[1]
	}
	if p := normalize(msgReversalNotFoundPrefix); strings.HasPrefix(n, p) {
		arg := ""
		if m := notFoundArg.FindStringSubmatch(message); m != nil {
			arg = strings.TrimSpace(m[1])
		}
		return CodeReversalNotFound, arg
	}
	if p := normalize(msgAbortInternalPrefix); strings.HasPrefix(n, p) {
		return CodeAbortInternal, strings.TrimSpace(message[strings.Index(message, ":")+1:])
	}
	return CodeUnknown, ""
}

// APIError is an application error: HTTP 200 with status ko and a message (or,
// outside /payment, a ko with no message). The terminal understood the request
// and refused it; for /payment nothing was charged by this request.
type APIError struct {
	Endpoint string // for example "/abort"
	Message  string // verbatim
	Code     Code
	Arg      string // busy uuid, unknown transaction id or internal cause
	Raw      []byte
}

func (e *APIError) Error() string {
	if e.Message == "" {
		return fmt.Sprintf("localapi %s: ko without message", e.Endpoint)
	}
	return fmt.Sprintf("localapi %s: %s", e.Endpoint, e.Message)
}

// HTTPError is a non-200 HTTP answer. The specification answers malformed
// requests with 400 or 500 and no JSON body; whatever the body, the request
// was not processed as a payment.
type HTTPError struct {
	Endpoint   string
	StatusCode int
	Body       []byte // at most a few KiB, for the journal
}

func (e *HTTPError) Error() string {
	return fmt.Sprintf("localapi %s: HTTP %d", e.Endpoint, e.StatusCode)
}

// AnswerBody is what came back, for the journal.
func (e *HTTPError) AnswerBody() []byte { return e.Body }

// DecodeError is a 200 answer whose body is not a response the client can
// read: truncated or malformed JSON, or no status. What the terminal did is
// unknown.
type DecodeError struct {
	Endpoint string
	Body     []byte
	Err      error
}

func (e *DecodeError) Error() string {
	return fmt.Sprintf("localapi %s: unreadable response: %v", e.Endpoint, e.Err)
}

func (e *DecodeError) Unwrap() error { return e.Err }

// AnswerBody is what came back, for the journal.
func (e *DecodeError) AnswerBody() []byte { return e.Body }

// TransportError is a failure to exchange the request and its answer:
// connection refused or reset, timeout, cancellation, a connection closed
// mid-response.
type TransportError struct {
	Endpoint string
	// Sent is true once the whole request was written to the connection: the
	// terminal may have acted on it. False means it certainly did not, as far
	// as Go can tell (a refused connection, a failed dial).
	Sent bool
	// Timeout is true when the context's deadline passed.
	Timeout bool
	// Canceled is true when the context was cancelled.
	Canceled bool
	Err      error
}

func (e *TransportError) Error() string {
	sent := "not sent"
	if e.Sent {
		sent = "sent"
	}
	return fmt.Sprintf("localapi %s (%s): %v", e.Endpoint, sent, e.Err)
}

func (e *TransportError) Unwrap() error { return e.Err }

// NeverSent: the request certainly did not reach the terminal.
func (e *TransportError) NeverSent() bool { return !e.Sent }

// TimedOut: the context's deadline passed before an answer.
func (e *TransportError) TimedOut() bool { return e.Timeout }

// ValidationError is a request the client refused to send because the
// specification forbids it. Nothing left the process.
type ValidationError struct {
	Field  string
	Reason string
}

func (e *ValidationError) Error() string {
	return fmt.Sprintf("localapi: invalid %s: %s", e.Field, e.Reason)
}

// ErrorCode returns the Code of an *APIError in err's chain, or "".
func ErrorCode(err error) Code {
	var ae *APIError
	if errors.As(err, &ae) {
		return ae.Code
	}
	return ""
}

// IsTransport reports whether err leaves the outcome of the request unknown or
// unprocessed at the transport level: a *TransportError, an *HTTPError or a
// *DecodeError. Such an error on /payment never means failure: the caller
// must find out what happened (the same idempotentUuid tells).
func IsTransport(err error) bool {
	var te *TransportError
	var he *HTTPError
	var de *DecodeError
	return errors.As(err, &te) || errors.As(err, &he) || errors.As(err, &de)
}
