package site

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"path/filepath"
	"strconv"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// ServerConfig is one embedded NATS server with JetStream.
type ServerConfig struct {
	// Name names the server among its peers (a kiosk, a restaurant, "hub").
	Name string
	// StoreDir holds JetStream's files (a folder of the data folder).
	StoreDir string
	// Domain is the server's own JetStream domain: each restaurant site
	// and head office have theirs, so that a stream's name is never
	// resolved across a leaf connection.
	Domain string
	// Listen is where other machines reach it: "" for this process only
	// (no port at all), a loopback host:port for this PC, any other
	// address only with TLS and Secret.
	Listen string
	// TLS is the server's certificate, for Listen and the leaf listener.
	TLS *tls.Config
	// Secret is the token every client gives; "" for none (this process
	// or this PC only). A restaurant's site gives its clients (the
	// secret's holders: kiosks, kitchen PCs) only what MemberPermissions
	// allows, for the restaurant its Domain names; this process connects
	// as the site's owner (Conn), with every right.
	Secret string
	// Leaf, when set, joins head office as a leaf node.
	Leaf *LeafRemote
	// LeafListen and Users make this server a hub that restaurants join
	// as leaf nodes (backend/hub): the users and what each may send and
	// receive. Users replace Secret; this process connects as InProcess.
	LeafListen string
	Users      []*server.User
	InProcess  *server.User
	// MaxStore bounds JetStream's files; 0: 1 GiB.
	MaxStore int64
	Logger   *slog.Logger
}

// LeafRemote is head office as a site reaches it.
type LeafRemote struct {
	URL      string // nats://host:port or tls://host:port
	User     string
	Password string
	TLS      *tls.Config
}

// Server is an embedded NATS server.
type Server struct {
	ns     *server.Server
	opts   *server.Options
	secret string
	user   *server.User
}

// StartServer starts the server and waits until it accepts connections.
func StartServer(c ServerConfig) (*Server, error) {
	opts, err := serverOptions(c)
	if err != nil {
		return nil, err
	}
	ns, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("site server: %w", err)
	}
	if c.Logger != nil {
		ns.SetLoggerV2(logAdapter{c.Logger}, false, false, false)
	}
	ns.Start()
	if !ns.ReadyForConnections(30 * time.Second) {
		ns.Shutdown()
		return nil, errors.New("site server: not ready after 30 s")
	}
	user := c.InProcess
	if auth, ok := opts.CustomClientAuthentication.(*siteAuth); ok {
		user = auth.owner
	}
	return &Server{ns: ns, opts: opts, secret: c.Secret, user: user}, nil
}

func serverOptions(c ServerConfig) (*server.Options, error) {
	if c.StoreDir == "" {
		return nil, errors.New("site server: no folder for its stream")
	}
	if !ValidToken(c.Domain) || !ValidToken(c.Name) {
		return nil, fmt.Errorf("site server: name %q and domain %q are tokens (letters, digits, '-', '_')", c.Name, c.Domain)
	}
	maxStore := c.MaxStore
	if maxStore <= 0 {
		maxStore = 1 << 30
	}
	opts := &server.Options{
		ServerName: c.Name, JetStream: true, JetStreamDomain: c.Domain,
		StoreDir: filepath.Clean(c.StoreDir), JetStreamMaxMemory: 8 << 20, JetStreamMaxStore: maxStore,
		NoSigs: true, NoLog: c.Logger == nil, DontListen: c.Listen == "",
		// No HTTP monitoring port: nothing listens that was not asked for.
		HTTPPort: 0,
	}
	if c.Listen != "" {
		host, port, err := splitListen(c.Listen)
		if err != nil {
			return nil, err
		}
		if !loopback(host) && (c.TLS == nil || c.Secret == "") {
			return nil, fmt.Errorf("site server: %s is not a loopback address: other machines reach it only over TLS and with the site's secret (site.tls_cert, site.tls_key and the site-secret file)", c.Listen)
		}
		opts.Host, opts.Port = host, port
		if c.TLS != nil {
			opts.TLSConfig, opts.TLS, opts.TLSTimeout = c.TLS, true, 5
		}
	}
	if c.LeafListen != "" {
		host, port, err := splitListen(c.LeafListen)
		if err != nil {
			return nil, err
		}
		if c.TLS == nil || len(c.Users) == 0 || c.InProcess == nil {
			return nil, errors.New("hub: restaurants join over TLS, each with its own credentials")
		}
		// Leaf connections are authenticated as the users below, whose
		// permissions then apply to them (the leaf block's own users
		// would carry none).
		opts.LeafNode = server.LeafNodeOpts{Host: host, Port: port, TLSConfig: c.TLS, TLSTimeout: 5}
		opts.Users = append([]*server.User{c.InProcess}, c.Users...)
	} else {
		subj, err := NewSubjects(c.Domain)
		if err != nil {
			return nil, err
		}
		if opts.CustomClientAuthentication, err = newSiteAuth(c.Secret, subj); err != nil {
			return nil, err
		}
	}
	if l := c.Leaf; l != nil {
		u, err := url.Parse(l.URL)
		if err != nil || (u.Scheme != "nats" && u.Scheme != "tls") || u.Host == "" {
			return nil, fmt.Errorf("head office %q: a nats://host:port or tls://host:port address", l.URL)
		}
		if l.TLS == nil && !loopback(u.Hostname()) {
			return nil, fmt.Errorf("head office %s: reached over TLS only (site.hub_ca)", u.Host)
		}
		// The credentials go in the URL the server dials, never in argv.
		u.User = url.UserPassword(l.User, l.Password)
		opts.LeafNode.Remotes = []*server.RemoteLeafOpts{{URLs: []*url.URL{u}, TLS: l.TLS != nil, TLSConfig: l.TLS, TLSTimeout: 5}}
		opts.LeafNode.ReconnectInterval = time.Second
	}
	return opts, nil
}

func splitListen(addr string) (string, int, error) {
	host, p, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, fmt.Errorf("listen address %q: %w", addr, err)
	}
	port, err := strconv.Atoi(p)
	if err != nil || port < 0 || port > 65535 {
		return "", 0, fmt.Errorf("listen address %q: bad port", addr)
	}
	if port == 0 {
		port = server.RANDOM_PORT
	}
	return host, port, nil
}

func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Conn connects to the server from this process, without the network.
func (s *Server) Conn(name string, opts ...nats.Option) (*nats.Conn, error) {
	all := []nats.Option{nats.InProcessServer(s.ns), nats.Name(name), nats.MaxReconnects(-1)}
	switch {
	case s.user != nil:
		all = append(all, nats.UserInfo(s.user.Username, s.user.Password))
	case s.secret != "":
		all = append(all, nats.Token(s.secret))
	}
	nc, err := nats.Connect("", append(all, opts...)...)
	if err != nil {
		return nil, fmt.Errorf("site server: connect in process: %w", err)
	}
	return nc, nil
}

// ClientURL is where other processes reach it ("" when it does not listen).
func (s *Server) ClientURL() string {
	if s.ns.Addr() == nil {
		return ""
	}
	return s.ns.ClientURL()
}

// LeafURL is where restaurants join it as leaf nodes ("" when it is no hub).
func (s *Server) LeafURL() string {
	if s.opts.LeafNode.Port <= 0 {
		return ""
	}
	// The listener wrote the port it took back into the options.
	return "tls://" + net.JoinHostPort(s.opts.LeafNode.Host, strconv.Itoa(s.opts.LeafNode.Port))
}

// Leaves is how many leaf nodes are connected (restaurants at a hub, head
// office at a site).
func (s *Server) Leaves() int { return s.ns.NumLeafNodes() }

// Close stops the server and waits for it.
func (s *Server) Close() {
	s.ns.Shutdown()
	s.ns.WaitForShutdown()
}

// logAdapter sends the server's notices and warnings to the log.
type logAdapter struct{ l *slog.Logger }

func (a logAdapter) Noticef(format string, v ...any) { a.l.Debug("nats: " + fmt.Sprintf(format, v...)) }
func (a logAdapter) Warnf(format string, v ...any)   { a.l.Warn("nats: " + fmt.Sprintf(format, v...)) }
func (a logAdapter) Fatalf(format string, v ...any)  { a.l.Error("nats: " + fmt.Sprintf(format, v...)) }
func (a logAdapter) Errorf(format string, v ...any)  { a.l.Error("nats: " + fmt.Sprintf(format, v...)) }
func (a logAdapter) Debugf(format string, v ...any)  {}
func (a logAdapter) Tracef(format string, v ...any)  {}
