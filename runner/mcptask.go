package runner

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/orch-cli/orch/protocols"
	"github.com/orch-cli/orch/protocols/agent"
	"github.com/orch-cli/orch/runner/mcpbridge"
)

// mcpTask is an attempt as orch's MCP tools act (runner/mcpbridge): each
// tool call is the jsonl request with the same body, served by Call — the
// same code path (tool policy, guards, loop detection, events).
type mcpTask struct{ a *attemptRun }

var _ mcpbridge.Task = mcpTask{}

func (t mcpTask) Denied(family string) string {
	if t.a.allows(family) {
		return ""
	}
	return t.a.denied(family)
}

// Refused records a call the bridge refused before it reached the hub.
func (t mcpTask) Refused(tool, reason string) {
	t.a.Note("MCP tool %s refused: %s", tool, reason)
}

// call serves body and returns the answer's body; a protocol.error or a
// delivery.failed is an error saying why.
func (t mcpTask) call(ctx context.Context, body protocols.Body) (protocols.Body, error) {
	m, err := t.a.Call(ctx, body)
	if err != nil {
		return nil, err
	}
	switch b := m.Body.(type) {
	case protocols.ProtocolError:
		return nil, errors.New(b.Reason)
	case protocols.DeliveryFailed:
		return nil, fmt.Errorf("not delivered: %s", b.Reason)
	}
	return m.Body, nil
}

// answer is call with the answer of the type the request takes.
func answer[T protocols.Body](t mcpTask, ctx context.Context, body protocols.Body) (T, error) {
	var zero T
	got, err := t.call(ctx, body)
	if err != nil {
		return zero, err
	}
	v, ok := got.(T)
	if !ok {
		return zero, fmt.Errorf("orch answered %s with %T", body.MessageType(), got)
	}
	return v, nil
}

func (t mcpTask) BlackboardRead(ctx context.Context, req protocols.BlackboardRead) (protocols.BlackboardValue, error) {
	return answer[protocols.BlackboardValue](t, ctx, req)
}

func (t mcpTask) BlackboardWrite(ctx context.Context, req protocols.BlackboardWrite) (protocols.BlackboardAck, error) {
	got, err := t.call(ctx, req)
	if err != nil {
		return protocols.BlackboardAck{}, err
	}
	switch b := got.(type) {
	case protocols.BlackboardAck:
		return b, nil
	case protocols.BlackboardConflict:
		return protocols.BlackboardAck{}, &agent.ConflictError{Key: b.Key, Expected: *req.ExpectedVersion, CurrentVersion: b.CurrentVersion, Author: b.Author}
	}
	return protocols.BlackboardAck{}, fmt.Errorf("orch answered blackboard.write with %T", got)
}

// BlackboardList reads the board (a read: nothing to record but the call).
func (t mcpTask) BlackboardList(_ context.Context, prefix string) ([]mcpbridge.BoardKey, error) {
	entries, err := t.a.r.blackboard()
	if err != nil {
		return nil, err
	}
	var keys []mcpbridge.BoardKey
	for k, e := range entries {
		if strings.HasPrefix(k, prefix) {
			keys = append(keys, mcpbridge.BoardKey{Key: k, Version: e.Version, Author: e.Author})
		}
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].Key < keys[j].Key })
	return keys, nil
}

func (t mcpTask) Ask(ctx context.Context, q mcpbridge.Question) (protocols.QuestionAnswer, error) {
	ask := q.QuestionAsk
	ask.Options = q.Options
	return answer[protocols.QuestionAnswer](t, ctx, ask)
}

func (t mcpTask) SendMessage(ctx context.Context, req protocols.MessageSend) (protocols.MessageSent, error) {
	return answer[protocols.MessageSent](t, ctx, req)
}

func (t mcpTask) Broadcast(ctx context.Context, req protocols.BroadcastSend) (protocols.BroadcastSent, error) {
	return answer[protocols.BroadcastSent](t, ctx, req)
}

// Inbox takes what the attempt was sent, when it reads it through its
// inbox (a jsonl agent gets it on its stdin: its inbox stays empty).
func (t mcpTask) Inbox(ctx context.Context, wait time.Duration) ([]mcpbridge.Notice, error) {
	inbox := t.a.inbox.Load() // set when the attempt enters GO, on its own goroutine
	if inbox == nil {
		return nil, nil
	}
	return inbox.take(ctx, wait), nil
}

func (t mcpTask) Handoff(ctx context.Context, req protocols.TaskHandoff) (protocols.HandoffResult, error) {
	return answer[protocols.HandoffResult](t, ctx, req)
}

func (t mcpTask) Spawn(ctx context.Context, req protocols.TaskSpawn) (protocols.SpawnAccepted, error) {
	return answer[protocols.SpawnAccepted](t, ctx, req)
}

func (t mcpTask) ListAgents(ctx context.Context) (protocols.AgentsListed, error) {
	return answer[protocols.AgentsListed](t, ctx, protocols.AgentsList{})
}

func (t mcpTask) ReportStatus(ctx context.Context, req protocols.StatusReport) error {
	_, err := t.call(ctx, req)
	return err
}

func (t mcpTask) MemorySearch(ctx context.Context, req protocols.MemorySearch) (protocols.MemoryResults, error) {
	return answer[protocols.MemoryResults](t, ctx, req)
}

func (t mcpTask) MemoryWrite(ctx context.Context, req protocols.MemoryWrite) (mcpbridge.MemoryWritten, error) {
	ack, err := answer[protocols.MemoryAck](t, ctx, req)
	return mcpbridge.MemoryWritten{Key: ack.Key}, err // memory.ack carries no version yet
}

func (t mcpTask) Escalate(ctx context.Context, e mcpbridge.Escalation) error {
	var body protocols.Body = protocols.EscalationError{Error: e.Message, Severity: e.Severity}
	if e.Kind == "conflict" {
		body = protocols.EscalationConflict{ConflictType: e.ConflictType, Reason: e.Message, Severity: e.Severity}
	}
	_, err := t.call(ctx, body)
	return err
}
