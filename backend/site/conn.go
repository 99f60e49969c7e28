package site

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// DialConfig is the restaurant's site as a kiosk or a kitchen screen on
// another machine reaches it.
type DialConfig struct {
	URL    string // nats://host:port or tls://host:port
	Secret string // the site's token, from its file (never argv)
	TLS    *tls.Config
	Name   string
	// Logger hears what the site refuses this connection (a member's
	// permissions: MemberPermissions); nil: nothing.
	Logger *slog.Logger
}

// Dial connects to the restaurant's site. A site that cannot be reached
// yet is no error: the connection keeps trying in the background, and
// what waits on it (the publisher, a kitchen screen) waits, never a
// payment.
func Dial(c DialConfig) (*nats.Conn, error) {
	u, err := url.Parse(c.URL)
	if err != nil || (u.Scheme != "nats" && u.Scheme != "tls") || u.Host == "" {
		return nil, fmt.Errorf("site %q: a nats://host:port or tls://host:port address", c.URL)
	}
	if u.User != nil {
		return nil, errors.New("site: the address carries no credentials (the site's secret is read from its file)")
	}
	if c.TLS == nil && (u.Scheme == "tls" || !loopback(u.Hostname())) {
		return nil, fmt.Errorf("site %s: reached over TLS only (site.tls_ca names the certificate to trust)", u.Host)
	}
	opts := []nats.Option{
		nats.Name(c.Name), nats.MaxReconnects(-1), nats.RetryOnFailedConnect(true),
		nats.ReconnectWait(time.Second), nats.ReconnectJitter(100*time.Millisecond, time.Second),
		nats.Timeout(3 * time.Second),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
			if c.Logger != nil {
				c.Logger.Warn("site: the site's server says", "err", err)
			}
		}),
	}
	if c.TLS != nil {
		opts = append(opts, nats.Secure(c.TLS))
	}
	if c.Secret != "" {
		opts = append(opts, nats.Token(c.Secret))
	}
	nc, err := nats.Connect(u.String(), opts...)
	if err != nil {
		return nil, fmt.Errorf("site %s: %w", u.Host, err)
	}
	return nc, nil
}

// EnsureStreams creates the restaurant's streams, or brings an existing
// one's settings up to date. The site's owner calls it at start.
func EnsureStreams(ctx context.Context, js jetstream.JetStream, s Subjects) error {
	if _, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name: StreamOrders, Subjects: []string{s.Facts(), s.Bumps()},
		Storage: jetstream.FileStorage, Retention: jetstream.LimitsPolicy,
		MaxAge: DefaultMaxAge, Duplicates: DuplicateWindow, Discard: jetstream.DiscardOld,
		// A fact is small; a bigger one is a mistake, not an order.
		MaxMsgSize: 256 << 10,
	}); err != nil {
		return fmt.Errorf("stream %s: %w", StreamOrders, err)
	}
	if _, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name: StreamPresence, Subjects: []string{s.Presences()},
		Storage: jetstream.FileStorage, MaxMsgsPerSubject: 1, MaxAge: 7 * 24 * time.Hour, MaxMsgSize: 16 << 10,
	}); err != nil {
		return fmt.Errorf("stream %s: %w", StreamPresence, err)
	}
	return nil
}
