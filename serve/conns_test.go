package serve

import (
	"net"
	"net/http"
	"testing"
)

// TestConnLimits: at the limit a new connection takes the place of the one
// that has waited longest without a request in flight; busy ones are never
// closed, and with every one busy the new one is refused.
func TestConnLimits(t *testing.T) {
	l := newConnLimits(nil, 3, 3)
	var conns []net.Conn
	for range 3 {
		c, peer := net.Pipe()
		defer peer.Close()
		if !l.admit(c) {
			t.Fatal("refused below the limit")
		}
		conns = append(conns, c)
	}
	l.ConnState(conns[0], http.StateActive) // a request in flight (or an event stream)
	l.ConnState(conns[2], http.StateIdle)   // idle after a request: newer than conns[1]
	c4, p4 := net.Pipe()
	defer p4.Close()
	if !l.admit(c4) {
		t.Fatal("refused at the limit with idle connections open")
	}
	if _, ok := l.conns[conns[1]]; ok {
		t.Error("the connection that waited longest is still counted")
	}
	if _, err := conns[1].Write([]byte("x")); err == nil {
		t.Error("the connection that waited longest was not closed")
	}
	for _, c := range []net.Conn{conns[2], c4} {
		l.ConnState(c, http.StateActive)
	}
	c5, p5 := net.Pipe()
	defer p5.Close()
	if l.admit(c5) {
		t.Error("admitted with every connection busy")
	}
	l.ConnState(conns[0], http.StateClosed)
	if !l.admit(c5) {
		t.Error("refused once a connection closed")
	}
}
