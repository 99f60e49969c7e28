package cloudsim

import (
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"

	"github.com/comptoir-pos/comptoir/backend/localapi"
	"github.com/comptoir-pos/comptoir/backend/terminalsim"
)

// lanLink is the shop's LAN between a client and a virtual terminal's own
// Local API: a TCP relay on loopback that can be cut (SetLAN) and mended
// on the same address. Cut, it refuses new connections and drops the ones
// open, as a cable pulled or a Wi-Fi lost does; requests in flight may or
// may not have reached the terminal.
type lanLink struct {
	addr   string // the relay's address, kept across cuts
	target string // the terminal's own server

	mu    sync.Mutex
	ln    net.Listener
	conns map[net.Conn]bool
	wg    sync.WaitGroup
}

func newLANLink(addr, target string) (*lanLink, error) {
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	l := &lanLink{target: target, conns: map[net.Conn]bool{}}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	l.addr, l.ln = ln.Addr().String(), ln
	l.wg.Add(1)
	go l.serve(ln)
	return l, nil
}

func (l *lanLink) url() string { return "http://" + l.addr + localapi.BasePath }

func (l *lanLink) serve(ln net.Listener) {
	defer l.wg.Done()
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		l.wg.Add(1)
		go l.relay(c)
	}
}

func (l *lanLink) relay(c net.Conn) {
	defer l.wg.Done()
	t, err := net.Dial("tcp", l.target)
	if err != nil {
		c.Close()
		return
	}
	if !l.track(c, t) {
		c.Close()
		t.Close()
		return
	}
	defer l.untrack(c, t)
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(t, c); done <- struct{}{} }()
	go func() { _, _ = io.Copy(c, t); done <- struct{}{} }()
	<-done
	c.Close()
	t.Close()
	<-done
}

// track adds a connection's two ends, false once the link is cut.
func (l *lanLink) track(ends ...net.Conn) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ln == nil {
		return false
	}
	for _, e := range ends {
		l.conns[e] = true
	}
	return true
}

func (l *lanLink) untrack(ends ...net.Conn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, e := range ends {
		delete(l.conns, e)
	}
}

// set cuts the link (up false) or mends it on its address.
func (l *lanLink) set(up bool) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case up && l.ln == nil:
		ln, err := net.Listen("tcp", l.addr)
		if err != nil {
			return fmt.Errorf("cloudsim: the LAN comes back on %s: %w", l.addr, err)
		}
		l.ln = ln
		l.wg.Add(1)
		go l.serve(ln)
	case !up && l.ln != nil:
		l.ln.Close()
		l.ln = nil
		for c := range l.conns {
			c.Close()
		}
		clear(l.conns)
	}
	return nil
}

func (l *lanLink) close() {
	_ = l.set(false)
	l.wg.Wait()
}

// ServeLAN serves the virtual terminal's own Local API on addr
// ("127.0.0.1:0" when empty), through a LAN that SetLAN can cut, and
// returns its base URL.
func (c *Cloud) ServeLAN(serial, addr string) (string, error) {
	sim, ok := c.Terminal(serial)
	if !ok {
		return "", fmt.Errorf("cloudsim: no terminal %q", serial)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.serveLANLocked(serial, sim, addr)
}

func (c *Cloud) serveLANLocked(serial string, sim *terminalsim.Terminal, addr string) (string, error) {
	if l := c.lans[serial]; l != nil {
		return l.url(), nil
	}
	if sim.URL() == "" {
		if err := sim.Start("127.0.0.1:0"); err != nil {
			return "", fmt.Errorf("cloudsim: terminal %s on the LAN: %w", serial, err)
		}
	}
	target := strings.TrimPrefix(strings.TrimSuffix(sim.URL(), localapi.BasePath), "http://")
	l, err := newLANLink(addr, target)
	if err != nil {
		return "", fmt.Errorf("cloudsim: terminal %s on the LAN: %w", serial, err)
	}
	c.lans[serial] = l
	return l.url(), nil
}

// LANURL is the virtual terminal's Local API base URL on the LAN, "" when
// it serves none.
func (c *Cloud) LANURL(serial string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if l := c.lans[serial]; l != nil {
		return l.url()
	}
	return ""
}

// SetLAN cuts the LAN between clients and the terminal (up false: new
// connections refused, open ones dropped), or mends it on the same
// address. The cloud still reaches the terminal.
func (c *Cloud) SetLAN(serial string, up bool) error {
	c.mu.Lock()
	l := c.lans[serial]
	c.mu.Unlock()
	if l == nil {
		return errors.New("cloudsim: terminal " + serial + " serves no Local API on the LAN")
	}
	if err := l.set(up); err != nil {
		return err
	}
	c.log.Info("the terminal's LAN", "serial", serial, "up", up)
	return nil
}
