//go:build clis_e2e && linux

package clis

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/orch-cli/orch/internal/mockmodel"
)

// The tests of orch's MCP server for the agents it starts (runner/mcpbridge)
// through the real CLIs: each gets the server orch wires for its protocol
// (claude --mcp-config, codex -c mcp_servers.orch, ACP session/new) and the
// mock model calls its tools by name (mcp__orch__TOOL).

// noToolSearch: claude defers MCP tools behind its ToolSearch tool, which
// the mock model does not use; this offers them at once (the agent's env).
const noToolSearch = "\n  env: {ENABLE_TOOL_SEARCH: \"false\"}"

// tool is a scripted call of orch's tool name.
func tool(name string, args map[string]any) *mockmodel.ToolCall {
	return &mockmodel.ToolCall{Name: name, Args: args}
}

// calls are the tools the requests of script called, in order, but for
// codex's tool_search (the mock searches for a tool codex defers, as a
// model does, before it calls it).
func calls(w *world, script string) []string {
	var out []string
	for _, r := range w.scripted(script) {
		if name := strings.Fields(r.Call + " x")[0]; r.Call != "" && name != "tool_search" {
			out = append(out, name)
		}
	}
	return out
}

// cueOutputs are the outputs of each cue of the last run.
func (w *world) cueOutputs() map[string]map[string]any {
	out := map[string]map[string]any{}
	for _, c := range w.status().Cues {
		out[c.ID] = c.Outputs
	}
	return out
}

// TestClaudeAsksThePerson: headless claude (protocol claude-code) calls
// mcp__orch__ask; the person answers with orch answer; claude's reply,
// the cue's output, carries the answer.
// askScript is claude asking the person which database to use (the ask
// tool, with options), then replying with the answer.
var askScript = mockmodel.Script{
	{Text: "I need the person's choice.", Tool: tool("ask", map[string]any{"question": "Which database should slugs live in?",
		"options": []any{"sqlite", "postgres"}})},
	{Text: "The person chose {{answer}}.\n{\"database\": \"{{answer}}\"}"},
}

// chooser is the claude-code agent that follows askScript.
var chooser = `agent:
  id: chooser
  protocol: claude-code` + noToolSearch + `
  prompt: |
    ` + mockmodel.Marker("ask") + ` Ask the person which database to use.
  permissions: {read: allow, default: deny}
  provides: [text, database]
`

func TestClaudeAsksThePerson(t *testing.T) {
	if skipWhy != "" {
		t.Skip(skipWhy)
	}
	t.Parallel()
	script := askScript
	w := newWorld(t, map[string]mockmodel.Script{"ask": script}, false)
	w.write(map[string]string{"cuelist.yaml": `cuelist:
  id: asks
  defaults: {ack_timeout: 2m, standby_timeout: 2m, timeout: 3m}
  cues:
    - {id: CHOOSE, agents: [chooser]}
---
` + chooser}, false)
	run := w.start("run", "cuelist.yaml")
	q := run.question(t, w, "q1")
	contains(t, "q1", q, "Which database should slugs live in?")
	if r := w.orch("answer", "last", "q1", "postgres"); r.code != 0 {
		t.Fatalf("orch answer q1 postgres exited %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if code := run.wait(t); code != 0 {
		t.Fatalf("orch run exited %d\n%s\nlogs:\n%s\nthe model's requests:\n%s", code, run.out(), w.orch("logs", "last").stdout, describe(w.scripted("ask")))
	}
	w.noneLeft()
	followed(t, w, "ask", len(script))
	if got := calls(w, "ask"); !slices.Equal(got, []string{"mcp__orch__ask"}) {
		t.Errorf("claude called %v, want mcp__orch__ask\n%s", got, describe(w.scripted("ask")))
	}
	out := w.cueOutputs()["CHOOSE"]
	if out["database"] != "postgres" {
		t.Errorf("CHOOSE's outputs: %v, want database postgres (the person's answer, through claude's reply)", out)
	}
	contains(t, "CHOOSE's text", fmtOutput(out["text"]), "The person chose postgres.")
}

// fmtOutput is an output as text.
func fmtOutput(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// TestBoardAcrossCLIs: codex (protocol codex) writes the board with
// blackboard_write; in the next cue claude-agent-acp (protocol acp) reads
// it with blackboard_read, and its reply carries what codex wrote.
func TestBoardAcrossCLIs(t *testing.T) {
	if skipWhy != "" {
		t.Skip(skipWhy)
	}
	t.Parallel()
	scripts := map[string]mockmodel.Script{
		"write": {
			{Text: "Posting the API on the board.", Tool: tool("blackboard_write", map[string]any{"key": "api", "value": "GET /slugs/{title}"})},
			{Text: "Posted.\n{\"summary\": \"api at version {{version}}\"}"},
		},
		"read": {
			{Text: "Reading the board.", Tool: tool("blackboard_read", map[string]any{"key": "api"})},
			{Text: "The board says {{value}}, written by {{author}}.\n{\"summary\": \"{{value}} by {{author}}\"}"},
		},
	}
	w := newWorld(t, scripts, false)
	w.write(map[string]string{"cuelist.yaml": `cuelist:
  id: board
  defaults: {ack_timeout: 2m, standby_timeout: 2m, timeout: 3m}
  cues:
    - {id: WRITE, agents: [writer]}
    - {id: READ, agents: [reader], dependencies: [WRITE]}
---
agent:
  id: writer
  protocol: codex
  prompt: |
    ` + mockmodel.Marker("write") + ` Post the API on the board.
  permissions: {read: allow, default: deny}
  provides: [text, summary]
---
agent:
  id: reader
  protocol: acp
  command: [claude-agent-acp]` + noToolSearch + `
  prompt: |
    ` + mockmodel.Marker("read") + ` Read the API from the board.
  permissions: {read: allow, default: deny}
  provides: [text, summary]
`}, false)
	w.run("cuelist.yaml", 0)
	followed(t, w, "read", 2)
	if got := calls(w, "write"); !slices.Equal(got, []string{"mcp__orch__blackboard_write"}) {
		t.Errorf("codex called %v, want mcp__orch__blackboard_write\n%s", got, describe(w.scripted("write")))
	}
	if got := calls(w, "read"); !slices.Equal(got, []string{"mcp__orch__blackboard_read"}) {
		t.Errorf("claude-agent-acp called %v, want mcp__orch__blackboard_read\n%s", got, describe(w.scripted("read")))
	}
	if r := w.orch("bb", "get", "api", "--run", "last"); !strings.Contains(r.stdout, "GET /slugs/{title}") {
		t.Errorf("orch bb get api: %s%s", r.stdout, r.stderr)
	}
	outs := w.cueOutputs()
	if got := outs["WRITE"]["summary"]; got != "api at version 1" {
		t.Errorf("WRITE's summary: %v, want the version blackboard_write returned", got)
	}
	if got := outs["READ"]["summary"]; got != "GET /slugs/{title} by writer" {
		t.Errorf("READ's summary: %v, want what codex wrote, by writer", got)
	}
}

// TestMessageBetweenSiblings: two agents at work at once exchange messages:
// claude (protocol claude-code) sends codex a message with send_message
// once codex is at work; codex takes it from its inbox and answers; claude
// takes the answer from its own inbox. Each reply carries what it got.
func TestMessageBetweenSiblings(t *testing.T) {
	if skipWhy != "" {
		t.Skip(skipWhy)
	}
	t.Parallel()
	scripts := map[string]mockmodel.Script{
		"send": {
			// After: codex has asked the model, so its task is at work
			// and can be sent a message (one to a task not started yet is
			// refused: not started).
			{Text: "Telling the tester.", After: "recv", Tool: tool("send_message", map[string]any{"to": "tester", "body": "api.go is ready"})},
			{Text: "Waiting for the tester.", Tool: tool("inbox", map[string]any{"wait_seconds": 50.0})},
			{Text: "The tester said: {{notices.0.body.body}}\n{\"summary\": \"{{notices.0.body.body}}\"}"},
		},
		"recv": {
			{Text: "Waiting for the coder.", Tool: tool("inbox", map[string]any{"wait_seconds": 50.0})},
			{Text: "Answering the coder.", Tool: tool("send_message", map[string]any{"to": "coder", "body": "testing {{notices.0.body.body}}"})},
			{Text: "Done.\n{\"summary\": \"got {{notices.0.body.body}}\"}"},
		},
	}
	w := newWorld(t, scripts, false)
	w.write(map[string]string{"cuelist.yaml": `cuelist:
  id: msgs
  defaults: {ack_timeout: 2m, standby_timeout: 2m, timeout: 3m}
  cues:
    - {id: CODE, agents: [coder]}
    - {id: TEST, agents: [tester]}
---
agent:
  id: coder
  protocol: claude-code` + noToolSearch + `
  prompt: |
    ` + mockmodel.Marker("send") + ` Tell the tester what is ready.
  permissions: {read: allow, default: deny}
  provides: [text, summary]
---
agent:
  id: tester
  protocol: codex
  prompt: |
    ` + mockmodel.Marker("recv") + ` Wait for the coder's message.
  permissions: {read: allow, default: deny}
  provides: [text, summary]
`}, false)
	w.run("cuelist.yaml", 0)
	followed(t, w, "send", 3)
	if got, want := calls(w, "send"), []string{"mcp__orch__send_message", "mcp__orch__inbox"}; !slices.Equal(got, want) {
		t.Errorf("claude called %v, want %v\n%s", got, want, describe(w.scripted("send")))
	}
	if got, want := calls(w, "recv"), []string{"mcp__orch__inbox", "mcp__orch__send_message"}; !slices.Equal(got, want) {
		t.Errorf("codex called %v, want %v\n%s", got, want, describe(w.scripted("recv")))
	}
	outs := w.cueOutputs()
	if got := outs["TEST"]["summary"]; got != "got api.go is ready" {
		t.Errorf("TEST's summary: %v, want the coder's message", got)
	}
	if got := outs["CODE"]["summary"]; got != "testing api.go is ready" {
		t.Errorf("CODE's summary: %v, want the tester's answer", got)
	}
	events := w.orch("events", "last", "--output", "json").stdout
	contains(t, "orch events", events, `"message_type":"message.send"`, `"message_type":"message.received"`)
}

// TestDeniedToolNotOffered: a tool the agent's tools: policy denies is not
// offered to the CLI. Two agents of one run on the same CLI try to read the
// board: the tools the model was offered hold orch's blackboard_read for the
// one without a policy, and no blackboard tool for the one whose policy
// denies the blackboard (codex defers MCP tools behind its tool_search: the
// mock searches for blackboard_read, and codex finds it for one only).
func TestDeniedToolNotOffered(t *testing.T) {
	for _, c := range []cli{claudeCode, codex, claudeACP} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			agent := c.agent
			if c != codex {
				agent += noToolSearch
			}
			read := mockmodel.Script{
				{Text: "Reading the board.", Tool: tool("blackboard_read", map[string]any{"key": "plan"})},
				{Text: "Read it."},
			}
			w := newWorld(t, map[string]mockmodel.Script{"denied": read, "allowed": read}, false)
			contract := func(id, script, policy string) string {
				return `
agent:
  id: ` + id + `
  ` + agent + `
  prompt: |
    ` + mockmodel.Marker(script) + ` Read the plan from the board.
  permissions: {read: allow, default: deny}` + policy + `
  provides: [text]
`
			}
			w.write(map[string]string{"cuelist.yaml": `cuelist:
  id: denied
  defaults: {ack_timeout: 2m, standby_timeout: 2m, timeout: 3m}
  cues:
    - {id: DENIED, agents: [denied]}
    - {id: ALLOWED, agents: [allowed]}
---` + contract("denied", "denied", "\n  tools: {deny: [blackboard]}") + "---" + contract("allowed", "allowed", "")}, false)
			w.run("cuelist.yaml", 0)
			offered := func(script string) []string {
				var orch []string
				for _, r := range w.scripted(script) {
					for _, name := range r.Tools {
						if n, ok := strings.CutPrefix(name, "mcp__orch__"); ok && !slices.Contains(orch, n) {
							orch = append(orch, n)
						}
					}
				}
				return orch
			}
			allowed, denied := offered("allowed"), offered("denied")
			if !slices.Contains(allowed, "blackboard_read") {
				t.Errorf("%s did not offer blackboard_read to the agent whose policy allows it: orch's tools offered %v\n%s", c.name, allowed, describe(w.scripted("allowed")))
			}
			if got := calls(w, "allowed"); !slices.Equal(got, []string{"mcp__orch__blackboard_read"}) {
				t.Errorf("the allowed agent called %v, want mcp__orch__blackboard_read", got)
			}
			for _, n := range denied {
				if strings.HasPrefix(n, "blackboard_") {
					t.Errorf("%s offered %s to the agent whose policy denies the blackboard: orch's tools offered %v", c.name, n, denied)
				}
			}
			if got := calls(w, "denied"); len(got) != 0 {
				t.Errorf("the denied agent called %v, want none (the tool was not offered)", got)
			}
			if c != codex && !slices.Contains(denied, "ask") { // the list is codex's search's, not all its tools
				t.Errorf("%s offered the denied agent none of orch's tools: %v", c.name, denied)
			}
		})
	}
}
