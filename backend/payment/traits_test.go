package payment

import (
	"go/ast"
	"go/parser"
	"go/token"
	"testing"

	"github.com/comptoir-pos/comptoir/backend/journal"
)

// journalChannels are the channel names journal/state.go declares, read
// from its source so that a name added there without a description here
// fails the test below.
func journalChannels(t *testing.T) []journal.Channel {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "../journal/state.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var names []journal.Channel
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			v := s.(*ast.ValueSpec)
			if id, ok := v.Type.(*ast.Ident); !ok || id.Name != "Channel" {
				continue
			}
			for _, val := range v.Values {
				if lit, ok := val.(*ast.BasicLit); ok && lit.Kind == token.STRING {
					names = append(names, journal.Channel(lit.Value[1:len(lit.Value)-1]))
				}
			}
		}
	}
	if len(names) < 4 {
		t.Fatalf("found only %v in journal/state.go", names)
	}
	return names
}

// Every channel the journal can hold is described, and nothing else is:
// a channel no description names would promise nothing to staff and the
// books (not a terminal's, not reversible), silently.
func TestEveryChannelIsDescribed(t *testing.T) {
	names := journalChannels(t)
	for _, ch := range names {
		if !ch.Valid() {
			t.Errorf("%q is declared but not valid in the journal", ch)
		}
		if _, ok := traits[ch]; !ok {
			t.Errorf("channel %q has no traits (payment/traits.go)", ch)
		}
	}
	if len(traits) != len(names) {
		t.Errorf("traits describes %d channels, the journal declares %d: %v", len(traits), len(names), names)
	}
}

// What the journal holds as its default channel is the LAN's; a name this
// build does not know promises nothing.
func TestTraitsOfTheDefaultAndAnUnknownChannel(t *testing.T) {
	if got := TraitsOf(""); got != TraitsOf(journal.ChannelLocal) || !got.Terminal || !got.Reversible {
		t.Errorf(`TraitsOf("") = %+v, want the LAN's`, got)
	}
	if got := TraitsOf("pigeon"); got != (Traits{}) {
		t.Errorf("an unknown channel promises %+v", got)
	}
}

// Only a terminal's charge can be reversed, and a refund without the card
// is no terminal's: the rules staff and the books rely on.
func TestTraitsHoldTogether(t *testing.T) {
	for ch, tr := range traits {
		if tr.Reversible && !tr.Terminal {
			t.Errorf("%s: reversible but not on a terminal", ch)
		}
		if tr.ThroughCloud && !tr.Terminal {
			t.Errorf("%s: through the cloud to no terminal", ch)
		}
		if tr.WithoutCard && (tr.Terminal || tr.Phone) {
			t.Errorf("%s: a refund without the card took a card", ch)
		}
	}
}

// A charge of the provider's is adopted under the channel that took it:
// a terminal's serial means the cloud's name of that terminal, none an
// online payment (the links).
func TestAProviderChargeSaysWhereItWasTaken(t *testing.T) {
	ch, term := ProviderCharge{Serial: "SN-1"}.Origin()
	if ch != journal.ChannelCloud || term != "cloud:SN-1" || term != CloudTerminal("SN-1") {
		t.Errorf("on a terminal: %s %s", ch, term)
	}
	if serial, ok := CloudSerial(term); !ok || serial != "SN-1" {
		t.Errorf("CloudSerial(%q) = %q, %v", term, serial, ok)
	}
	if _, ok := CloudSerial("lan"); ok {
		t.Error("a LAN terminal's name read as a cloud serial")
	}
	ch, term = ProviderCharge{}.Origin()
	if ch != journal.ChannelLink || term != LinksTerminal {
		t.Errorf("online: %s %s", ch, term)
	}
}

// Staff's list marks what the LAN is not: the cloud and the links (the
// LAN is the usual way; a refund by API shows in its own detail).
func TestStaffsListMarksTheCloudAndTheLinks(t *testing.T) {
	for ch, want := range map[journal.Channel]bool{
		journal.ChannelLocal: false, journal.ChannelCloud: true, journal.ChannelLink: true, journal.ChannelWebservices: false,
	} {
		if got := TraitsOf(ch).Marked; got != want {
			t.Errorf("%s marked: %v, want %v", ch, got, want)
		}
	}
}

// The customer sees no tip screen on a terminal's payment in kiosk mode
// (enableGiftScreen false) nor on a refund on a terminal: there, the
// journal checks the tip charged like the amount. The counter's terminal
// may show its tip screen, and a payment link's customer may add a tip on
// the phone.
func TestRuleNoTipScreenOnAKiosksTerminalPaymentNorARefund(t *testing.T) {
	for _, tc := range []struct {
		name string
		a    journal.Attempt
		want bool
	}{
		{"kiosk, the LAN", journal.Attempt{Kind: journal.KindDebit, Policy: journal.PolicyKiosk}, true},
		{"kiosk, through the cloud", journal.Attempt{Kind: journal.KindDebit, Policy: journal.PolicyKiosk, Channel: journal.ChannelCloud}, true},
		{"refund on the terminal", journal.Attempt{Kind: journal.KindRefund, Policy: journal.PolicyRefund}, true},
		{"counter", journal.Attempt{Kind: journal.KindDebit, Policy: journal.PolicyCounter}, false},
		{"kiosk, a payment link", journal.Attempt{Kind: journal.KindDebit, Policy: journal.PolicyKiosk, Channel: journal.ChannelLink}, false},
		{"refund by API", journal.Attempt{Kind: journal.KindRefund, Policy: journal.PolicyRefund, Channel: journal.ChannelWebservices}, false},
	} {
		if got := noTipScreen(tc.a); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
