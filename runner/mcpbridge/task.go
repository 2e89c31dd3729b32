// Package mcpbridge serves orch's collaboration — the blackboard, questions
// for the person, messages, handoffs, spawns, status, memory, escalations —
// as MCP tools, so the coding agents orch starts (which take tools through
// MCP, not orch's jsonl protocol) can work together.
//
// The tools act as one attempt of one task: each calls a Task, the narrow
// interface the run's hub implements with the same code path as the jsonl
// requests (guards, tool policy, rate limits, loop detection, events). The
// package knows MCP (the official Go SDK) and the tools' shapes, nothing of
// the run: it imports protocols for the typed requests and replies, and
// runner imports it, never the other way.
//
// One Endpoint serves a run: a streamable-HTTP server on 127.0.0.1 (an
// ephemeral port, DNS-rebinding protection), where each attempt is
// registered with its own bearer token that stops working (401) when the
// attempt is unregistered.
package mcpbridge

import (
	"context"
	"time"

	"github.com/orch-cli/orch/protocols"
)

// Task is what the tools act as: one attempt of one task of a run. Each
// method is one request of the agent; the error of a method is shown to
// the agent as the tool's error result (isError), so it says what went wrong
// in words an agent can act on. A method that waits (Ask, Handoff, Inbox)
// returns when ctx ends (the call cancelled, the attempt unregistered).
type Task interface {
	// Denied says why the task's tool policy denies a tool family (one of
	// planner.ProtocolTools: "blackboard", "handoff", "memory", "spawn",
	// "agents"), or "" when it is allowed.
	Denied(family string) string

	BlackboardRead(ctx context.Context, req protocols.BlackboardRead) (protocols.BlackboardValue, error)
	// BlackboardWrite returns an error naming the key's version when
	// req.ExpectedVersion is not it, and writes nothing (the hub's
	// blackboard.conflict, as an *agent.ConflictError).
	BlackboardWrite(ctx context.Context, req protocols.BlackboardWrite) (protocols.BlackboardAck, error)
	BlackboardList(ctx context.Context, prefix string) ([]BoardKey, error)

	// Ask blocks until the question is answered.
	Ask(ctx context.Context, q Question) (protocols.QuestionAnswer, error)
	// SendMessage returns an error saying why when the message could not
	// be delivered (the jsonl delivery.failed).
	SendMessage(ctx context.Context, req protocols.MessageSend) (protocols.MessageSent, error)
	Broadcast(ctx context.Context, req protocols.BroadcastSend) (protocols.BroadcastSent, error)
	// Inbox returns the notices delivered to the task since the last call,
	// waiting up to wait for one when there is none.
	Inbox(ctx context.Context, wait time.Duration) ([]Notice, error)

	// Handoff blocks until the receiver ends.
	Handoff(ctx context.Context, req protocols.TaskHandoff) (protocols.HandoffResult, error)
	Spawn(ctx context.Context, req protocols.TaskSpawn) (protocols.SpawnAccepted, error)
	ListAgents(ctx context.Context) (protocols.AgentsListed, error)
	ReportStatus(ctx context.Context, req protocols.StatusReport) error

	MemorySearch(ctx context.Context, req protocols.MemorySearch) (protocols.MemoryResults, error)
	MemoryWrite(ctx context.Context, req protocols.MemoryWrite) (MemoryWritten, error)
	Escalate(ctx context.Context, e Escalation) error

	// Refused records a call the bridge refused before it reached the task
	// (an unknown tool, a bad or too large argument, a denied tool), so it
	// is an event like every other call.
	Refused(tool, reason string)
}

// Question is an ask: the jsonl question.ask with the answers it takes
// (none: any answer).
type Question struct {
	protocols.QuestionAsk
	Options []string
}

// BoardKey is one key of the blackboard, without its value.
type BoardKey struct {
	Key     string `json:"key"`
	Version int64  `json:"version"`
	Author  string `json:"author"`
}

// Notice is one thing delivered to a task unasked, as the jsonl agent
// would receive it: Type is the message type (message.received,
// message.notice, broadcast.notice, blackboard.changed, task.announce) and
// Body its body.
type Notice struct {
	Type string `json:"type"`
	Body any    `json:"body"`
}

// MemoryWritten answers a memory write.
type MemoryWritten struct {
	Key     string `json:"key"`
	Version int64  `json:"version"`
}

// Escalation is an escalation.error or escalation.conflict.
type Escalation struct {
	Kind         string // "error" or "conflict"
	Message      string
	Severity     string // low, medium, high or critical
	ConflictType string // a conflict's: resource, timing or output
}
