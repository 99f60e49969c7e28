package site

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"

	"github.com/nats-io/nats-server/v2/server"
)

// Who may do what at a restaurant's site.
//
// The site's secret is one token shared by every kiosk and kitchen PC of
// the restaurant, machines that stand where the public is: a holder of it
// is a member, allowed what a kiosk needs and nothing more
// (MemberPermissions). The process that runs the site's server is its
// owner: it connects in process, as a user made at each start whose
// password never leaves the process, with every right. Only the owner
// makes the streams and the menu bucket, writes head office's menu into
// it (RelayMenu) and forwards the facts to head office (Forwarder).

// jsAPI is the prefix of the site's JetStream API.
const jsAPI = "$JS.API."

// siteStreams are the streams a member reads and consumes: the facts and
// bumps, the heartbeats, and the menu bucket (read only).
var siteStreams = []string{StreamOrders, StreamPresence, "KV_" + SiteMenuBucket}

// MemberPermissions is what a member of the restaurant's site (a client
// that gives the site's secret, or any client of a site without one) may
// do:
//   - publish the restaurant's facts, bumps and heartbeats (as any kiosk:
//     members are not told apart);
//   - read the streams and the menu bucket, through consumers of their
//     own, pull or push, and answer their flow control;
//   - receive replies on _INBOX.> (JetStream's answers and deliveries);
//
// and nothing else: no write to the menu bucket ($KV.SITE_MENU.>), no
// stream, bucket or consumer made, changed, purged or deleted but a
// consumer of its own (never head office's durable "hq", whose
// acknowledgements decide what head office gets), no acknowledgement,
// no reply published into another client's inbox, nothing of head
// office's subjects (hq.>), which cross the leaf connection with the
// restaurant's credentials.
func MemberPermissions(s Subjects) *server.Permissions {
	pub := []string{
		s.Facts(), s.Bump("*"), s.Presences(),
		jsAPI + "INFO",
		// A push consumer's flow control (a KV watch) is answered here.
		"$JS.FC.>",
	}
	for _, st := range siteStreams {
		pub = append(pub,
			jsAPI+"STREAM.INFO."+st,
			jsAPI+"STREAM.MSG.GET."+st,
			jsAPI+"DIRECT.GET."+st, jsAPI+"DIRECT.GET."+st+".>",
			// A consumer named in the subject: the five-token form would
			// take any name from the request's body.
			jsAPI+"CONSUMER.CREATE."+st+".*", jsAPI+"CONSUMER.CREATE."+st+".*.>",
			jsAPI+"CONSUMER.INFO."+st+".*",
			jsAPI+"CONSUMER.MSG.NEXT."+st+".*",
			jsAPI+"CONSUMER.DELETE."+st+".*",
		)
	}
	var deny []string
	for _, op := range []string{"CREATE", "INFO", "MSG.NEXT", "DELETE"} {
		deny = append(deny, jsAPI+"CONSUMER."+op+"."+StreamOrders+"."+consumerHQ)
	}
	deny = append(deny, jsAPI+"CONSUMER.CREATE."+StreamOrders+"."+consumerHQ+".>")
	return &server.Permissions{
		Publish:   &server.SubjectPermission{Allow: pub, Deny: deny},
		Subscribe: &server.SubjectPermission{Allow: []string{"_INBOX.>"}},
	}
}

// siteAuth admits the site's owner (in process, with its password) with
// every right, and members (the secret, or nothing when the site has
// none) with MemberPermissions.
type siteAuth struct {
	owner  *server.User
	member *server.User
	secret string
}

func newSiteAuth(secret string, s Subjects) (*siteAuth, error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return nil, err
	}
	return &siteAuth{
		owner:  &server.User{Username: "site-owner-" + hex.EncodeToString(b[:4]), Password: hex.EncodeToString(b)},
		member: &server.User{Username: "member", Permissions: MemberPermissions(s)},
		secret: secret,
	}, nil
}

// Check implements server.Authentication.
func (a *siteAuth) Check(c server.ClientAuthentication) bool {
	if c.Kind() != server.CLIENT {
		return false
	}
	o := c.GetOpts()
	if o.Username != "" || o.Password != "" {
		// Only the owner gives a user and password, and only in process.
		addr := c.RemoteAddress()
		if o.Username != a.owner.Username || subtle.ConstantTimeCompare([]byte(o.Password), []byte(a.owner.Password)) != 1 ||
			addr == nil || addr.Network() != "pipe" {
			return false
		}
		c.RegisterUser(a.owner)
		return true
	}
	if a.secret != "" && subtle.ConstantTimeCompare([]byte(o.Token), []byte(a.secret)) != 1 {
		return false
	}
	c.RegisterUser(a.member)
	return true
}
