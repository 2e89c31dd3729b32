// Package mcpserver is orch mcp: the MCP server through which a coding
// agent (Claude Code, Codex, Gemini, an ACP client) drives orch — it
// validates and plans specs, starts runs, follows them, answers their
// questions and steers them. Every tool calls package control (or the spec,
// planner and schema packages the commands use) and returns the JSON the
// matching command prints with --output json; nothing here runs a command
// line. orch mcp serves it on stdio, orch serve as streamable HTTP at /mcp.
//
// (The MCP server orch gives the agents it starts is runner/mcpbridge.)
package mcpserver

import (
	"context"
	"maps"
	"os"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/orch-cli/orch/control"
)

// Options configure a Server.
type Options struct {
	// Control reads and acts on the run database.
	Control *control.Controller
	// Root is the project: the paths the tools take are relative to it and
	// must stay inside it, as must every file a spec includes ("": the
	// working directory).
	Root string
	// Version is orch's, given to clients as the server's.
	Version string
	// Poll is how often wait and the resource subscriptions read the
	// database (0: every 200 ms).
	Poll time.Duration
	// Progress is how often wait tells a client that asked for progress
	// that it still waits (0: every 5 s).
	Progress time.Duration
}

// Server is orch's MCP server for a coding agent.
type Server struct {
	mcp      *mcp.Server
	ctl      *control.Controller
	root     string
	poll     time.Duration
	progress time.Duration
	watch    *watcher
}

// schemaCache is shared by every Server: each tool's schemas are resolved
// once in the process (orch serve makes one server; tests make many).
var schemaCache = mcp.NewSchemaCache()

// New returns a Server of opts.
func New(opts Options) (*Server, error) {
	root := opts.Root
	if root == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, err
		}
		root = wd
	}
	root, err := absClean(root)
	if err != nil {
		return nil, err
	}
	s := &Server{ctl: opts.Control, root: root, poll: opts.Poll, progress: opts.Progress}
	if s.poll <= 0 {
		s.poll = 200 * time.Millisecond
	}
	if s.progress <= 0 {
		s.progress = 5 * time.Second
	}
	version := opts.Version
	if version == "" {
		version = "dev"
	}
	s.watch = newWatcher(s)
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: "orch", Title: "orch: validate, plan, run and steer cuelists", Version: version},
		&mcp.ServerOptions{SchemaCache: schemaCache, HasTools: true, HasResources: true,
			Instructions: "orch runs cuelists of agents (YAML specs). Write specs, check them with validate " +
				"(diagnostics give file, line, column), see the DAG with plan, start a run with run (it returns " +
				"the run id at once), follow it with wait (blocks until a question, a cue waiting for GO, or the " +
				"end), status, events and logs, and act with answer, go, ack, stop, retry and resume.",
			SubscribeHandler:   s.watch.subscribe,
			UnsubscribeHandler: s.watch.unsubscribe,
		})
	for _, t := range tools() {
		t.add(s)
	}
	s.addResources()
	return s, nil
}

// MCP is the SDK's server, to serve on a transport.
func (s *Server) MCP() *mcp.Server { return s.mcp }

// Run serves one client on t (stdio: orch mcp) until it leaves or ctx ends.
func (s *Server) Run(ctx context.Context, t mcp.Transport) error {
	defer s.Close()
	return s.mcp.Run(ctx, t)
}

// Close stops watching subscribed resources.
func (s *Server) Close() { s.watch.close() }

// watcher reads the subscribed resources every poll and tells the SDK
// (which tells the subscribed sessions) when one has changed.
type watcher struct {
	s    *Server
	mu   sync.Mutex
	subs map[string]int    // URI → sessions subscribed
	last map[string]string // URI → what it was at the last look
	stop chan struct{}
	once sync.Once
	run  bool
}

func newWatcher(s *Server) *watcher {
	return &watcher{s: s, subs: map[string]int{}, last: map[string]string{}, stop: make(chan struct{})}
}

func (w *watcher) subscribe(ctx context.Context, req *mcp.SubscribeRequest) error {
	uri := req.Params.URI
	look, err := w.s.fingerprint(ctx, uri, "")
	if err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.subs[uri] == 0 {
		w.last[uri] = look
	}
	w.subs[uri]++
	if !w.run {
		w.run = true
		go w.loop()
	}
	return nil
}

func (w *watcher) unsubscribe(_ context.Context, req *mcp.UnsubscribeRequest) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	uri := req.Params.URI
	if w.subs[uri] > 1 {
		w.subs[uri]--
		return nil
	}
	delete(w.subs, uri)
	delete(w.last, uri)
	return nil
}

func (w *watcher) close() { w.once.Do(func() { close(w.stop) }) }

func (w *watcher) loop() {
	t := time.NewTicker(w.s.poll)
	defer t.Stop()
	for {
		select {
		case <-w.stop:
			return
		case <-t.C:
		}
		w.mu.Lock()
		seen := maps.Clone(w.last)
		w.mu.Unlock()
		for uri, prev := range seen {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			look, err := w.s.fingerprint(ctx, uri, prev)
			cancel()
			if err != nil {
				continue // a run that cannot be read now: looked at again at the next tick
			}
			w.mu.Lock()
			changed := w.subs[uri] > 0 && w.last[uri] != look
			if changed {
				w.last[uri] = look
			}
			w.mu.Unlock()
			if changed {
				_ = w.s.mcp.ResourceUpdated(context.Background(), &mcp.ResourceUpdatedNotificationParams{URI: uri})
			}
		}
	}
}
