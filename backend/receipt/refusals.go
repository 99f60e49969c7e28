package receipt

import "github.com/comptoir-pos/comptoir/backend/device"

// Refusal is what the terminal's refusal of a print or a share means, in
// the words of each screen that says so: staff's, and the customer's, who
// is sent to the counter.
type Refusal struct{ Staff, Customer string }

// refusals are the refusals of /print and /share-receipt the Local API
// lists, each written once for both screens.
var refusals = map[device.Code]Refusal{
	device.CodePrintDataMissing: {
		Staff:    "The terminal refused to print: the receipt was empty.",
		Customer: "The receipt was empty: nothing was printed. Please ask at the counter.",
	},
	device.CodePrintWrongFormat: {
		Staff:    "The terminal's printer refused the receipt's format.",
		Customer: "The terminal's printer refused the receipt's format. Please ask at the counter.",
	},
	device.CodeShareTransactionID: {
		Staff:    "The terminal does not know this payment, so it cannot send its receipt.",
		Customer: "The terminal does not know this payment, so it cannot send the receipt. Please ask at the counter.",
	},
	device.CodeShareReceiptTicket: {
		Staff:    "The terminal refused the receipt's content.",
		Customer: "The terminal refused the receipt's content. Please ask at the counter.",
	},
	device.CodeShareMedium: {
		Staff:    "The terminal cannot send receipts this way: choose print, email, SMS or the customer's preference.",
		Customer: "The terminal cannot send receipts this way. Please choose another option.",
	},
	device.CodeShareBadRequest: {
		Staff:    "The terminal refused the request as badly formed.",
		Customer: "The terminal refused the request. Please ask at the counter.",
	},
}

// RefusalOf is what a refused print or share means; a code the lists do
// not name is a refusal without a reason.
func RefusalOf(code device.Code) Refusal {
	if r, ok := refusals[code]; ok {
		return r
	}
	return Refusal{
		Staff:    "The terminal refused the receipt.",
		Customer: "The terminal refused the receipt. Please ask at the counter.",
	}
}
