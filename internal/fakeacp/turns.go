//go:build unix

package fakeacp

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
)

// okTurn is a happy turn as claude-code-acp sends it: a thought, a tool
// call (its content an array, empty at first), the tool call's update with
// its result, a plan, the reply in chunks, the session's cost so far
// (usage_update, sent twice: the amount is cumulative, unrounded), then the prompt
// response with the turn's tokens.
func (a *agent) okTurn(id json.RawMessage, session, first, cwd string) {
	path := filepath.Join(cwd, "README.md")
	a.update(session, map[string]any{"sessionUpdate": "agent_thought_chunk", "content": text0("Let me read the code first.")})
	a.update(session, map[string]any{"sessionUpdate": "tool_call", "toolCallId": "toolu_01", "title": "Read README.md",
		"kind": "read", "status": "pending", "content": []any{}, "locations": []any{map[string]any{"path": path}},
		"rawInput": map[string]any{"file_path": path}})
	a.update(session, map[string]any{"sessionUpdate": "tool_call_update", "toolCallId": "toolu_01", "status": "completed",
		"content": []any{map[string]any{"type": "content", "content": text0("```\n# the project\n```")}}})
	a.update(session, map[string]any{"sessionUpdate": "plan", "entries": []any{
		map[string]any{"content": "Read the code", "priority": "high", "status": "completed"},
		map[string]any{"content": "Write the feature", "priority": "medium", "status": "in_progress"}}})
	a.usage(session, 0.01)
	a.say(session, "Working on: "+first+"\n")
	a.say(session, "Done.\n```json\n{\"summary\": \"did ")
	a.say(session, "it\"}\n```")
	a.usage(session, 0.029849999999999998) // as claude sums its costs
	a.send(map[string]any{"id": id, "result": map[string]any{"stopReason": "end_turn",
		"usage": map[string]any{"inputTokens": 1000, "outputTokens": 200, "totalTokens": 1200, "cachedReadTokens": 300}}})
}

// usage sends the session's context and cumulative cost (usage_update).
func (a *agent) usage(session string, cost float64) {
	a.update(session, map[string]any{"sessionUpdate": "usage_update", "used": 1200, "size": 200000,
		"cost": map[string]any{"amount": cost, "currency": "USD"}, "_meta": map[string]any{"_claude/model": "claude-sonnet"}})
}

// everyUpdate sends each kind of session update of the ACP schema, stable
// and unstable, and each kind of content.
func (a *agent) everyUpdate(session, cwd string) {
	path := filepath.Join(cwd, "main.go")
	u := func(kind string, fields map[string]any) {
		fields["sessionUpdate"] = kind
		a.update(session, fields)
	}
	u("user_message_chunk", map[string]any{"content": text0("the prompt, echoed")})
	u("agent_thought_chunk", map[string]any{"content": text0("thinking about it")})
	u("tool_call", map[string]any{"toolCallId": "c1", "title": "Edit main.go", "kind": "edit", "status": "in_progress",
		"locations": []any{map[string]any{"path": path, "line": 3}},
		"content": []any{
			map[string]any{"type": "diff", "path": path, "oldText": "package main\n", "newText": "package main\n\nfunc main() {}\n"},
			map[string]any{"type": "diff", "path": filepath.Join(cwd, "new.txt"), "newText": "new\n"},
		}})
	u("tool_call_update", map[string]any{"toolCallId": "c1", "status": "completed", "content": []any{
		map[string]any{"type": "content", "content": text0("edited main.go")},
		map[string]any{"type": "content", "content": map[string]any{"type": "image", "mimeType": "image/png", "data": "iVBORw0KGgo="}},
		map[string]any{"type": "content", "content": map[string]any{"type": "audio", "mimeType": "audio/wav", "data": "UklGRg=="}},
		map[string]any{"type": "content", "content": map[string]any{"type": "resource_link", "name": "spec", "uri": "file:///docs/spec.md", "title": "The spec"}},
		map[string]any{"type": "content", "content": map[string]any{"type": "resource", "resource": map[string]any{"uri": "file:///notes.txt", "text": "embedded notes"}}},
		map[string]any{"type": "content", "content": map[string]any{"type": "resource", "resource": map[string]any{"uri": "file:///logo.png", "blob": "AAAA", "mimeType": "image/png"}}},
		map[string]any{"type": "terminal", "terminalId": "term-1"},
	}})
	// after it finished, claude-code-acp's hook sends an update with nothing but _meta
	u("tool_call_update", map[string]any{"toolCallId": "c1", "_meta": map[string]any{"claudeCode": map[string]any{"toolName": "Edit"}}})
	// and it sends each tool_call twice (the stream's, then the message's)
	u("tool_call", map[string]any{"toolCallId": "c2", "title": "go test ./...", "kind": "execute", "status": "pending"})
	u("tool_call", map[string]any{"toolCallId": "c2", "title": "go test ./...", "kind": "execute", "status": "pending"})
	u("tool_call_update", map[string]any{"toolCallId": "c2", "status": "failed", "title": "go test ./... (exit 1)"})
	u("plan", map[string]any{"entries": []any{map[string]any{"content": "Edit main.go", "priority": "high", "status": "completed"}}})
	u("available_commands_update", map[string]any{"availableCommands": []any{map[string]any{"name": "init", "description": "Start"}}})
	u("current_mode_update", map[string]any{"currentModeId": "acceptEdits"})
	u("config_option_update", map[string]any{"configOptions": []any{map[string]any{"id": "model", "name": "Model", "type": "select", "currentValue": "fast"}}})
	u("session_info_update", map[string]any{"title": "Fix the build"})
	u("usage_update", map[string]any{"used": 5000, "size": 200000})
	u("plan_update", map[string]any{"plan": map[string]any{"type": "markdown", "planId": "p1", "content": "1. edit\n2. test"}})
	u("plan_update", map[string]any{"plan": map[string]any{"type": "items", "planId": "p2", "entries": []any{
		map[string]any{"content": "Run the tests", "priority": "low", "status": "pending"}}}})
	u("plan_removed", map[string]any{"planId": "p1"})
	u("notice", map[string]any{"severity": "warning", "title": "Rate limited", "description": "retrying in 2s"})
	u("compaction_update", map[string]any{"compactionId": "k1", "status": "completed"})
	u("compaction_summary_chunk", map[string]any{"compactionId": "k1", "content": text0("summary so far")})
	u("_zed/custom", map[string]any{"anything": true})
}

// permission asks for a tool call as claude-code-acp does: the tool call
// (with its kind) first, then session/request_permission naming only its
// id, title and raw input. It returns the outcome.
func (a *agent) permission(session, tool, title, kind string, codex bool) string {
	a.update(session, map[string]any{"sessionUpdate": "tool_call", "toolCallId": tool, "title": title, "kind": kind,
		"status": "pending", "rawInput": map[string]any{"file_path": "notes.txt"}})
	options := []any{
		map[string]any{"optionId": "allow_always", "name": "Always Allow", "kind": "allow_always"},
		map[string]any{"optionId": "allow", "name": "Allow", "kind": "allow_once"},
		map[string]any{"optionId": "reject", "name": "Reject", "kind": "reject_once"},
	}
	if codex {
		options = []any{
			map[string]any{"optionId": "approved", "name": "Yes, proceed", "kind": "allow_once"},
			map[string]any{"optionId": "abort", "name": "No", "kind": "reject_once"},
		}
	}
	r := a.call("session/request_permission", map[string]any{"sessionId": session,
		"toolCall": map[string]any{"toolCallId": tool, "title": title, "rawInput": map[string]any{"file_path": "notes.txt"}},
		"options":  options})
	var res struct {
		Outcome struct {
			Outcome  string `json:"outcome"`
			OptionID string `json:"optionId"`
		} `json:"outcome"`
	}
	_ = json.Unmarshal(r.Result, &res)
	status := "completed"
	if res.Outcome.OptionID != "allow" && res.Outcome.OptionID != "allow_always" && res.Outcome.OptionID != "approved" {
		status = "failed"
	}
	a.update(session, map[string]any{"sessionUpdate": "tool_call_update", "toolCallId": tool, "status": status})
	return strings.TrimSpace(res.Outcome.Outcome + " " + res.Outcome.OptionID)
}

// bigReply streams a reply of mib MiB in 64 KiB chunks of 100-byte lines,
// ending with its JSON object.
func (a *agent) bigReply(session, mib string) {
	n, _ := strconv.Atoi(mib)
	line := strings.Repeat("x", 99) + "\n"
	chunk := strings.Repeat(line, 64<<10/len(line))
	for sent := 0; sent < n<<20; sent += len(chunk) {
		a.say(session, chunk)
	}
	a.say(session, fmt.Sprintf(`{"summary": "a reply of %s MiB"}`, mib))
}
