// Package serve is orch serve: the run database over HTTP (a JSON API,
// Server-Sent Events, a page). Its handlers ask package control for every
// read and action, and reply with control's results as JSON; nothing here
// runs a command line.
package serve

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/orch-cli/orch/control"
	"github.com/orch-cli/orch/mcpserver"
)

// Options configure a Server.
type Options struct {
	// Control reads and acts on the served database; the Server keeps its
	// read-only handle for its life.
	Control *control.Controller
	// Token is what requests must carry ("": none, on loopback only).
	Token string
	// OpenReads: reads need no token (on loopback, where the token guards
	// what changes things); else, with a token, every request needs it
	// (at /mcp, every request needs it whatever this says).
	OpenReads bool
	// Version is orch's, which /mcp gives its clients.
	Version string
}

// Server answers orch serve's requests. Reads go through the Controller's
// read-only handle; answer, go, ack and stop open the database for writing
// per request (control does), so that no writer is held between.
type Server struct {
	ctl       *control.Controller
	token     string
	openReads bool

	once sync.Once
	done chan struct{} // closed when the server shuts down: streams end

	mcp    *mcpserver.Server // orch mcp's server, at /mcp (nil: mcpErr says why not)
	mcpErr error

	pageOnce sync.Once
	page     *page // the index page, made at its first request
	pageErr  error
	sums     summaries // the run list and the inbox, for GET /api/stream
}

// New returns a Server of opts.
func New(opts Options) *Server {
	s := &Server{ctl: opts.Control, token: opts.Token, openReads: opts.OpenReads, done: make(chan struct{})}
	s.mcp, s.mcpErr = mcpserver.New(mcpserver.Options{Control: opts.Control, Version: opts.Version})
	return s
}

// Close ends the event streams and the MCP sessions, so that a shutdown
// need not wait for them.
func (s *Server) Close() {
	s.once.Do(func() {
		close(s.done)
		if s.mcp != nil {
			s.mcp.Close()
			for ss := range s.mcp.MCP().Sessions() {
				_ = ss.Close()
			}
		}
	})
}

// Handler is the HTTP API, the event streams and the page.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.index)
	mux.HandleFunc("GET /assets/{name}", s.asset)
	mux.HandleFunc("GET /api/runs", s.runs)
	mux.HandleFunc("GET /api/inbox", s.inbox)
	mux.HandleFunc("GET /api/stream", s.streamRuns)
	mux.HandleFunc("GET /api/runs/{id}", s.onRun(s.run))
	mux.HandleFunc("GET /api/runs/{id}/events", s.onRun(s.events))
	mux.HandleFunc("GET /api/runs/{id}/logs", s.onRun(s.logs))
	mux.HandleFunc("GET /api/runs/{id}/blackboard", s.onRun(s.blackboard))
	mux.HandleFunc("GET /api/runs/{id}/stream", s.onRun(s.stream))
	mux.HandleFunc("POST /api/runs/{id}/answer", s.onRun(s.answer))
	mux.HandleFunc("POST /api/runs/{id}/go", s.onRun(s.goCue))
	mux.HandleFunc("POST /api/runs/{id}/ack", s.onRun(s.ack))
	mux.HandleFunc("POST /api/runs/{id}/retry", s.onRun(s.retry))
	mux.HandleFunc("POST /api/runs/{id}/stop", s.onRun(s.stop))
	mux.Handle("/mcp", s.mcpHandler())
	return s.guard(mux)
}

// Config is where and how Run listens.
type Config struct {
	Addr      string // host:port
	Token     string // "": none (loopback only)
	Generated bool   // the token was made at this start: printed once off loopback
	Version   string // orch's
}

// Run serves ctl's database at cfg.Addr until ctx ends, with the
// connection limits and timeouts of conns.go; it prints the URL to open
// (with the token) on out.
func Run(ctx context.Context, cfg Config, ctl *control.Controller, out io.Writer) error {
	host, _, err := net.SplitHostPort(cfg.Addr)
	if err != nil {
		return err
	}
	loopback := IsLoopback(host)
	db, err := ctl.Reader() // before listening: a database that cannot be read is said at once
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return err
	}
	if ctl.Notice == nil { // a Temporal run that cannot be caught up, said once
		ctl.Notice = func(msg string) { fmt.Fprintf(out, "orch: %s\n", msg) }
	}
	s := New(Options{Control: ctl, Token: cfg.Token, OpenReads: loopback && cfg.Token != "", Version: cfg.Version})
	limits := newConnLimits(ln, maxServeConns(), max(maxServeConns()/2, 1))
	srv := &http.Server{Handler: s.Handler(), ConnState: limits.ConnState}
	serveTimeouts(srv)
	u := "http://" + ln.Addr().String() + "/"
	if cfg.Token != "" {
		u += "?token=" + cfg.Token
	}
	fmt.Fprintf(out, "orch: serving %s at %s\n", db.Path(), u)
	if cfg.Generated && !loopback {
		fmt.Fprintf(out, "orch: token (printed this once): %s\n", cfg.Token)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(limits) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	s.Close()
	shutCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutCtx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}

// mcpHandler serves orch mcp's tools and resources as streamable HTTP
// (behind guard: the token, the host on loopback, the origin; the SDK
// checks the host against DNS rebinding again).
func (s *Server) mcpHandler() http.Handler {
	if s.mcp == nil {
		return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			httpError(w, http.StatusInternalServerError, fmt.Sprintf("the MCP server: %v", s.mcpErr))
		})
	}
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp.MCP() },
		&mcp.StreamableHTTPOptions{MaxRequestBodyBytes: 4 << 20, SessionTimeout: 30 * time.Minute})
}

// IsLoopback says whether host (a name or an address) is this machine only.
func IsLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// NewToken is a token for one start of the server.
func NewToken() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// guard lets a request through only with the token (when one is in force:
// on loopback only for what changes something), for this host (on loopback:
// a loopback name, against DNS rebinding), and, for one that changes
// something, from the same origin (CSRF). A refused request's connection is
// closed, not kept alive for the next.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Referrer-Policy", "no-referrer")
		// Every MCP request may act (a tool call is a POST, the stream of
		// its notifications a GET): none is a read the token does not guard.
		read := (r.Method == http.MethodGet || r.Method == http.MethodHead) && r.URL.Path != "/mcp"
		refuse := func(code int, msg string) {
			w.Header().Set("Connection", "close")
			httpError(w, code, msg)
		}
		if s.token != "" && !(read && s.openReads) && !s.hasToken(r) {
			refuse(http.StatusUnauthorized, "this server needs its token (in the URL orch serve printed): Authorization: Bearer TOKEN, or ?token=TOKEN")
			return
		}
		if (s.token == "" || s.openReads) && !IsLoopback(hostOnly(r.Host)) {
			refuse(http.StatusForbidden, fmt.Sprintf("host %q is not this machine's loopback", r.Host))
			return
		}
		if !read && !sameOrigin(r) {
			refuse(http.StatusForbidden, "cross-origin request refused")
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (s *Server) hasToken(r *http.Request) bool {
	got := r.URL.Query().Get("token")
	if h := r.Header.Get("Authorization"); len(h) > 7 && h[:7] == "Bearer " {
		got = h[7:]
	}
	return subtle.ConstantTimeCompare([]byte(got), []byte(s.token)) == 1
}

// sameOrigin: the Origin (else the Referer) names this Host; a request with
// neither is a non-browser client's (browsers send Origin on every
// cross-origin POST).
func sameOrigin(r *http.Request) bool {
	from := r.Header.Get("Origin")
	if from == "" {
		from = r.Header.Get("Referer")
	}
	if from == "" {
		return true
	}
	u, err := url.Parse(from)
	return err == nil && u.Host != "" && u.Host == r.Host
}

func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return hostport
}
