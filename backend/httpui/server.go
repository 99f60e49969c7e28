package httpui

import (
	"context"
	"net"
	"net/http"
	"time"
)

// Timeouts bound how long a client may hold a connection. The event
// stream lives longer than Read and Write: its handler lifts the read
// deadline and sets its own write deadline before each event.
type Timeouts struct {
	ReadHeader time.Duration // the request line and headers
	Read       time.Duration // the whole request, body included
	Write      time.Duration // from the end of the headers to the end of the answer
	Idle       time.Duration // between two requests on a kept-alive connection
}

// DefaultTimeouts are browser mode's. A request body is at most maxBody
// (64 KiB): a client that has not sent it within Read is cut off, however
// slowly it trickles.
var DefaultTimeouts = Timeouts{ReadHeader: 10 * time.Second, Read: 30 * time.Second, Write: 60 * time.Second, Idle: 120 * time.Second}

// eventWriteTimeout bounds each write of the event stream: a browser that
// stops reading is dropped.
const eventWriteTimeout = 10 * time.Second

// NewServer is the HTTP server of browser mode around h (New's handler),
// with t's timeouts (a zero field: DefaultTimeouts'). Its requests'
// contexts end when Shutdown is called, so that the event streams end
// with it.
func NewServer(h http.Handler, t Timeouts) *http.Server {
	def := DefaultTimeouts
	pick := func(v, d time.Duration) time.Duration {
		if v > 0 {
			return v
		}
		return d
	}
	streams, endStreams := context.WithCancel(context.Background())
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: pick(t.ReadHeader, def.ReadHeader),
		ReadTimeout:       pick(t.Read, def.Read),
		WriteTimeout:      pick(t.Write, def.Write),
		IdleTimeout:       pick(t.Idle, def.Idle),
		MaxHeaderBytes:    64 << 10,
		BaseContext:       func(net.Listener) context.Context { return streams },
	}
	srv.RegisterOnShutdown(endStreams)
	return srv
}
