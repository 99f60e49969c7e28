// Package cloudsim is a simulated provider cloud: the Cloud API (v5
// payments acknowledged at once and polled, the v4 forms for abort,
// reversal, print, share-receipt, cancel and the history) in front of
// virtual terminals named by serial number.
//
// Each virtual terminal is a terminalsim.Terminal driven in process: the
// phases, the handover, the abort rules, idempotency, tips and the test
// amounts are the terminal simulator's, never written a second time. The
// cloud adds what the specification gives the cloud: the acknowledgement
// {status, transactionId}, its own transaction ids (the terminal's id is
// localId), the 5 s validity of a notification to a terminal that is
// offline (the action expires, is never retransmitted and has no webhook),
// both authentication headers and their 400 and 401 answers, the company
// webhook with its retry schedule (1 min, 10 min, 1 h, 8 h, then
// deactivated), and the history the v4 transactions form returns.
//
// Where the specification says "not shown", the simulator makes one choice
// and a control lets tests make the others: the poll of an expired action
// answers {status: "expired"} (or pending for ever, or 404), the history
// lists checkoutExternalId and idempotentUuid (or only what the
// specification lists). Faults are injected through the control API under
// /sim/: a lost acknowledgement (the payment runs, its answer never
// arrives), an HTTP status answered instead of processing a request, a
// terminal going offline. Each virtual terminal's own control API is under
// /sim/terminals/{serial}/sim/.
//
// The routes are grouped by API family so that the Webservices and
// payment links can join the same cloud and share its transactions.
package cloudsim
