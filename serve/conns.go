package serve

import (
	"net"
	"net/http"
	"sync"
	"time"
)

// orch serve must keep answering whatever other clients do: a client that
// opens thousands of connections and sends nothing, or keeps them idle after
// a request, would otherwise take the server to its file limit (accept
// fails: too many open files) and the page with it. The server's timeouts
// end such connections after a while (serveTimeouts); connLimits bounds how
// many are open meanwhile: at most maxTotal in all and maxPerClient from one
// address. At a limit a new connection takes the place of the one that has
// waited longest without a request in flight (new, or idle between
// requests), of that client when its own limit is reached; when every one is
// busy (event streams, requests) the new one is closed at once. A request
// made as it should be, on a new connection, is served at once.

// serveTimeouts are orch serve's: a request's header must come within 10s
// and all of it within 30s (a body sent a byte at a time is cut), and an
// idle connection is closed after 30s. Responses have no timeout: the event
// streams last.
func serveTimeouts(srv *http.Server) {
	srv.ReadHeaderTimeout = 10 * time.Second
	srv.ReadTimeout = 30 * time.Second
	srv.IdleTimeout = 30 * time.Second
}

// connLimits is a listener that bounds the open connections (see above).
// Its ConnState must be the server's.
type connLimits struct {
	net.Listener
	maxTotal, maxPerClient int

	mu       sync.Mutex
	conns    map[net.Conn]*connInfo
	byClient map[string]int
}

type connInfo struct {
	client  string
	waiting bool      // no request in flight: new, or idle between requests
	since   time.Time // since when it waits
}

func newConnLimits(ln net.Listener, maxTotal, maxPerClient int) *connLimits {
	return &connLimits{Listener: ln, maxTotal: maxTotal, maxPerClient: maxPerClient,
		conns: map[net.Conn]*connInfo{}, byClient: map[string]int{}}
}

// Accept returns the next connection within the limits, making room for it
// if it can.
func (l *connLimits) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if l.admit(c) {
			return c, nil
		}
		_ = c.Close()
	}
}

// admit counts c in, closing the connection it takes the place of at a
// limit; false when there is no room.
func (l *connLimits) admit(c net.Conn) bool {
	client := hostOnly(c.RemoteAddr().String())
	l.mu.Lock()
	var victims []net.Conn
	ok := true
	if l.byClient[client] >= l.maxPerClient {
		ok = l.evict(client, &victims)
	}
	if ok && len(l.conns) >= l.maxTotal {
		ok = l.evict("", &victims)
	}
	if ok {
		l.conns[c] = &connInfo{client: client, waiting: true, since: time.Now()}
		l.byClient[client]++
	}
	l.mu.Unlock()
	for _, v := range victims {
		_ = v.Close()
	}
	return ok
}

// evict drops the connection (of client; "": of anyone) that has waited the
// longest without a request in flight, for the caller to close; false when
// there is none. l.mu is held.
func (l *connLimits) evict(client string, victims *[]net.Conn) bool {
	var oldest net.Conn
	var at time.Time
	for c, info := range l.conns {
		if info.waiting && (client == "" || info.client == client) && (oldest == nil || info.since.Before(at)) {
			oldest, at = c, info.since
		}
	}
	if oldest == nil {
		return false
	}
	l.forget(oldest)
	*victims = append(*victims, oldest)
	return true
}

// forget stops counting c. l.mu is held.
func (l *connLimits) forget(c net.Conn) {
	info, ok := l.conns[c]
	if !ok {
		return
	}
	delete(l.conns, c)
	if l.byClient[info.client]--; l.byClient[info.client] <= 0 {
		delete(l.byClient, info.client)
	}
}

// ConnState follows what each connection does (http.Server.ConnState).
func (l *connLimits) ConnState(c net.Conn, state http.ConnState) {
	l.mu.Lock()
	defer l.mu.Unlock()
	info, ok := l.conns[c]
	switch {
	case state == http.StateClosed || state == http.StateHijacked:
		l.forget(c)
	case !ok:
	case state == http.StateActive:
		info.waiting = false
	case state == http.StateIdle || state == http.StateNew:
		info.waiting, info.since = true, time.Now()
	}
}
