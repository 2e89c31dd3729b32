package mcpbridge

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/orch-cli/orch/internal/toolschema"
	"github.com/orch-cli/orch/protocols"
)

// binding is one attempt's tools: the task they act as.
type binding struct {
	task     Task
	progress time.Duration // how often a waiting call (ask, handoff) tells the client it still waits
	handoffs atomic.Int64  // names the handoffs given no task_id

	// denied are the tools its policy denies, in the catalog's order:
	// asked of the task at the first request (deniedTools), as most
	// attempts never make one.
	denied     []string
	deniedOnce sync.Once
}

// toolDef is one tool of the catalog: its definition (schemas built once)
// and how to add it to a server whose calls act as the task of the binding
// attached to each call.
type toolDef struct {
	tool   *mcp.Tool
	family string // the tool policy's name for it (planner.ProtocolTools); "": always offered
	add    func(s *mcp.Server, attached attachment)
}

// attachment finds the binding a call acts for (nil: none, the call is
// refused).
type attachment func(*mcp.CallToolRequest) *binding

// taskError is an error the task returned: the hub recorded the call, so
// the bridge does not record it again (see binding.middleware).
type taskError struct{ err error }

func (e taskError) Error() string { return e.err.Error() }
func (e taskError) Unwrap() error { return e.err }

// define builds a tool whose input schema comes from In (fix adjusts it:
// enums, bounds) and whose output schema from Out. call's error is the
// task's (an error result); the arguments are checked against the schema
// and for their size before call runs.
func define[In, Out any](name, family, description string, fix toolschema.Fix,
	call func(ctx context.Context, b *binding, req *mcp.CallToolRequest, in In) (Out, error)) toolDef {
	in, err := jsonschema.For[In](nil)
	if err != nil {
		panic(fmt.Sprintf("mcpbridge: the input schema of %s: %v", name, err)) // a programming error: the tests build every tool
	}
	if fix != nil {
		fix(in)
	}
	tool := &mcp.Tool{Name: name, Description: description, InputSchema: in}
	return toolDef{tool: tool, family: family, add: func(s *mcp.Server, attached attachment) {
		mcp.AddTool(s, tool, func(ctx context.Context, req *mcp.CallToolRequest, args In) (*mcp.CallToolResult, Out, error) {
			var zero Out
			b := attached(req)
			if b == nil {
				return nil, zero, errNoAttempt
			}
			if err := checkSize(req.Params.Arguments); err != nil {
				return nil, zero, err
			}
			out, err := call(ctx, b, req, args)
			if err != nil {
				return nil, zero, taskError{err}
			}
			return nil, out, nil
		})
	}}
}

// MaxInboxWait bounds inbox's wait_seconds.
const MaxInboxWait = 300

// catalog is every tool, in the order they are listed. Its input schemas
// are inferred at first use (a run's first tool request), not at package
// init: every orch command links this package and most never serve a tool.
var catalog = sync.OnceValue(catalogTools)

// catalogTools builds the catalog; only catalog calls it.
func catalogTools() []toolDef {
	return []toolDef{
		define("blackboard_read", "blackboard", "Read a key of the run's blackboard, where agents share results.", nil,
			func(ctx context.Context, b *binding, _ *mcp.CallToolRequest, in readArgs) (readResult, error) {
				v, err := b.task.BlackboardRead(ctx, protocols.BlackboardRead{Key: in.Key})
				return readResult{Found: v.Found, Value: v.Value, Version: v.Version, Author: v.Author}, err
			}),
		define("blackboard_write", "blackboard", "Write a key of the run's blackboard. With expected_version the write happens only if the key is at that version; otherwise the error names the current one.",
			func(s *jsonschema.Schema) { s.Properties["expected_version"].Minimum = ptr(0.0) },
			func(ctx context.Context, b *binding, _ *mcp.CallToolRequest, in writeArgs) (writeResult, error) {
				ack, err := b.task.BlackboardWrite(ctx, protocols.BlackboardWrite{Key: in.Key, Value: in.Value, ExpectedVersion: in.ExpectedVersion})
				return writeResult{Key: ack.Key, Version: ack.Version}, err
			}),
		define("blackboard_list", "blackboard", "List the blackboard's keys (without values), with their versions and authors.", nil,
			func(ctx context.Context, b *binding, _ *mcp.CallToolRequest, in listArgs) (listResult, error) {
				keys, err := b.task.BlackboardList(ctx, in.Prefix)
				return listResult{Keys: nonNil(keys)}, err
			}),
		define("ask", "", "Ask the person running orch (or the agent that started you) a question; the call waits for the answer.",
			toolschema.All(toolschema.Enum("complexity", "quick", "deep"), func(s *jsonschema.Schema) { s.Properties["question"].MinLength = ptr(1) }),
			func(ctx context.Context, b *binding, req *mcp.CallToolRequest, in askArgs) (askResult, error) {
				q := Question{QuestionAsk: protocols.QuestionAsk{Question: in.Question, Complexity: or(in.Complexity, "quick")}, Options: in.Options}
				a, err := waiting(ctx, b, req, "waiting for the answer", func(ctx context.Context) (protocols.QuestionAnswer, error) { return b.task.Ask(ctx, q) })
				return askResult{Answer: a.Answer}, err
			}),
		define("send_message", "", "Send a message to another agent of the run (by agent id or task id, see list_agents).", nil,
			func(ctx context.Context, b *binding, _ *mcp.CallToolRequest, in sendArgs) (sendResult, error) {
				_, err := b.task.SendMessage(ctx, protocols.MessageSend{To: in.To, Body: in.Body, Private: in.Private})
				return sendResult{Sent: err == nil}, err
			}),
		define("broadcast", "", "Send a message to every other agent of the run at work.", nil,
			func(ctx context.Context, b *binding, _ *mcp.CallToolRequest, in broadcastArgs) (broadcastResult, error) {
				sent, err := b.task.Broadcast(ctx, protocols.BroadcastSend{Body: in.Body})
				return broadcastResult{Recipients: nonNil(sent.Recipients)}, err
			}),
		define("inbox", "", "Take what was delivered to you since the last call: messages, broadcasts, changes of blackboard keys you watch, announcements of the tasks you spawned.",
			toolschema.Bounds("wait_seconds", 0, MaxInboxWait),
			func(ctx context.Context, b *binding, _ *mcp.CallToolRequest, in inboxArgs) (inboxResult, error) {
				notices, err := b.task.Inbox(ctx, time.Duration(in.WaitSeconds*float64(time.Second)))
				return inboxResult{Notices: nonNil(notices)}, err
			}),
		define("handoff", "handoff", "Hand a piece of work to another agent; the call waits until the receiver ends and returns its outputs.", nil,
			func(ctx context.Context, b *binding, req *mcp.CallToolRequest, in handoffArgs) (handoffResult, error) {
				h := protocols.TaskHandoff{ToAgent: in.ToAgent, TaskID: in.TaskID, HandoffContext: in.Context}
				if h.TaskID == "" {
					h.TaskID = "handoff-" + strconv.FormatInt(b.handoffs.Add(1), 10)
				}
				r, err := waiting(ctx, b, req, "waiting for "+in.ToAgent, func(ctx context.Context) (protocols.HandoffResult, error) { return b.task.Handoff(ctx, h) })
				return handoffResult{Status: r.Status, Outputs: nonNilMap(r.Outputs), Reason: r.Reason}, err
			}),
		define("spawn", "spawn", "Start another agent as a child task without waiting; its end is announced through inbox.", nil,
			func(ctx context.Context, b *binding, _ *mcp.CallToolRequest, in spawnArgs) (spawnResult, error) {
				acc, err := b.task.Spawn(ctx, protocols.TaskSpawn{Agent: in.Agent, Inputs: in.Inputs})
				return spawnResult{TaskID: acc.TaskID}, err
			}),
		define("list_agents", "agents", "List the agents of the run at work, with what they provide and whether they take handoffs.", nil,
			func(ctx context.Context, b *binding, _ *mcp.CallToolRequest, _ noArgs) (agentsResult, error) {
				l, err := b.task.ListAgents(ctx)
				return agentsResult{Agents: nonNil(l.Agents)}, err
			}),
		define("report_status", "", "Report what you are doing (shown in orch status), optionally with progress from 0 to 1.",
			toolschema.Bounds("progress", 0, 1),
			func(ctx context.Context, b *binding, _ *mcp.CallToolRequest, in statusArgs) (empty, error) {
				return empty{}, b.task.ReportStatus(ctx, protocols.StatusReport{State: in.State, Progress: in.Progress, Detail: in.Detail})
			}),
		define("memory_search", "memory", "Search what agents remembered across runs (full text).",
			func(s *jsonschema.Schema) {
				s.Properties["query"].MinLength = ptr(1)
				s.Properties["limit"].Minimum = ptr(1.0)
			},
			func(ctx context.Context, b *binding, _ *mcp.CallToolRequest, in searchArgs) (searchResult, error) {
				r, err := b.task.MemorySearch(ctx, protocols.MemorySearch{Query: in.Query, Limit: in.Limit})
				return searchResult{Items: nonNil(r.Items)}, err
			}),
		define("memory_write", "memory", "Remember something across runs under a key.",
			func(s *jsonschema.Schema) { s.Properties["key"].MinLength = ptr(1) },
			func(ctx context.Context, b *binding, _ *mcp.CallToolRequest, in memoryArgs) (MemoryWritten, error) {
				return b.task.MemoryWrite(ctx, protocols.MemoryWrite{Key: in.Key, Text: in.Text, Tags: in.Tags})
			}),
		define("escalate", "", "Tell the person about an error or a conflict you cannot settle.",
			toolschema.All(toolschema.Enum("kind", "error", "conflict"), toolschema.Enum("severity", "low", "medium", "high", "critical"), toolschema.Enum("conflict_type", "resource", "timing", "output"),
				func(s *jsonschema.Schema) { s.Properties["message"].MinLength = ptr(1) }),
			func(ctx context.Context, b *binding, _ *mcp.CallToolRequest, in escalateArgs) (empty, error) {
				e := Escalation{Kind: in.Kind, Message: in.Message, Severity: in.Severity}
				if in.Kind == "conflict" {
					e.ConflictType = or(in.ConflictType, "output")
				}
				return empty{}, b.task.Escalate(ctx, e)
			}),
	}
}

// byName finds a tool of the catalog.
var byName = sync.OnceValue(func() map[string]toolDef {
	m := make(map[string]toolDef, len(catalog()))
	for _, d := range catalog() {
		m[d.tool.Name] = d
	}
	return m
})

// ToolNames are the tools' names, in the catalog's order.
func ToolNames() []string {
	names := make([]string, len(catalog()))
	for i, d := range catalog() {
		names[i] = d.tool.Name
	}
	return names
}

func ptr[T any](v T) *T { return &v }

func or(s, dflt string) string {
	if s == "" {
		return dflt
	}
	return s
}

// nonNil makes a nil slice empty: the output schemas say array, not null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func nonNilMap(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}
