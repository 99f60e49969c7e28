package terminalsim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"time"
)

// Outcome is what the customer does at the card-read step.
type Outcome string

// Customer outcomes.
const (
	OutcomeApprove Outcome = "approve" // presents a card that is accepted: charged
	OutcomeDecline Outcome = "decline" // presents a card that is declined: ko, no message
	OutcomeNoCard  Outcome = "no_card" // never presents a card: ko once the window expires
	OutcomeCancel  Outcome = "cancel"  // presses Cancel on the terminal: ko, no message
)

// Answer is how the HTTP answer to /payment is delivered.
type Answer string

// Ways of answering.
const (
	// AnswerNormal answers with the transaction as soon as it is decided.
	AnswerNormal Answer = "normal"
	// AnswerLost decides the payment (an approval charges the customer), then
	// closes every /payment connection waiting for it without an answer. The
	// transaction is known: a resend with the same idempotentUuid gets it.
	AnswerLost Answer = "lost"
	// AnswerLate decides the payment, then holds the waiting /payment answers
	// for Late. The terminal itself is free at once, and a resend with the same
	// idempotentUuid gets the transaction immediately.
	AnswerLate Answer = "late"
	// AnswerHTTP500 decides the payment (an approval charges the customer),
	// then answers HTTP 500 with no body. The transaction is known.
	AnswerHTTP500 Answer = "http500"
	// AnswerHTTP500NotStarted answers HTTP 500 with no body at once: no payment
	// starts, nothing is charged and the idempotentUuid stays unknown, so a
	// resend starts a payment (with the next behaviour).
	AnswerHTTP500NotStarted Answer = "http500_not_started"
)

// Behaviour scripts one payment: the customer's actions and how the terminal
// answers. Durations are at real-time scale; Config.TimeScale applies.
type Behaviour struct {
	Outcome Outcome // "" is OutcomeApprove
	// Delay is the time from the handover to the customer's action.
	Delay time.Duration
	// Tip is the tip the customer chooses on the gift screen, when it is
	// shown, after TipDelay. A TipDelay at least as long as the screens window
	// (60 s) leaves the screen until it expires: the payment is aborted.
	Tip      int64
	TipDelay time.Duration
	// Card is the card presented: visa (the default), mastercard, cb, amex,
	// or conecs (a meal voucher, capped at 25.00).
	Card string
	// Hold makes the customer wait for the test or the operator
	// (PresentCard, Decline, ChooseTip, CancelOnTerminal, Act): Outcome,
	// Delay, Tip and TipDelay are unused and the 60 s windows never expire.
	Hold bool
	// HoldHandover keeps the payment before the handover to the banking
	// screen until Handover is called (or an abort stops it).
	HoldHandover bool
	Answer       Answer        // "" is AnswerNormal
	Late         time.Duration // for AnswerLate
	// Odd answers an unusual but valid transaction: transactionType "na",
	// unknown keys, optional keys missing.
	Odd bool
	// Misreport makes a faulty (or hostile) terminal approve something
	// else than what was asked; nil approves what was asked.
	Misreport *Misreport
}

// Misreport is how a faulty terminal's approval differs from the request:
// it charges and answers Amount (cents; 0: as asked) in Currency ("": the
// merchant profile's), and names the transaction Type ("": the true one).
type Misreport struct {
	Amount   int64  `json:"amount,omitempty"`
	Currency string `json:"currency,omitempty"`
	Type     string `json:"type,omitempty"`
}

// Misreporting returns b approving what m says instead of what was asked.
func (b Behaviour) Misreporting(m Misreport) Behaviour { b.Misreport = &m; return b }

// Approve is a customer presenting an accepted card about 3 s after the
// handover, and spending 2 s on the gift screen (no tip) when it is shown.
func Approve() Behaviour {
	return Behaviour{Outcome: OutcomeApprove, Delay: 3 * time.Second, TipDelay: 2 * time.Second}
}

// Decline is a customer whose card is declined.
func Decline() Behaviour { b := Approve(); b.Outcome = OutcomeDecline; return b }

// NoCard is a customer who never presents a card.
func NoCard() Behaviour { b := Approve(); b.Outcome = OutcomeNoCard; return b }

// CustomerCancels is a customer pressing Cancel on the terminal.
func CustomerCancels() Behaviour { b := Approve(); b.Outcome = OutcomeCancel; return b }

// AnswerLostAfterCharge approves, charges, and loses the HTTP answer.
func AnswerLostAfterCharge() Behaviour { b := Approve(); b.Answer = AnswerLost; return b }

// AnswerLateAfterCharge approves, charges, and answers d later.
func AnswerLateAfterCharge(d time.Duration) Behaviour {
	b := Approve()
	b.Answer, b.Late = AnswerLate, d
	return b
}

// HTTP500Charged approves, charges, and answers HTTP 500 with no body.
func HTTP500Charged() Behaviour { b := Approve(); b.Answer = AnswerHTTP500; return b }

// HTTP500NotCharged answers HTTP 500 with no body without starting a payment.
func HTTP500NotCharged() Behaviour { return Behaviour{Answer: AnswerHTTP500NotStarted} }

// OddResponse approves with an unusual but valid answer.
func OddResponse() Behaviour { b := Approve(); b.Odd = true; return b }

// Hold is a customer who waits for the test: see Behaviour.Hold.
func Hold() Behaviour { return Behaviour{Outcome: OutcomeApprove, Hold: true} }

// HoldBeforeHandover is Hold with the handover held too, so that a test can
// abort a payment that has certainly not reached the banking screen.
func HoldBeforeHandover() Behaviour { b := Hold(); b.HoldHandover = true; return b }

// After returns b with the customer acting d after the handover.
func (b Behaviour) After(d time.Duration) Behaviour { b.Delay = d; return b }

// WithTip returns b choosing tip on the gift screen (when shown).
func (b Behaviour) WithTip(tip int64) Behaviour { b.Tip = tip; return b }

// WithTipDelay returns b spending d on the gift screen.
func (b Behaviour) WithTipDelay(d time.Duration) Behaviour { b.TipDelay = d; return b }

// WithCard returns b presenting the named card.
func (b Behaviour) WithCard(card string) Behaviour { b.Card = card; return b }

// WithAnswer returns b answering the given way (late: after late).
func (b Behaviour) WithAnswer(a Answer, late time.Duration) Behaviour {
	b.Answer, b.Late = a, late
	return b
}

func (b Behaviour) outcome() Outcome {
	if b.Outcome == "" {
		return OutcomeApprove
	}
	return b.Outcome
}

func (b Behaviour) answer() Answer {
	if b.Answer == "" {
		return AnswerNormal
	}
	return b.Answer
}

// Presets names the behaviours the control API and the amount table use.
var presets = map[string]func() Behaviour{
	"approve":              Approve,
	"decline":              Decline,
	"no_card":              NoCard,
	"cancel":               CustomerCancels,
	"answer_lost":          AnswerLostAfterCharge,
	"answer_late":          func() Behaviour { return AnswerLateAfterCharge(70 * time.Second) },
	"http500_charged":      HTTP500Charged,
	"http500_not_charged":  HTTP500NotCharged,
	"odd":                  OddResponse,
	"slow":                 func() Behaviour { return Approve().After(20 * time.Second) },
	"hold":                 Hold,
	"hold_before_handover": HoldBeforeHandover,
	// A faulty terminal: approves 1 cent, another currency, another type.
	"misreport_amount":   func() Behaviour { return Approve().Misreporting(Misreport{Amount: 1}) },
	"misreport_currency": func() Behaviour { return Approve().Misreporting(Misreport{Currency: "CHF"}) },
	"misreport_type":     func() Behaviour { return Approve().Misreporting(Misreport{Type: "refund"}) },
}

// Preset returns the behaviour of a preset name (see the package doc).
func Preset(name string) (Behaviour, bool) {
	f, ok := presets[name]
	if !ok {
		return Behaviour{}, false
	}
	return f(), true
}

// PresetNames lists the preset names, sorted.
func PresetNames() []string {
	names := make([]string, 0, len(presets))
	for n := range presets {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// TestAmount is one row of the test amounts table.
type TestAmount struct {
	Cents  int64  // amount % 100
	Preset string // the behaviour
	Effect string // what happens, for the docs and the control API
}

// TestAmounts is the table by which the cents of an amount select a
// behaviour when no scripted behaviour is queued; every other amount gets the
// default behaviour (approved after about 3 s).
var TestAmounts = []TestAmount{
	{51, "decline", "declined (ko, no message)"},
	{52, "no_card", "card never presented: ko once the 60 s card-read window expires"},
	{53, "answer_lost", "approved and charged, HTTP answer lost (connection closed)"},
	{54, "answer_late", "approved and charged, HTTP answer 70 s late"},
	{55, "http500_charged", "approved and charged, answered HTTP 500 with no body"},
	{56, "odd", "approved, odd but valid answer (transactionType na, unknown keys)"},
	{57, "slow", "approved after a slow customer (20 s)"},
	{58, "http500_not_charged", "HTTP 500 with no body at once, nothing started or charged"},
	{59, "cancel", "the customer presses Cancel on the terminal (ko, no message)"},
}

// BehaviourForAmount returns the behaviour the test amounts table gives an
// amount, if any.
func BehaviourForAmount(amount int64) (Behaviour, bool) {
	if amount <= 0 {
		return Behaviour{}, false
	}
	for _, ta := range TestAmounts {
		if amount%100 == ta.Cents {
			return Preset(ta.Preset)
		}
	}
	return Behaviour{}, false
}

// behaviourJSON is the control API's form of a Behaviour: an optional preset
// name, then fields overriding it. Durations are Go duration strings ("3s",
// "1m10s") or numbers of seconds.
type behaviourJSON struct {
	Preset       string     `json:"preset,omitempty"`
	Outcome      *Outcome   `json:"outcome,omitempty"`
	Delay        *duration  `json:"delay,omitempty"`
	Tip          *int64     `json:"tip,omitempty"`
	TipDelay     *duration  `json:"tipDelay,omitempty"`
	Card         *string    `json:"card,omitempty"`
	Hold         *bool      `json:"hold,omitempty"`
	HoldHandover *bool      `json:"holdHandover,omitempty"`
	Answer       *Answer    `json:"answer,omitempty"`
	Late         *duration  `json:"late,omitempty"`
	Odd          *bool      `json:"odd,omitempty"`
	Misreport    *Misreport `json:"misreport,omitempty"`
}

type duration time.Duration

func (d duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

func (d *duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		v, err := time.ParseDuration(s)
		if err != nil {
			return err
		}
		*d = duration(v)
		return nil
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return fmt.Errorf("duration %s: want a string like \"3s\" or a number of seconds", b)
	}
	*d = duration(f * float64(time.Second))
	return nil
}

// MarshalJSON writes every field, durations as strings.
func (b Behaviour) MarshalJSON() ([]byte, error) {
	o, a := b.outcome(), b.answer()
	d, td, l := duration(b.Delay), duration(b.TipDelay), duration(b.Late)
	return json.Marshal(behaviourJSON{
		Outcome: &o, Delay: &d, Tip: &b.Tip, TipDelay: &td, Card: &b.Card,
		Hold: &b.Hold, HoldHandover: &b.HoldHandover, Answer: &a, Late: &l, Odd: &b.Odd, Misreport: b.Misreport,
	})
}

// UnmarshalJSON reads {"preset": name, ...overrides}; without a preset the
// fields start from Approve().
func (b *Behaviour) UnmarshalJSON(data []byte) error {
	var j behaviourJSON
	// Strict: a misspelt field would otherwise script the wrong customer.
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&j); err != nil {
		return fmt.Errorf("behaviour: %w", err)
	}
	out := Approve()
	if j.Preset != "" {
		p, ok := Preset(j.Preset)
		if !ok {
			return fmt.Errorf("unknown preset %q (known: %v)", j.Preset, PresetNames())
		}
		out = p
	}
	if j.Outcome != nil {
		switch *j.Outcome {
		case OutcomeApprove, OutcomeDecline, OutcomeNoCard, OutcomeCancel:
		default:
			return fmt.Errorf("unknown outcome %q", *j.Outcome)
		}
		out.Outcome = *j.Outcome
	}
	if j.Answer != nil {
		switch *j.Answer {
		case AnswerNormal, AnswerLost, AnswerLate, AnswerHTTP500, AnswerHTTP500NotStarted, "":
		default:
			return fmt.Errorf("unknown answer %q", *j.Answer)
		}
		out.Answer = *j.Answer
	}
	if j.Card != nil {
		if _, ok := cards[*j.Card]; !ok && *j.Card != "" {
			return fmt.Errorf("unknown card %q", *j.Card)
		}
		out.Card = *j.Card
	}
	if j.Delay != nil {
		out.Delay = time.Duration(*j.Delay)
	}
	if j.Tip != nil {
		out.Tip = *j.Tip
	}
	if j.TipDelay != nil {
		out.TipDelay = time.Duration(*j.TipDelay)
	}
	if j.Hold != nil {
		out.Hold = *j.Hold
	}
	if j.HoldHandover != nil {
		out.HoldHandover = *j.HoldHandover
	}
	if j.Late != nil {
		out.Late = time.Duration(*j.Late)
	}
	if j.Misreport != nil {
		out.Misreport = j.Misreport
	}
	if j.Odd != nil {
		out.Odd = *j.Odd
	}
	if out.Tip < 0 {
		return fmt.Errorf("tip must not be negative")
	}
	*b = out
	return nil
}
