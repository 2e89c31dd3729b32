//go:build unix

package runner

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/orch-cli/orch/runner/mcpbridge"
	"github.com/orch-cli/orch/runner/record"
)

// orch's MCP tools act as the attempt through the hub: the same requests
// as a jsonl agent's (the same events), with the tool policy applied.
func TestMCPToolsThroughTheHub(t *testing.T) {
	o := collab(t, callCuelist, scriptAgent(t, "lead", ""), scriptAgent(t, "helper", ""))
	e, err := mcpbridge.Start(mcpbridge.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	type result struct {
		texts map[string]string
		err   error
	}
	got := make(chan result, 1)
	testHookGoing = func(a *attemptRun) {
		if a.Cue.ID != "C" {
			return
		}
		token, unregister := e.Register(a.Cue.ID, mcpTask{a})
		go func() {
			defer unregister()
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			r := result{texts: map[string]string{}}
			defer func() { got <- r }()
			client := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1"}, nil)
			cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: e.URL(),
				HTTPClient: &http.Client{Transport: mcpbridge.Bearer(token, http.DefaultTransport)}}, nil)
			if err != nil {
				r.err = err
				return
			}
			defer cs.Close()
			call := func(key, tool string, args map[string]any) {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
				if err != nil {
					r.err = err
					return
				}
				var parts []string
				for _, c := range res.Content {
					parts = append(parts, c.(*mcp.TextContent).Text)
				}
				if res.IsError {
					parts = append([]string{"ERROR"}, parts...)
				}
				r.texts[key] = strings.Join(parts, " ")
			}
			call("write", "blackboard_write", map[string]any{"key": "k", "value": 7})
			call("conflict", "blackboard_write", map[string]any{"key": "k", "value": 8, "expected_version": 0})
			call("read", "blackboard_read", map[string]any{"key": "k"})
			call("list", "blackboard_list", map[string]any{})
			call("ask", "ask", map[string]any{"question": "ship it?"})
			call("handoff", "handoff", map[string]any{"to_agent": "nobody", "context": map[string]any{}})
			call("report", "report_status", map[string]any{"state": "working", "progress": 0.5})
			call("agents", "list_agents", nil)
			call("done", "blackboard_write", map[string]any{"key": "done", "value": true})
		}()
	}
	t.Cleanup(func() { testHookGoing = nil })
	rec := newMemRecorder()
	res := runCollab(t, o, rec, func(o *Options) {
		o.Ask = func(_ context.Context, q QuestionPrompt) (string, bool) { return "yes", true }
	})
	if res.State != record.RunCompleted {
		t.Fatalf("run %s: %s (%s)", res.State, res.Reason, reasonOf(rec, "C"))
	}
	var r result
	select {
	case r = <-got:
	case <-time.After(10 * time.Second):
		t.Fatal("the calls did not end")
	}
	if r.err != nil {
		t.Fatal(r.err)
	}
	for key, want := range map[string]string{
		"write":    `{"key":"k","version":1}`,
		"conflict": `ERROR blackboard key "k" is at version 1 (by lead), not 0: not written`,
		"read":     `"found":true`,
		"list":     `{"author":"lead","key":"k","version":1}`,
		"ask":      `{"answer":"yes"}`,
		"handoff":  `ERROR tool handoff is denied by the agent's tools: policy: "handoff" is not offered to agent lead`,
		"report":   `{}`,
		"agents":   `"id":"lead"`,
	} {
		if !strings.Contains(r.texts[key], want) {
			t.Errorf("%s: %q, want %q in it", key, r.texts[key], want)
		}
	}
	if got := outputsOf(t, rec, "C")["read_k"]; got != float64(7) {
		t.Errorf("the agent read k = %v, want the tool's 7", got)
	}
	seen := recordedMessages(rec, "lead", "C")
	for _, want := range []string{"in blackboard.read", "out blackboard.value", "in question.ask", "out question.answer",
		"in status.report", "in agents.list", "out agents.listed"} {
		if !seen[want] {
			t.Errorf("no %s recorded (recorded: %v)", want, seen)
		}
	}
}
