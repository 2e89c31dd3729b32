package temporal

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	"github.com/orch-cli/orch/protocols"
	"github.com/orch-cli/orch/protocols/agent"
	"github.com/orch-cli/orch/runner/driver"
	"github.com/orch-cli/orch/runner/mcpbridge"
	"github.com/orch-cli/orch/runner/record"
)

// workerMCP is a worker's MCP endpoint (runner/mcpbridge): orch's tools for
// the agents it runs, each attempt with its own token, started with the
// first attempt and closed with the worker.
type workerMCP struct {
	once sync.Once
	ep   *mcpbridge.Endpoint
	err  error
	shim []string
}

func (m *workerMCP) get() (*mcpbridge.Endpoint, []string, error) {
	m.once.Do(func() {
		m.ep, m.err = mcpbridge.Start(mcpbridge.Options{})
		m.shim = []string{orchNextToWorker(), "mcp", "agent"}
	})
	return m.ep, m.shim, m.err
}

func (m *workerMCP) close() {
	if m.ep != nil {
		_ = m.ep.Close()
	}
}

// orchNextToWorker is the orch an agent starts as its stdio MCP server
// (orch mcp agent): the one next to orch-temporal, as orch worker runs it,
// else orch on PATH.
func orchNextToWorker() string {
	if self, err := os.Executable(); err == nil {
		if p := filepath.Join(filepath.Dir(self), "orch"); isExecutable(p) {
			return p
		}
	}
	if p, err := exec.LookPath("orch"); err == nil {
		if abs, err := filepath.Abs(p); err == nil {
			return abs
		}
	}
	return "orch"
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}

// attachMCP registers an attempt on the worker's endpoint: its agent gets
// orch's tools acting as it (driver.Attempt.MCP, and ORCH_MCP_URL and
// ORCH_MCP_TOKEN in its environment for orch ask, msg, inbox), and its own
// mcp_servers. The returned func ends the registration.
func (a *Activities) attachMCP(at *driver.Attempt, h *stepHost) func() {
	ep, shim, err := a.mcp.get()
	if err != nil {
		h.Note("no MCP tools for this attempt: %v", err)
		return func() {}
	}
	token, unregister := ep.Register(at.Cue.ID+"/"+at.Agent.ID, mcpTask{h})
	at.MCP = &mcpbridge.Attachment{URL: ep.URL(), Token: token, Shim: shim, Own: at.Agent.MCPServers, Getenv: os.Getenv}
	h.env = append(h.env, at.MCP.Env()...)
	return unregister
}

// mcpTask is an attempt on a worker as orch's MCP tools act: each tool goes
// to the run's workflow the way the same jsonl request does (hub.go).
type mcpTask struct{ h *stepHost }

var _ mcpbridge.Task = mcpTask{}

func (t mcpTask) Denied(family string) string {
	return t.h.bound().denied(family)
}

func (t mcpTask) Refused(tool, reason string) { t.h.Note("MCP tool %s refused: %s", tool, reason) }

// linked is the phase's link to the workflow, or why there is none.
func (t mcpTask) linked() (hubLink, error) {
	hub := t.h.bound()
	if hub.link == nil {
		return hub, errors.New("this attempt cannot reach its run's workflow")
	}
	return hub, nil
}

func (t mcpTask) BlackboardRead(_ context.Context, req protocols.BlackboardRead) (protocols.BlackboardValue, error) {
	hub, err := t.linked()
	if err != nil {
		return protocols.BlackboardValue{}, err
	}
	return readBoard(hub, req.Key)
}

func (t mcpTask) BlackboardWrite(_ context.Context, req protocols.BlackboardWrite) (protocols.BlackboardAck, error) {
	hub, err := t.linked()
	if err != nil {
		return protocols.BlackboardAck{}, err
	}
	switch b := writeBoard(hub, req, "").(type) {
	case protocols.BlackboardAck:
		return b, nil
	case protocols.BlackboardConflict:
		return protocols.BlackboardAck{}, &agent.ConflictError{Key: b.Key, Expected: *req.ExpectedVersion, CurrentVersion: b.CurrentVersion, Author: b.Author}
	case protocols.ProtocolError:
		return protocols.BlackboardAck{}, errors.New(b.Reason)
	}
	return protocols.BlackboardAck{}, errors.New("blackboard.write: no answer")
}

func (t mcpTask) BlackboardList(ctx context.Context, prefix string) ([]mcpbridge.BoardKey, error) {
	hub, err := t.linked()
	if err != nil {
		return nil, err
	}
	var keys []BBKey
	if err := hub.link.Query(hub.ctx, QueryBBList, prefix, &keys); err != nil {
		return nil, fmt.Errorf("blackboard_list failed: %w", err)
	}
	out := make([]mcpbridge.BoardKey, 0, len(keys))
	for _, k := range keys {
		out = append(out, mcpbridge.BoardKey{Key: k.Key, Version: k.Version, Author: k.Author})
	}
	return out, nil
}

// Ask waits for the person's answer; a question nobody answered in time
// ends the attempt, as locally.
func (t mcpTask) Ask(ctx context.Context, q mcpbridge.Question) (protocols.QuestionAnswer, error) {
	hub, err := t.linked()
	if err != nil {
		return protocols.QuestionAnswer{}, err
	}
	a, err := askPerson(ctx, hub, q.QuestionAsk, record.NamedOptions(q.Options))
	if err != nil {
		if a.Class == "unanswered" {
			t.h.abort(attemptFailure(a))
		}
		return protocols.QuestionAnswer{}, err
	}
	return protocols.QuestionAnswer{QuestionID: a.ID, Answer: a.Answer}, nil
}

func (t mcpTask) ReportStatus(_ context.Context, req protocols.StatusReport) error {
	hub, err := t.linked()
	if err != nil {
		return err
	}
	return report(hub, "report_status", Report{Asker: hub.asker, State: req.State, Progress: req.Progress, Detail: req.Detail})
}

// Inbox takes the messages sent to the attempt, through the workflow.
func (t mcpTask) Inbox(ctx context.Context, wait time.Duration) ([]mcpbridge.Notice, error) {
	hub, err := t.linked()
	if err != nil {
		return nil, err
	}
	got, err := takeInbox(ctx, hub, wait)
	if err != nil {
		return nil, fmt.Errorf("inbox: %w", err)
	}
	notices := make([]mcpbridge.Notice, 0, len(got))
	for _, r := range got {
		m := r.Message(hub.asker.Cue)
		notices = append(notices, mcpbridge.Notice{Type: m.Type, Body: m.Body})
	}
	return notices, nil
}

func (t mcpTask) SendMessage(_ context.Context, req protocols.MessageSend) (protocols.MessageSent, error) {
	hub, err := t.linked()
	if err != nil {
		return protocols.MessageSent{}, err
	}
	if why := sendMessage(hub, req); why != "" {
		return protocols.MessageSent{}, fmt.Errorf("not delivered: %s", why)
	}
	return protocols.MessageSent{To: req.To}, nil
}

func (t mcpTask) Broadcast(_ context.Context, req protocols.BroadcastSend) (protocols.BroadcastSent, error) {
	hub, err := t.linked()
	if err != nil {
		return protocols.BroadcastSent{}, err
	}
	return broadcastAll(hub, req)
}

// Handoff waits for the receiver's end: its handoff.result (refused, with
// the reason, when the handoff is not allowed).
func (t mcpTask) Handoff(_ context.Context, req protocols.TaskHandoff) (protocols.HandoffResult, error) {
	hub, err := t.linked()
	if err != nil {
		return protocols.HandoffResult{}, err
	}
	return handOff(hub, req), nil
}

// Spawn starts a child without waiting: its task.announce comes through
// the inbox tool.
func (t mcpTask) Spawn(_ context.Context, req protocols.TaskSpawn) (protocols.SpawnAccepted, error) {
	hub, err := t.linked()
	if err != nil {
		return protocols.SpawnAccepted{}, err
	}
	switch b := spawnChild(hub, req).(type) {
	case protocols.SpawnAccepted:
		return b, nil
	case protocols.ProtocolError:
		return protocols.SpawnAccepted{}, errors.New(b.Reason)
	}
	return protocols.SpawnAccepted{}, errors.New("task.spawn: no answer")
}

func (t mcpTask) ListAgents(context.Context) (protocols.AgentsListed, error) {
	hub, err := t.linked()
	if err != nil {
		return protocols.AgentsListed{}, err
	}
	return listAgents(hub)
}

func (t mcpTask) MemorySearch(_ context.Context, req protocols.MemorySearch) (protocols.MemoryResults, error) {
	hub, err := t.linked()
	if err != nil {
		return protocols.MemoryResults{}, err
	}
	return searchMemory(hub, req) // memory.go
}

func (t mcpTask) MemoryWrite(_ context.Context, req protocols.MemoryWrite) (mcpbridge.MemoryWritten, error) {
	hub, err := t.linked()
	if err != nil {
		return mcpbridge.MemoryWritten{}, err
	}
	version, err := writeMemory(hub, MemoryWriteIn{Key: req.Key, Text: req.Text, Tags: req.Tags})
	return mcpbridge.MemoryWritten{Key: req.Key, Version: version}, err
}

func (t mcpTask) Escalate(_ context.Context, e mcpbridge.Escalation) error {
	hub, err := t.linked()
	if err != nil {
		return err
	}
	what := e.Message
	if e.Kind == "conflict" {
		what = protocols.EscalationConflict{ConflictType: e.ConflictType, Reason: e.Message}.What()
	}
	return showPerson(hub, "escalation", protocols.EscalationShown(e.Severity, what, nil))
}
