// Package mockmodel is a scripted model server for testing the real coding
// CLIs offline, standard library only. It serves, on loopback, the
// streaming formats of three model APIs as the CLIs use them:
//
//   - Anthropic Messages: POST /v1/messages (SSE), for claude and the
//     Claude Agent SDK (ANTHROPIC_BASE_URL=URL);
//   - OpenAI Responses: POST /v1/responses (SSE), for codex through a
//     model_providers entry with base_url = URL/v1 and wire_api = "responses";
//   - Gemini: POST /v1beta/models/M:generateContent (JSON) and
//     :streamGenerateContent?alt=sse, for gemini-cli (GOOGLE_GEMINI_BASE_URL=URL).
//
// A conversation follows a Script, chosen by the name the prompt carries
// ("[mock-script NAME]", anywhere in the request), or else by a phrase it
// holds (Config.Phrases: prompts a test does not write, such as an
// example's cuelist's): its turn N answers the
// request that carries N tool results, so the server keeps no state per
// conversation and a CLI that retries a request gets the same answer. A
// turn is a file written by the CLI's own edit tool, a shell command, or a
// final reply; each carries its token usage. The tool is the one the
// request offers (claude's Write and Bash, codex's apply_patch and
// exec_command, gemini's write_file and run_shell_command), with paths made
// absolute against the working directory the CLI states in its prompt.
// Requests that offer no tools, or ask for JSON by a schema (gemini's
// routing and next-speaker checks), are auxiliary: a short reply, or an
// object made from the schema. Every request is logged for assertions.
package mockmodel

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Turn is one answer of the model.
type Turn struct {
	// Text is said first (a final reply when the turn has no tool call).
	Text string `json:"text,omitempty"`
	// Write asks the CLI's edit tool to create the file Path (relative to
	// the CLI's working directory) with Content.
	Write *File `json:"write,omitempty"`
	// Shell asks the CLI's shell tool to run a command line.
	Shell string `json:"shell,omitempty"`
	// Escalate asks to run Shell outside the CLI's sandbox, where the CLI
	// lets the model ask (codex: sandbox_permissions "require_escalated"):
	// codex then asks permission for it even when its policy lets the model
	// decide (approval_policy "on-request").
	Escalate bool `json:"escalate,omitempty"`
	// Tool calls a tool the request offers by its name (an MCP tool's
	// too: mcp__SERVER__NAME), on the Messages API (claude).
	Tool *ToolCall `json:"tool,omitempty"`
	// The turn's token usage; zero means 100 in, 10 out.
	InputTokens  int `json:"input_tokens,omitempty"`
	OutputTokens int `json:"output_tokens,omitempty"`
}

// ToolCall is a call a Turn makes. A string argument "{{PATH}}" takes the
// value at PATH (keys and list indexes, dotted: inbox.0.id) in the latest
// tool result that has it, read as JSON: a script can pass on the run id a
// tool returned.
type ToolCall struct {
	Name string         `json:"name"`
	Args map[string]any `json:"args"`
}

// File is a file a Turn writes.
type File struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

// Script is a conversation: turn N answers the request that carries N tool
// results; past the end, the last turn answers again.
type Script []Turn

func (t Turn) usage() (in, out int) {
	in, out = t.InputTokens, t.OutputTokens
	if in == 0 && out == 0 {
		in, out = 100, 10
	}
	return in, out
}

// Marker is what a prompt says to follow the script name.
func Marker(name string) string { return "[mock-script " + name + "]" }

var markerRE = regexp.MustCompile(`\[mock-script ([A-Za-z0-9_.-]+)\]`)

// Request is one request the server answered.
type Request struct {
	At     time.Time `json:"at"`
	API    string    `json:"api"` // anthropic, responses, gemini
	Method string    `json:"method"`
	Path   string    `json:"path"` // with its query
	// Script and Turn say what answered it; Script is "" for an auxiliary
	// request (no tools offered, or JSON asked for by a schema).
	Script string   `json:"script,omitempty"`
	Turn   int      `json:"turn"`
	Tools  []string `json:"tools,omitempty"` // the tools the request offered
	Cwd    string   `json:"cwd,omitempty"`   // the working directory its prompt states
	// Call is the tool call answered ("Write /abs/path", "Bash echo hi"),
	// Reply the reply's text.
	Call   string `json:"call,omitempty"`
	Reply  string `json:"reply,omitempty"`
	Status int    `json:"status"`
	Body   []byte `json:"-"`
}

// Config says what a Server serves.
type Config struct {
	Addr    string            // default 127.0.0.1:0 (any free port on loopback)
	Scripts map[string]Script // by name
	// Phrases choose the script of a request that names none: the first
	// phrase found in one of its texts (a prompt, the system prompt, a tool
	// result) names it.
	Phrases []Phrase
	// Dump, when set, is a directory that gets each request's body
	// (NNNN-api.json) and what answered it (NNNN-api.txt), to read when a
	// CLI does not do what a test expects.
	Dump string
}

// Phrase is a text that chooses a script.
type Phrase struct {
	Text   string
	Script string
}

// String is the request in one line, without its body.
func (r Request) String() string {
	return fmt.Sprintf("%s %s %s: script %q turn %d cwd %q: call %q, reply %q", r.API, r.Method, r.Path, r.Script, r.Turn, r.Cwd, r.Call, r.Reply)
}

// Server is the mock model. Start it, point the CLIs at URL, Close it.
type Server struct {
	URL string

	cfg Config
	srv *http.Server

	mu   sync.Mutex
	log  []Request
	next int // ids of calls and messages
}

// Start serves cfg's scripts until Close.
func Start(cfg Config) (*Server, error) {
	if cfg.Addr == "" {
		cfg.Addr = "127.0.0.1:0"
	}
	if cfg.Dump != "" {
		if err := os.MkdirAll(cfg.Dump, 0o755); err != nil {
			return nil, err
		}
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return nil, err
	}
	s := &Server{URL: "http://" + ln.Addr().String(), cfg: cfg}
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

// Close stops the server.
func (s *Server) Close() error { return s.srv.Close() }

// Requests is every request answered so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.log...)
}

func (s *Server) id(prefix string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.next++
	return fmt.Sprintf("%s_mock%04d", prefix, s.next)
}

// maxBody bounds a request: the CLIs send their whole conversation.
const maxBody = 32 << 20

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	req := &Request{At: time.Now(), Method: r.Method, Path: r.URL.RequestURI(), Body: body}
	defer s.record(req)
	var api handler
	switch p := r.URL.Path; {
	case r.Method != http.MethodPost:
	case p == "/v1/messages":
		req.API, api = "anthropic", anthropic{}
	case p == "/v1/responses":
		req.API, api = "responses", responses{}
	case strings.HasPrefix(p, "/v1beta/models/") && strings.HasSuffix(p, ":streamGenerateContent"):
		req.API, api = "gemini", gemini{stream: true}
	case strings.HasPrefix(p, "/v1beta/models/") && strings.HasSuffix(p, ":generateContent"):
		req.API, api = "gemini", gemini{}
	}
	if api == nil {
		req.Status = http.StatusNotFound
		http.Error(w, "mockmodel serves POST /v1/messages, /v1/responses and /v1beta/models/M:(stream)generateContent", req.Status)
		return
	}
	var doc map[string]any
	if err := json.Unmarshal(body, &doc); err != nil {
		req.Status = http.StatusBadRequest
		http.Error(w, "mockmodel: the body is not a JSON object: "+err.Error(), req.Status)
		return
	}
	req.Tools = api.tools(doc)
	req.Cwd = workingDir(doc)
	req.Status = http.StatusOK
	a := &answer{s: s, req: req, doc: doc}
	if len(req.Tools) == 0 || api.wantsJSON(doc) {
		api.aux(w, a)
		return
	}
	if m := markerRE.FindSubmatch(body); m != nil {
		req.Script = string(m[1])
	} else {
		req.Script = s.byPhrase(doc)
	}
	script, ok := s.cfg.Scripts[req.Script]
	if !ok || len(script) == 0 {
		a.text = fmt.Sprintf("mockmodel: no script named %q (the prompt says which with %s)", req.Script, Marker("NAME"))
		a.logged()
		api.reply(w, a)
		return
	}
	req.Turn = api.toolResults(doc)
	t := script[min(req.Turn, len(script)-1)]
	a.text = t.Text
	a.in, a.out = t.usage()
	if t.Write != nil || t.Shell != "" || t.Tool != nil {
		if a.call, err = api.call(t, a); err != nil {
			a.text = "mockmodel: " + err.Error()
		}
	}
	a.logged()
	api.reply(w, a)
}

// byPhrase is the script of the first of the phrases the request holds.
func (s *Server) byPhrase(doc map[string]any) string {
	for _, p := range s.cfg.Phrases {
		found := false
		walkStrings(doc, func(text string) bool {
			found = strings.Contains(text, p.Text)
			return !found
		})
		if found {
			return p.Script
		}
	}
	return ""
}

func (s *Server) record(req *Request) {
	s.mu.Lock()
	s.log = append(s.log, *req)
	n := len(s.log)
	s.mu.Unlock()
	if s.cfg.Dump == "" {
		return
	}
	base := filepath.Join(s.cfg.Dump, fmt.Sprintf("%04d-%s", n, orDefault(req.API, "unknown")))
	summary, _ := json.MarshalIndent(req, "", "  ")
	_ = os.WriteFile(base+".txt", append(summary, '\n'), 0o644)
	_ = os.WriteFile(base+".json", req.Body, 0o644)
}

// handler is one API's format.
type handler interface {
	tools(doc map[string]any) []string
	wantsJSON(doc map[string]any) bool
	toolResults(doc map[string]any) int
	// call is the tool call that does a turn's write or shell command, in
	// the API's terms, with the tool the request offers.
	call(t Turn, a *answer) (*toolCall, error)
	reply(w http.ResponseWriter, a *answer)
	// aux answers an auxiliary request (no tools, or JSON by a schema).
	aux(w http.ResponseWriter, a *answer)
}

// answer is what one response says: text, then perhaps a tool call.
type answer struct {
	s       *Server
	req     *Request
	doc     map[string]any // the request's body
	text    string
	call    *toolCall
	in, out int
}

// toolCall is a call of one of the request's tools: JSON arguments, or a
// freeform input (codex's apply_patch).
type toolCall struct {
	name     string
	args     map[string]any
	freeform string
	custom   bool // a custom (freeform) tool of the Responses API
}

func (a *answer) logged() {
	a.req.Reply = a.text
	if c := a.call; c != nil {
		what := c.freeform
		for _, k := range []string{"file_path", "command", "cmd"} {
			if v, ok := c.args[k]; ok {
				what = fmt.Sprint(v)
				break
			}
		}
		a.req.Call = c.name + " " + what
	}
}

// pick is the first of names the request offers, matched whole or as the
// last part of an MCP-style name (mcp__acp__Write).
func pick(offered []string, names ...string) string {
	for _, n := range names {
		for _, o := range offered {
			if o == n || strings.HasSuffix(o, "__"+n) {
				return o
			}
		}
	}
	return ""
}

// namedCall is a turn's call of tools that take {file_path, content} and
// {command, description}: claude's Write and Bash, gemini's write_file and
// run_shell_command.
func namedCall(t Turn, req *Request, write, shell string) (*toolCall, error) {
	if t.Write != nil {
		name := pick(req.Tools, write)
		if name == "" {
			return nil, noTool("write a file", req)
		}
		path, err := absolute(t.Write.Path, req)
		if err != nil {
			return nil, err
		}
		return &toolCall{name: name, args: map[string]any{"file_path": path, "content": t.Write.Content}}, nil
	}
	name := pick(req.Tools, shell)
	if name == "" {
		return nil, noTool("run a shell command", req)
	}
	return &toolCall{name: name, args: map[string]any{"command": t.Shell, "description": "Run the scripted command"}}, nil
}

func noTool(what string, req *Request) error {
	return fmt.Errorf("the request offers no tool to %s (tools: %s)", what, strings.Join(req.Tools, ", "))
}

// absolute makes a script's path absolute against the CLI's working directory.
func absolute(path string, req *Request) (string, error) {
	if filepath.IsAbs(path) {
		return path, nil
	}
	if req.Cwd == "" {
		return "", fmt.Errorf("cannot place %s: the request states no working directory", path)
	}
	return filepath.Join(req.Cwd, path), nil
}

// cwdPatterns find the working directory in what each CLI tells its model:
// claude's environment section, codex's <environment_context>, gemini's
// session context.
var cwdPatterns = []*regexp.Regexp{
	regexp.MustCompile(`Primary working directory: (/[^\n]*)`),
	regexp.MustCompile(`<cwd>(/[^<]*)</cwd>`),
	regexp.MustCompile(`Workspace Directories:\*\*\n\s*- (/[^\n]*)`),
	regexp.MustCompile(`(?m)^Working directory: (/[^\n]*)`),
}

func workingDir(doc map[string]any) string {
	var found string
	walkStrings(doc, func(s string) bool {
		for _, re := range cwdPatterns {
			if m := re.FindStringSubmatch(s); m != nil {
				found = strings.TrimSpace(m[1])
				return false
			}
		}
		return true
	})
	return found
}

// walkStrings calls f with every string in v until it returns false.
func walkStrings(v any, f func(string) bool) bool {
	switch x := v.(type) {
	case string:
		return f(x)
	case []any:
		for _, e := range x {
			if !walkStrings(e, f) {
				return false
			}
		}
	case map[string]any:
		for _, e := range x {
			if !walkStrings(e, f) {
				return false
			}
		}
	}
	return true
}

// sse writes server-sent events, flushing each.
type sse struct {
	w http.ResponseWriter
}

func newSSE(w http.ResponseWriter) sse {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	return sse{w}
}

// event writes one event; name "" writes a data line only (Gemini).
func (e sse) event(name string, data any) {
	b, _ := json.Marshal(data)
	if name != "" {
		fmt.Fprintf(e.w, "event: %s\n", name)
	}
	fmt.Fprintf(e.w, "data: %s\n\n", b)
	if f, ok := e.w.(http.Flusher); ok {
		f.Flush()
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// list and obj read a decoded JSON document.
func list(v any) []any {
	l, _ := v.([]any)
	return l
}

func obj(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// errNamedTool: a Turn's Tool is answered on the Messages API only.
var errNamedTool = errors.New("a scripted tool call (Turn.Tool) is answered on the Messages API (claude) only")

// called is the call of tc, with its "{{PATH}}" arguments taken from
// results (the conversation's tool results, oldest first).
func called(tc *ToolCall, req *Request, results []string) (*toolCall, error) {
	name := pick(req.Tools, tc.Name)
	if name == "" {
		return nil, noTool("call "+tc.Name, req)
	}
	args := map[string]any{}
	keys := make([]string, 0, len(tc.Args))
	for k := range tc.Args {
		keys = append(keys, k)
	}
	sort.Strings(keys) // the first argument no result has is named, the same each time
	for _, k := range keys {
		v := tc.Args[k]
		ref, ok := v.(string)
		if !ok || !strings.HasPrefix(ref, "{{") || !strings.HasSuffix(ref, "}}") {
			args[k] = v
			continue
		}
		path := strings.TrimSuffix(strings.TrimPrefix(ref, "{{"), "}}")
		found := false
		for i := len(results) - 1; i >= 0 && !found; i-- {
			var doc any
			if json.Unmarshal([]byte(results[i]), &doc) == nil {
				args[k], found = lookup(doc, strings.Split(path, "."))
			}
		}
		if !found {
			return nil, fmt.Errorf("no tool result has %s (for %s's %s)", path, tc.Name, k)
		}
	}
	return &toolCall{name: name, args: args}, nil
}

// lookup is the value at path in doc.
func lookup(doc any, path []string) (any, bool) {
	for _, p := range path {
		switch d := doc.(type) {
		case map[string]any:
			v, ok := d[p]
			if !ok {
				return nil, false
			}
			doc = v
		case []any:
			i, err := strconv.Atoi(p)
			if err != nil || i < 0 || i >= len(d) {
				return nil, false
			}
			doc = d[i]
		default:
			return nil, false
		}
	}
	return doc, true
}
