package payment

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/comptoir-pos/comptoir/backend/cloudapi"
	"github.com/comptoir-pos/comptoir/backend/journal"
)

// LinkCapturer is a LinkAPI that also captures authorised carts
// (*cloudapi.Client is one).
type LinkCapturer interface {
	Capture(ctx context.Context, cartID string, amount int64) (*cloudapi.Cart, error)
}

// Capture errors. The attempt is unchanged unless said otherwise.
var (
	// ErrNotCapturable: not an approved link whose cart is only authorised,
	// or this orchestrator does not drive links that can be captured.
	ErrNotCapturable = errors.New("payment: only an approved link whose payment is authorised and not yet captured can be captured")
	// ErrCaptureUnclear: the capture was asked, and neither its answer nor
	// the cart read after it tells that it was done. Ask again: the
	// provider captures a cart once.
	ErrCaptureUnclear = errors.New("payment: the capture was asked and no clear answer came back")
	// ErrCaptureReleased: the provider released the authorised money
	// instead (the cart ended ko): recorded, and the order needs staff.
	ErrCaptureReleased = errors.New("payment: the provider no longer holds this payment: the customer was not charged")
)

// CaptureRefusedError is a capture the provider or the issuer refused:
// nothing was captured, the payment stays authorised.
type CaptureRefusedError struct {
	Message string
	Raw     []byte
}

func (e *CaptureRefusedError) Error() string { return "payment: capture refused: " + e.Message }

// CaptureLink captures all of an approved link whose cart was only
// authorised, and records what the cart became (journal.RecordCapture,
// as who). A lost or unclear answer is settled by reading the cart, never
// by guessing. One capture at a time per orchestrator.
func (o *Orchestrator) CaptureLink(ctx context.Context, uuid, who string) (journal.Attempt, error) {
	lc, ok := o.ch.(*linkChannel)
	var api LinkCapturer
	if ok {
		api, ok = lc.api.(LinkCapturer)
	}
	if !ok {
		return journal.Attempt{}, ErrNotCapturable
	}
	o.captureMu.Lock()
	defer o.captureMu.Unlock()
	att, err := o.cfg.Journal.Attempt(ctx, uuid)
	if err != nil {
		return journal.Attempt{}, fmt.Errorf("payment: %w", err)
	}
	if att.Channel != journal.ChannelLink || att.State != journal.StateApproved || att.ProviderStatus != journal.ProviderAuthorised {
		return att, ErrNotCapturable
	}
	cartID := linkCartID(att)
	cart, err := api.Capture(ctx, cartID, 0)
	var ce *cloudapi.CaptureError
	switch {
	case err == nil:
	case errors.As(err, &ce) && (ce.Reason == cloudapi.CaptureRefused || ce.Reason == cloudapi.CaptureNotPaid):
		return att, &CaptureRefusedError{Message: ce.Message, Raw: ce.Body}
	default:
		// Already captured, already released, or no clear answer: the cart says.
		var rerr error
		if cart, rerr = lc.api.Cart(ctx, cartID); rerr != nil {
			return att, fmt.Errorf("%w (%v), and the cart could not be read: %v", ErrCaptureUnclear, err, rerr)
		}
	}
	status := strings.ToLower(cart.Status)
	if status == cloudapi.CartAuthorised {
		return att, fmt.Errorf("%w: the cart still says authorised", ErrCaptureUnclear)
	}
	note := "captured"
	if status != cloudapi.CartOK {
		note = "released by the provider instead of captured"
	}
	att, err = o.cfg.Journal.RecordCapture(ctx, uuid, who, status, cart.Raw, note)
	if err != nil {
		return att, fmt.Errorf("payment: %w", err)
	}
	if status != cloudapi.CartOK {
		if err := o.cfg.Journal.FlagOrder(ctx, att.OrderID,
			"the link's authorised payment ended "+status+" at the provider instead of being captured"); err != nil {
			o.log.Error("order status after a capture", "order", att.OrderID, "err", err)
		}
		return att, ErrCaptureReleased
	}
	return att, nil
}
