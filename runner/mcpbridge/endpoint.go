package mcpbridge

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Endpoint is a run's MCP endpoint: one streamable-HTTP server on
// 127.0.0.1 (an ephemeral port) for every attempt of the run, each with its
// own bearer token. A request without a live token gets 401; a session
// belongs to the token that opened it (the SDK refuses it to another).
//
// What one agent does cannot stall another's calls: each connection and
// each call has its own goroutine, a request's header must come within
// 10s and its body within 30s, idle connections close after 60s, a
// request body is at most 2 MiB (413 beyond), an attempt has at most
// MaxCalls calls in flight and opens at most MaxSessions sessions (429
// beyond either).
type Endpoint struct {
	url      string
	srv      *http.Server
	progress time.Duration
	done     chan struct{}

	mu       sync.Mutex
	byToken  map[string]*registration
	servers  map[string]*mcp.Server // by the tools denied: the attempts denied the same share one
	serial   int
	serveErr error
}

// registration is one attempt: the task its calls act as.
type registration struct {
	id       string // the attempt, and a serial: a session stays with one registration
	binding  *binding
	inUse    chan struct{} // a slot per call in flight
	sessions int           // opened so far (e.mu)
}

// The per-attempt caps (see Endpoint).
const (
	MaxCalls    = 64
	MaxSessions = 64
	maxBody     = 2 * MaxValue
)

// Options tune an Endpoint; the zero value is the default.
type Options struct {
	// Progress is how often a waiting call (ask, handoff) tells a client
	// that asked for progress that it still waits (default 10s).
	Progress time.Duration
}

// Start listens on 127.0.0.1 and serves until Close.
func Start(opts Options) (*Endpoint, error) {
	// Plain TCP over IPv4: Go listens with Multipath TCP where the kernel
	// has it, which a loopback endpoint has no use for, and "tcp" probes
	// the machine's IPv6 support first. Each run starts an endpoint: the
	// probes (six sockets, a uname) were a part of every run's cost.
	var lc net.ListenConfig
	lc.SetMultipathTCP(false)
	ln, err := lc.Listen(context.Background(), "tcp4", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("the MCP endpoint: %w", err)
	}
	e := &Endpoint{url: "http://" + ln.Addr().String() + "/mcp", progress: opts.Progress,
		byToken: map[string]*registration{}, servers: map[string]*mcp.Server{}, done: make(chan struct{})}
	mcpHandler := mcp.NewStreamableHTTPHandler(e.serverFor, &mcp.StreamableHTTPOptions{
		MaxRequestBodyBytes: maxBody,
		SessionTimeout:      30 * time.Minute, // an abandoned session of a live attempt
	})
	verify := auth.RequireBearerToken(e.verify, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})
	mux := http.NewServeMux()
	mux.Handle("/mcp", verify(e.limitCalls(mcpHandler)))
	e.srv = &http.Server{Handler: mux,
		ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second, IdleTimeout: 60 * time.Second,
		MaxHeaderBytes: 64 << 10}
	go func() {
		err := e.srv.Serve(ln)
		e.mu.Lock()
		if !errors.Is(err, http.ErrServerClosed) {
			e.serveErr = err
		}
		e.mu.Unlock()
		close(e.done)
	}()
	return e, nil
}

// URL is where agents reach the endpoint (http://127.0.0.1:PORT/mcp).
func (e *Endpoint) URL() string { return e.url }

// Register serves task's tools to the bearer of the token returned until
// unregister is called (when the attempt ends): then the token gets 401,
// on the sessions it opened too. attempt names it (the sessions' owner).
func (e *Endpoint) Register(attempt string, task Task) (token string, unregister func()) {
	var b [32]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	token = hex.EncodeToString(b[:])
	bind := newBinding(task, e.progress)
	e.mu.Lock()
	defer e.mu.Unlock()
	e.serial++
	e.byToken[token] = &registration{id: attempt + "#" + strconv.Itoa(e.serial), binding: bind,
		inUse: make(chan struct{}, MaxCalls)}
	return token, func() {
		e.mu.Lock()
		delete(e.byToken, token)
		e.mu.Unlock()
	}
}

// attached is the binding of the attempt whose token authenticated the
// call's request (the SDK checks that a session's requests all carry its
// owner's token).
func attached(req *mcp.CallToolRequest) *binding {
	if req.Extra == nil || req.Extra.TokenInfo == nil {
		return nil
	}
	reg, _ := req.Extra.TokenInfo.Extra["registration"].(*registration)
	if reg == nil {
		return nil
	}
	return reg.binding
}

// Close stops the endpoint: every connection ends, calls in flight with
// them, and every session (none waits for its idle timeout).
func (e *Endpoint) Close() error {
	err := e.srv.Close()
	<-e.done
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, srv := range e.servers {
		for ss := range srv.Sessions() {
			_ = ss.Close()
		}
	}
	return errors.Join(err, e.serveErr)
}

// verify finds the registration of a bearer token (auth.ErrInvalidToken:
// 401).
func (e *Endpoint) verify(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
	e.mu.Lock()
	reg, ok := e.byToken[token]
	e.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("%w: the token is unknown or its attempt has ended", auth.ErrInvalidToken)
	}
	return &auth.TokenInfo{UserID: reg.id, Extra: map[string]any{"registration": reg}}, nil
}

func registrationOf(r *http.Request) *registration {
	if ti := auth.TokenInfoFromContext(r.Context()); ti != nil {
		reg, _ := ti.Extra["registration"].(*registration)
		return reg
	}
	return nil
}

// serverFor picks the server of a request: its registration's, made at the
// first request that needs it. Making one (its tools' schemas) costs about
// 1 ms of CPU, as much as two plain cues, and most runs never call a tool:
// a plain command does not.
func (e *Endpoint) serverFor(r *http.Request) *mcp.Server {
	reg := registrationOf(r)
	if reg == nil {
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	denied := reg.binding.deniedTools()
	key := strings.Join(denied, ",") // the attempts denied the same tools share a server
	srv, ok := e.servers[key]
	if !ok {
		srv = newServer(denied, attached)
		e.servers[key] = srv
	}
	return srv
}

// limitCalls answers 429 to an attempt's request beyond MaxCalls in
// flight, or that would open a session beyond MaxSessions: an agent
// flooding the endpoint waits, the others do not.
func (e *Endpoint) limitCalls(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reg := registrationOf(r)
		if reg == nil {
			http.Error(w, "no attempt", http.StatusUnauthorized)
			return
		}
		opening := r.Method == http.MethodPost && r.Header.Get(sessionHeader) == ""
		e.mu.Lock()
		full := opening && reg.sessions >= MaxSessions
		e.mu.Unlock()
		if full {
			http.Error(w, fmt.Sprintf("this attempt opened %d sessions already", MaxSessions), http.StatusTooManyRequests)
			return
		}
		select {
		case reg.inUse <- struct{}{}:
			defer func() { <-reg.inUse }()
		default:
			w.Header().Set("Retry-After", "1")
			http.Error(w, fmt.Sprintf("more than %d calls of this attempt in flight", MaxCalls), http.StatusTooManyRequests)
			return
		}
		next.ServeHTTP(w, r)
		if opening && w.Header().Get(sessionHeader) != "" { // the SDK opened one
			e.mu.Lock()
			reg.sessions++
			e.mu.Unlock()
		}
	})
}

const sessionHeader = "Mcp-Session-Id"
