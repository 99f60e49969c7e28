package testenv_test

import (
	"crypto/tls"
	"net"
	"testing"
	"time"

	"github.com/comptoir-pos/comptoir/backend/internal/testenv"
)

// A client told to trust a certificate reaches a server serving it on
// 127.0.0.1, and a client trusting another one does not: the site's and
// head office's TLS tests stand on both.
func TestSelfSignedIsTrustedAloneOn127001(t *testing.T) {
	cert := testenv.SelfSigned(t, "test")
	ln, err := tls.Listen("tcp", "127.0.0.1:0", cert.Server())
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_ = c.(*tls.Conn).Handshake()
			c.Close()
		}
	}()
	dial := func(client *tls.Config) error {
		c, err := tls.DialWithDialer(&net.Dialer{Timeout: testenv.Deadline}, "tcp", ln.Addr().String(), client)
		if err == nil {
			c.Close()
		}
		return err
	}
	if err := dial(cert.Client()); err != nil {
		t.Fatalf("the trusting client: %v", err)
	}
	if err := dial(testenv.SelfSigned(t, "test").Client()); err == nil {
		t.Fatal("a client trusting another certificate got in")
	}
}

func TestClockMovesOnlyWhenTold(t *testing.T) {
	at := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	c := testenv.NewClock(at)
	if !c.Now().Equal(at) {
		t.Fatalf("now %v", c.Now())
	}
	c.Advance(90 * time.Second)
	if want := at.Add(90 * time.Second); !c.Now().Equal(want) {
		t.Fatalf("advanced: %v, want %v", c.Now(), want)
	}
	c.Set(at.Add(-time.Hour))
	if want := at.Add(-time.Hour); !c.Now().Equal(want) {
		t.Fatalf("set back: %v, want %v", c.Now(), want)
	}
}

// A free address is free: something can listen there at once.
func TestFreeAddrCanBeListenedOn(t *testing.T) {
	ln, err := net.Listen("tcp", testenv.FreeAddr(t))
	if err != nil {
		t.Fatal(err)
	}
	ln.Close()
}
