package mcpbridge

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/orch-cli/orch/protocols"
)

// The tools' names are the issue's, exactly: agents' prompts and users'
// --allowedTools name them.
var wantTools = []string{"blackboard_read", "blackboard_write", "blackboard_list", "ask", "send_message",
	"broadcast", "inbox", "handoff", "spawn", "list_agents", "report_status", "memory_search", "memory_write", "escalate"}

func listed(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(testCtx(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		if tool.InputSchema == nil || tool.OutputSchema == nil || tool.Description == "" {
			t.Errorf("%s: want an input schema, an output schema and a description", tool.Name)
		}
	}
	return names
}

func TestToolsListed(t *testing.T) {
	e := startEndpoint(t)
	token, _ := e.Register("build/1", newFakeTask("coder"))
	cs := connect(t, e, token, nil)
	want := slices.Sorted(slices.Values(wantTools)) // the SDK lists them by name
	if got := listed(t, cs); !reflect.DeepEqual(got, want) {
		t.Fatalf("tools:\n got %v\nwant %v", got, want)
	}
}

// Every tool, through HTTP with the SDK's client, against the fake task:
// the arguments reach the task typed, the result comes back structured.
func TestEveryTool(t *testing.T) {
	e := startEndpoint(t)
	task := newFakeTask("coder")
	token, _ := e.Register("build/1", task)
	cs := connect(t, e, token, nil)

	w := ok(t, "blackboard_write", callTool(t, cs, "blackboard_write", map[string]any{"key": "api/changes", "value": map[string]any{"files": []string{"a.go"}}}))
	if w["key"] != "api/changes" || w["version"] != 1.0 {
		t.Errorf("blackboard_write: %v", w)
	}
	r := ok(t, "blackboard_read", callTool(t, cs, "blackboard_read", map[string]any{"key": "api/changes"}))
	if r["found"] != true || r["version"] != 1.0 || r["author"] != "coder" || !reflect.DeepEqual(r["value"], map[string]any{"files": []any{"a.go"}}) {
		t.Errorf("blackboard_read: %v", r)
	}
	if r := ok(t, "blackboard_read", callTool(t, cs, "blackboard_read", map[string]any{"key": "nothing"})); r["found"] != false {
		t.Errorf("blackboard_read of a missing key: %v", r)
	}
	l := ok(t, "blackboard_list", callTool(t, cs, "blackboard_list", map[string]any{"prefix": "api/"}))
	if keys, _ := l["keys"].([]any); len(keys) != 1 || keys[0].(map[string]any)["key"] != "api/changes" {
		t.Errorf("blackboard_list: %v", l)
	}
	if l := ok(t, "blackboard_list", callTool(t, cs, "blackboard_list", map[string]any{"prefix": "none/"})); len(l["keys"].([]any)) != 0 {
		t.Errorf("blackboard_list, nothing: %v", l)
	}

	task.answers <- "use sqlite"
	a := ok(t, "ask", callTool(t, cs, "ask", map[string]any{"question": "which database?", "complexity": "deep", "options": []string{"sqlite", "postgres"}}))
	if a["answer"] != "use sqlite" {
		t.Errorf("ask: %v", a)
	}
	if q := task.asked[0]; q.Question != "which database?" || q.Complexity != "deep" || !slices.Equal(q.Options, []string{"sqlite", "postgres"}) {
		t.Errorf("ask reached the task as %+v", q)
	}

	if s := ok(t, "send_message", callTool(t, cs, "send_message", map[string]any{"to": "reviewer", "body": "done with a.go", "private": true})); s["sent"] != true {
		t.Errorf("send_message: %v", s)
	}
	if m := task.sent[0]; m.To != "reviewer" || m.Body != "done with a.go" || !m.Private {
		t.Errorf("send_message reached the task as %+v", m)
	}
	failed(t, "send_message", callTool(t, cs, "send_message", map[string]any{"to": "gone", "body": "x"}), "not delivered", "task gone has ended")

	if b := ok(t, "broadcast", callTool(t, cs, "broadcast", map[string]any{"body": "tests pass"})); !reflect.DeepEqual(b["recipients"], []any{"reviewer", "tester"}) {
		t.Errorf("broadcast: %v", b)
	}

	sp := ok(t, "spawn", callTool(t, cs, "spawn", map[string]any{"agent": "tester", "inputs": map[string]any{"pkg": "./..."}}))
	if sp["task_id"] != "coder/1" {
		t.Errorf("spawn: %v", sp)
	}
	in := ok(t, "inbox", callTool(t, cs, "inbox", map[string]any{}))
	notices, _ := in["notices"].([]any)
	if len(notices) != 1 || notices[0].(map[string]any)["type"] != protocols.TypeTaskAnnounce {
		t.Errorf("inbox: %v", in)
	}
	if in := ok(t, "inbox", callTool(t, cs, "inbox", nil)); len(in["notices"].([]any)) != 0 {
		t.Errorf("inbox, taken already: %v", in)
	}

	h := ok(t, "handoff", callTool(t, cs, "handoff", map[string]any{"to_agent": "tester", "context": map[string]any{"pkg": "./runner"}}))
	if h["status"] != "completed" || !reflect.DeepEqual(h["outputs"], map[string]any{"pkg": "./runner"}) {
		t.Errorf("handoff: %v", h)
	}
	if id := task.handoffs[0].TaskID; id != "handoff-1" {
		t.Errorf("a handoff without task_id is named %q, want handoff-1", id)
	}
	if h := ok(t, "handoff", callTool(t, cs, "handoff", map[string]any{"to_agent": "coder", "task_id": "again", "context": map[string]any{}})); h["status"] != "refused" || !strings.Contains(h["reason"].(string), "cycle") {
		t.Errorf("handoff refused by the guards: %v", h)
	}

	if la := ok(t, "list_agents", callTool(t, cs, "list_agents", nil)); len(la["agents"].([]any)) != 1 {
		t.Errorf("list_agents: %v", la)
	}
	ok(t, "report_status", callTool(t, cs, "report_status", map[string]any{"state": "testing", "progress": 0.5, "detail": "runner"}))
	if s := task.status[0]; s.State != "testing" || s.Progress != 0.5 || s.Detail != "runner" {
		t.Errorf("report_status reached the task as %+v", s)
	}
	if mw := ok(t, "memory_write", callTool(t, cs, "memory_write", map[string]any{"key": "db-choice", "text": "sqlite", "tags": []string{"db"}})); mw["version"] != 1.0 {
		t.Errorf("memory_write: %v", mw)
	}
	if ms := ok(t, "memory_search", callTool(t, cs, "memory_search", map[string]any{"query": "db"})); len(ms["items"].([]any)) != 1 {
		t.Errorf("memory_search: %v", ms)
	}
	ok(t, "escalate", callTool(t, cs, "escalate", map[string]any{"kind": "conflict", "message": "two writers of api.go", "severity": "high"}))
	if es := task.escal[0]; es != (Escalation{Kind: "conflict", Message: "two writers of api.go", Severity: "high", ConflictType: "output"}) {
		t.Errorf("escalate reached the task as %+v", es)
	}
	if r := task.refusals(); len(r) != 0 {
		t.Errorf("the bridge refused calls it should not have: %v", r)
	}
}

func TestConditionalWriteConflict(t *testing.T) {
	e := startEndpoint(t)
	task := newFakeTask("coder")
	token, _ := e.Register("build/1", task)
	cs := connect(t, e, token, nil)
	ok(t, "blackboard_write", callTool(t, cs, "blackboard_write", map[string]any{"key": "plan", "value": "v1", "expected_version": 0}))
	failed(t, "blackboard_write", callTool(t, cs, "blackboard_write", map[string]any{"key": "plan", "value": "v2", "expected_version": 0}),
		"is at version 1 (by coder), not 0: not written")
	if r := ok(t, "blackboard_read", callTool(t, cs, "blackboard_read", map[string]any{"key": "plan"})); r["value"] != "v1" {
		t.Errorf("a refused conditional write changed the key: %v", r)
	}
	if r := task.refusals(); len(r) != 0 {
		t.Errorf("a conflict is the task's answer, recorded by it, not a refusal of the bridge: %v", r)
	}
}

// Bad arguments are tool errors naming the field, recorded, and never reach
// the task; the session goes on.
func TestArgumentErrors(t *testing.T) {
	e := startEndpoint(t)
	task := newFakeTask("coder")
	token, _ := e.Register("build/1", task)
	cs := connect(t, e, token, nil)
	cases := []struct {
		tool string
		args map[string]any
		want string
	}{
		{"blackboard_read", map[string]any{}, "key"},
		{"blackboard_read", map[string]any{"key": 5}, "key"},
		{"blackboard_write", map[string]any{"key": "k"}, "value"},
		{"blackboard_write", map[string]any{"key": "k", "value": 1, "expected_version": -1}, "expected_version"},
		{"ask", map[string]any{"question": "why?", "complexity": "hard"}, "complexity"},
		{"ask", map[string]any{"question": ""}, "question"},
		{"send_message", map[string]any{"body": "hi"}, "to"},
		{"inbox", map[string]any{"wait_seconds": 301}, "wait_seconds"},
		{"inbox", map[string]any{"wait_seconds": "soon"}, "wait_seconds"},
		{"handoff", map[string]any{"to_agent": "tester", "context": "not an object"}, "context"},
		{"report_status", map[string]any{"state": "x", "progress": 2}, "progress"},
		{"escalate", map[string]any{"kind": "panic", "message": "m", "severity": "low"}, "kind"},
		{"escalate", map[string]any{"kind": "error", "message": "m"}, "severity"},
		{"escalate", map[string]any{"kind": "conflict", "message": "m", "severity": "low", "conflict_type": "merge"}, "conflict_type"},
		{"memory_write", map[string]any{"key": "k", "text": "t", "tags": "db"}, "tags"},
	}
	for _, c := range cases {
		failed(t, c.tool, callTool(t, cs, c.tool, c.args), c.want)
	}
	if calls := task.callList(); len(calls) != 0 {
		t.Errorf("bad arguments reached the task: %v", calls)
	}
	if r := task.refusals(); len(r) != len(cases) {
		t.Errorf("%d refusals recorded, want %d: %v", len(r), len(cases), r)
	}
	ok(t, "blackboard_write", callTool(t, cs, "blackboard_write", map[string]any{"key": "k", "value": 1}))
}

func TestUnknownTool(t *testing.T) {
	e := startEndpoint(t)
	task := newFakeTask("coder")
	token, _ := e.Register("build/1", task)
	cs := connect(t, e, token, nil)
	failed(t, "bb_read", callTool(t, cs, "bb_read", map[string]any{"key": "k"}), `unknown tool "bb_read"`, "blackboard_read")
	if r := task.refusals(); len(r) != 1 || !strings.HasPrefix(r[0], "bb_read: unknown tool") {
		t.Errorf("refusals: %v", r)
	}
}

func TestDeniedToolNotListed(t *testing.T) {
	e := startEndpoint(t)
	task := newFakeTask("reviewer")
	task.denied["blackboard"] = `"blackboard" is not offered to agent reviewer: the cuelist's tools.deny`
	task.denied["handoff"] = "agent reviewer may not use \"handoff\" at handoff depth 1"
	token, _ := e.Register("review/1", task)
	cs := connect(t, e, token, nil)
	got := listed(t, cs)
	for _, name := range []string{"blackboard_read", "blackboard_write", "blackboard_list", "handoff"} {
		if slices.Contains(got, name) {
			t.Errorf("denied tool %s is listed: %v", name, got)
		}
	}
	if !slices.Contains(got, "ask") || !slices.Contains(got, "spawn") || len(got) != len(wantTools)-4 {
		t.Errorf("tools offered: %v", got)
	}
	failed(t, "blackboard_write", callTool(t, cs, "blackboard_write", map[string]any{"key": "k", "value": 1}),
		"denied by the agent's tools: policy", "tools.deny")
	failed(t, "handoff", callTool(t, cs, "handoff", map[string]any{"to_agent": "x", "context": map[string]any{}}), "handoff depth 1")
	if calls := task.callList(); len(calls) != 0 {
		t.Errorf("a denied call reached the task: %v", calls)
	}
	if r := task.refusals(); len(r) != 2 {
		t.Errorf("refusals: %v", r)
	}
	// The unknown-tool message lists what this agent may call, not the denied ones.
	res := callTool(t, cs, "nope", nil)
	if strings.Contains(text(res), "blackboard_read") || !strings.Contains(text(res), "ask") {
		t.Errorf("unknown tool: %q", text(res))
	}
}

func TestValueTooLarge(t *testing.T) {
	e := startEndpoint(t)
	task := newFakeTask("coder")
	token, _ := e.Register("build/1", task)
	cs := connect(t, e, token, nil)
	big := strings.Repeat("x", MaxValue+10)
	failed(t, "blackboard_write", callTool(t, cs, "blackboard_write", map[string]any{"key": "k", "value": big}), `"value" is 1.0 MiB`, "at most 1 MiB")
	failed(t, "send_message", callTool(t, cs, "send_message", map[string]any{"to": "x", "body": big}), `"body"`)
	if calls := task.callList(); len(calls) != 0 {
		t.Errorf("a too large value reached the task: %v", calls)
	}
	if r := ok(t, "blackboard_read", callTool(t, cs, "blackboard_read", map[string]any{"key": "k"})); r["found"] != false {
		t.Errorf("a refused write was written: %v", r)
	}
	// Just under the limit is taken.
	ok(t, "blackboard_write", callTool(t, cs, "blackboard_write", map[string]any{"key": "k", "value": strings.Repeat("x", MaxValue-100)}))
}

// A waiting ask tells a client that asked for progress that it still
// waits, and returns the answer when it comes.
func TestAskProgress(t *testing.T) {
	e := startEndpoint(t)
	task := newFakeTask("coder")
	token, _ := e.Register("build/1", task)
	var progress atomic.Int32
	cs := connect(t, e, token, &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
		if r.Params.ProgressToken == "q1" && r.Params.Message == "waiting for the answer" && progress.Add(1) == 3 {
			task.answers <- "yes"
		}
	}})
	params := &mcp.CallToolParams{Name: "ask", Arguments: map[string]any{"question": "ship it?"}}
	params.SetProgressToken("q1")
	res, err := cs.CallTool(testCtx(t), params)
	if err != nil {
		t.Fatal(err)
	}
	if a := ok(t, "ask", res); a["answer"] != "yes" {
		t.Errorf("ask: %v", a)
	}
	if n := progress.Load(); n < 3 {
		t.Errorf("%d progress notifications, want at least 3", n)
	}
	if q := task.asked[0]; q.Complexity != "quick" {
		t.Errorf("complexity defaults to quick, got %q", q.Complexity)
	}
}

// An ask cancelled by its client ends in the task (the hub closes the
// question), not left waiting.
func TestAskCancelled(t *testing.T) {
	e := startEndpoint(t)
	task := newFakeTask("coder")
	token, _ := e.Register("build/1", task)
	cs := connect(t, e, token, nil)
	ctx, cancel := context.WithCancel(testCtx(t))
	done := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "ask", Arguments: map[string]any{"question": "?"}})
		done <- err
	}()
	for len(task.callList()) == 0 {
		select {
		case <-testCtx(t).Done():
			t.Fatal("the ask never reached the task")
		case <-time.After(time.Millisecond):
		}
	}
	cancel()
	if err := <-done; err == nil {
		t.Fatal("a cancelled call returned no error")
	}
	for !slices.Contains(task.callList(), "ask ended: context canceled") {
		select {
		case <-testCtx(t).Done():
			t.Fatalf("the task's ask did not end with the call: %v", task.callList())
		case <-time.After(time.Millisecond):
		}
	}
}

func TestEveryToolHasAFamilyOfThePolicy(t *testing.T) {
	families := map[string]bool{"": true, "blackboard": true, "handoff": true, "memory": true, "spawn": true, "agents": true}
	for _, d := range catalog() {
		if !families[d.family] {
			t.Errorf("%s: family %q is not a tool of the policy (planner.ProtocolTools)", d.tool.Name, d.family)
		}
	}
}
