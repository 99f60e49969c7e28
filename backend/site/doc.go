// Package site is the restaurant's message stream: an embedded NATS
// server with JetStream on disk in the data folder (Server), a connection
// to it or to the restaurant's one (Dial), and the publisher that copies
// the journal's outbox to the stream (Publisher).
//
// Money never waits for any of it. The journal commits a fact and its
// outbox row together; the publisher, a goroutine of its own, copies the
// rows afterwards with the row's id as Nats-Msg-Id and marks them
// published once the stream has acknowledged them. A crash between the
// commit and the publish leaves the row unpublished (it goes at the next
// start); a crash between the publish and the mark sends it again, and
// the stream drops the copy (its duplicate window, DuplicateWindow, is far
// longer than that gap).
//
// Subjects, for a restaurant R (a token: letters, digits, '-' and '_'):
//
//	comptoir.R.k.<kiosk>.order.paid       an order paid (OrderFact)
//	comptoir.R.k.<kiosk>.order.cancelled  an order cancelled
//	comptoir.R.k.<kiosk>.order.attention  an order set aside for staff
//	comptoir.R.k.<kiosk>.giveback         money given back (GiveBackFact)
//	comptoir.R.k.<kiosk>.fiscal.closing   a fiscal closing, as signed
//	comptoir.R.k.<kiosk>.fiscal.archive   a monthly archive record
//	comptoir.R.kitchen.<station>.bump     a kitchen screen's bump (backend/kitchen)
//	comptoir.R.presence.<kiosk>           a kiosk's heartbeat: online, terminal status
//
// The stream ORDERS keeps the first seven (limits: DefaultMaxAge); the
// stream PRESENCE keeps the last heartbeat of each kiosk.
//
// The process that runs the site's server is its owner, connected in
// process with every right: it makes the streams and the menu bucket,
// relays head office's menu into it and forwards the facts. Every other
// client, with the site's secret, is a member (MemberPermissions): it
// publishes the facts, bumps and heartbeats and reads the streams and the
// bucket, nothing else (auth.go).
package site
