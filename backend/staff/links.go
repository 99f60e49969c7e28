package staff

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/mail"
	"strings"
	"time"

	"github.com/comptoir-pos/comptoir/backend/device"
	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/payment"
	"github.com/comptoir-pos/comptoir/backend/settings"
)

// Payment links at the counter: a phone order or a click-and-collect is
// paid before the customer comes, on a link the provider sends by SMS or
// email. The link is an attempt of the links' orchestrator like the
// kiosk's QR code: journaled before it is asked for, followed until its
// cart ends, cancelled by its cart's answer.

// LinkRequest is a payment link staff send to a customer.
type LinkRequest struct {
	Amount int64 `json:"amount"` // cents
	// Label says what the link pays ("Order for Mrs Martin, 12:30"); the
	// link shows it as its message. Optional.
	Label     string `json:"label"`
	FirstName string `json:"firstName"`
	LastName  string `json:"lastName"`
	// Email and Phone: where the provider sends the link (one or both).
	// A phone number is in international format (+33612345678).
	Email string `json:"email"`
	Phone string `json:"phone"`
	// AuthoriseOnly: the payment is only authorised; staff capture it
	// (CaptureLink) when the order is handed over.
	AuthoriseOnly bool `json:"authoriseOnly"`
}

// linkOrderData is the Data of an order staff made for a link.
type linkOrderData struct {
	Label  string `json:"label,omitempty"`
	Source string `json:"source"`
}

// linkWait bounds how long SendLink waits for the provider's link.
const linkWait = 20 * time.Second

// linkSource is the order_source of a link sent from the counter.
const linkSource = "click_and_collect"

// validLink checks a link request; the message says what to change.
func validLink(r *LinkRequest) error {
	r.Label, r.FirstName, r.LastName = strings.TrimSpace(r.Label), strings.TrimSpace(r.FirstName), strings.TrimSpace(r.LastName)
	r.Email, r.Phone = strings.TrimSpace(r.Email), strings.ReplaceAll(strings.TrimSpace(r.Phone), " ", "")
	switch {
	case r.Amount <= 0:
		return errorf(EINVALID, "The amount of the link must be more than zero.")
	case r.Email == "" && r.Phone == "":
		return errorf(EINVALID, "Give the customer's mobile phone number or email address: the provider sends the link there.")
	case r.FirstName == "" || r.LastName == "":
		return errorf(EINVALID, "Give the customer's first and last names: the provider needs both to send the link.")
	case len(r.Label) > 200:
		return errorf(EINVALID, "The label is at most 200 characters.")
	}
	if r.Email != "" {
		if a, err := mail.ParseAddress(r.Email); err != nil || a.Address != r.Email || !strings.Contains(r.Email[strings.LastIndex(r.Email, "@"):], ".") {
			return errorf(EINVALID, "%q is not an email address.", r.Email)
		}
	}
	if r.Phone != "" && !internationalPhone(r.Phone) {
		return errorf(EINVALID, "%q is not a phone number in international format (a +, the country code, then the number: +33612345678).", r.Phone)
	}
	return nil
}

// internationalPhone: E.164, a + and 8 to 15 digits.
func internationalPhone(p string) bool {
	digits, ok := strings.CutPrefix(p, "+")
	if !ok || len(digits) < 8 || len(digits) > 15 || digits[0] == '0' {
		return false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// OffersLinks reports whether staff can send payment links.
func (s *Staff) OffersLinks() bool { return s.cfg.Links != nil }

// linksOff is the answer while the provider's cloud is not set up.
func linksOff() error {
	return errorf(EINVALID, "Payment links are not available: the provider's cloud is not set up (Settings, cloud).")
}

// SendLink makes an order of the amount and has the provider send its
// payment link to the customer. It returns once the provider gave the
// link (or the attempt ended), with the attempt as staff see it; the link
// goes on by itself and shows in the payments like any other attempt.
func (s *Staff) SendLink(ctx context.Context, sessionID string, r LinkRequest) (AttemptView, error) {
	sess, err := s.session(sessionID)
	if err != nil {
		return AttemptView{}, err
	}
	if s.cfg.Links == nil {
		return AttemptView{}, linksOff()
	}
	if err := validLink(&r); err != nil {
		return AttemptView{}, err
	}
	st, err := settings.LoadSettings(ctx, s.cfg.Journal, s.log)
	if err != nil {
		return AttemptView{}, journalErr(err, "Reading the settings")
	}
	currency := st.Currency
	if currency == "" && s.cfg.Currency != nil {
		currency = s.cfg.Currency()
	}
	if currency == "" {
		currency = settings.DefaultCurrency
	}
	data, _ := json.Marshal(linkOrderData{Label: r.Label, Source: linkSource})
	orderID := linkOrderID(s.now())
	if err := s.cfg.Journal.CreateOrder(ctx, journal.Order{ID: orderID, Currency: currency, Total: r.Amount, Data: data}); err != nil {
		return AttemptView{}, journalErr(err, "Recording the order")
	}
	h, err := s.cfg.Links.Start(context.WithoutCancel(ctx), payment.Request{
		OrderID: orderID, Amount: r.Amount, Policy: journal.PolicyCounter,
		Customer: &device.Customer{FirstName: r.FirstName, LastName: r.LastName, Email: r.Email, Phone: r.Phone},
		Link: &payment.LinkDetails{Source: linkSource, Message: r.Label, ShareByEmail: r.Email != "",
			ShareBySMS: r.Phone != "", AuthoriseOnly: r.AuthoriseOnly},
	})
	if err != nil {
		s.audit(ctx, sess.Who, "link_refused", orderID, fmt.Sprintf("link of %d: %v", r.Amount, err), nil)
		_ = s.cfg.Journal.CloseOrder(ctx, orderID, "the link could not be started: "+err.Error())
		msg := "The link could not be started: " + strings.TrimPrefix(err.Error(), "payment: ") + ". Nothing was sent."
		if errors.Is(err, payment.ErrNotReady) {
			msg = "The kiosk is still checking unfinished links with the provider: try again in a moment. Nothing was sent."
		}
		return AttemptView{}, &Error{Code: EINVALID, Message: msg, Err: err}
	}
	to := []string{}
	if r.Phone != "" {
		to = append(to, "SMS")
	}
	if r.Email != "" {
		to = append(to, "email")
	}
	s.note(ctx, h.UUID(), sess.Who, fmt.Sprintf("payment link of %d sent by staff (%s)", r.Amount, strings.Join(to, " and ")))
	wait, cancel := context.WithTimeout(ctx, linkWait)
	defer cancel()
	s.waitRun(wait, h, func(v payment.View) bool { return v.Link != "" })
	return s.linkView(ctx, h.UUID())
}

// linkOrderID is a new order's id: the time and a random part (the link's
// cart id is made of it, unique per company).
func linkOrderID(now time.Time) string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return "link-" + now.UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b[:])
}

// waitRun waits until the attempt ends, until cond holds of its view, or
// until ctx ends.
func (s *Staff) waitRun(ctx context.Context, h *payment.Handle, cond func(payment.View) bool) {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for !cond(h.View()) {
		select {
		case <-h.Done():
			return
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// linkView is the attempt as staff see it, with its actions.
func (s *Staff) linkView(ctx context.Context, uuid string) (AttemptView, error) {
	att, err := s.cfg.Journal.Attempt(ctx, uuid)
	if err != nil {
		return AttemptView{}, journalErr(err, "Reading the link")
	}
	v := s.view(ctx, att, nil)
	if err := s.withActions(ctx, &v); err != nil {
		return AttemptView{}, err
	}
	return v, nil
}

// CancelLink cancels a running payment link: the provider cancels its
// cart, and the cart then says how it ended (paid in full before the
// cancel means paid: the answer says so). It waits for that end a while;
// a cancel still under way is shown as such and goes on by itself.
func (s *Staff) CancelLink(ctx context.Context, sessionID, uuid string) (AttemptView, error) {
	sess, err := s.session(sessionID)
	if err != nil {
		return AttemptView{}, err
	}
	if s.cfg.Links == nil {
		return AttemptView{}, linksOff()
	}
	h, ok := s.cfg.Links.Active(uuid)
	if !ok {
		att, err := s.cfg.Journal.Attempt(ctx, uuid)
		switch {
		case err != nil:
			return AttemptView{}, journalErr(err, "Finding the link")
		case !payment.TraitsOf(att.Channel).Phone:
			return AttemptView{}, errorf(EINVALID, "This payment is not a payment link.")
		case att.State.Final():
			return AttemptView{}, errorf(EINVALID, "This link has already ended (%s): there is nothing to cancel.", att.State)
		}
		return AttemptView{}, errorf(EINVALID, "This link is not followed right now (it is taken up again after a restart): try again in a moment.")
	}
	s.note(ctx, uuid, sess.Who, "payment link cancel asked by staff")
	h.Cancel()
	wait, cancel := context.WithTimeout(ctx, s.cfg.TerminalTimeout)
	defer cancel()
	s.waitRun(wait, h, func(payment.View) bool { return false })
	if v := h.View(); v.Final() && v.State != journal.StateApproved && v.State != journal.StateUnknown && v.Paid == 0 {
		// A counter link is its order's only payment: nothing was paid.
		if o, err := s.cfg.Journal.Order(ctx, v.OrderID); err == nil && o.Status == journal.OrderOpen && isLinkOrder(o) {
			if err := s.cfg.Journal.CloseOrder(ctx, o.ID, "its payment link was cancelled by staff"); err != nil {
				s.log.Error("staff: close a cancelled link's order", "order", o.ID, "err", err)
			}
		}
	}
	return s.linkView(ctx, uuid)
}

// isLinkOrder: an order staff made for a payment link.
func isLinkOrder(o journal.Order) bool {
	var d linkOrderData
	return json.Unmarshal(o.Data, &d) == nil && d.Source == linkSource
}

// CaptureLink captures the whole of an approved link whose cart was only
// authorised (payment.Orchestrator.CaptureLink), as this session.
func (s *Staff) CaptureLink(ctx context.Context, sessionID, uuid string) (AttemptView, error) {
	sess, err := s.session(sessionID)
	if err != nil {
		return AttemptView{}, err
	}
	if s.cfg.Links == nil {
		return AttemptView{}, linksOff()
	}
	tctx, cancel := s.terminalCtx(ctx)
	_, err = s.cfg.Links.CaptureLink(tctx, uuid, sess.Who)
	cancel()
	var refused *payment.CaptureRefusedError
	switch {
	case err == nil:
	case errors.As(err, &refused):
		s.note(ctx, uuid, sess.Who, "capture refused by the provider: "+refused.Message)
		return AttemptView{}, &Error{Code: ETERMINAL, Message: "The provider did not capture the payment: " + refused.Message + ". Nothing was captured; the payment stays authorised.", Err: err}
	case errors.Is(err, payment.ErrNotCapturable):
		return AttemptView{}, &Error{Code: EINVALID, Message: "Only a paid link whose payment was authorised and not yet captured can be captured.", Err: err}
	case errors.Is(err, payment.ErrCaptureUnclear):
		s.note(ctx, uuid, sess.Who, "capture asked, no clear answer: "+err.Error())
		return AttemptView{}, &Error{Code: EUNKNOWN, Message: "The capture was asked but no clear answer came back: try Capture again in a moment (the provider captures a payment once).", Err: err}
	case errors.Is(err, payment.ErrCaptureReleased):
		return AttemptView{}, &Error{Code: EINVALID, Message: "The provider no longer holds this payment (it was released, not captured): the customer was not charged. The order needs attention.", Err: err}
	default:
		return AttemptView{}, journalErr(err, "Capturing the link")
	}
	return s.linkView(ctx, uuid)
}
