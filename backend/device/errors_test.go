package device

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/comptoir-pos/comptoir/backend/cloudapi"
	"github.com/comptoir-pos/comptoir/backend/localapi"
)

// Both clients' failures short of a readable answer are classified alike,
// however wrapped: a request that never left is NotSent, any other leaves
// the outcome open and keeps what came back for the journal.
func TestWireFailuresAreClassifiedAlikeOnBothAPIs(t *testing.T) {
	body := []byte(`<html>busy</html>`)
	cause := errors.New("connection reset")
	for _, tt := range []struct {
		name    string
		err     error
		kind    Kind
		raw     []byte
		classes func(error) error
	}{
		{"local never sent", &localapi.TransportError{Err: cause}, NotSent, nil, localErr},
		{"local sent", &localapi.TransportError{Sent: true, Err: cause}, Unsure, nil, localErr},
		{"local HTTP", &localapi.HTTPError{StatusCode: 502, Body: body}, Unsure, body, localErr},
		{"local unreadable", &localapi.DecodeError{Body: body, Err: cause}, Unsure, body, localErr},
		{"local other", cause, Unsure, nil, localErr},
		{"cloud never sent", &cloudapi.TransportError{Op: "payment", Err: cause}, NotSent, nil, cloudErr},
		{"cloud sent", &cloudapi.TransportError{Op: "payment", Sent: true, Err: cause}, Unsure, nil, cloudErr},
		{"cloud HTTP", &cloudapi.HTTPError{Status: 503, Body: body}, Unsure, body, cloudErr},
		{"cloud unreadable", &cloudapi.DecodeError{Op: "payment", Body: body, Err: cause}, Unsure, body, cloudErr},
		{"cloud other", cause, Unsure, nil, cloudErr},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.classes(fmt.Errorf("wrapped: %w", tt.err))
			if KindOf(err) != tt.kind || !bytes.Equal(RawOf(err), tt.raw) || !errors.Is(err, tt.err) {
				t.Fatalf("%v: %s %q, want %s %q", err, KindOf(err), RawOf(err), tt.kind, tt.raw)
			}
		})
	}
}
