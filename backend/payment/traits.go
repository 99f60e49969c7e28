package payment

import (
	"strings"

	"github.com/comptoir-pos/comptoir/backend/journal"
)

// Traits are what the rest of Comptoir needs to know of a channel beyond
// its protocol: what staff may do with its attempts, how the books and the
// screens name them. The kiosk, staff mode, the fiscal journal, the
// reconciliation and the screens ask these (the staff contract carries
// them with each attempt) and never switch on a channel's name, so that a
// new channel is described here once and they follow.
type Traits struct {
	// Terminal: a payment terminal took the attempt, on the LAN or through
	// the provider's cloud. The terminal's own history lists it, and the
	// terminal can send its receipt (email, SMS). A payment link's or a
	// refund by API's is the provider's alone.
	Terminal bool `json:"terminal"`
	// Reversible: an approved debit can be reversed (cancelled the same
	// day, on the terminal that took it, through the channel this process
	// runs).
	Reversible bool `json:"reversible"`
	// ThroughCloud: the terminal is reached through the provider's cloud,
	// which may be slower: the customer is told.
	ThroughCloud bool `json:"throughCloud"`
	// Phone: the customer pays on their own phone (a payment link): the
	// kiosk's links follow it, staff see its link and may cancel or
	// capture it.
	Phone bool `json:"phone"`
	// WithoutCard: a refund the provider makes by API, without the card. A
	// manager may have to approve it at the provider: staff see the
	// provider's word on it and the approval link; the fiscal ticket names
	// its means as such.
	WithoutCard bool `json:"withoutCard"`
	// Marked: staff's list of payments marks the attempt with its
	// channel's name (translated: staff.attempts.<name>).
	Marked bool `json:"marked"`
	// LongLived: its outcome may rightly take days (the customer pays when
	// they choose): an open attempt is not late for the reconciliation.
	LongLived bool `json:"longLived"`
	// ReportLine is the scheme line under which the day's report counts
	// its payments, one the terminal's totals never have; "": the card's
	// own scheme.
	ReportLine string `json:"reportLine,omitempty"`
}

// traits is one description per channel of this build. A channel the
// journal names must have one (TestEveryChannelIsDescribed).
var traits = map[journal.Channel]Traits{
	// The terminal on the LAN: it took the card, it can reverse it.
	journal.ChannelLocal: {Terminal: true, Reversible: true},
	// The same terminal through the provider's cloud.
	journal.ChannelCloud: {Terminal: true, Reversible: true, ThroughCloud: true, Marked: true},
	// A payment link: the provider's page on the customer's phone, open up
	// to LinkLifetime.
	journal.ChannelLink: {Phone: true, Marked: true, LongLived: true, ReportLine: string(journal.ChannelLink)},
	// The provider's Webservices: refunds without the card, nothing else.
	journal.ChannelWebservices: {WithoutCard: true},
}

// TraitsOf describes the channel named ch. The journal's default channel
// ("" in an attempt not read from it) is the LAN's; a name this build does
// not know promises nothing.
func TraitsOf(ch journal.Channel) Traits {
	if ch == "" {
		ch = journal.ChannelLocal
	}
	return traits[ch]
}

// noTipScreen: the customer saw no tip screen for a, so the tip charged can
// only be the one asked: a terminal's payment in kiosk mode (sent with
// enableGiftScreen false) and a refund on a terminal (optional screens are
// disabled). The counter's terminal may show its tip screen; a payment
// link's customer may add a tip on the phone.
func noTipScreen(a journal.Attempt) bool {
	return TraitsOf(a.Channel).Terminal &&
		(a.Kind == journal.KindRefund || (a.Kind == journal.KindDebit && a.Policy == journal.PolicyKiosk))
}

// LinksTerminal is the journal's terminal name of the payment links (each
// link is journaled under it, "/", its order: see ChannelRules.Concurrent).
const LinksTerminal = "links"

// CloudTerminal is the journal's terminal name of the terminal with this
// serial number reached through the provider's cloud.
func CloudTerminal(serial string) string { return cloudPrefix + serial }

// CloudSerial is the serial number in a CloudTerminal name.
func CloudSerial(terminal string) (string, bool) { return strings.CutPrefix(terminal, cloudPrefix) }

const cloudPrefix = "cloud:"

// Origin is the channel that took a charge of the provider's, and the
// journal's name of its terminal: a terminal of the company's (through the
// cloud), or online (a payment link), as the provider's record says.
func (pc ProviderCharge) Origin() (journal.Channel, string) {
	if pc.Serial != "" {
		return journal.ChannelCloud, CloudTerminal(pc.Serial)
	}
	return journal.ChannelLink, LinksTerminal
}
