package driver

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/orch-cli/orch/runner/attempt"
	"github.com/orch-cli/orch/runner/mcpbridge"
	"github.com/orch-cli/orch/runner/record"
)

func init() {
	Register("acp", Kind{New: func() Driver { return &acpDriver{} }})
}

// acpDriver takes one attempt through an Agent Client Protocol agent
// (JSON-RPC 2.0 on stdio): WARNING initializes the agent's process (one per
// run, see acpConn), STANDBY opens a session in the attempt's workspace, GO
// is one prompt turn, whose stop reason decides how the attempt ends.
type acpDriver struct {
	c *acpConn
	s *acpSession
}

// acpSession is one attempt's session: its turn's reply, its workspace.
type acpSession struct {
	a    *Attempt
	c    *acpConn
	id   string // set as session/new's response comes
	cwd  string
	root *os.Root // the workspace: the agent's file reads and writes stay inside

	// The streams logged line by line: the reply, the agent's thoughts, the
	// user's message as the agent echoes it (update, on the reader).
	message, thought, user *lineWriter

	mu    sync.Mutex
	reply tailText               // the turn's reply (agent_message_chunk text), its end
	tools map[string]acpToolCall // the tool calls not finished, by id

	usageMu sync.Mutex // one addUsage at a time: the reader's (usage_update) or the turn's end
}

func (d *acpDriver) Warning(a *Attempt) *attempt.Failure {
	c, f := a.Agents.acp.conn(a.Agents.run, a)
	if f != nil {
		return f
	}
	c.mu.Lock()
	c.last = a
	c.mu.Unlock()
	d.c = c
	return nil
}

func (d *acpDriver) Standby(a *Attempt) *attempt.Failure {
	cwd, err := filepath.Abs(a.Dir)
	if err != nil {
		return attempt.Failf("start", "the workspace: %v", err)
	}
	root, err := os.OpenRoot(cwd)
	if err != nil {
		return attempt.Failf("start", "opening the workspace %s: %v", cwd, err)
	}
	s := newACPSession(a, d.c, cwd, root)
	servers := []mcpbridge.ACPServer{}
	if a.MCP != nil {
		var skipped []string
		servers, skipped = a.MCP.ACP(d.c.http)
		for _, name := range skipped {
			a.Host.Note("mcp server %s is not passed to %s: it is an HTTP server, and the agent did not advertise mcpCapabilities.http", name, a.Agent.ID)
		}
	}
	res, f := d.c.call(a, "session/new", map[string]any{"cwd": cwd, "mcpServers": servers}, a.Timeouts.Standby, s)
	if f != nil {
		root.Close()
		return f
	}
	if s.id == "" {
		root.Close()
		d.c.fail(attempt.Failf("malfunction", "session/new answered without a sessionId"))
		return attempt.Failf("malfunction", "session/new answered without a sessionId: %s", attempt.Truncate(string(res), 80))
	}
	d.s = s // registered by the reader as the response came (see acpConn.opening)
	return nil
}

func (d *acpDriver) Work(a *Attempt, t *attempt.Task) (map[string]any, *attempt.Failure) {
	prompt, err := attempt.RenderPrompt(a.Agent, a.Cue.Prompt, a.Host.Board(t))
	if err != nil {
		return nil, attempt.Failf("prompt", "rendering the prompt: %v", err)
	}
	s, c := d.s, d.c
	id, turn, f := c.request("session/prompt", map[string]any{"sessionId": s.id,
		"prompt": []map[string]string{{"type": "text", "text": prompt}}})
	if f != nil {
		return nil, f
	}
	defer c.forget(id)
	a.Host.Going(nil) // its agent takes no message
	timer := time.NewTimer(a.Timeouts.Go)
	defer timer.Stop()
	select {
	case m := <-turn:
		return s.ended(m)
	case <-c.done:
		if halted(a) {
			return nil, a.Host.Stopped()
		}
		f := c.failure()
		return nil, attempt.Failf(f.Class, "%s, during GO", f.Reason)
	case <-a.Halt:
		return nil, d.cancel(turn, a.Host.Stopped(), false)
	case <-a.Abort:
		return nil, d.cancel(turn, a.Host.Failure(), false)
	case <-timer.C:
		return nil, d.cancel(turn, attempt.Failf("timeout", "the turn did not end within %s (GO timeout)", a.Timeouts.Go), true)
	}
}

// cancel asks the agent to end the turn (session/cancel) and waits, within
// the kill grace, for it to end. A turn that does not end, or a timeout,
// gets the process stopped as for every agent; f is the attempt's failure.
func (d *acpDriver) cancel(turn chan *rpcMessage, f *attempt.Failure, kill bool) *attempt.Failure {
	c := d.c
	d.s.a.Host.Note("session/cancel sent to %s: %s", d.s.a.Agent.ID, f.Reason)
	_ = c.notify("session/cancel", map[string]string{"sessionId": d.s.id})
	select {
	case m := <-turn:
		d.s.turnUsage(m) // a cancelled turn cost what it cost
	case <-c.done:
	case <-time.After(c.run.Grace):
		kill = true
	}
	if kill {
		c.fail(attempt.Failf(f.Class, "the agent's turn was cancelled: %s", f.Reason))
	}
	return f
}

func newACPSession(a *Attempt, c *acpConn, cwd string, root *os.Root) *acpSession {
	s := &acpSession{a: a, c: c, cwd: cwd, root: root, reply: tailText{max: attempt.MaxLine}, tools: map[string]acpToolCall{}}
	s.message = logWriter(a, "stdout")
	s.thought = &lineWriter{emit: func(l string) { a.Host.Log("stdout", "thinking: "+l) }}
	s.user = &lineWriter{emit: func(l string) { a.Host.Log("stdout", "user: "+l) }}
	return s
}

// ended is how the turn's stop reason ends the attempt.
func (s *acpSession) ended(m *rpcMessage) (map[string]any, *attempt.Failure) {
	s.flush()
	if m.Error != nil {
		return nil, attempt.Failf("failed", "the agent answered session/prompt with an error: %v", m.Error)
	}
	var r struct {
		StopReason string `json:"stopReason"`
	}
	_ = json.Unmarshal(m.Result, &r)
	s.turnUsage(m)
	switch r.StopReason {
	case "end_turn":
		return s.outputs(), nil
	case "max_tokens", "max_turn_requests", "refusal":
		return nil, attempt.Failf(r.StopReason, "the agent's turn ended with %s", r.StopReason)
	case "cancelled":
		return nil, attempt.Failf("failed", "the agent cancelled its turn by itself")
	}
	s.c.fail(attempt.Failf("malfunction", "session/prompt answered with stop reason %q", r.StopReason))
	return nil, attempt.Failf("malfunction", "session/prompt answered with stop reason %q", r.StopReason)
}

// turnUsage counts the tokens of the prompt's response (its usage: the
// unstable schema's, the session's totals), whatever the stop reason.
func (s *acpSession) turnUsage(m *rpcMessage) {
	if m == nil || m.Error != nil {
		return
	}
	u := acpObject(m.Result).object("usage")
	in, _ := u.number("inputTokens")
	out, _ := u.number("outputTokens")
	if in > 0 || out > 0 {
		s.addUsage(record.Usage{InputTokens: int64(in), OutputTokens: int64(out)})
	}
}

// addUsage counts usage the agent reported: from the reader (usage_update)
// and from the attempt's goroutine (the prompt's response), one at a time.
func (s *acpSession) addUsage(u record.Usage) {
	s.usageMu.Lock()
	defer s.usageMu.Unlock()
	s.a.Host.Usage(u)
}

// outputs are the turn's reply (its end: see tailText) and, for the other
// keys the agent provides, the values in the last JSON object of its reply.
func (s *acpSession) outputs() map[string]any {
	s.mu.Lock()
	text := s.reply.String()
	s.mu.Unlock()
	return attempt.ReplyOutputs(s.a.Agent, text)
}

func (d *acpDriver) Close(a *Attempt) (int, *int) {
	if d.c == nil {
		return 0, nil
	}
	if d.s != nil {
		d.c.mu.Lock()
		delete(d.c.sessions, d.s.id)
		d.c.mu.Unlock()
		d.s.root.Close()
	}
	return d.c.p.PID(), nil
}
