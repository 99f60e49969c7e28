// Package discovery finds the card terminal on the LAN by mDNS (DNS-SD),
// proves it is a terminal with GET /ping, adopts one and binds it to what
// identifies it, and finds it again when DHCP moves it.
//
// # Browsing
//
// A terminal's payment app announces service type _http._tcp with an
// instance name containing "yavin" on port 16125. Browse runs one bounded
// window over grandcat/zeroconf and keeps the instances whose unescaped name
// contains the name filter or whose port is the terminal port; each is then
// pinged, and only a terminal that answered (Confirmed) is ever offered.
// A candidate is pinged over plain HTTP first, then, when that fails with
// something listening, over HTTPS: its certificate is read by a TLS
// handshake alone and the ping trusts that certificate only, so the
// fingerprint reported (Terminal.Fingerprint) is the certificate of what
// answered. With Options.HTTPS, plain HTTP is never tried. Browsing trusts
// no device: judging one is the Tracker's business. Unconfirmed ones stay
// in the result so that `comptoir discover` can show them to whoever
// installs the kiosk. Two devices announcing the same name are both kept.
//
// Every window uses a fresh zeroconf.Resolver, because the library's resolver
// is built for a single browse and has traps for a long-lived use:
//
//   - it is single-use: its connections close with the browse's context;
//   - it writes to the entries channel without a select, so a browse whose
//     channel is not drained blocks the library's goroutine forever, even
//     after cancellation. Browse always drains the channel until the
//     library closes it;
//   - it never reports a removal (a goodbye only drops the entry from its
//     cache), and it reports each instance name once (until a goodbye), so
//     a long-lived resolver can neither see a terminal leave nor see it
//     come back at a new address;
//   - its receive loop ends silently on a read error (an interface going
//     down or being renumbered), after which the browse hears nothing while
//     looking alive.
//
// A window that ends by its deadline and a new resolver for the next one
// avoids all four. The instance names the library returns keep their DNS
// escapes ("Yavin\ SIM-7E57"); they are unescaped before any comparison.
//
// # Keeping a terminal
//
// A Tracker holds the terminal in use and satisfies the payment
// orchestrator's Terminal interface by delegating to a *localapi.Client for
// the current address. With one confirmed terminal it uses it; with several
// and none remembered, its status says "choose" and lists them until staff
// call Choose. The chosen instance name is kept in a Store. A manual address
// overrides discovery and is never re-resolved.
//
// # Adopted once, bound to what identifies it
//
// The Local API has no credential, and any device can announce any name. So
// the terminal is adopted once, and bound (Identity, kept in a TrustStore):
// to the certificate it presents when it offers HTTPS (pinned on first
// use; from then on plain HTTP is refused), and otherwise to its name and
// the addresses it was seen at. A device found later under the name is
// judged (Identity.Judge): the pinned certificate at any address, or a
// known address on plain HTTP, is the terminal; a new address on plain
// HTTP, or another certificate, is held in Status.Pending and not used
// until staff Confirm it (or Refuse it, and it is not offered again). A
// terminal on plain HTTP whose address DHCP changed looks exactly like
// another device at a new address: only staff can tell them apart, which
// is why HTTPS is worth setting up.
//
// While payments are open on the terminal (Config.Held), the Tracker never
// moves them to another device, not even one at a known address or one
// staff confirmed: only the device in use, at its address or proven by the
// same certificate, is followed. The calls keep going to the address in
// use until the payments are settled.
//
// When a call fails with a *localapi.TransportError whose Sent is false
// (connection refused, no route, dial timeout: the request certainly did not
// leave this machine), the Tracker re-resolves the remembered instance and,
// if the terminal answers at a new address and is accepted there, switches
// to it and retries that one call: nothing was sent, so nothing can be done
// twice. Any other error is returned unchanged, even a transport error:
// once a request may have reached the terminal, only the payment
// orchestrator may decide to resend it, with the same idempotentUuid, and
// journal that it did. An attempt in flight therefore keeps its uuid across
// a switch: the orchestrator's next resend goes through the Tracker to the
// new address.
//
// A periodic ping detects a terminal that vanished between payments and
// re-resolves it; re-resolution is rate-limited so that a terminal that is
// simply off does not turn every call into a browse window. Status changes
// are published as "terminal:status" events in the order they happen.
package discovery
