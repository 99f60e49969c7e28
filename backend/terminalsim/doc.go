// Package terminalsim is a simulated payment terminal: a Local API v4 server
// (shared/spec/local-api.md is the authority) with scripted
// customers, a virtual printer, a ledger of every money movement and an mDNS
// advertisement. Tests use it in-process; `comptoir simulator` runs it alone
// for demos.
//
// # Using it
//
//	sim, err := terminalsim.New(terminalsim.Config{TimeScale: 0.001})
//	err = sim.Start("127.0.0.1:0")          // or ListenAndServe(ctx, ":16125")
//	defer sim.Close()                        // ends held requests, stops payments
//	client, _ := localapi.NewClient(sim.URL())
//
//	sim.Script(terminalsim.Hold())           // the next payment waits for the test
//	go client.Payment(ctx, req)
//	sim.WaitPhase(ctx, req.IdempotentUUID, terminalsim.PhaseBanking)
//	sim.PresentCard()                        // or Decline, CancelOnTerminal, ChooseTip
//	sim.ChargesFor(req.IdempotentUUID)       // what the customer paid
//
// Handler serves the same routes for an httptest.Server; close the Terminal
// before the server, since held requests end only then.
//
// # Time
//
// Every wait is multiplied by Config.TimeScale (1 is real time; tests use
// 0.001 to 0.01): the handover (1.5 s), the optional screens window (60 s),
// the card-read window (60 s), the request hold (15 min), a reversal's
// answer (1 s; the reversal itself is made when the request arrives), and
// the delays of behaviours. The terminal's clock, which dates transactions and decides the
// 16 h (reversal), 24 h (idempotency) and 30 day (history) rules, is real
// time plus an offset that Advance and SetClock move: tests advance it
// rather than wait.
//
// # The rules it follows
//
//  1. One payment at a time. A /payment with another idempotentUuid (or
//     none) while one is in progress answers HTTP 200 {"status":"ko",
//     "message": localapi.BusyMessage(<uuid in progress>)}; so does an /abort
//     naming another uuid.
//  2. Optional screens (the tip screen) run when enableGiftScreen is true, or
//     null/absent with the terminal's tip setting on (Config.TipsEnabled,
//     SetTipsEnabled); never for refunds. They last until the customer acts,
//     at most 60 s, after which the payment is aborted (ko, no message). The
//     tip chosen is added to the request's giftAmount, reported as
//     giftAmount and charged.
//  3. The handover to the banking screen comes 1.5 s after the request (or
//     after the optional screens end). Then a 60 s card-read window: an
//     accepted card is ok (charged), a refused one ko with no message, no
//     card in time ko with no message.
//  4. Idempotency for 24 h of terminal time: a decided uuid gets its
//     transaction replayed byte for byte (a ko as is, an ok with its
//     transactionId), without consuming a scripted behaviour. A /payment
//     naming the payment in progress attaches to it; every waiter gets its
//     answer. A request without idempotentUuid gets an internal one (not
//     echoed in the answer, but recorded in the ledger).
//  5. A request is held open at most 15 min; then the connection is closed
//     without an answer. The payment goes on.
//  6. /abort before the handover stops the payment: the abort answers ok
//     once the payment has ended, the /payment answers ko with no message,
//     nothing is charged and the uuid is remembered as that ko. After the
//     handover the abort is held until the payment ends, then answers ko
//     "Abort not possible"; the payment's own answer is authoritative (ok:
//     charged). Nothing in progress: "Nothing to abort". A payment started on
//     the terminal's keypad (StartOnKeypad): "Abort is not allowed", and
//     /payment answers busy. Without idempotentUuid (the earlier form) the
//     abort applies to whatever is in progress and its answer carries that
//     payment's idempotentUuid. FailNextAbortAnswers makes the next aborts'
//     answers travel badly: http500_not_started (HTTP 500, the abort never
//     acted on), http500 (acted on, answered HTTP 500) or lost (acted on,
//     the connection closed unanswered).
//  7. /reversal reverses an ok debit of this terminal, under 16 h old, for
//     exactly amount + giftAmount, once: ok with a new reversalTransactionId
//     and the initialTransactionId, and a reversal in the ledger. Otherwise
//     the specification's messages, checked in this order: id missing
//     (mandatory), unknown (not found for ID), not an ok debit (refunds,
//     declined transactions, reversals: cannot reverse), already reversed,
//     16 h passed (cannot reverse), amount mismatch. FailNextReversal queues
//     the two other messages (no gateway, unexpected error).
//     FailNextReversalAnswers makes the next answers travel badly: lost (the
//     reversal made, the connection closed unanswered), http500 (made,
//     answered HTTP 500) or http500_not_started (HTTP 500, nothing made).
//  8. transactionType "refund" is a refund: no optional screens, a card read,
//     a ledger entry of kind refund (Net negative), transactionType "refund"
//     in the answer. Any other value is a debit.
//  9. /transactions lists cards read: ok and declined debits and refunds, and
//     reversals, newest first, with count, limit, offset, total. limit
//     defaults to 20 and is capped at 200, offset defaults to 0. Without
//     date or time filters: the last 30 days. Otherwise the window is
//     [startDate startTime, endDate endTime), in UTC: a date without a time
//     is at 00:00:00, a time without a date is on the terminal's current day,
//     a missing end is open. createdAt is UTC ISO 8601 with milliseconds.
//  10. /print: data missing or empty, "Parameter 'data' is missing or empty";
//     format other than text or escpos (lower case), "Wrong parameter
//     'format'"; ok otherwise. The printed ticket is logged (Printed, GET
//     /sim/printed), ESC/POS decoded to text by backend/escpos. Out of paper
//     (SetPaper(false)) it still answers ok and prints nothing. An approved
//     payment's receiptTicket is printed too, and a share with medium print.
//  11. /share-receipt: transactionId missing or unknown, receiptTicket
//     missing or its data missing or its format not text, medium missing or
//     not service/sms/email/print in lower case: the specification's
//     messages in that order. JSON of the wrong shape (not an object, a field
//     of the wrong type) is "Error: bad request". Shares are logged.
//  12. /ping answers {"status":"ok"}; showMessage=true counts a greeting.
//  13. A body that is not JSON, on any POST, is answered HTTP 400 with an
//     empty body; so is, except on /share-receipt, JSON of the wrong shape.
//     Unknown keys are ignored. An empty body is {} for /abort and
//     /transactions.
//  14. GET /payment/{amount} is a debit of that amount and nothing else.
//  15. Answers use the specification's field names and omit null keys
//     (through localapi's types: a zero giftAmount is omitted too). Amounts
//     are cents, currencyCode is Config.CurrencyCode. An approved or declined
//     transaction has a transactionId, appVersion, cardToken, card tickets
//     showing a masked PAN ("**** **** **** 4242", never a full number),
//     paymentApplication, scheme and issuer; a payment that never read a
//     card has none of these. cartId, reference, customer,
//     checkoutExternalId and the three external fields are echoed.
//  16. acceptedPayment: lunch_vouchers_only pays with a meal voucher card
//     (CONECS, capped at 25.00: a larger total is declined in full, never
//     split); a card the medium type excludes is declined.
//
// Messages the specification does not give are the package's constants:
// MsgInvalidAmount ("Parameter 'amount' is missing or invalid", for an
// amount missing, <= 0 or not an integer), MsgInvalidGiftAmount (a negative
// giftAmount), MsgCheckoutExternalIDRequired (external fields without a
// checkoutExternalId), MsgCheckoutExternalIDUsed (a checkoutExternalId
// that a completed ok transaction already uses) and MsgTransactionsParam (a
// badly formatted /transactions filter). Such refusals start nothing: the
// uuid stays unknown.
//
// # Behaviours
//
// Each payment started through the Local API takes the first behaviour of a
// FIFO (Script, POST /sim/script), else the one its amount selects (below),
// else the default (SetDefault, Config.Default; Approve() if unset). A
// Behaviour says what the customer does and how the answer travels:
//
//	Approve()                  card accepted 3 s after the handover; 2 s on the tip screen, no tip
//	Approve().WithTip(200)     chooses 2.00 on the tip screen, when shown
//	Approve().After(d)         card after d (beyond 60 s: the window expires, ko)
//	Decline()                  card refused: ko, no message
//	NoCard()                   no card: ko when the 60 s window expires
//	CustomerCancels()          Cancel pressed on the terminal: ko, no message
//	AnswerLostAfterCharge()    charged, then every waiting /payment connection is closed unanswered
//	AnswerLateAfterCharge(d)   charged, the waiting answers sent d later (a resend is answered at once)
//	HTTP500Charged()           charged, answered HTTP 500 with no body; the uuid is known (ok)
//	HTTP500NotCharged()        HTTP 500 with no body at once; nothing started, the uuid stays unknown
//	OddResponse()              approved; transactionType "na", unknown keys, optional keys missing
//	Hold()                     waits for the test: PresentCard, Decline, CancelOnTerminal, ChooseTip;
//	                           its windows never expire
//	HoldBeforeHandover()       Hold, and the handover waits for Handover() (or an abort)
//
// Fields combine: Hold().WithAnswer(AnswerLost, 0) loses the answer of a
// card the test presents. WaitPhase, WaitFor, WaitIdle and Current observe
// payments (phases screens, preparing, banking, done; held aborts; waiting
// requests) without sleeping.
//
// # Test amounts
//
// For demos, with nothing scripted, the cents of the amount choose the
// customer (Config.NoTestAmounts turns this off):
//
//	cents  preset                what happens
//	..51   decline               declined (ko, no message)
//	..52   no_card               card never presented: ko after the 60 s window
//	..53   answer_lost           approved and charged, HTTP answer lost
//	..54   answer_late           approved and charged, answer 70 s late
//	..55   http500_charged       approved and charged, HTTP 500 with no body
//	..56   odd                   approved, odd but valid answer
//	..57   slow                  approved after a slow customer (20 s)
//	..58   http500_not_charged   HTTP 500 at once, nothing started or charged
//	..59   cancel                the customer presses Cancel (ko, no message)
//	other  (default)             approved after about 3 s
//
// # Ledger
//
// The ledger (Ledger, ChargesFor, GET /sim/ledger) records every money
// movement when it happens, whatever becomes of the HTTP answer: approved
// debits (amount + giftAmount), refunds and reversals, with the terminal's
// time, transactionId, idempotentUuid, cartId, amounts, Net (+Total for a
// debit, -Total for refunds and reversals) and how the answer was delivered.
// It is what crash tests compare with the kiosk's journal.
//
// # Control API
//
// Under /sim/, JSON; errors are {"error": "..."} with HTTP 400 or 409:
//
//	GET  /sim/               routes, presets, test amounts
//	GET  /sim/state          the terminal, the payment in progress, the script
//	GET  /sim/ledger         money movements
//	GET  /sim/printed        printed tickets (decoded ESC/POS lines included)
//	GET  /sim/shares         shared receipts
//	POST /sim/script         {"clear": bool, "behaviours": [B...], "default": B, "reversalErrors": ["..."],
//	                          "reversalAnswers": ["lost"], "abortAnswers": ["http500_not_started"]}
//	POST /sim/customer       {"action": "present_card|decline|tip|cancel|handover|timeout", "tip": 150, "idempotentUuid": "..."}
//	POST /sim/keypad         {"amount": 1200, "behaviour": B}: a payment on the terminal's keypad
//	POST /sim/clock          {"advance": "25h"} or {"set": "2026-05-01T10:00:00Z"}
//	POST /sim/settings       {"tipsEnabled": true, "paper": false}
//	POST /sim/reset          forget everything, back to the configuration
//
// A behaviour B is {"preset": name} and any of outcome (approve, decline,
// no_card, cancel), delay, tip, tipDelay, card (visa, mastercard, cb, amex,
// conecs), hold, holdHandover, answer (normal, lost, late, http500,
// http500_not_started), late, odd; durations are "3s" strings or seconds.
// Unknown fields are refused here, unlike in the Local API. For example:
//
//	curl -X POST localhost:16125/sim/script -d '{"behaviours":[{"preset":"hold"}]}'
//	curl -X POST localhost:16125/sim/customer -d '{"action":"present_card"}'
//	curl localhost:16125/sim/ledger
//
// # mDNS
//
// Advertise registers the simulator like a real terminal: service
// _http._tcp in local., instance Config.InstanceName ("Yavin SIM-XXXX" by
// default), the listening port, TXT path=/localapi/v4, api=v4, sim=1. It
// uses zeroconf.RegisterProxy, since zeroconf.Register drops loopback
// addresses; with Loopback and Interfaces set to the loopback interface
// nothing leaves the machine, which is how the tests run.
package terminalsim
