package driver

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/orch-cli/orch/runner/attempt"
	"github.com/orch-cli/orch/runner/proc"
	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/spec"
)

// acpMaxLine bounds one JSON-RPC message from an ACP agent: a file's
// content travels in one line.
const acpMaxLine = 10 << 20

// rpcMessage is one JSON-RPC 2.0 message either way.
type rpcMessage struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (e *rpcError) Error() string { return fmt.Sprintf("%s (code %d)", e.Message, e.Code) }

// acpConn is an ACP agent's process, started at the first WARNING of one of
// its cues and initialized once; it then serves one session per attempt
// (several at once, up to the agent's concurrency) until the run ends or it
// misbehaves, like a jsonl agent's process. The reader goroutine routes
// responses to the calls waiting for them and the agent's requests and
// notifications to the session's attempt.
type acpConn struct {
	run   Run
	agent *spec.Agent
	token string
	p     *proc.Process
	http  bool // initialize advertised mcpCapabilities.http: it takes HTTP MCP servers

	wmu  sync.Mutex    // one writer at a time
	asks *rate.Limiter // the permission requests put to the person (guardrails.message_rate)

	mu       sync.Mutex
	next     int
	pending  map[string]chan *rpcMessage // calls waiting for their response, by id
	sessions map[string]*acpSession      // by session id
	// opening are the sessions whose session/new is waiting for its
	// response, by request id: the reader registers one as its response
	// comes, before the updates the agent sends right after it.
	opening map[string]*acpSession
	last    *Attempt // its stderr is logged as this attempt's
	broken  *attempt.Failure
	idle    bool          // the run ended with no session open: see acpIdleExit
	done    chan struct{} // closed when broken
	once    sync.Once
	closed  chan struct{}
}

// acpConns are the ACP agents' processes of a run, by agent.
type acpConns struct {
	mu    sync.Mutex
	byID  map[string]*acpConn
	ready map[string]*sync.Mutex // one initialize at a time per agent
	all   []*acpConn
}

// conn returns the agent's initialized process, starting one if needed.
func (cs *acpConns) conn(run Run, a *Attempt) (*acpConn, *attempt.Failure) {
	cs.mu.Lock()
	if cs.byID == nil {
		cs.byID, cs.ready = map[string]*acpConn{}, map[string]*sync.Mutex{}
	}
	gate := cs.ready[a.Agent.ID]
	if gate == nil {
		gate = &sync.Mutex{}
		cs.ready[a.Agent.ID] = gate
	}
	cs.mu.Unlock()
	gate.Lock() // a second attempt waits for the first one's initialize
	defer gate.Unlock()
	cs.mu.Lock()
	c := cs.byID[a.Agent.ID]
	cs.mu.Unlock()
	if c != nil && c.healthy() {
		return c, nil
	}
	c, f := startACP(run, a)
	if f != nil {
		return nil, f
	}
	cs.mu.Lock()
	cs.byID[a.Agent.ID] = c
	cs.all = append(cs.all, c)
	cs.mu.Unlock()
	if f := c.initialize(a); f != nil {
		return nil, f
	}
	return c, nil
}

// acpIdleExit is how long an ACP process whose sessions are all over gets
// to exit after EOF on its stdin before orch stops it: claude-code-acp and
// codex-acp do not exit on EOF, and the run's end should not wait
// kill_grace for them (which stays the grace of a stop during a turn).
const acpIdleExit = 100 * time.Millisecond

// closeAll ends every ACP process of the run: EOF on stdin, then its
// process group is stopped and swept.
func (cs *acpConns) closeAll() {
	cs.mu.Lock()
	all := cs.all
	cs.all, cs.byID = nil, map[string]*acpConn{}
	cs.mu.Unlock()
	var wg sync.WaitGroup
	for _, c := range all {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.mu.Lock()
			c.idle = len(c.sessions) == 0
			c.mu.Unlock()
			c.fail(attempt.Failf("stopped", "the run ended"))
			<-c.closed
		}()
	}
	wg.Wait()
}

func startACP(run Run, a *Attempt) (*acpConn, *attempt.Failure) {
	c := &acpConn{run: run, agent: a.Agent, token: fmt.Sprintf("%s/acp/%s/%s", run.ID, a.Agent.ID, record.NewRunID()),
		pending: map[string]chan *rpcMessage{}, sessions: map[string]*acpSession{}, opening: map[string]*acpSession{}, last: a,
		done: make(chan struct{}), closed: make(chan struct{}),
		asks: rate.NewLimiter(rate.Limit(run.MessageRate), run.MessageRate)}
	s, err := proc.NewStdio(true)
	if err != nil {
		return nil, attempt.Failf("start", "%v", err)
	}
	run.Sweeper.Begin(c.token)
	p, err := proc.Start(proc.Spec{Argv: a.Agent.Command, Shell: a.Agent.Run, Dir: a.Dir, Env: a.Host.Env(),
		Token: c.token, Stdio: s, Cgroup: run.Sweeper.Cgroup(), Grace: run.Grace})
	if err != nil {
		run.Sweeper.End(c.token)
		return nil, attempt.Failf("start", "%v", err)
	}
	c.p = p
	p.ReadOutput(c.read, logLines(&lineWriter{emit: c.logStderr}))
	return c, nil
}

// initialize is WARNING's exchange: an agent started without its ACP flag
// stays silent here, and the ack timeout ends it.
func (c *acpConn) initialize(a *Attempt) *attempt.Failure {
	params := map[string]any{"protocolVersion": 1,
		"clientCapabilities": map[string]any{"fs": map[string]bool{"readTextFile": true, "writeTextFile": true}, "terminal": false}}
	res, f := c.call(a, "initialize", params, a.Timeouts.Ack)
	var caps struct {
		AgentCapabilities struct {
			MCPCapabilities struct {
				HTTP bool `json:"http"`
			} `json:"mcpCapabilities"`
		} `json:"agentCapabilities"`
	}
	if f == nil && json.Unmarshal(res, &caps) == nil {
		c.http = caps.AgentCapabilities.MCPCapabilities.HTTP
	}
	return f
}

// call sends a request and waits for its response within timeout, or for
// the attempt to be stopped (then the call is abandoned: the caller decides).
// With opening, the request is session/new for that session.
func (c *acpConn) call(a *Attempt, method string, params any, timeout time.Duration, opening ...*acpSession) (json.RawMessage, *attempt.Failure) {
	id, ch, f := c.request(method, params, opening...)
	if f != nil {
		return nil, f
	}
	defer c.forget(id)
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case m := <-ch:
		if m.Error != nil {
			return nil, attempt.Failf("failed", "the agent answered %s with an error: %v", method, m.Error)
		}
		return m.Result, nil
	case <-c.done:
		return nil, c.failure()
	case <-a.Halt:
		return nil, a.Host.Stopped()
	case <-timer.C:
		f := attempt.Failf("malfunction", "no answer to %s within %s", method, timeout)
		c.fail(attempt.Failf("malfunction", "the agent did not answer %s in time", method))
		return nil, f
	}
}

// request sends a call and returns the channel its response comes on.
func (c *acpConn) request(method string, params any, opening ...*acpSession) (string, chan *rpcMessage, *attempt.Failure) {
	c.mu.Lock()
	if c.broken != nil {
		defer c.mu.Unlock()
		return "", nil, c.broken
	}
	c.next++
	id := strconv.Itoa(c.next)
	ch := make(chan *rpcMessage, 1)
	c.pending[id] = ch
	for _, s := range opening {
		c.opening[id] = s
	}
	c.mu.Unlock()
	raw, _ := json.Marshal(params)
	return id, ch, c.send(rpcMessage{JSONRPC: "2.0", ID: json.RawMessage(id), Method: method, Params: raw})
}

func (c *acpConn) forget(id string) {
	c.mu.Lock()
	delete(c.pending, id)
	delete(c.opening, id)
	c.mu.Unlock()
}

// notify sends a notification (no answer).
func (c *acpConn) notify(method string, params any) *attempt.Failure {
	raw, _ := json.Marshal(params)
	return c.send(rpcMessage{JSONRPC: "2.0", Method: method, Params: raw})
}

// reply answers one of the agent's requests.
func (c *acpConn) reply(id json.RawMessage, result any, rerr *rpcError) *attempt.Failure {
	m := rpcMessage{JSONRPC: "2.0", ID: id, Error: rerr}
	if rerr == nil {
		m.Result, _ = json.Marshal(result)
	}
	return c.send(m)
}

// send writes one line. An agent that has not read its stdin for the kill
// grace is broken: orch never blocks on it.
func (c *acpConn) send(m rpcMessage) *attempt.Failure {
	b, err := json.Marshal(m)
	if err != nil {
		return attempt.Failf("internal", "encoding %s: %v", m.Method, err)
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_ = c.p.Stdin().SetWriteDeadline(time.Now().Add(c.run.Grace))
	if _, err := c.p.Stdin().Write(append(b, '\n')); err != nil {
		f := attempt.Failf("malfunction", "cannot write to the agent: %v", err)
		if errors.Is(err, os.ErrDeadlineExceeded) {
			f = attempt.Failf("malfunction", "the agent has not read its stdin for %s", c.run.Grace)
		}
		c.fail(f)
		return f
	}
	return nil
}

// read routes the agent's messages; anything that is not JSON-RPC 2.0, a
// line over acpMaxLine, a response to no call or a request orch does not
// serve breaks the process.
func (c *acpConn) read(r io.Reader) {
	br := bufio.NewReaderSize(r, 64<<10)
	for n := 1; ; n++ {
		line, err := readLine(br, acpMaxLine)
		if errors.Is(err, errLineTooLong) {
			c.fail(attempt.Failf("malfunction", "line %d from the agent is longer than %d bytes", n, acpMaxLine))
			return
		}
		if err != nil {
			c.outputClosed()
			return
		}
		if len(line) == 0 {
			continue
		}
		var m rpcMessage
		if err := json.Unmarshal(line, &m); err != nil || m.JSONRPC != "2.0" {
			c.fail(attempt.Failf("malfunction", "line %d from the agent is not a JSON-RPC 2.0 message: %s", n, attempt.Truncate(string(line), 80)))
			return
		}
		if f := c.route(&m); f != nil {
			c.fail(f)
			return
		}
	}
}

var errLineTooLong = errors.New("line too long")

// readLine reads one line of at most max bytes, without its newline.
func readLine(br *bufio.Reader, max int) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(line)+len(chunk) > max+1 {
			return nil, errLineTooLong
		}
		line = append(line, chunk...)
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil && len(line) == 0 {
			return nil, err
		}
		return trimNewline(line), nil
	}
}

// route hands one message to whoever takes it.
func (c *acpConn) route(m *rpcMessage) *attempt.Failure {
	switch {
	case m.Method == "" && len(m.ID) > 0: // a response
		c.mu.Lock()
		ch := c.pending[string(m.ID)]
		delete(c.pending, string(m.ID))
		if s := c.opening[string(m.ID)]; s != nil {
			delete(c.opening, string(m.ID))
			if id := acpObject(m.Result).str("sessionId"); id != "" && m.Error == nil {
				s.id = id
				c.sessions[id] = s
			}
		}
		c.mu.Unlock()
		if ch == nil {
			return attempt.Failf("malfunction", "the agent sent a response to no request (id %s)", m.ID)
		}
		ch <- m
		return nil
	case m.Method == "":
		return attempt.Failf("malfunction", "the agent sent a JSON-RPC message with neither method nor id")
	}
	var p struct {
		SessionID string `json:"sessionId"`
	}
	_ = json.Unmarshal(m.Params, &p)
	c.mu.Lock()
	s := c.sessions[p.SessionID]
	c.mu.Unlock()
	request := len(m.ID) > 0
	switch {
	case m.Method == "session/update" && !request:
		if s != nil {
			s.update(m.Params)
		}
		return nil
	case request && (m.Method == "session/request_permission" || m.Method == "fs/read_text_file" || m.Method == "fs/write_text_file"):
		if s == nil {
			return c.reply(m.ID, nil, &rpcError{Code: -32602, Message: "no session " + strconv.Quote(p.SessionID) + " is in a turn"})
		}
		go s.serve(m) // a permission may wait for a person: the reader goes on
		return nil
	case len(m.Method) > 0 && m.Method[0] == '_': // an extension orch does not know: allowed by ACP
		if request {
			return c.reply(m.ID, nil, &rpcError{Code: -32601, Message: "method not found: " + m.Method})
		}
		return nil
	}
	return attempt.Failf("malfunction", "the agent called %s, which orch does not serve", m.Method)
}

func (c *acpConn) healthy() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.broken == nil
}

func (c *acpConn) failure() *attempt.Failure {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.broken
}

// fail marks the process unusable (once) and stops it.
func (c *acpConn) fail(f *attempt.Failure) {
	c.mu.Lock()
	if c.broken != nil {
		c.mu.Unlock()
		return
	}
	c.broken = f
	close(c.done)
	c.mu.Unlock()
	go c.once.Do(c.stop)
}

// stop ends the process: EOF first, then its process group is stopped and
// swept, escaped processes too.
func (c *acpConn) stop() {
	defer close(c.closed)
	_ = c.p.Stdin().Close()
	wait := c.run.Grace
	c.mu.Lock()
	if c.idle {
		wait = min(wait, acpIdleExit)
	}
	c.mu.Unlock()
	select {
	case <-c.p.Done():
	case <-time.After(wait):
	}
	c.p.Terminate(c.run.Grace)
	_, escaped := c.p.Sweep(c.run.Grace, true)
	if len(escaped) > 0 {
		_ = c.run.Host.Publish(record.Event{RunID: c.run.ID, At: time.Now().UTC(), Type: record.EvNote, Agent: c.agent.ID,
			Reason: fmt.Sprintf("%d process(es) of agent %s escaped its process group (setsid); stopped them: pids %v", len(escaped), c.agent.ID, escaped)})
	}
	c.p.WaitOutput()
	c.run.Sweeper.End(c.token)
}

// outputClosed: the agent exited, or closed its output.
func (c *acpConn) outputClosed() {
	select {
	case <-c.p.Done():
		c.fail(exitFailure(c.p.Exit(), "while serving its sessions"))
	case <-time.After(exitAfterEOF):
		c.fail(attempt.Failf("malfunction", "the agent closed its output while still running"))
	}
}

func (c *acpConn) logStderr(text string) {
	c.mu.Lock()
	a := c.last
	c.mu.Unlock()
	a.Host.Log("stderr", text)
}
